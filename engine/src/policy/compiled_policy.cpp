#include "policy/compiled_policy.h"

namespace ratelab {

void CompiledPolicy::recompile(const Policy& policy, int replicas) {
    limits = compileLimits(policy);
    localLimits.clear();
    if (policy.onStoreError != StoreErrorRule::Local) return;
    for (const Limit& limit : limits)
        localLimits.push_back(perReplicaLimit(limit, replicas));
}

CompiledPolicy compilePolicy(const Policy& policy, std::uint32_t firstLimitId, int replicas) {
    CompiledPolicy c{identity::KeyDeriver(policy), {}, {}, {}, firstLimitId, false};
    c.recompile(policy, replicas);
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
