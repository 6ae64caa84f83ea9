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
    StoreRefused,         ///< the store refused (full, OOM, ...): 503 under every policy
    // A new outcome goes above this line, and kPolicyOutcomeCount follows the last one.
};

/// How many outcomes there are: PolicyOutcome values run from 0 to kPolicyOutcomeCount - 1, so
/// counters, metrics and charts enumerate them all (with policyOutcomeName) without a list.
inline constexpr std::size_t kPolicyOutcomeCount =
    static_cast<std::size_t>(PolicyOutcome::StoreRefused) + 1;

/// "passed", "throttled", "shadow_throttled", ...
std::string_view policyOutcomeName(PolicyOutcome outcome);

/// A request a policy refused or would have refused (shadow), or could not key.
struct LimitEvent {
    std::string_view policy;
    std::string_view route;    ///< the request path
    /// 16 hex digits of a fast keyed hash of the bucket key, for correlating events inside the
    /// process (the workbench's event log). Output that leaves the process names `key` with a
    /// KeyNamer (HMAC-SHA-256) instead.
    std::string_view keyHash;
    /// The bucket key charged ("ip:198.51.100.7", "auth:<sha256>"): derived, never a raw
    /// credential, yet it holds addresses. Never write it out as it is; name it (key_namer.h).
    std::string_view key;
    PolicyOutcome outcome;
    Decision decision;
    Nanos now;
};

/// A store call that failed, and what the policy's rule made of it.
struct StoreErrorEvent {
    std::string_view policy;
    std::string_view route;
    std::string_view keyHash;  ///< as in LimitEvent
    std::string_view key;      ///< as in LimitEvent
    StoreStatus status;
    std::string_view error;
    PolicyOutcome outcome;  ///< FailedOpen, FailedClosed or StoreRefused
    Nanos now;
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
