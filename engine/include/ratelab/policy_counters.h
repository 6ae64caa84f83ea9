#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ratelab/limit_observer.h"

namespace ratelab {

/// Counts limit hits and store failures per policy and outcome. Thread-safe; lock-free on the
/// request path once a policy has been seen.
class PolicyCounters final : public LimitObserver {
public:
    static constexpr std::size_t kOutcomes = kPolicyOutcomeCount;

    void onLimitHit(const LimitEvent& event) override;
    void onStoreError(const StoreErrorEvent& event) override;

    /// How many events of `outcome` policy `policy` reported so far.
    std::int64_t count(std::string_view policy, PolicyOutcome outcome) const;

    struct Row {
        std::string policy;
        PolicyOutcome outcome;
        std::int64_t count;
    };
    /// Every non-zero counter, in policy order of first appearance.
    std::vector<Row> snapshot() const;

private:
    struct Counters {
        std::array<std::atomic<std::int64_t>, kOutcomes> byOutcome{};
    };
    Counters& countersFor(std::string_view policy);

    mutable std::mutex mutex_;
    std::vector<std::pair<std::string, std::unique_ptr<Counters>>> policies_;
};

}  // namespace ratelab
