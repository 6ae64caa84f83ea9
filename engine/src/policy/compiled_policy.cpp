#include "policy/compiled_policy.h"

namespace ratelab {

CompiledPolicy compilePolicy(const Policy& policy, std::uint32_t firstLimitId) {
    CompiledPolicy c{identity::KeyDeriver(policy), compileLimits(policy), {}, firstLimitId, false};
    const RouteMatch& m = policy.match;
    c.matchesEverything =
        m.methods.empty() && m.pathPattern.empty() && (m.pathPrefix.empty() || m.pathPrefix == "/");
    if (policy.tiers && !policy.tiers->tiers.empty()) {
        for (const Tier& tier : policy.tiers->tiers)
            c.limitNames.push_back(policy.name + "/" + tier.name);
    } else {
        c.limitNames.push_back(policy.name);
    }
    return c;
}

}  // namespace ratelab
