#pragma once

// The sidecar's counters and their Prometheus text exposition (format 0.0.4). Counters written
// on the request path live in one shard per event loop, so loops never share a cache line;
// /metrics sums the shards. Outcomes are the engine's list (kPolicyOutcomeCount,
// policyOutcomeName), so an outcome added to the engine shows up here without a change.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <optional>

#include "ratelab/batching_store.h"
#include "ratelab/limit.h"
#include "ratelab/limit_observer.h"
#include "ratelab/redis_store.h"
#include "ratelab/store.h"
#include "serve/http/http_server.h"

namespace ratelab::serve {

/// Everything /metrics reports beside the counters kept here.
struct MetricsSnapshot {
    HttpServerStats decisions;  ///< the listener proxies call
    HttpServerStats admin;
    KeyspaceStats keyspace;
    std::string_view storeKind;
    /// A Redis store's counters, and the batching in front of it, when the service has them.
    std::optional<RedisStoreCounters> redis;
    std::optional<BatchingStoreCounters> batching;
    std::int64_t policies = 0;  ///< policies in the running file
    bool ready = false;
    bool draining = false;
};

/// Thread-safe: the count*() calls from any thread (each loop with its own index), render()
/// from any.
class SidecarMetrics {
public:
    /// Names of at most this many policies are told apart over the life of the process; later
    /// names are counted under policy="(other)".
    static constexpr std::uint32_t kMaxPolicyNames = 1024;
    /// Upper bounds of the decision-latency histogram, in nanoseconds.
    static constexpr std::array<Nanos, 16> kLatencyBounds = {
        1'000,      2'500,      5'000,       10'000,       25'000,    50'000,
        100'000,    250'000,    500'000,     1'000'000,    2'500'000, 5'000'000,
        10'000'000, 50'000'000, 250'000'000, 1'000'000'000};

    SidecarMetrics(unsigned workers, std::string version);
    ~SidecarMetrics();

    /// The counter row of a policy name, the same for the life of the process.
    std::uint32_t slotFor(std::string_view policyName);

    /// One matching policy's outcome, from loop `worker`.
    void countDecision(unsigned worker, std::uint32_t slot, PolicyOutcome outcome);
    /// A request the policy in `slot` refused (Check::refusal()), from loop `worker`.
    void countRefusal(unsigned worker, std::uint32_t slot);
    /// One answered decision request: the status the decision carries (200, 412, 429, 503), or
    /// 400 when the request did not describe a request to decide.
    void countRequest(unsigned worker, int status, Nanos latency);
    /// A store call that failed (any thread).
    void countStoreError(std::uint32_t slot, StoreStatus status);
    void countReload(bool succeeded, Nanos wallTime);

    /// The whole exposition.
    std::string render(const MetricsSnapshot& snapshot) const;

private:
    static constexpr std::array<int, 6> kStatuses = {200, 400, 412, 429, 503, 0};  // 0: other
    using OutcomeRow = std::array<std::atomic<std::int64_t>, kPolicyOutcomeCount>;
    struct Shard;

    const std::string version_;
    std::vector<std::unique_ptr<Shard>> shards_;
    mutable std::mutex namesMutex_;
    std::vector<std::string> names_;
    std::unique_ptr<std::array<std::atomic<std::int64_t>, 2>[]> storeErrors_;  // per slot
    std::atomic<std::int64_t> reloads_{0};
    std::atomic<std::int64_t> reloadFailures_{0};
    std::atomic<Nanos> lastReload_{0};
};

}  // namespace ratelab::serve
