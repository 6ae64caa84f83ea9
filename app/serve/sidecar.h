#pragma once

// ratelab as a service: the decision listener proxies call, the admin listener, the running
// policies with their reloads, the logs, and the drain on shutdown. `ratelab-cli serve` is this
// class behind a command line and signal handling.

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ratelab/diagnostic.h"
#include "ratelab/key_namer.h"
#include "ratelab/json_log_observer.h"
#include "serve/admin/admin_handler.h"
#include "serve/decision_handler.h"
#include "serve/http/http_server.h"
#include "serve/admin/service_metrics.h"
#include "serve/policy_runtime.h"
#include "serve/admin/service_log.h"

namespace ratelab::serve {

struct SidecarOptions {
    std::string policyPath;
    DecisionOptions decision;
    /// The decision listener: addresses, loops, limits and timeouts.
    HttpServerOptions http;
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
    /// Loads the policy file, makes the store and binds both listeners. Null when the file has
    /// errors (in *diagnostics, warnings included) or something cannot be set up (in *error).
    static std::unique_ptr<Sidecar> open(const SidecarOptions& options,
                                         std::vector<Diagnostic>* diagnostics, std::string* error);
    ~Sidecar() override;

    /// Starts serving on both listeners.
    void start();
    /// Reloads the policy file (SIGHUP, POST /-/reload) and logs what happened. Thread-safe.
    ReloadResult reload(std::string_view trigger) override;
    /// Stops accepting and answers what is in flight; readiness goes false at once.
    void drain();
    /// Ends a drain at once: connections still open are cut.
    void cut();
    /// Blocks until a drain has finished. Returns the connections the drain cut.
    std::int64_t wait();

    const std::vector<ListenAddress>& addresses() const { return decisions_->addresses(); }
    /// Empty without an admin listener.
    std::vector<ListenAddress> adminAddresses() const;
    HttpServer& decisionServer() { return *decisions_; }
    PolicyRuntime& runtime() { return *runtime_; }
    ServiceLog& log() { return log_; }

private:
    class Observer;
    explicit Sidecar(const SidecarOptions& options);

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
    std::atomic<bool> draining_{false};
};

}  // namespace ratelab::serve
