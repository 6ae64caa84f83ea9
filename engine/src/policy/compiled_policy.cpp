#include "policy/compiled_policy.h"

#include <atomic>

namespace ratelab {

namespace {

std::uint64_t nextGeneration() {
    static std::atomic<std::uint64_t> counter{0};
    return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace

void CompiledPolicy::recompile(const Policy& policy, int replicas) {
    std::vector<Limit> updated = compileLimits(policy);
    for (Limit& limit : updated)
        if (limit.align == WindowAlign::Calendar) limit.unixTimeAtZero = unixTimeAtZero;
    if (generation == 0 || updated != limits) generation = nextGeneration();
    limits = std::move(updated);
    settles = chargesByOutcome(policy);
    localLimits.clear();
    if (policy.onStoreError != StoreErrorRule::Local) return;
    for (const Limit& limit : limits)
        localLimits.push_back(perReplicaLimit(limit, replicas));
}

CompiledPolicy compilePolicy(const Policy& policy, std::uint32_t firstLimitId, int replicas,
                             Nanos unixTimeAtZero) {
    CompiledPolicy c{
        identity::KeyDeriver(policy), {}, {}, {}, firstLimitId, false, false, 0, unixTimeAtZero};
    c.recompile(policy, replicas);
    c.routeSpecificity = routeSpecificity(policy.match);
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
