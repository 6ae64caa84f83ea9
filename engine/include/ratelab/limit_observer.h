#pragma once

// The interface through which a Limiter reports limit hits and store failures. Ready-made
// observers: policy_counters.h, json_log_observer.h.

#include <cstdint>
#include <string_view>

#include "ratelab/limit.h"
#include "ratelab/store.h"
#include "ratelab/verdict.h"

namespace ratelab {

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
    std::uint32_t request = 0;  ///< the request's index in its checkBatch() call; 0 from check()
    /// This policy refused the request (Check::refusal()): the walk stopped here. False for a
    /// shadow policy's throttle, and for the policies before the one that refused.
    bool refused = false;
};

/// A store call that failed, and what the policy's rule made of it.
struct StoreErrorEvent {
    std::string_view policy;
    std::string_view route;
    std::string_view keyHash;  ///< as in LimitEvent
    std::string_view key;      ///< as in LimitEvent
    StoreStatus status;
    std::string_view error;
    PolicyOutcome outcome;  ///< FailedOpen, FailedClosed, StoreRefused, StoreFull or DecidedLocally
    Nanos now;
    std::uint32_t request = 0;  ///< the request's index in its checkBatch() call; 0 from check()
    /// DecidedLocally: what the local store decided (allowed, retry time); empty otherwise.
    Decision decision{};
    bool refused = false;  ///< as in LimitEvent
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
