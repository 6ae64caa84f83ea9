#include "policy_tuning.h"

namespace ratelab::gui {

namespace {

bool sameTierShape(const std::optional<TierConfig>& a, const std::optional<TierConfig>& b) {
    if (a.has_value() != b.has_value()) return false;
    if (!a) return true;
    if (a->attribute != b->attribute || a->defaultTier != b->defaultTier) return false;
    if (a->tiers.size() != b->tiers.size()) return false;
    for (std::size_t i = 0; i < a->tiers.size(); ++i) {
        if (a->tiers[i].name != b->tiers[i].name) return false;
    }
    return true;
}

}  // namespace

bool isLiveTunable(const Policy& running, const Policy& edited) {
    return running.name == edited.name && running.match == edited.match &&
           running.algorithm == edited.algorithm && running.key == edited.key &&
           running.budget == edited.budget && running.bypass == edited.bypass &&
           sameTierShape(running.tiers, edited.tiers);
}

bool isLiveTunable(const PolicySet& running, const PolicySet& edited) {
    if (running.policies.size() != edited.policies.size()) return false;
    if (!(running.store == edited.store) || !(running.trustedProxies == edited.trustedProxies)) {
        return false;
    }
    for (std::size_t i = 0; i < running.policies.size(); ++i) {
        if (!isLiveTunable(running.policies[i], edited.policies[i])) return false;
    }
    return true;
}

}  // namespace ratelab::gui
