#pragma once

// A/B comparison: two policy sets deciding the very same requests in one pass (a runner with
// two lanes, so the traffic is generated once). Per class and per actor, or per client for a
// replayed log: the outcomes under A and under B and their difference, the requests that flip
// between outcomes, and the legitimate instances that become collateral (throttled under B,
// never under A). What `ratelab-cli diff` prints and the workbench's compare mode shows.

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "sim/report/counters.h"
#include "sim/report/csv_writer.h"
#include "sim/report/report.h"
#include "sim/run/scenario_runner.h"

namespace ratelab::sim {

/// One instance of a legitimate class (an actor's instance, or a replayed log's client) and how
/// it fared under A and B.
struct InstanceChange {
    int actor = 0;
    std::int64_t instance = 0;
    std::string name;  ///< "browsers#17", or the client field of a log
    std::string className;
    InstanceCounters a;
    InstanceCounters b;
};

/// One actor's totals under A and B and how its requests moved between outcomes.
struct ComparedActor {
    std::string name;
    std::string className;
    std::int64_t instances = 0;
    ClassCounters a;
    ClassCounters b;
    OutcomeFlips flips;
};

struct Comparison {
    std::string scenario;
    std::uint64_t seed = 0;
    Nanos duration = 0;
    Nanos sampleInterval = 0;
    std::string policyA;  ///< the policies' names, joined with "+"
    std::string policyB;
    std::string policySha256A;
    std::string policySha256B;
    std::vector<std::string> classNames;
    RunTotals a;  ///< spread included
    RunTotals b;
    std::vector<OutcomeFlips> classFlips;  ///< per class
    std::vector<ComparedActor> actors;     ///< every actor, in scenario order
    /// A replay: the clients whose totals differ between A and B, the largest change in
    /// throttled requests first (then by name); at most `top`. Empty for a scenario.
    std::vector<InstanceChange> clients;
    std::int64_t clientsChanged = 0;  ///< how many clients differ in all
    /// Legitimate instances throttled under B and never under A, the most throttled under B
    /// first (then by actor and instance); at most `top`.
    std::vector<InstanceChange> collateral;
    std::vector<std::int64_t> collateralPerClass;  ///< how many in all, per class
    std::vector<std::int64_t> relievedPerClass;    ///< the reverse: throttled under A only
    std::vector<ExpectationResult> expectationsA;
    std::vector<ExpectationResult> expectationsB;
    std::optional<ReplayInfo> replay;
    Timing timing;

    /// Every expectation holds under B (vacuously true without expectations).
    bool passB() const;
    std::int64_t collateralTotal() const;
};

/// The comparison of lanes 0 (A) and 1 (B) of `runner` in its current state (normally
/// finished). REQUIRES: runner.laneCount() >= 2.
Comparison buildComparison(const ScenarioRunner& runner, std::size_t top, Timing timing);
/// The comparison of a streamed log's replay: with what `reading` found, its clients as the
/// actor's instances (a stream's scenario cannot know them before the end).
Comparison buildReplayComparison(const ScenarioRunner& runner, std::size_t top, Timing timing,
                                 const LogReading& reading);

/// The comparison as JSON, keys in a fixed order, ending in a newline. Deterministic: the same
/// scenario, policies and seed give the same bytes apart from `timing`.
std::string comparisonJson(const Comparison& comparison);

/// Human summary for a terminal.
std::string comparisonText(const Comparison& comparison);

/// "allowed_to_throttled": the name of a transition between two outcomes (kOutcomeFields).
std::string flipName(std::size_t from, std::size_t to);

/// Streams flipped requests as CSV `seq,ts_ms,actor,key,a,b` (the actor column is the client
/// field for a replay; a and b are outcome names) through a CsvWriter; ts_ms as recordMillis()
/// gives it.
class FlipCsvWriter final : public FlipSink {
public:
    /// `reading`: a log's, for the logged times (read as the replay goes; it must outlive the
    /// writer); null for a scenario.
    FlipCsvWriter(std::FILE* out, const Scenario& scenario, const LogReading* reading);
    void onFlip(const FlipRecord& flip) override;
    /// Flushes; false when any write failed.
    bool finish();

private:
    CsvWriter csv_;
    const Scenario& scenario_;
    const LogReading* reading_;
};

}  // namespace ratelab::sim
