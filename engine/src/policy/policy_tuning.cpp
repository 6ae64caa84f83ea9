#include "ratelab/policy_tuning.h"

namespace ratelab {

PolicyTuning tuningOf(const Policy& policy) {
    PolicyTuning t;
    t.capacity = policy.capacity;
    t.refillPerSecond = policy.refillPerSecond;
    t.windowMs = policy.windowMs;
    t.delay = policy.delay;
    t.nodelay = policy.nodelay;
    t.cost = policy.cost;
    t.mode = policy.mode;
    t.headers = policy.headers;
    t.onStoreError = policy.onStoreError;
    t.storeTimeout = policy.storeTimeout;
    if (policy.tiers) {
        for (const Tier& tier : policy.tiers->tiers) {
            t.tiers.push_back({tier.capacity, tier.refillPerSecond, tier.windowMs});
        }
    }
    return t;
}

void applyTuning(Policy& policy, const PolicyTuning& t) {
    policy.capacity = t.capacity;
    policy.refillPerSecond = t.refillPerSecond;
    policy.windowMs = t.windowMs;
    policy.delay = t.delay;
    policy.nodelay = t.nodelay;
    policy.cost = t.cost;
    policy.mode = t.mode;
    policy.headers = t.headers;
    policy.onStoreError = t.onStoreError;
    policy.storeTimeout = t.storeTimeout;
    if (!policy.tiers || policy.tiers->tiers.size() != t.tiers.size()) return;
    for (std::size_t i = 0; i < t.tiers.size(); ++i) {
        Tier& tier = policy.tiers->tiers[i];
        tier.capacity = t.tiers[i].capacity;
        tier.refillPerSecond = t.tiers[i].refillPerSecond;
        tier.windowMs = t.tiers[i].windowMs;
    }
}

bool canRetune(const Policy& running, const Policy& updated) {
    // Whatever a tuning cannot carry must already be equal: the tunable list lives in
    // PolicyTuning alone, so a field added to Policy is not tunable until it is added there.
    Policy tuned = running;
    applyTuning(tuned, tuningOf(updated));
    return tuned == updated;
}

bool canRetune(const PolicySet& running, const PolicySet& updated) {
    if (running.policies.size() != updated.policies.size()) return false;
    if (!(running.store == updated.store) || !(running.trustedProxies == updated.trustedProxies)) {
        return false;
    }
    for (std::size_t i = 0; i < running.policies.size(); ++i) {
        if (!canRetune(running.policies[i], updated.policies[i])) return false;
    }
    return true;
}

bool keepsBucketState(const Policy& before, const Policy& after) {
    // A bucket that settles keeps a stamp beside its state (Limit::settles): another layout.
    if (before.name != after.name || before.algorithm != after.algorithm ||
        !(before.key == after.key) || before.tiers.has_value() != after.tiers.has_value() ||
        chargesByOutcome(before) != chargesByOutcome(after)) {
        return false;
    }
    if (!before.tiers) return true;
    const std::vector<Tier>& a = before.tiers->tiers;
    const std::vector<Tier>& b = after.tiers->tiers;
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].name != b[i].name) return false;
    }
    return true;
}

}  // namespace ratelab
