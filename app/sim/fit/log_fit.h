#pragma once

// A scenario fitted to a recorded log (`ratelab-cli fit`): the log's traffic shape as actors,
// so it can be rerun, edited, scaled and swept like any scenario.
//
// Clients are the log's bucket keys, derived by the policy's own rules exactly as the replay
// derives them. The log is streamed twice through that replay, so memory grows with the
// clients, not the lines: once to find the clients, their counts, routes and statuses, once
// more for the gaps between the requests of the busiest (standard input is kept in a temporary
// file for the second reading). The N busiest clients become actors of
// their own, with their observed span, rate and burstiness (constant, Poisson or bursts, from
// the gaps between their requests); the rest become a crowd: per class and kind of key, groups
// of clients of similar rate, each group one actor whose instances send at the group's mean
// rate over the whole log, so the groups follow the observed distribution of per-client rates.
// Identities are synthetic but keyed alike: a client keyed by its address keeps the address; a
// client keyed by a credential, a principal or an API key gets a generated one and an address
// of its own from 198.18.0.0/15 (then 100.64.0.0/10). No logged credential is written. An
// actor whose lines were answered with anything but 200 gets their statuses as its response
// model, so a policy charging by outcome settles the fitted run as it settles the replay.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ratelab/policy.h"
#include "sim/log/recorded_traffic.h"
#include "sim/fit/fit_rule.h"
#include "sim/log/record_stream.h"
#include "sim/report/counters.h"
#include "sim/scenario/scenario.h"

namespace ratelab::sim {

struct FitOptions {
    std::int64_t top = 10;  ///< clients fitted as actors of their own
    /// Clients matching it are class "attacker"; the others "legit". Unset: all "legit".
    std::optional<ClassRule> attackerIf;
    std::int64_t crowdGroups = 12;  ///< at most this many crowd actors per class and key kind
    /// Written as the scenario's `policy` (relative to where the scenario is written); empty:
    /// none, the run names one with --policy.
    std::string policy;
    std::uint64_t seed = 1;
};

/// One class of the fitted scenario, as the log showed it.
struct FitClass {
    std::string name;
    std::int64_t clients = 0;
    std::int64_t requests = 0;
    std::int64_t actors = 0;
};

struct FitResult {
    Scenario scenario;              ///< loadable and valid; scenarioJson() writes it
    std::vector<FitClass> classes;  ///< in scenario.classNames() order
    std::int64_t clients = 0;
    std::int64_t requests = 0;
    /// Where the fitted scenario must differ from the log (a policy aggregating IPv4 clients
    /// to a prefix, which the crowd's address pools do not reproduce).
    std::vector<std::string> warnings;

    /// The class the fit gave the client of a decision of the log's replay under the same
    /// policies, as an index into scenario.classNames(): for comparing the replay with the
    /// fitted run per class.
    std::uint32_t classOf(const DecisionRecord& d) const;

    // What classOf() reads: the class of most clients, and the others' by client.
    std::uint32_t commonClass = 0;
    std::unordered_map<std::string, std::uint32_t> otherClasses;
};

/// What a fit keys clients by when no policy is given: one policy over every route with the
/// engine's default key (the principal, then Authorization, then the address), no proxies.
PolicySet defaultFitPolicies();

/// Fits a scenario to the logs `input` names under `policies`' key rules. Deterministic.
/// `reading` receives what reading the logs found (the first reading's; file names as given).
/// `progress` sees both readings as one: done and total are twice the logs' bytes.
/// Nullopt when reading stopped (reading.error says why, including a log that changed between
/// the readings), no line could be replayed (reading.replayed == 0) or `progress` said stop.
/// REQUIRES: policies validated and compiled.
std::optional<FitResult> fitScenario(const ReplayInput& input, const PolicySet& policies,
                                     const FitOptions& options, LogReading& reading,
                                     const LoadProgress& progress = {});

}  // namespace ratelab::sim
