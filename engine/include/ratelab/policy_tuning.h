#pragma once

// What a running policy may change without a restart: its numbers and how it answers, never how
// requests are matched or keyed (running buckets would then belong to other keys). The one list
// of those fields is PolicyTuning; Limiter::retune() takes one, and canRetune() is how a caller
// (the workbench, a reload) asks whether an edited policy can be applied that way.

#include <cstdint>
#include <vector>

#include "ratelab/limit.h"
#include "ratelab/policy.h"

namespace ratelab {

/// The fields of a Policy a live retune replaces.
struct PolicyTuning {
    std::int64_t capacity = 20;
    double refillPerSecond = 1.0;
    std::int64_t windowMs = 60'000;
    std::int64_t delay = 0;
    bool nodelay = false;
    std::int64_t cost = 1;
    PolicyMode mode = PolicyMode::Enforce;
    HeaderStyle headers = HeaderStyle::Ietf;
    StoreErrorRule onStoreError = StoreErrorRule::FailOpenOnTransport;
    Nanos storeTimeout = 500 * kNanosPerMilli;
    /// Each tier's numbers, in the policy's tier order (names, attribute and default stay).
    struct TierNumbers {
        std::int64_t capacity = 0;
        double refillPerSecond = 0;
        std::int64_t windowMs = 0;
        friend bool operator==(const TierNumbers&, const TierNumbers&) = default;
    };
    std::vector<TierNumbers> tiers;

    friend bool operator==(const PolicyTuning&, const PolicyTuning&) = default;
};

/// The tunable fields of `policy`. Thread-safe.
PolicyTuning tuningOf(const Policy& policy);

/// Sets the tunable fields of `policy` to `tuning`'s. Tier numbers are set when `tuning` has one
/// entry per tier of the policy, and left as they are otherwise. Thread-safe.
void applyTuning(Policy& policy, const PolicyTuning& tuning);

/// True when `updated` differs from `running` only in tunable fields, so that
/// retune(tuningOf(updated)) makes the running policy equal to `updated`. Thread-safe.
bool canRetune(const Policy& running, const Policy& updated);

/// The same for whole sets: as many policies, in the same order, each retunable, and the same
/// store and trusted proxies. Thread-safe.
bool canRetune(const PolicySet& running, const PolicySet& updated);

/// Whether a bucket of policy `before` means the same thing under `after`, so that a limiter
/// taking over from another (a policy reload) may keep it: the same name, algorithm, key rules,
/// tier names, and whether it charges by outcome (chargesByOutcome). Numbers, routes, budgets,
/// modes, headers, bypasses and the statuses and penalty of a charge rule may differ.
/// Thread-safe.
bool keepsBucketState(const Policy& before, const Policy& after);

}  // namespace ratelab
