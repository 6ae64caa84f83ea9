#pragma once

#include <cstdint>

#include "ratelab/policy.h"

namespace ratelab {

/// The limit a policy runs for one of its tiers: the tier's own, or the policy's when the
/// policy has no tiers (or `tier` names none). REQUIRES: limits compiled (compileLimits).
inline const Limit& limitOf(const Policy& policy, std::uint32_t tier) {
    if (policy.tiers && tier < policy.tiers->tiers.size()) return policy.tiers->tiers[tier].limit;
    return policy.limit;
}

}  // namespace ratelab
