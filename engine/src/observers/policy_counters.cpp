#include "ratelab/policy_counters.h"

namespace ratelab {

PolicyCounters::Counters& PolicyCounters::countersFor(std::string_view policy) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [name, counters] : policies_) {
        if (name == policy) return *counters;
    }
    policies_.emplace_back(std::string(policy), std::make_unique<Counters>());
    return *policies_.back().second;
}

void PolicyCounters::onLimitHit(const LimitEvent& event) {
    countersFor(event.policy)
        .byOutcome[static_cast<std::size_t>(event.outcome)]
        .fetch_add(1, std::memory_order_relaxed);
}

void PolicyCounters::onStoreError(const StoreErrorEvent& event) {
    countersFor(event.policy)
        .byOutcome[static_cast<std::size_t>(event.outcome)]
        .fetch_add(1, std::memory_order_relaxed);
}

std::int64_t PolicyCounters::count(std::string_view policy, PolicyOutcome outcome) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [name, counters] : policies_) {
        if (name == policy) {
            return counters->byOutcome[static_cast<std::size_t>(outcome)].load(
                std::memory_order_relaxed);
        }
    }
    return 0;
}

std::vector<PolicyCounters::Row> PolicyCounters::snapshot() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<Row> rows;
    for (const auto& [name, counters] : policies_) {
        for (std::size_t i = 0; i < kOutcomes; ++i) {
            const std::int64_t n = counters->byOutcome[i].load(std::memory_order_relaxed);
            if (n > 0) rows.push_back(Row{name, static_cast<PolicyOutcome>(i), n});
        }
    }
    return rows;
}

}  // namespace ratelab
