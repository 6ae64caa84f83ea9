#pragma once

// ScenarioRunner: drives the production engine (Limiter::checkBatch) with a scenario's traffic on
// a virtual clock, in time order: consecutive requests are generated into a batch and decided
// together, with the same results as deciding them one at a time. The CLI runs it to the end; the
// workbench's worker thread advances it in slices and drains value snapshots for its charts.
//
// Typical worker loop:
//     ScenarioRunner runner(scenario, policies, options);
//     while (!runner.finished() && !cancelled) {
//         runner.advance(runner.now() + slice, 200'000);   // bounded work per turn
//         emit batch(runner.takeSamples(), runner.actorRows(), runner.takeLog());
//     }
// Pause: stop calling advance(). Step: step(). Reset: destroy and construct a new runner with
// the same arguments (a run is a pure function of scenario, policy and seed).

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ratelab/limit.h"
#include "ratelab/policy.h"
#include "ratelab/policy_tuning.h"
#include "ratelab/store.h"
#include "sim/metrics.h"
#include "sim/scenario.h"

namespace ratelab::sim {

struct RunnerOptions {
    /// Replaces the scenario's stores with this one, shared by every replica (e.g. a Redis store
    /// in caller-time mode, so Redis runs on the virtual clock). Null: the scenario decides
    /// (one shared memory store, or one memory store per replica). Faults still apply.
    std::shared_ptr<Store> store;
    /// Overrides the scenario's seed.
    std::optional<std::uint64_t> seed;
    /// Receives every decision in order. Not owned; must outlive the runner. Null: none.
    DecisionSink* decisions = nullptr;
    /// How many recent limit hits and store failures takeLog() keeps (a ring: the newest win).
    /// 0 turns the engine's observer off, which is the fastest.
    std::size_t logCapacity = 0;
    /// Measure wall time per sample interval (Sample::wallNanosPerRequest).
    bool measureWallTime = true;
    /// Requests decided per Limiter::checkBatch call (consecutive requests of one sample
    /// interval, before the next policy change); 1 decides them one by one with check(). The
    /// results are the same either way. 0: 64, or 256 on a Redis store (one pipeline per batch).
    std::size_t batchSize = 0;
};

/// Not thread-safe: one thread (the CLI's, or the workbench's worker) owns a runner and calls
/// every method; other threads get copies of what it returns.
class ScenarioRunner {
public:
    /// REQUIRES: `scenario` loaded without errors, `policies` validated and compiled, and
    /// checkScenarioAgainstPolicy(scenario, policies) empty. Builds the replicas' limiters and
    /// stores; no request is decided yet (now() == 0).
    ScenarioRunner(Scenario scenario, PolicySet policies, RunnerOptions options = {});
    ~ScenarioRunner();
    ScenarioRunner(const ScenarioRunner&) = delete;
    ScenarioRunner& operator=(const ScenarioRunner&) = delete;

    const Scenario& scenario() const;
    /// The policies as they are now: after retune() calls and policy_change events.
    const PolicySet& policies() const;
    /// The policies the runner was built with (what a report names and hashes).
    const PolicySet& initialPolicies() const;
    std::uint64_t seed() const;
    /// Class names in the order ClassCounters vectors use.
    const std::vector<std::string>& classNames() const;

    /// Virtual time reached: every request before it has been decided. Starts at 0.
    Nanos now() const;
    Nanos duration() const;
    Nanos sampleInterval() const;
    bool finished() const;

    /// Decides requests in time order until virtual time `until` (exclusive; clamped to the
    /// duration) or until `maxRequests` were decided, whichever comes first. Closes every
    /// sample interval it passes. Returns the number of requests decided.
    std::int64_t advance(Nanos until,
                         std::int64_t maxRequests = std::numeric_limits<std::int64_t>::max());
    /// Advances to the end of the current sample interval: exactly one more sample.
    std::int64_t step();
    /// Advances to the end of the scenario.
    std::int64_t runToEnd();

    /// Samples closed since the previous call, oldest first (copies).
    std::vector<Sample> takeSamples();
    /// Every sample closed so far (at most duration / sample interval of them).
    const std::vector<Sample>& samples() const;
    /// One row per actor, totals since the start.
    std::vector<ActorRow> actorRows() const;
    /// Limit hits and store failures since the previous call, oldest first; at most
    /// RunnerOptions::logCapacity of them (the newest win). Empty when the log is off.
    std::vector<LogEntry> takeLog();
    RunTotals totals() const;

    /// Replaces policy `policyIndex`'s tunable fields on every replica (Limiter::retune); the
    /// next request is decided under them. REQUIRES: the tuned policy validates.
    void retune(std::size_t policyIndex, const PolicyTuning& tuning);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ratelab::sim
