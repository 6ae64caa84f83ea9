// ratelab-cli serve: ratelab as a decision sidecar (app/serve). `--mode auth` answers the
// sub-requests of a proxy (nginx auth_request, Traefik ForwardAuth, Envoy ext_authz, HAProxy);
// `--mode origin` answers "ok" to every request the policy lets through, to try a policy with
// curl. SIGHUP reloads the policy file, SIGTERM drains and exits 0. Logs are JSON lines on
// stderr; the addresses bound are printed on stdout.

#include <sys/resource.h>

#include <QCommandLineParser>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/command.h"
#include "cli/sim_inputs.h"
#include "serve/signals.h"

namespace ratelab::cli {

namespace {

constexpr const char* kSynopsis =
    "serve --policy P.json [--mode origin|auth] [--listen HOST:PORT]... [--admin HOST:PORT]\n"
    "            [--threads N] [--refusal-status decided|403] [--quiet] [--key-secret-file FILE]\n"
    "            [--max-connections N] [--max-body-bytes N] [--header-timeout-ms N]\n"
    "            [--idle-timeout-ms N] [--drain-timeout-ms N]";

// Lets the connection cap use the descriptors the hard limit allows.
std::size_t raiseDescriptorLimit() {
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
    if (limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
        getrlimit(RLIMIT_NOFILE, &limit);
    }
    return static_cast<std::size_t>(limit.rlim_cur);
}

bool readNumber(const QCommandLineParser& parser, const QCommandLineOption& option,
                std::int64_t min, std::int64_t max, std::int64_t* out) {
    if (!parser.isSet(option)) return true;
    bool ok = false;
    const qlonglong value = parser.value(option).toLongLong(&ok);
    if (!ok || value < min || value > max) {
        badInput("serve", "--" + option.names().first().toStdString() + " \"" +
                              parser.value(option).toStdString() +
                              "\": expected a whole number from " + std::to_string(min) + " to " +
                              std::to_string(max));
        return false;
    }
    *out = value;
    return true;
}

int serve(const QStringList& arguments) {
    QCommandLineParser parser;
    const QCommandLineOption policyOption("policy", "Policy file.", "P.json");
    const QCommandLineOption modeOption(
        "mode",
        "auth: answer a proxy's sub-requests (200 or the refusal); origin: answer \"ok\" "
        "(default).",
        "origin|auth", "origin");
    const QCommandLineOption listenOption(
        "listen",
        "Address to decide on, repeatable (default 127.0.0.1:8080; port 0: any free one).",
        "HOST:PORT");
    const QCommandLineOption adminOption(
        "admin", "Address of /metrics, /healthz, /readyz and POST /-/reload.", "HOST:PORT");
    const QCommandLineOption threadsOption("threads", "Event loops (default: one per core).", "N");
    const QCommandLineOption refusalOption(
        "refusal-status",
        "Auth mode: send refusals with their own status (decided, the default) or as 403 with "
        "X-Ratelab-Status, for nginx auth_request.",
        "decided|403", "decided");
    const QCommandLineOption quietOption("quiet", "Do not log limit hits and store errors.");
    const QCommandLineOption secretOption(
        "key-secret-file", "Secret naming keys in logs (HMAC-SHA-256); default: random.", "FILE");
    const QCommandLineOption connectionsOption("max-connections",
                                               "Open connections (default 10000).", "N");
    const QCommandLineOption bodyOption("max-body-bytes", "Largest request body (default 65536).",
                                        "N");
    const QCommandLineOption headerTimeoutOption(
        "header-timeout-ms", "Time for a request's head to arrive (default 10000).", "N");
    const QCommandLineOption idleTimeoutOption(
        "idle-timeout-ms", "Idle kept-alive connections close after this (default 60000).", "N");
    const QCommandLineOption drainTimeoutOption(
        "drain-timeout-ms", "On SIGTERM, time to answer what is in flight (default 30000).", "N");
    parser.addOptions({policyOption, modeOption, listenOption, adminOption, threadsOption,
                       refusalOption, quietOption, secretOption, connectionsOption, bodyOption,
                       headerTimeoutOption, idleTimeoutOption, drainTimeoutOption});
    if (!parseCommandLine(parser, arguments, "serve", kSynopsis, 0)) return kBadInput;
    if (!parser.isSet(policyOption)) return badInput("serve", "--policy P.json is required");

    serve::SidecarOptions options;
    options.policyPath = parser.value(policyOption).toStdString();
    options.version = RATELAB_VERSION;
    const QString mode = parser.value(modeOption);
    if (mode != "origin" && mode != "auth") {
        return badInput("serve", "--mode \"" + mode.toStdString() + "\": expected origin or auth");
    }
    options.decision.mode = mode == "auth" ? serve::ServeMode::Auth : serve::ServeMode::Origin;
    const QString refusal = parser.value(refusalOption);
    if (refusal != "decided" && refusal != "403") {
        return badInput(
            "serve", "--refusal-status \"" + refusal.toStdString() + "\": expected decided or 403");
    }
    options.decision.refuseAs403 = refusal == "403";
    QStringList listen = parser.values(listenOption);
    if (listen.isEmpty()) listen << "127.0.0.1:8080";
    for (const QString& text : listen) {
        std::string why;
        std::optional<serve::ListenAddress> a =
            serve::ListenAddress::parse(text.toStdString(), &why);
        if (!a) return badInput("serve", "--listen \"" + text.toStdString() + "\": " + why);
        options.http.listen.push_back(*a);
    }
    if (parser.isSet(adminOption)) {
        std::string why;
        options.admin = serve::ListenAddress::parse(parser.value(adminOption).toStdString(), &why);
        if (!options.admin) {
            return badInput("serve",
                            "--admin \"" + parser.value(adminOption).toStdString() + "\": " + why);
        }
    }
    const std::size_t descriptors = raiseDescriptorLimit();
    std::int64_t threads = 0, connections = 10'000, body = 64 * 1024, headerMs = 10'000,
                 idleMs = 60'000, drainMs = 30'000;
    if (!readNumber(parser, threadsOption, 1, 256, &threads) ||
        !readNumber(parser, connectionsOption, 1, 10'000'000, &connections) ||
        !readNumber(parser, bodyOption, 0, std::int64_t(1) << 40, &body) ||
        !readNumber(parser, headerTimeoutOption, 1, 3'600'000, &headerMs) ||
        !readNumber(parser, idleTimeoutOption, 1, 3'600'000, &idleMs) ||
        !readNumber(parser, drainTimeoutOption, 0, 3'600'000, &drainMs)) {
        return kBadInput;
    }
    // Each connection holds one descriptor; keep some for the store, logs and listeners.
    const std::size_t reserve = 64;
    if (descriptors > reserve && static_cast<std::size_t>(connections) > descriptors - reserve) {
        connections = static_cast<std::int64_t>(descriptors - reserve);
    }
    options.http.threads = static_cast<int>(threads);
    options.http.maxConnections = static_cast<std::size_t>(connections);
    options.http.limits.maxBodyBytes = static_cast<std::uint64_t>(body);
    options.http.headerTimeout = headerMs * kNanosPerMilli;
    options.http.bodyTimeout = headerMs * kNanosPerMilli;
    options.http.idleTimeout = idleMs * kNanosPerMilli;
    options.drainTimeout = drainMs * kNanosPerMilli;
    options.logDecisions = !parser.isSet(quietOption);
    if (parser.isSet(secretOption)) {
        std::ifstream in(parser.value(secretOption).toStdString(), std::ios::binary);
        std::stringstream text;
        text << in.rdbuf();
        std::string secret = text.str();
        while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r'))
            secret.pop_back();
        if (!in || secret.size() < 16) {
            return badInput("serve", parser.value(secretOption).toStdString() +
                                         ": cannot read a secret of at least 16 bytes");
        }
        options.keyNameSecret = std::move(secret);
    }

    std::vector<Diagnostic> diagnostics;
    std::string error;
    std::unique_ptr<serve::Sidecar> sidecar = serve::Sidecar::open(options, &diagnostics, &error);
    printDiagnostics(diagnostics);
    if (!sidecar) {
        if (!error.empty()) return badInput("serve", error);
        return kBadInput;
    }
    if (!serve::blockServiceSignals()) return badInput("serve", "cannot block signals");
    sidecar->start();
    for (const serve::ListenAddress& a : sidecar->addresses()) {
        std::printf("listening on http://%s\n", a.toString().c_str());
    }
    for (const serve::ListenAddress& a : sidecar->adminAddresses()) {
        std::printf("admin on http://%s\n", a.toString().c_str());
    }
    std::fflush(stdout);
    return serve::waitForSignals(*sidecar);
}

}  // namespace

RATELAB_CLI_COMMAND({"serve", kSynopsis,
                     "decide a proxy's requests (auth) or answer them (origin) through a policy",
                     &serve});

}  // namespace ratelab::cli
