#pragma once

// Value snapshots the simulation worker hands to the GUI thread: plain structs, copied across
// the thread boundary by a queued signal. Nothing in them points into the worker's state.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gui/session/client_table_model.h"
#include "ratelab/limit.h"
#include "ratelab/policy.h"
#include "sim/decide/comparison.h"
#include "sim/report/counters.h"
#include "sim/scenario/scenario.h"

namespace ratelab::gui {

enum class RunState : std::uint8_t {
    Empty,     ///< nothing loaded yet
    Ready,     ///< a runner is built; virtual time 0
    Running,   ///< the worker advances virtual time
    Paused,    ///< virtual time stands still
    Finished,  ///< the scenario's end was reached
    Failed,    ///< the run could not be built (a store that cannot be reached, ...)
};

/// What a run is, sent once when a runner is (re)built so views can lay themselves out.
struct RunShape {
    std::string scenarioName;
    std::string scenarioTitle;
    std::vector<std::string> classNames;
    Nanos duration = 0;
    Nanos sampleInterval = 0;
    std::vector<sim::ScenarioEvent> events;
    std::vector<sim::Actor> actors;  ///< without recorded traffic (never shared with the worker)
    std::string storeKind;           ///< "memory" or "redis"
    PolicySet policies;              ///< as the run started (B's in compare mode: the editor's)
    /// Compare mode: what A (the fixed reference, lane 0) and B (the editor's, lane 1) are, as
    /// legends and banners name them. Empty for a run of one policy set.
    std::vector<std::string> laneLabels;

    bool comparing() const { return laneLabels.size() == 2; }
};

/// The highlighted client of a replay (SimulationWorker::highlightClient): its allowed and
/// throttled requests per interval (sim::ScenarioRunner::clientTimeline), per lane, sent as they
/// grow: lane l's intervals replace the client's from index from[l] on.
struct ClientTrace {
    std::int64_t instance = -1;
    std::vector<std::size_t> from;
    std::vector<std::vector<sim::ClientInterval>> lanes;

    /// Applies `next` (a later trace of the same client) to this one.
    void absorb(ClientTrace&& next);
};

/// Everything that happened since the previous batch of the same run.
struct SimBatch {
    std::uint64_t generation = 0;  ///< which runner produced it; stale generations are dropped
    bool fresh = false;            ///< the first batch of a new runner: `shape` is set
    RunShape shape;
    RunState state = RunState::Empty;
    std::vector<sim::Sample> samples;  ///< closed since the previous batch, oldest first
    /// Compare mode: lane B's samples over the same intervals as `samples` (lane A's).
    std::vector<sim::Sample> samplesB;
    /// The actors of the editor's policies (lane B in compare mode): totals since the start
    /// (latest wins).
    std::vector<sim::ActorRow> actors;
    /// Compare mode: A against B as it stands (latest wins; built at most a few times a
    /// second, and on every state change). Null when none was built since the previous batch.
    std::shared_ptr<const sim::Comparison> comparison;
    /// A replayed log's clients under the editor's policies (topClients(): the busiest, then the
    /// others summed), latest wins. Null when none was built since the previous batch; a fresh
    /// batch carries it (empty) exactly when the run replays a log.
    std::shared_ptr<const std::vector<ClientRow>> clients;
    /// The highlighted client's intervals that changed since the previous batch; unset when no
    /// client is highlighted.
    std::optional<ClientTrace> trace;
    std::vector<sim::LogEntry> log;  ///< limit hits and store failures, oldest first
    Nanos now = 0;                   ///< virtual time reached
    std::int64_t requests = 0;       ///< decided since the start
    double wallSeconds = 0;          ///< wall time spent advancing since the start
    std::string message;             ///< a failure or notice to show, empty otherwise

    /// Appends `next` (a later batch of the same run) to this one: samples and log entries
    /// accumulate (the log keeps the newest `logCapacity`), everything else takes `next`'s value.
    void absorb(SimBatch&& next, std::size_t logCapacity);
};

}  // namespace ratelab::gui
