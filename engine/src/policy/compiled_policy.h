#pragma once

// What the limiter runs for one policy, beside the policy as written: built once by
// compilePolicy() when the limiter is made, and its limits rebuilt only by a retune.

#include <cstdint>
#include <string>
#include <vector>

#include "identity/key_deriver.h"
#include "ratelab/limit.h"
#include "ratelab/policy.h"

namespace ratelab {

struct CompiledPolicy {
    identity::KeyDeriver deriver;
    std::vector<Limit> limits;            ///< compileLimits(): one per tier, or the policy's own
    /// on_store_error "local": perReplicaLimit() of each limit, for the process's own store
    /// while the shared one is unreachable. Empty for the other rules.
    std::vector<Limit> localLimits;
    std::vector<std::string> limitNames;  ///< per tier ("api/premium"), or just "api"
    std::uint32_t firstLimitId = 0;       ///< the store's id of limits[0]; tiers follow
    bool matchesEverything = false;       ///< "/" with no methods: skip matching per request
    /// chargesByOutcome(): its decisions record their charge for Limiter::settle().
    bool settles = false;
    /// Names these limits among every limit any limiter of the process compiled, so that a
    /// settle recognises decisions taken under them (and under no other: not a reloaded
    /// limiter's, not the numbers before a retune). Changes when a retune changes the limits.
    std::uint64_t generation = 0;
    /// LimiterOptions::unixTimeAtZero, which calendar-aligned limits carry.
    Nanos unixTimeAtZero = 0;
    /// routeSpecificity() of the policy's route, for Routing::MostSpecific.
    std::uint64_t routeSpecificity = 0;

    /// The limit a PolicyResult's tier was decided under.
    const Limit& limit(std::uint32_t tier) const { return limits[tier < limits.size() ? tier : 0]; }

    /// Rebuilds limits and localLimits from `policy`'s numbers (after a retune); `replicas` is
    /// StoreConfig::replicas.
    void recompile(const Policy& policy, int replicas);
};

/// Compiles `policy`, its store ids starting at `firstLimitId`, its local limits (if any) for
/// `replicas` processes, its calendar windows placed by `unixTimeAtZero`
/// (LimiterOptions::unixTimeAtZero). REQUIRES: `policy` validated.
CompiledPolicy compilePolicy(const Policy& policy, std::uint32_t firstLimitId, int replicas = 1,
                             Nanos unixTimeAtZero = 0);

}  // namespace ratelab
