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
//
// Lanes: a runner may decide every request under several policy sets at once, each on its own
// engine and stores (an A/B comparison on the very same requests: the traffic is generated
// once). Lane 0 is the reference; every per-lane accessor defaults to it, and flips() tells how
// requests moved between outcomes from lane 0 to another lane.

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ratelab/limit.h"
#include "ratelab/policy.h"
#include "ratelab/policy_tuning.h"
#include "ratelab/store.h"
#include "sim/report/counters.h"
#include "sim/scenario/scenario.h"

namespace ratelab::sim {

/// Per actor: how its requests' outcomes (indices into kOutcomeFields) moved from lane 0 to
/// another lane. transitions[a][b] requests had outcome a in lane 0 and b in the other lane.
struct OutcomeFlips {
    std::array<std::array<std::int64_t, kOutcomeCount>, kOutcomeCount> transitions{};

    /// Requests whose outcome differs.
    std::int64_t total() const;
    OutcomeFlips& operator+=(const OutcomeFlips& o);
    friend bool operator==(const OutcomeFlips&, const OutcomeFlips&) = default;
};

/// One request decided differently by lane 0 and lane 1, streamed to a FlipSink in order.
struct FlipRecord {
    std::int64_t seq = 0;  ///< the request's 0-based number, like DecisionRecord::seq
    Nanos at = 0;
    int actor = 0;              ///< index into Scenario::actors
    std::int64_t instance = 0;  ///< the actor's instance (a replay's client index)
    /// Lane 1's first matching policy's bucket key (credentials hashed), empty when no policy
    /// derived one. Valid for the call only.
    std::string_view key;
    /// A replay's client field as written in the log; empty otherwise. Valid for the call only.
    std::string_view client;
    std::size_t outcomeA = 0;  ///< index into kOutcomeFields: lane 0's outcome
    std::size_t outcomeB = 0;  ///< and lane 1's
};

/// Receives every flipped request on the runner's thread. Must not call back into the runner.
class FlipSink {
public:
    virtual ~FlipSink() = default;
    virtual void onFlip(const FlipRecord& flip) = 0;
};

struct RunnerOptions {
    /// Replaces the scenario's stores with this one, shared by every replica (e.g. a Redis store
    /// in caller-time mode, so Redis runs on the virtual clock). Null: the scenario decides
    /// (one shared memory store, or one memory store per replica). Faults still apply.
    /// Single-lane runs only: lanes never share counters.
    std::shared_ptr<Store> store;
    /// Overrides the scenario's seed.
    std::optional<std::uint64_t> seed;
    /// Receives every decision of lane 0 in order. Not owned; must outlive the runner. Null: none.
    DecisionSink* decisions = nullptr;
    /// Receives every request lanes 0 and 1 decided differently. Not owned; must outlive the
    /// runner. Null: none (flips() counts them either way).
    FlipSink* flips = nullptr;
    /// How many recent limit hits and store failures takeLog() keeps (a ring: the newest win).
    /// 0 turns the engine's observer off, which is the fastest.
    std::size_t logCapacity = 0;
    /// Time the engine's calls (Sample::engineNanosPerDecision): two clock reads per lane and
    /// batch.
    bool measureWallTime = true;
    /// The clock the engine's calls are timed with, in nanoseconds from any epoch. Null: the
    /// steady clock. Tests inject a manual one.
    std::function<Nanos()> engineClock;
    /// Keeps, for every client of a replayed log and every lane, its allowed and throttled
    /// requests per sample interval (clientTimeline()): what a chart needs to draw one client
    /// over the totals without a second replay. Costs a few bytes per client and interval it
    /// was active in.
    bool clientTimelines = false;
    /// Requests decided per Limiter::checkBatch call (consecutive requests of one sample
    /// interval, before the next policy change); 1 decides them one by one with check(). The
    /// results are the same either way. 0: 16, or 256 on a Redis store (one pipeline per batch).
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
    /// One lane per policy set, each with its own engine and stores, deciding the very same
    /// requests. REQUIRES: as above for every set; `lanes` not empty; `options.store` null when
    /// there is more than one lane.
    ScenarioRunner(Scenario scenario, std::vector<PolicySet> lanes, RunnerOptions options = {});
    ~ScenarioRunner();
    ScenarioRunner(const ScenarioRunner&) = delete;
    ScenarioRunner& operator=(const ScenarioRunner&) = delete;

    /// The scenario exactly as given; duration() and sampleInterval() are the run's.
    const Scenario& scenario() const;
    std::size_t laneCount() const;
    /// The policies as they are now: after retune() calls and policy_change events.
    const PolicySet& policies(std::size_t lane = 0) const;
    /// The policies the runner was built with (what a report names and hashes).
    const PolicySet& initialPolicies(std::size_t lane = 0) const;
    std::uint64_t seed() const;
    /// Class names in the order ClassCounters vectors use.
    const std::vector<std::string>& classNames() const;

    /// Virtual time reached: every request before it has been decided. Starts at 0.
    Nanos now() const;
    /// The scenario's duration; a streamed replay's (Scenario::endsWithTraffic) is cut at the end
    /// of the sample interval holding its last request, once the replay has run dry.
    Nanos duration() const;
    /// The scenario's sample interval, doubled each time Scenario::maxSamples samples are closed.
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

    /// Requests decided so far (the same in every lane).
    std::int64_t requests() const;

    /// Samples closed since the previous call for this lane, oldest first (copies).
    std::vector<Sample> takeSamples(std::size_t lane = 0);
    /// Every sample closed so far (at most duration / sample interval of them).
    const std::vector<Sample>& samples(std::size_t lane = 0) const;
    /// One row per actor, totals since the start.
    std::vector<ActorRow> actorRows(std::size_t lane = 0) const;
    /// One actor's instances, totals since the start: a replay's clients, numbered in the order
    /// of their first replayed request (RecordedTraffic::clients; a streamed replay's as far as
    /// it has read). REQUIRES: actor < scenario().actors.size().
    std::span<const InstanceCounters> instances(std::size_t actor, std::size_t lane = 0) const;
    /// A replayed log's clients, indexed like instances(): the key each one's first request was
    /// charged to and when it was first and last seen. Empty for an actor that replays no log.
    /// REQUIRES: actor < scenario().actors.size().
    std::span<const ClientSeen> clientsSeen(std::size_t actor, std::size_t lane = 0) const;
    /// With RunnerOptions::clientTimelines, a replayed client's allowed and throttled requests
    /// per interval of scenario().sampleInterval (as given), the intervals it had any in,
    /// ascending; the last may still grow. Empty otherwise, and for an actor that replays no log
    /// or an instance not seen yet. REQUIRES: actor < scenario().actors.size().
    std::span<const ClientInterval> clientTimeline(std::size_t actor, std::int64_t instance,
                                                   std::size_t lane = 0) const;
    /// Per actor: how outcomes moved from lane 0 to `lane` (all zero for lane 0).
    const std::vector<OutcomeFlips>& flips(std::size_t lane) const;
    /// Limit hits and store failures since the previous call, oldest first; at most
    /// RunnerOptions::logCapacity of them (the newest win). Empty when the log is off.
    std::vector<LogEntry> takeLog(std::size_t lane = 0);
    /// Totals since the start, ClassSpread included (which walks every instance).
    RunTotals totals(std::size_t lane = 0) const;

    /// Replaces policy `policyIndex`'s tunable fields on every replica of `lane`
    /// (Limiter::retune); the next request is decided under them. REQUIRES: the tuned policy
    /// validates.
    void retune(std::size_t policyIndex, const PolicyTuning& tuning, std::size_t lane = 0);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ratelab::sim
