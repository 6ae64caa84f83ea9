#pragma once

// A scenario fitted to a recorded log (`ratelab-cli fit`): the log's traffic shape as actors,
// so it can be rerun, edited, scaled and swept like any scenario, and limits like the log.
//
// Clients are the log's bucket keys, derived by the policy's own rules exactly as the replay
// derives them. The log is streamed through that replay, so memory grows with the clients, not
// the lines: once to find the clients, their counts, sessions, routes and statuses, once more
// for how their requests arrived (standard input is kept in a temporary file for the readings
// after the first). What a limiter reacts to is a client's bursts, so they are kept: a
// client's requests split into sessions where a gap is longer than the session gap, and each
// actor draws, per instance, its sessions, their sizes, the gaps within them and the idle
// gaps between them from the distributions its clients showed (Arrival::Kind::Session; the
// models and how each parameter is fitted: docs/ARCHITECTURE.md). The N busiest clients become
// actors of their own; the rest become crowds: per class and kind of key, groups of clients
// alike in sessions and requests, each group one actor whose instances are clients of their
// own (a crowd of 1,700 is 1,700 instances, each with its own bursts). Identities are
// synthetic but keyed alike: a client keyed by its address keeps the address; a client keyed
// by a credential, a principal or an API key gets a generated one and an address of its own
// from 198.18.0.0/15 (then 100.64.0.0/10). No logged credential is written. An actor whose
// lines were answered with anything but 200 gets their statuses as its response model, so a
// policy charging by outcome settles the fitted run as it settles the replay. Every number is
// inside the scenario loader's bounds by construction (scenario_limits.h).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ratelab/policy.h"
#include "sim/fit/fit_rule.h"
#include "sim/fit/fit_summary.h"
#include "sim/log/record_stream.h"
#include "sim/log/recorded_traffic.h"
#include "sim/report/counters.h"
#include "sim/scenario/scenario.h"

namespace ratelab::sim {

/// A policy set to check a fit under (FitOptions::checks).
struct FitCheckPolicies {
    std::string name;  ///< as the table names it (a file name)
    PolicySet policies;
};

/// How a fit models arrivals.
enum class FitModel : std::uint8_t {
    Session,    ///< sessions, their sizes, inner and idle gaps (Arrival::Kind::Session)
    Empirical,  ///< every gap alike (Arrival::Kind::Empirical): bursts become runs of short gaps
};

struct FitOptions {
    std::int64_t top = 10;  ///< clients fitted as actors of their own
    /// Clients matching it are class "attacker"; the others "legit". Unset: all "legit".
    std::optional<ClassRule> attackerIf;
    std::int64_t crowdGroups = 16;  ///< at most this many crowd actors per class and key kind
    /// Written as the scenario's `policy` (relative to where the scenario is written); empty:
    /// none, the run names one with --policy.
    std::string policy;
    std::uint64_t seed = 1;
    FitModel model = FitModel::Session;
    /// Requests further apart than this start a new session.
    Nanos sessionGap = kNanosPerSecond;
    /// Values each fitted distribution holds at most (1 to scenario_limits::kMaxValues).
    std::size_t values = 32;
    fit::FitDistributions distributions = fit::FitDistributions::Empirical;
    /// The crowds' instances are this many times the clients (> 0): the same clients' shapes,
    /// more of them. The actors of single clients stay single.
    double scale = 1;
    /// After fitting, the log is replayed and the fitted scenario run under each of these, and
    /// the two compared (FitResult::checks).
    std::vector<FitCheckPolicies> checks;
};

/// One class's figures in a check: of the log's replay, or of the fitted scenario's run.
struct CheckFigures {
    std::int64_t requests = 0;
    std::int64_t throttled = 0;
    std::int64_t clients = 0;           ///< distinct keys (as the checked policy derives them)
    std::int64_t throttledClients = 0;  ///< of which throttled at least once
};

/// A fit checked under one policy set: per class (in FitResult::classes order), the replay's
/// figures and the fitted run's.
struct FitCheck {
    std::string name;
    std::vector<CheckFigures> replayed;
    std::vector<CheckFigures> fitted;
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
    std::vector<FitCheck> checks;  ///< one per FitOptions::checks entry, in its order
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

/// Fits a scenario to the logs `input` names under `policies`' key rules, then runs the checks
/// options.checks asks for. Deterministic. `reading` receives what reading the logs found (the
/// first reading's; file names as given). `progress` sees every reading as one: done and total
/// are (2 + checks) times the logs' bytes.
/// Nullopt when reading stopped (reading.error says why, including a log that changed between
/// the readings), no line could be replayed (reading.replayed == 0) or `progress` said stop.
/// REQUIRES: policies validated and compiled.
std::optional<FitResult> fitScenario(const ReplayInput& input, const PolicySet& policies,
                                     const FitOptions& options, LogReading& reading,
                                     const LoadProgress& progress = {});

}  // namespace ratelab::sim
