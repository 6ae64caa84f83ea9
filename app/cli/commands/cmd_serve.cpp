// ratelab-cli serve: ratelab as a decision sidecar (app/serve). `--mode auth` answers the
// sub-requests of a proxy (nginx auth_request, Traefik ForwardAuth, Envoy ext_authz, HAProxy);
// `--mode origin` answers "ok" to every request the policy lets through, to try a policy with
// curl. `--rls-config` serves Envoy's rate limit service on `--grpc`, beside the policy or
// alone. SIGHUP reloads the policy file and the rate limit configuration, SIGTERM drains and
// exits 0. Logs are JSON lines on stderr; the addresses bound are printed on stdout.

#include <sys/resource.h>

#include <cstdio>

#include "cli/command.h"
#include "cli/inputs.h"
#include "io/text_file.h"
#include "ratelab/redis_url.h"
#include "serve/service_store.h"
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

// --store without a policy file: memory, or a Redis URL (the store block a policy file would
// write, under the namespace "ratelab").
ExitCode storeOption(const Arguments& args, std::shared_ptr<Store>& out) {
    const std::string text = args.value("store", "memory");
    if (text == "memory") return kSuccess;
    std::string why;
    if (!parseRedisUrl(text, &why)) {
        return fail(kUsage, "--store \"" + redactRedisUrl(text) +
                                "\": expected memory or a Redis URL: " + why);
    }
    StoreConfig config;
    config.kind = StoreConfig::Kind::Redis;
    config.urls = {text};
    std::shared_ptr<Store> store = serve::makeServiceStore(config, &why);
    if (!store) return fail(kIoError, "--store \"" + redactRedisUrl(text) + "\": " + why);
    out = std::move(store);
    return kSuccess;
}

int serveCommand(const Arguments& args) {
    serve::SidecarOptions options;
    options.policyPath = args.value("policy");
    options.rls.configPath = args.value("rls-config");
    if (options.policyPath.empty() && args.isSet("listen")) {
        return fail(kUsage, "--listen decides with a policy file: give --policy");
    }
    if (options.rls.configPath.empty() && args.isSet("grpc")) {
        return fail(kUsage, "--grpc serves a rate limit configuration: give --rls-config");
    }
    if (options.policyPath.empty() && options.rls.configPath.empty()) {
        return fail(kUsage, "nothing to serve: give --policy, --rls-config or both");
    }
    if (!options.policyPath.empty() && args.isSet("store")) {
        return fail(kUsage, "--store: with --policy, the policy file's store block is the store");
    }
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
    if (listen.empty() && !options.policyPath.empty()) listen.push_back("127.0.0.1:8080");
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
    if (!options.rls.configPath.empty()) {
        const std::string text = args.value("grpc", "127.0.0.1:8081");
        std::string why;
        std::optional<serve::ListenAddress> a = serve::ListenAddress::parse(text, &why);
        if (!a) return fail(kUsage, "--grpc \"" + text + "\": " + why);
        options.rls.grpc.listen = *a;
        if (const ExitCode code = storeOption(args, options.rls.store); code != kSuccess) {
            return code;
        }
    }
    std::int64_t threads = 0, connections = 10'000, body = 64 * 1024, headerMs = 10'000,
                 idleMs = 60'000, drainMs = 30'000, storeTimeoutMs = 15, streams = 100;
    if (!args.wholeNumber("grpc-max-streams", 1, 1'000'000, streams) ||
        !args.wholeNumber("threads", 1, 256, threads) ||
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
    options.rls.grpc.maxConcurrentStreams = static_cast<std::uint32_t>(streams);
    options.rls.grpc.maxMessageBytes =
        static_cast<std::size_t>(std::min<std::int64_t>(body, INT32_MAX));
    options.rls.grpc.handshakeTimeout = headerMs * kNanosPerMilli;
    options.rls.grpc.idleTimeout = idleMs * kNanosPerMilli;
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

    // Before any thread starts (gRPC starts its own while the sidecar opens): every thread
    // inherits the mask, so SIGHUP and SIGTERM reach only the signal loop below.
    if (!serve::blockServiceSignals()) return fail(kIoError, "cannot block signals");
    std::vector<Diagnostic> diagnostics;
    std::string error;
    std::unique_ptr<serve::Sidecar> sidecar = serve::Sidecar::open(options, &diagnostics, &error);
    printDiagnostics(diagnostics);
    if (!sidecar) {
        // The file's own errors are diagnostics; what could not be set up (a file that cannot
        // be read, a store, a port) is an I/O failure.
        return error.empty() ? kInvalidInput : fail(kIoError, error);
    }
    sidecar->start();
    for (const serve::ListenAddress& a : sidecar->addresses()) {
        std::printf("listening on http://%s\n", a.toString().c_str());
    }
    if (const auto grpc = sidecar->grpcAddress()) {
        std::printf("grpc on %s\n", grpc->toString().c_str());
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
    c.summary = "decide a proxy's requests by a policy (HTTP) or as Envoy's rate limit service";
    c.description =
        "Runs ratelab as a decision sidecar. --mode auth answers the sub-requests of a proxy "
        "(nginx auth_request, Traefik ForwardAuth, Envoy ext_authz, HAProxy) with 200 or the "
        "refusal; --mode origin answers \"ok\" to every request the policy lets through, to try "
        "a policy with curl. --rls-config serves Envoy's rate limit service "
        "(envoy.service.ratelimit.v3 ShouldRateLimit and grpc.health.v1 Check, plaintext gRPC) "
        "on --grpc, from envoyproxy/ratelimit's YAML, beside the policy or alone. SIGHUP (or "
        "POST /-/reload on the admin address) reloads the policy file and the rate limit "
        "configuration, SIGTERM answers what is in flight and exits 0. Logs are JSON lines on "
        "stderr; the addresses bound are printed on stdout.";
    c.options = {
        Option::policy("policy", "P.json", "The policy file the HTTP listener decides with."),
        Option::value("rls-config", "PATH",
                      "Envoy's rate limit service configuration: a YAML file, or a directory of "
                      "*.yaml and *.yml files (one domain each)."),
        Option::value("grpc", "HOST:PORT",
                      "Address of the rate limit service (default 127.0.0.1:8081; port 0: any "
                      "free one)."),
        Option::value("store", "memory|URL",
                      "Without --policy: the rate limit service's store, memory (default) or a "
                      "Redis URL."),
        Option::value("grpc-max-streams", "N",
                      "Calls one gRPC connection may have open at once (default 100)."),
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
        Option::value("max-body-bytes", "N",
                      "Largest request body or gRPC message (default 65536)."),
        Option::value("header-timeout-ms", "N",
                      "Time for a request's head, or a gRPC connection's HTTP/2 settings, to "
                      "arrive (default 10000)."),
        Option::value("idle-timeout-ms", "N",
                      "Idle kept-alive and gRPC connections close after this (default 60000)."),
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
