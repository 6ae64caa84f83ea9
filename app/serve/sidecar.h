#pragma once

// ratelab as a service: the decision listener proxies call, Envoy's rate limit service on a
// gRPC listener, the admin listener, the running policies and rate limit configuration with
// their reloads, the logs, and the drain on shutdown. `ratelab-cli serve` is this class behind
// a command line and signal handling.

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ratelab/diagnostic.h"
#include "ratelab/json_log_observer.h"
#include "ratelab/key_namer.h"
#include "serve/admin/admin_handler.h"
#include "serve/admin/rls_metrics.h"
#include "serve/admin/service_log.h"
#include "serve/admin/service_metrics.h"
#include "serve/decision_handler.h"
#include "serve/grpc/grpc_server.h"
#include "serve/grpc/health_service.h"
#include "serve/grpc/rls_service.h"
#include "serve/http/http_server.h"
#include "serve/policy_runtime.h"
#include "serve/rls_runtime.h"

namespace ratelab::serve {

/// Envoy's rate limit service: its configuration and the gRPC listener that serves it.
struct RlsServeOptions {
    std::string configPath;
    /// Empty: loadRlsDecisions (a test wraps it, to stage what the decider does).
    RlsLoader loader;
    /// Global modes and store-error rule of the decider; its observer is the sidecar's
    /// counters.
    rls::RlsDeciderOptions decider;
    /// The listener, its address and limits.
    GrpcServerOptions grpc;
    /// The store when there is no policy file (whose store is shared otherwise); null: a
    /// memory store.
    std::shared_ptr<Store> store;
    /// Null: systemWallClock(). Not owned; must outlive the sidecar.
    const WallClock* clock = nullptr;
};

struct SidecarOptions {
    /// The policy file the decision listener decides with; empty: no decision listener.
    std::string policyPath;
    DecisionOptions decision;
    /// The decision listener: addresses, loops, limits and timeouts (the drain's grace and the
    /// admin listener's limits too).
    HttpServerOptions http;
    /// Envoy's rate limit service, when rls.configPath is set. At least one of policyPath and
    /// rls.configPath must be.
    RlsServeOptions rls;
    /// The admin listener (/metrics, /healthz, /readyz, /-/reload); none when unset.
    std::optional<ListenAddress> admin;
    /// Log limit hits and store errors (rate-limited per policy), not only the sidecar's events.
    bool logDecisions = true;
    /// Secret naming keys in log lines (HMAC-SHA-256); empty: a random one per process.
    std::string keyNameSecret;
    /// How long a drain may take before the connections left are cut.
    Nanos drainTimeout = 30 * kNanosPerSecond;
    /// Bound on every store call of the service (LimiterOptions::maxStoreTimeout): a call
    /// that runs out of it is decided by its policy's on_store_error. Under the 20 ms Envoy's
    /// rate limit filter waits by default.
    Nanos storeTimeout = 15 * kNanosPerMilli;
    /// Where log lines go; empty: standard error.
    ServiceLog::Sink logSink;
    std::string version;
};

class Sidecar final : private AdminActions {
public:
    /// Loads the policy file and the rate limit configuration, makes the store, asks it once
    /// (a store outside the process connects and loads its scripts here, within its own
    /// timeouts, not on the first calls) and binds the listeners. Null when a file has errors (in
    /// *diagnostics, warnings included) or something cannot be set up (in *error).
    static std::unique_ptr<Sidecar> open(const SidecarOptions& options,
                                         std::vector<Diagnostic>* diagnostics, std::string* error);
    ~Sidecar() override;

    /// Starts serving on every listener.
    void start();
    /// Reloads the policy file and the rate limit configuration (SIGHUP, POST /-/reload) and
    /// logs what happened: one result each. Thread-safe.
    std::vector<ReloadResult> reload(std::string_view trigger) override;
    /// Stops accepting and answers what is in flight; readiness and gRPC health go false at
    /// once, and the gRPC listener keeps answering for the drain's grace (http.drainIdleGrace)
    /// so that Envoy sees the health check fail before the connections close.
    void drain();
    /// Ends a drain at once: connections still open are cut.
    void cut();
    /// Blocks until a drain has finished. Returns the connections the drain cut.
    std::int64_t wait();

    /// The decision listener's addresses; empty without a policy file.
    std::vector<ListenAddress> addresses() const;
    /// Empty without an admin listener.
    std::vector<ListenAddress> adminAddresses() const;
    /// The gRPC listener's address; nullopt without a rate limit configuration.
    std::optional<ListenAddress> grpcAddress() const;
    /// REQUIRES: a policy file.
    HttpServer& decisionServer() { return *decisions_; }
    /// REQUIRES: a policy file.
    PolicyRuntime& runtime() { return *runtime_; }
    /// Null without a rate limit configuration.
    RlsRuntime* rlsRuntime() { return rlsRuntime_.get(); }
    RlsMetrics& rlsMetrics() { return rlsMetrics_; }
    ServiceLog& log() { return log_; }

private:
    class Observer;
    explicit Sidecar(const SidecarOptions& options);
    bool openRls(std::vector<Diagnostic>* diagnostics, std::string* error);
    void logReload(const ReloadResult& result, std::string_view trigger);
    /// Asks the store once before the listeners take calls (its connection and scripts).
    void warmStore();
    Store& store() const;

    std::string metricsText() override;
    std::string unreadyReason() override;

    SidecarOptions options_;
    ServiceLog log_;
    KeyNamer keyNamer_;
    std::unique_ptr<SidecarMetrics> metrics_;
    std::unique_ptr<JsonLogObserver> decisionLog_;
    std::unique_ptr<Observer> observer_;
    std::unique_ptr<PolicyRuntime> runtime_;
    std::unique_ptr<DecisionHandler> decisionHandler_;
    AdminHandler adminHandler_;
    std::unique_ptr<HttpServer> decisions_;
    std::unique_ptr<HttpServer> admin_;
    RlsMetrics rlsMetrics_;
    std::unique_ptr<RlsRuntime> rlsRuntime_;
    std::unique_ptr<RlsService> rlsService_;
    std::unique_ptr<HealthService> healthService_;
    std::unique_ptr<GrpcServer> grpc_;
    std::atomic<bool> draining_{false};
    std::string warmError_;  // why the store did not answer at start; empty when it did
};

}  // namespace ratelab::serve
