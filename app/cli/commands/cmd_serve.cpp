// ratelab-cli serve: ratelab as a decision sidecar (app/serve). `--mode auth` answers the
// sub-requests of a proxy (nginx auth_request, Traefik ForwardAuth, Envoy ext_authz, HAProxy);
// `--mode origin` answers "ok" to every request the policy lets through, to try a policy with
// curl. SIGHUP reloads the policy file, SIGTERM drains and exits 0. Logs are JSON lines on
// stderr; the addresses bound are printed on stdout.

#include <sys/resource.h>

#include <cstdio>

#include "cli/command.h"
#include "cli/inputs.h"
#include "io/text_file.h"
#include "serve/signals.h"

namespace ratelab::cli {

namespace {

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

int serveCommand(const Arguments& args) {
    serve::SidecarOptions options;
    options.policyPath = args.value("policy");
    options.version = RATELAB_VERSION;
    const std::string mode = args.value("mode", "origin");
    if (mode != "origin" && mode != "auth") {
        return fail(kUsage, "--mode \"" + mode + "\": expected origin or auth");
    }
    options.decision.mode = mode == "auth" ? serve::ServeMode::Auth : serve::ServeMode::Origin;
    const std::string refusal = args.value("refusal-status", "decided");
    if (refusal != "decided" && refusal != "403") {
        return fail(kUsage, "--refusal-status \"" + refusal + "\": expected decided or 403");
    }
    options.decision.refuseAs403 = refusal == "403";
    std::vector<std::string> listen = args.values("listen");
    if (listen.empty()) listen.push_back("127.0.0.1:8080");
    for (const std::string& text : listen) {
        std::string why;
        std::optional<serve::ListenAddress> a = serve::ListenAddress::parse(text, &why);
        if (!a) return fail(kUsage, "--listen \"" + text + "\": " + why);
        options.http.listen.push_back(*a);
    }
    if (args.isSet("admin")) {
        std::string why;
        options.admin = serve::ListenAddress::parse(args.value("admin"), &why);
        if (!options.admin) return fail(kUsage, "--admin \"" + args.value("admin") + "\": " + why);
    }
    std::int64_t threads = 0, connections = 10'000, body = 64 * 1024, headerMs = 10'000,
                 idleMs = 60'000, drainMs = 30'000, storeTimeoutMs = 15;
    if (!args.wholeNumber("threads", 1, 256, threads) ||
        !args.wholeNumber("max-connections", 1, 10'000'000, connections) ||
        !args.wholeNumber("max-body-bytes", 0, std::int64_t(1) << 40, body) ||
        !args.wholeNumber("header-timeout-ms", 1, 3'600'000, headerMs) ||
        !args.wholeNumber("idle-timeout-ms", 1, 3'600'000, idleMs) ||
        !args.wholeNumber("drain-timeout-ms", 0, 3'600'000, drainMs) ||
        !args.wholeNumber("store-timeout-ms", 1, 60'000, storeTimeoutMs)) {
        return kUsage;
    }
    // Each connection holds one descriptor; keep some for the store, logs and listeners.
    const std::size_t descriptors = raiseDescriptorLimit();
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
    options.storeTimeout = storeTimeoutMs * kNanosPerMilli;
    options.logDecisions = !args.isSet("quiet");
    if (args.isSet("key-secret-file")) {
        const std::string path = args.value("key-secret-file");
        std::string error;
        std::optional<std::string> secret = io::readTextFile(path, 1 << 16, &error);
        if (!secret) return fail(kIoError, path + ": " + error);
        while (!secret->empty() && (secret->back() == '\n' || secret->back() == '\r'))
            secret->pop_back();
        if (secret->size() < 16) {
            return fail(kInvalidInput, path + ": a key secret needs at least 16 bytes");
        }
        options.keyNameSecret = std::move(*secret);
    }

    std::vector<Diagnostic> diagnostics;
    std::string error;
    std::unique_ptr<serve::Sidecar> sidecar = serve::Sidecar::open(options, &diagnostics, &error);
    printDiagnostics(diagnostics);
    if (!sidecar) {
        // The file's own errors are diagnostics; what could not be set up (a file that cannot
        // be read, a store, a port) is an I/O failure.
        return error.empty() ? kInvalidInput : fail(kIoError, error);
    }
    if (!serve::blockServiceSignals()) return fail(kIoError, "cannot block signals");
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

Command makeServeCommand() {
    Command c;
    c.name = "serve";
    c.summary = "decide a proxy's requests (auth) or answer them (origin) through a policy";
    c.description =
        "Runs ratelab as a decision sidecar. --mode auth answers the sub-requests of a proxy "
        "(nginx auth_request, Traefik ForwardAuth, Envoy ext_authz, HAProxy) with 200 or the "
        "refusal; --mode origin answers \"ok\" to every request the policy lets through, to try "
        "a policy with curl. SIGHUP (or POST /-/reload on the admin address) reloads the policy "
        "file, SIGTERM answers what is in flight and exits 0. Logs are JSON lines on stderr; the "
        "addresses bound are printed on stdout.";
    c.options = {
        Option::input("policy", "P.json", "The policy file.").asRequired(),
        Option::value("mode", "origin|auth",
                      "auth: answer a proxy's sub-requests (200 or the refusal); origin: answer "
                      "\"ok\" (default)."),
        Option::value("listen", "HOST:PORT",
                      "Address to decide on, repeatable (default 127.0.0.1:8080; port 0: any "
                      "free one).")
            .asRepeated(),
        Option::value("admin", "HOST:PORT",
                      "Address of /metrics, /healthz, /readyz and POST /-/reload."),
        Option::value("threads", "N", "Event loops (default: one per core)."),
        Option::value("refusal-status", "decided|403",
                      "Auth mode: send refusals with their own status (decided, the default) or "
                      "as 403 with X-Ratelab-Status, for nginx auth_request."),
        Option::flag("quiet", "Do not log limit hits and store errors."),
        Option::input("key-secret-file", "FILE",
                      "Secret naming keys in logs (HMAC-SHA-256); default: random."),
        Option::value("max-connections", "N", "Open connections (default 10000)."),
        Option::value("max-body-bytes", "N", "Largest request body (default 65536)."),
        Option::value("header-timeout-ms", "N",
                      "Time for a request's head to arrive (default 10000)."),
        Option::value("idle-timeout-ms", "N",
                      "Idle kept-alive connections close after this (default 60000)."),
        Option::value("drain-timeout-ms", "N",
                      "On SIGTERM, time to answer what is in flight (default 30000)."),
        Option::value("store-timeout-ms", "N",
                      "Bound on every store call; past it a policy's on_store_error decides "
                      "(default 15; a policy's shorter store_timeout_ms stands)."),
    };
    c.run = &serveCommand;
    return c;
}

}  // namespace

RATELAB_CLI_COMMAND(makeServeCommand());

}  // namespace ratelab::cli
