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
