#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ratelab/limit.h"
#include "ratelab/store.h"

namespace ratelab {

/// What a matching policy did with a request.
enum class PolicyOutcome : std::uint8_t {
    Passed,               ///< allowed by the policy
    Throttled,            ///< over the limit: 429
    ShadowThrottled,      ///< over the limit in shadow mode: counted, passed
    CostExceedsCapacity,  ///< costs more than the limit can ever hold: 429, no Retry-After
    Bypassed,             ///< a bypass rule skipped the policy
    NoIdentity,           ///< no key could be derived: 412
    ForwardedMalformed,   ///< a trusted proxy's forwarded header is malformed: 412 (fail closed)
    FailedOpen,           ///< store transport error under fail_open_on_transport: passed
    FailedClosed,         ///< store transport error under deny: 503
    StoreRefused,         ///< the store refused (OOM, read-only, ...): 503 under every policy
    /// The shared store was unreachable and the policy's on_store_error is `local`: the
    /// process's own memory store decided on the per-replica limit. The decision says whether
    /// it passed (refused: 429, or cost above the local capacity).
    DecidedLocally,
    /// The store had no room for a new bucket (its cap reached with nothing idle, or Redis out
    /// of memory) and no enclosing bucket to charge instead: 503 under every policy.
    StoreFull,
};

/// How many outcomes there are: PolicyOutcome values are 0 .. kPolicyOutcomeCount - 1, in the
/// order above. Reports, metrics and charts enumerate outcomes with it, so a new outcome shows
/// up everywhere.
inline constexpr std::size_t kPolicyOutcomeCount =
    static_cast<std::size_t>(PolicyOutcome::StoreFull) + 1;

/// "passed", "throttled", "shadow_throttled", "cost_exceeds_capacity", "bypassed",
/// "no_identity", "forwarded_malformed", "failed_open", "failed_closed", "store_refused",
/// "decided_locally", "store_full".
std::string_view policyOutcomeName(PolicyOutcome outcome);

/// A request a policy refused or would have refused (shadow), or could not key.
struct LimitEvent {
    std::string_view policy;
    std::string_view route;    ///< the request path
    std::string_view keyHash;  ///< 16 hex digits of a keyed hash of the bucket key; never the key
    PolicyOutcome outcome;
    Decision decision;
    Nanos now;
};

/// A store call that failed, and what the policy's rule made of it.
struct StoreErrorEvent {
    std::string_view policy;
    std::string_view route;
    std::string_view keyHash;
    StoreStatus status;
    std::string_view error;
    PolicyOutcome outcome;  ///< FailedOpen, FailedClosed, StoreRefused, StoreFull or DecidedLocally
    Nanos now;
    /// DecidedLocally: what the local store decided (allowed, retry time); empty otherwise.
    Decision decision{};
};

/// Receives limit hits and store failures. Called on the deciding thread, so implementations
/// must be thread-safe when the limiter is shared, and quick: they sit on the request path.
class LimitObserver {
public:
    virtual ~LimitObserver() = default;
    virtual void onLimitHit(const LimitEvent& event) = 0;
    virtual void onStoreError(const StoreErrorEvent& event) = 0;
};

}  // namespace ratelab
