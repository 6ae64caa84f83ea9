#pragma once

// The engine's front door (Limiter) and its options. What a decision returns is in verdict.h.

#include <cstdint>
#include <memory>
#include <span>

#include "ratelab/limit.h"
#include "ratelab/limit_observer.h"
#include "ratelab/policy.h"
#include "ratelab/policy_tuning.h"
#include "ratelab/request.h"
#include "ratelab/store.h"
#include "ratelab/verdict.h"

namespace ratelab {

struct LimiterOptions {
    /// Receives limit hits and store failures. Not owned; must outlive the limiter.
    LimitObserver* observer = nullptr;
    /// Secret of the keyed hash that names keys in events. 0 picks a random one; replicas that
    /// want correlated logs share a value.
    std::uint64_t keyHashSecret = 0;
    /// Shards of the memory store that on_store_error "local" decides on
    /// (MemoryStoreOptions::shards; 0: the store's default). A simulator fixes it, as it fixes
    /// its own stores', so that its reports do not depend on the machine.
    unsigned localStoreShards = 0;
    /// Bound on every store call of this limiter, in nanoseconds: each call gets the shorter of
    /// this and its policy's store_timeout_ms (ConsumeRequest::timeout, SettleRequest::timeout),
    /// and what a call that runs out of it gets is the policy's on_store_error. 0: the policies'
    /// own. A service sets it from `serve --store-timeout-ms`.
    Nanos maxStoreTimeout = 0;
    /// The Unix time, in ns, of `now` == 0 in the times given to check(), decide() and settle():
    /// where calendar-aligned windows (fixed_window, align "calendar") fall. 0 when the times are
    /// Unix times (a recorded log; a simulation, whose time 0 is the epoch); a service deciding
    /// on CLOCK_MONOTONIC gives unixTimeOfMonotonicZero().
    Nanos unixTimeAtZero = 0;
};

/// The Unix time of CLOCK_MONOTONIC's (steady_clock's) zero, read from both clocks now, in ns:
/// LimiterOptions::unixTimeAtZero for a caller whose `now` is CLOCK_MONOTONIC. Thread-safe.
Nanos unixTimeOfMonotonicZero();

/// The engine's front door: matches policies, derives keys, consumes from the store, applies
/// store-error rules, shadow mode and bypasses, and renders verdicts.
/// check() and decide() are thread-safe when the store is (both shipped stores are).
class Limiter {
public:
    /// Compiles each policy once (compileLimits). REQUIRES: `policies` validated (loading a
    /// policy file does it).
    Limiter(PolicySet policies, std::shared_ptr<Store> store, LimiterOptions options = {});
    /// A limiter for `policies` that takes over `previous`'s store and bucket state, for
    /// reloading a policy file while serving: a policy that keepsBucketState() with the policy
    /// of `previous` of the same name decides on that policy's buckets; every other policy
    /// starts with fresh ones (limit ids `previous` never used). `previous` may go on deciding
    /// meanwhile. REQUIRES: `policies` validated.
    Limiter(PolicySet policies, const Limiter& previous, LimiterOptions options = {});
    ~Limiter();
    Limiter(const Limiter&) = delete;
    Limiter& operator=(const Limiter&) = delete;

    /// Decides without rendering text. Never throws.
    void check(const RequestView& request, Nanos now, Check& out) const;

    /// Decides requests[i] into out[i], with exactly the results of calling check() on each in
    /// turn (requests on the same key are decided in order), but with one store call per batch
    /// where it can: keys are derived for every request first, then the store hashes and
    /// prefetches every bucket before deciding them in order (memory), or pipelines them
    /// (Redis). A request that more than one policy may charge is answered before the requests
    /// after it are sent. Never throws. REQUIRES: out.size() >= requests.size().
    void checkBatch(std::span<const RequestView> requests, Nanos now, std::span<Check> out) const;
    /// As above, request i decided at times[i]. REQUIRES: times.size() >= requests.size().
    void checkBatch(std::span<const RequestView> requests, std::span<const Nanos> times,
                    std::span<Check> out) const;

    /// Decides and renders status, headers and body into `out`, reusing its buffers. With
    /// `explain`, also fills each policy's key and scope in out.check. Never throws.
    void decide(const RequestView& request, Nanos now, Verdict& out, bool explain = false) const;
    Verdict decide(const RequestView& request, Nanos now, bool explain = false) const;
    /// Decides requests[i] at times[i] as checkBatch() does (one store call per batch where it
    /// can, exactly the decisions of deciding them one by one) and renders each into out[i] as
    /// decide() does, reusing its buffers. For a service that answers several requests at once
    /// from a shared store. Never throws.
    /// REQUIRES: times.size() >= requests.size(), out.size() >= requests.size().
    void decideBatch(std::span<const RequestView> requests, std::span<const Nanos> times,
                     std::span<Verdict> out) const;

    /// Applies a response's HTTP `status` to what `check` charged, for each policy that charges
    /// by outcome (chargesByOutcome in policy.h): gives back the cost of a request its `charge`
    /// rule does not count, and charges the penalty of a status in its penalty_statuses
    /// (settleCost). Each adjustment goes atomically to the very bucket the decision charged
    /// (its key or budget fallback, its partition, its store), and only while that bucket still
    /// holds the charge: a bucket evicted and made again, or full again since (a token bucket
    /// forgets what it owed once full), or a window that has ended, is left alone. A `check`
    /// decided by another limiter (before a reload) or under limits a retune has changed since
    /// is ignored. A refund never raises a bucket above its capacity. Only admitted requests
    /// were charged, so refused ones have nothing to settle; a Check whose policies all charge
    /// "always" without a penalty returns at once (Check::settles). Store errors are dropped:
    /// the charge stands. Call once per decision, with `check` as it was decided (checkBatch
    /// checks included). Thread-safe like check(); not with retune(). Never throws; allocates
    /// nothing with the memory store.
    void settle(const Check& check, int status, Nanos now) const;
    /// settle(checks[i], statuses[i], now), with one store call per batch where it can (a Redis
    /// store pipelines them). REQUIRES: statuses.size() >= checks.size().
    void settleBatch(std::span<const Check> checks, std::span<const int> statuses, Nanos now) const;
    /// As above, check i settled at times[i]. REQUIRES: times.size() >= checks.size().
    void settleBatch(std::span<const Check> checks, std::span<const int> statuses,
                     std::span<const Nanos> times) const;

    const PolicySet& policies() const;
    Store& store() const;
    /// Where policies with on_store_error "local" decide while the shared store is unreachable;
    /// null when no policy does.
    const Store* localStore() const;

    /// Replaces one policy's tunable fields (policy_tuning.h: numbers, cost, mode, headers,
    /// store-error rule) in place, as the workbench sliders do, and recompiles its limits;
    /// buckets keep their state. Ask canRetune() first when the change comes as a whole edited
    /// policy. REQUIRES: the tuned policy validates. Not thread-safe with check()/decide().
    void retune(std::size_t policyIndex, const PolicyTuning& tuning);

    /// The limitId a policy's tier uses in the store. Stable for the limiter's life.
    std::uint32_t limitId(std::size_t policyIndex, std::size_t tier = 0) const;

private:
    struct Impl;
    struct Batch;
    struct SettleBatch;
    void render(const RequestView& request, Verdict& out) const;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ratelab
