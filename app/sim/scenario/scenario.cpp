#include "sim/scenario/scenario.h"

#include <algorithm>
#include <cmath>

namespace ratelab::sim {

std::vector<std::string> Scenario::classNames() const {
    std::vector<std::string> names;
    for (const Actor& a : actors) {
        if (std::find(names.begin(), names.end(), a.className) == names.end()) {
            names.push_back(a.className);
        }
    }
    return names;
}

std::int64_t scaledCrowdCount(std::int64_t count, double factor) {
    return std::max<std::int64_t>(1, std::llround(static_cast<double>(count) * factor));
}

bool isScaledCrowd(const Actor& actor) {
    return actor.count > 1 && !actor.recorded;
}

namespace {

// Whether `network` holds an IPv4 address another actor than `self` sends from.
bool takesInOthers(const Scenario& scenario, const Actor& self, const Cidr& network) {
    for (const Actor& a : scenario.actors) {
        if (&a == &self) continue;
        const PeerSpec& p = a.identity.peer;
        switch (p.kind) {
            case PeerSpec::Kind::Ipv4:
            case PeerSpec::Kind::Nat:
                if (network.contains(p.address)) return true;
                break;
            case PeerSpec::Kind::Ipv4Pool:
            case PeerSpec::Kind::Ipv4Rotate:
                if (network.contains(p.cidr.network()) || p.cidr.contains(network.network()))
                    return true;
                break;
            default:
                break;
        }
    }
    return false;
}

// An IPv4 pool holding at least `count` addresses, as the loader counts them.
void widenPool(const Scenario& scenario, Actor& a, std::int64_t count) {
    PeerSpec& peer = a.identity.peer;
    if (peer.kind != PeerSpec::Kind::Ipv4Pool || !peer.cidr.network().isV4()) return;
    int prefix = peer.cidr.prefixLength();
    while (prefix > 0 && (std::int64_t(1) << (32 - prefix)) < count)
        --prefix;
    if (prefix == peer.cidr.prefixLength()) return;
    const Cidr wider(peer.cidr.network(), prefix);
    if (!takesInOthers(scenario, a, wider)) peer.cidr = wider;
}

}  // namespace

int scaleCrowds(Scenario& scenario, double factor) {
    int changed = 0;
    for (Actor& a : scenario.actors) {
        if (!isScaledCrowd(a)) continue;
        const std::int64_t scaled = scaledCrowdCount(a.count, factor);
        if (scaled == a.count) continue;
        ++changed;
        a.count = scaled;
        widenPool(scenario, a, scaled);
    }
    return changed;
}

double Distribution::probability(std::size_t i) const {
    const auto n = static_cast<double>(values.size());
    if (probabilities.empty()) return 1 / n;
    if (probabilities[i] > 0) return probabilities[i];
    double explicitSum = 0;
    double shared = 0;
    for (double p : probabilities) {
        explicitSum += p;
        shared += p > 0 ? 0 : 1;
    }
    return std::max(0.0, 1 - explicitSum) / shared;
}

double Distribution::mean() const {
    double sum = 0;
    for (std::size_t i = 0; i < values.size(); ++i)
        sum += values[i] * probability(i);
    return sum;
}

int ResponseModel::status(double unit) const {
    switch (kind) {
        case Kind::None:
            break;
        case Kind::SuccessRate:
            return unit < successRate ? 200 : failureStatus;
        case Kind::Statuses: {
            // The last status takes whatever rounding leaves above the sum of the others.
            double upTo = 0;
            for (std::size_t i = 0; i + 1 < statuses.size(); ++i) {
                upTo += statuses[i].second;
                if (unit < upTo) return statuses[i].first;
            }
            if (!statuses.empty()) return statuses.back().first;
            break;
        }
    }
    return 200;
}

PolicyTuning PolicyChange::tuning(const Policy& policy) const {
    PolicyTuning t = tuningOf(policy);
    if (capacity) t.capacity = *capacity;
    if (refillPerSecond) t.refillPerSecond = *refillPerSecond;
    if (windowMs) t.windowMs = *windowMs;
    if (cost) t.cost = *cost;
    if (mode) t.mode = *mode;
    return t;
}

std::vector<Diagnostic> checkScenarioAgainstPolicy(const Scenario& scenario,
                                                   const PolicySet& policies) {
    std::vector<Diagnostic> out;
    auto error = [&](const ScenarioEvent& e, std::string message) {
        out.push_back(Diagnostic{Diagnostic::Severity::Error, scenario.file, e.line, e.column, "",
                                 std::move(message)});
    };
    if (policies.policies.empty()) {
        out.push_back(Diagnostic{Diagnostic::Severity::Error, scenario.file, 0, 0, "",
                                 "the policy set holds no policy"});
    }
    for (const ScenarioEvent& e : scenario.events) {
        if (e.kind != ScenarioEvent::Kind::PolicyChange) continue;
        const Policy* target = nullptr;
        for (const Policy& p : policies.policies) {
            if (e.change.policy.empty() || p.name == e.change.policy) {
                target = &p;
                break;
            }
        }
        if (!target) {
            error(e, "policy_change names policy \"" + e.change.policy +
                         "\", which the policy file does not define");
            continue;
        }
        Policy changed = *target;
        applyTuning(changed, e.change.tuning(*target));
        if (changed.cost > changed.capacity && changed.algorithm != Algorithm::LeakyBucket) {
            error(e, "policy_change leaves a cost above the capacity: no request could pass");
        }
        if (e.change.windowMs && isRateAlgorithm(target->algorithm)) {
            error(e, "policy_change sets window_ms on \"" + target->name + "\", which uses " +
                         std::string(algorithmName(target->algorithm)) + " and has no window");
        }
        if (e.change.refillPerSecond && !isRateAlgorithm(target->algorithm)) {
            error(e, "policy_change sets refill_per_second on \"" + target->name +
                         "\", which uses " + std::string(algorithmName(target->algorithm)) +
                         " and does not refill");
        }
    }
    return out;
}

}  // namespace ratelab::sim
