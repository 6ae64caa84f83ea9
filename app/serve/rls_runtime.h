#pragma once

// The running rate limit configuration (Envoy's rate limit service) and its reloads, beside
// the policy file's PolicyRuntime: the gRPC listener decides with the current generation; a
// reload reads the configuration again and publishes a new generation only when it has no
// errors, built beside the running one on the same store so that the counters of unchanged
// descriptors carry on.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "ratelab/diagnostic.h"
#include "ratelab/store.h"
#include "serve/grpc/rls_service.h"
#include "serve/policy_runtime.h"
#include "serve/rls/rls_decider.h"

namespace ratelab::serve {

/// What reading a configuration gave: the decisions it serves (null when it has errors or
/// cannot be read), its domains, its diagnostics (warnings too), and `error` when it could not
/// be read at all.
struct RlsLoadOutcome {
    std::shared_ptr<RlsDecisions> decisions;
    std::vector<std::string> domains;
    std::vector<Diagnostic> diagnostics;
    std::string error;
};

/// What a load works with.
struct RlsLoadContext {
    const std::string& path;
    const std::shared_ptr<Store>& store;
    /// The generation serving now (null at start): a decider for an unchanged rule keeps its
    /// counters.
    const RlsDecisions* running;
    /// The decider's options; `observer` is the service's counters.
    const rls::RlsDeciderOptions& options;
};

/// Reads a configuration into decisions. Called by the runtime, one load at a time.
using RlsLoader = std::function<RlsLoadOutcome(const RlsLoadContext& context)>;

/// The service's loader: envoyproxy/ratelimit's YAML (a file, or a directory of *.yaml and
/// *.yml files) read by formats/envoy, decided by serve/rls's RlsDecider.
RlsLoadOutcome loadRlsDecisions(const RlsLoadContext& context);

struct RlsGeneration {
    std::shared_ptr<RlsDecisions> decisions;
    std::vector<std::string> domains;
    std::uint64_t number = 1;  ///< 1 for the configuration loaded at start, then +1
};

/// Thread-safe.
class RlsRuntime final : public RlsDecisions {
public:
    /// Loads `path` into the first generation. Null when it has errors (in *diagnostics,
    /// warnings included) or cannot be read (in *error). `options.observer` must outlive the
    /// runtime.
    static std::unique_ptr<RlsRuntime> open(const std::string& path, RlsLoader loader,
                                            std::shared_ptr<Store> store,
                                            rls::RlsDeciderOptions options,
                                            std::vector<Diagnostic>* diagnostics,
                                            std::string* error);

    /// Reads the configuration again. One with errors is refused and the running generation,
    /// counters and all, stays; otherwise the new one takes over. `kept` lists the domains
    /// served before and after, `fresh` the new ones.
    ReloadResult reload();

    /// Decides with the current generation.
    rls::RlsResult decide(const rls::RlsRequest& request, Nanos now) override;
    void decideBatch(std::span<const rls::RlsRequest> requests, Nanos now, Nanos storeTimeout,
                     std::span<rls::RlsResult> out) override;
    const rls::RlsDecider* decider() const override;

    std::shared_ptr<const RlsGeneration> current() const;
    const std::string& path() const { return path_; }
    Store& store() const { return *store_; }

private:
    RlsRuntime() = default;

    std::string path_;
    RlsLoader loader_;
    std::shared_ptr<Store> store_;
    rls::RlsDeciderOptions options_;
    std::mutex reloadMutex_;  // one reload at a time
    mutable std::mutex currentMutex_;
    std::shared_ptr<const RlsGeneration> current_;
};

}  // namespace ratelab::serve
