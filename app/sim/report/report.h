#pragma once

// The run report: summary metrics, expectations, and what the CLI writes from them: the JSON of
// `run --json` and `replay --json` (reportJson: the fields of Report below, under the same
// names), the per-sample CSV of `run --csv` (seriesCsv) and the text summary (reportText). Same
// scenario, policy and seed give the same bytes, except `timing`.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ratelab/policy.h"
#include "sim/report/counters.h"
#include "sim/run/scenario_runner.h"
#include "sim/scenario/scenario.h"

namespace ratelab::sim {

struct ExpectationResult {
    Expectation expectation;
    double actual = 0;
    bool pass = false;
};

/// Wall-clock figures: the only part of a report that differs between identical runs.
struct Timing {
    double wallSeconds = 0;
    double requestsPerSecond = 0;
};

/// What a replay adds: how the log was read.
struct ReplayInfo {
    std::string file;                ///< the first file
    std::vector<std::string> files;  ///< every file, in the order replayed
    std::string format;              ///< "combined", "nginx '$remote_addr ...'", ...
    bool detected = false;           ///< the format was detected, not given
    double reorderWindowS = 0;
    std::int64_t lines = 0;
    std::int64_t parsed = 0;   ///< replayed, the damaged ones included
    std::int64_t damaged = 0;  ///< replayed with a warning: a later field was damaged
    std::int64_t unparsed = 0;
    std::int64_t outOfWindow = 0;             ///< out of order by more than the window
    std::vector<std::int64_t> unparsedLines;  ///< line numbers, the first kMaxListedLines
    std::vector<std::string> unparsedAt;      ///< the same as FILE:LINE:COLUMN
    std::vector<std::string> damagedAt;
    std::vector<std::string> outOfWindowAt;
    std::int64_t clients = 0;       ///< distinct client fields
    std::int64_t hostNames = 0;     ///< of which host names, not addresses
    std::int64_t startEpochMs = 0;  ///< the first replayed line's time, Unix ms
    std::int64_t endEpochMs = 0;    ///< the last one's
};

struct Report {
    std::string scenario;
    std::string policy;  ///< the policies' names, joined with "+"
    std::string policySha256;
    std::uint64_t seed = 0;
    std::vector<std::string> classNames;
    RunTotals totals;
    Nanos duration = 0;
    std::vector<ActorRow> actors;
    std::vector<ExpectationResult> expectations;
    std::optional<ReplayInfo> replay;
    Timing timing;

    /// Every expectation holds (vacuously true without expectations).
    bool pass() const;
};

/// Hex SHA-256 of the policy set's canonical text (savePolicyText).
std::string policySha256(const PolicySet& policies);

/// The report of a runner's lane in its current state (normally finished), expectations
/// evaluated.
Report buildReport(const ScenarioRunner& runner, Timing timing, std::size_t lane = 0);

/// Each expectation of `scenario` evaluated on `totals`, over the scenario's duration and
/// sample interval.
std::vector<ExpectationResult> evaluateExpectations(const Scenario& scenario,
                                                    const std::vector<std::string>& classNames,
                                                    const RunTotals& totals);
/// Each expectation of the runner's scenario evaluated on `totals`, over the duration and sample
/// interval the run went by (ScenarioRunner::duration(), sampleInterval()).
std::vector<ExpectationResult> evaluateExpectations(const ScenarioRunner& runner,
                                                    const RunTotals& totals);

struct LogReading;  // record_stream.h
/// The report of a finished replay: buildReport() with how the log was read, the log's actor
/// counting its distinct clients as instances.
Report buildReplayReport(const ScenarioRunner& runner, Timing timing, const LogReading& reading);

/// The report as JSON, keys in the documented order, ending in a newline.
std::string reportJson(const Report& report);

/// The sample series as CSV: t_s, then per class its counters offered .. failed_closed
/// (kCounterFields), then keyspace.buckets, keyspace.budget_slots, keyspace.bytes,
/// store.errors, then per class decided_locally and store_full; one row per sample.
/// Deterministic.
std::string seriesCsv(const std::vector<std::string>& classNames,
                      const std::vector<Sample>& samples);

/// The run as a policy's ValidationRun (what "export a validated policy" embeds).
ValidationRun validationRun(const Report& report);

/// `policies` with the report's run embedded as its validation record (what `run
/// --validated-policy` writes): a run of the same scenario replaces an earlier one, others are
/// kept. `generator` names the tool ("ratelab 0.1.0").
PolicySet withValidation(PolicySet policies, const Report& report, const std::string& generator);

/// Human summary for a terminal: one line per class and per expectation.
std::string reportText(const Report& report);

/// One expectation and how it fared: "PASS attacker.allowed_per_s = 1.5 (max 2)".
std::string expectationText(const ExpectationResult& result);

}  // namespace ratelab::sim
