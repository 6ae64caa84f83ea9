#pragma once

// The running policies of the sidecar and their reloads. Loops read the current generation
// without a lock on the request path (a version number tells them when to take the new one);
// a reload builds a new Limiter beside the running one, on the same store, and publishes it.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ratelab/diagnostic.h"
#include "ratelab/limiter.h"
#include "ratelab/policy.h"
#include "ratelab/store.h"

namespace ratelab::serve {

class SidecarMetrics;

/// One loaded policy file: the limiter deciding with it, and each policy's metrics row.
struct PolicyGeneration {
    std::unique_ptr<const Limiter> limiter;
    std::vector<std::uint32_t> metricSlots;  ///< metricSlots[i] for policy i
    std::uint64_t number = 1;                ///< 1 for the file loaded at start, then +1
};

/// What a reload did.
struct ReloadResult {
    /// What was read again: "policy" (the policy file) or "rls" (the rate limit configuration,
    /// whose kept and fresh name domains).
    std::string config = "policy";
    bool ok = false;
    std::vector<Diagnostic> diagnostics;  ///< the file's problems (warnings too)
    std::string error;                    ///< why it was refused, when not a file problem
    std::uint64_t generation = 0;         ///< the generation running afterwards
    std::vector<std::string> kept;        ///< policies that kept their buckets
    std::vector<std::string> fresh;       ///< policies that start with fresh buckets
};

/// Thread-safe.
class PolicyRuntime {
public:
    /// Loads `path`, makes its store (makeServiceStore: a store outside the process is
    /// batched) and the first generation. Null when the file has errors
    /// or its store block cannot be used (in *diagnostics, with warnings), or when it cannot
    /// be read (in *error).
    /// `limiterOptions.observer` and `metrics` must outlive the runtime.
    static std::unique_ptr<PolicyRuntime> open(const std::string& path,
                                               const LimiterOptions& limiterOptions,
                                               SidecarMetrics& metrics,
                                               std::vector<Diagnostic>* diagnostics,
                                               std::string* error);

    /// Reads the file again. A file with errors, or one whose store block changed, is refused
    /// and the running generation stays; otherwise the new one takes over, keeping the buckets
    /// of every policy whose name, algorithm and key rules did not change (keepsBucketState).
    ReloadResult reload();

    std::shared_ptr<const PolicyGeneration> current() const;
    /// Changes whenever a new generation is published (cheap to poll).
    std::uint64_t version() const { return version_.load(std::memory_order_acquire); }
    Store& store() const { return *store_; }
    /// The store, for a rate limit configuration served beside the policies.
    const std::shared_ptr<Store>& sharedStore() const { return store_; }
    const std::string& path() const { return path_; }

private:
    PolicyRuntime() = default;
    std::shared_ptr<const PolicyGeneration> build(PolicySet policies, const Limiter* previous,
                                                  std::uint64_t number);

    std::string path_;
    LimiterOptions limiterOptions_;
    SidecarMetrics* metrics_ = nullptr;
    std::shared_ptr<Store> store_;
    std::mutex reloadMutex_;  // one reload at a time
    mutable std::mutex currentMutex_;
    std::shared_ptr<const PolicyGeneration> current_;
    std::atomic<std::uint64_t> version_{0};
};

/// A loop's view of the current generation: takes the new one only when the version moved.
/// Not thread-safe; one per loop.
class GenerationReader {
public:
    explicit GenerationReader(const PolicyRuntime& runtime) : runtime_(runtime) {}
    const PolicyGeneration& get() {
        const std::uint64_t v = runtime_.version();
        if (v != seen_) {
            held_ = runtime_.current();
            seen_ = v;
        }
        return *held_;
    }

private:
    const PolicyRuntime& runtime_;
    std::uint64_t seen_ = ~std::uint64_t(0);
    std::shared_ptr<const PolicyGeneration> held_;
};

}  // namespace ratelab::serve
