#include "ratelab/verdict.h"

namespace ratelab {

std::string_view refusalCodeName(RefusalCode code) {
    switch (code) {
        case RefusalCode::None:
            return "";
        case RefusalCode::RateLimited:
            return "rate_limited";
        case RefusalCode::CostExceedsCapacity:
            return "cost_exceeds_capacity";
        case RefusalCode::IdentityUnavailable:
            return "identity_unavailable";
        case RefusalCode::ForwardedMalformed:
            return "forwarded_malformed";
        case RefusalCode::StoreUnavailable:
            return "store_unavailable";
        case RefusalCode::StoreRefused:
            return "store_refused";
        case RefusalCode::StoreFull:
            return "store_full";
    }
    return "";
}

std::string_view policyOutcomeName(PolicyOutcome outcome) {
    switch (outcome) {
        case PolicyOutcome::Passed:
            return "passed";
        case PolicyOutcome::Throttled:
            return "throttled";
        case PolicyOutcome::ShadowThrottled:
            return "shadow_throttled";
        case PolicyOutcome::CostExceedsCapacity:
            return "cost_exceeds_capacity";
        case PolicyOutcome::Bypassed:
            return "bypassed";
        case PolicyOutcome::NoIdentity:
            return "no_identity";
        case PolicyOutcome::ForwardedMalformed:
            return "forwarded_malformed";
        case PolicyOutcome::FailedOpen:
            return "failed_open";
        case PolicyOutcome::FailedClosed:
            return "failed_closed";
        case PolicyOutcome::StoreRefused:
            return "store_refused";
        case PolicyOutcome::DecidedLocally:
            return "decided_locally";
        case PolicyOutcome::StoreFull:
            return "store_full";
    }
    return "";
}

}  // namespace ratelab
