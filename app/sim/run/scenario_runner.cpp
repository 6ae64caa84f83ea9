#include "sim/run/scenario_runner.h"

#include <algorithm>
#include <chrono>

#include "ratelab/limiter.h"
#include "sim/run/runner_lane.h"
#include "sim/traffic/traffic.h"

namespace ratelab::sim {

namespace {

using WallClock = std::chrono::steady_clock;

Nanos steadyNanos() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(WallClock::now().time_since_epoch())
        .count();
}

// What a run goes by where it departs from the scenario it was given, which the runner keeps
// as given (ScenarioRunner::scenario()): the sample interval doubles each time
// Scenario::maxSamples is reached, and a streamed replay's duration ends with its last request.
struct RunSettings {
    explicit RunSettings(const Scenario& s)
        : duration(s.duration)
        , sampleInterval(s.sampleInterval)
        , endsWithTraffic(s.endsWithTraffic) {}

    Nanos duration;
    Nanos sampleInterval;
    bool endsWithTraffic;  // the duration is still to be cut at the traffic's end
};

}  // namespace

struct ScenarioRunner::Impl {
    Impl(Scenario s, std::vector<PolicySet> p, RunnerOptions o)
        : scenario(std::move(s))
        , run(scenario)
        , options(std::move(o))
        , seed(options.seed.value_or(scenario.seed))
        , classNames(scenario.classNames())
        , mix(scenario.actors, seed, scenario.duration) {
        if (options.measureWallTime)
            engineClock = options.engineClock ? options.engineClock : steadyNanos;
        for (std::size_t l = 0; l < p.size(); ++l) {
            LaneOptions laneOptions;
            laneOptions.seed = seed;
            laneOptions.store = options.store;
            laneOptions.logCapacity = options.logCapacity;
            laneOptions.keepKeys = (l == 0 && options.decisions) || (l == 1 && options.flips);
            laneOptions.clientTimelines = options.clientTimelines;
            laneOptions.timelineInterval = scenario.sampleInterval;
            lanes.push_back(
                std::make_unique<Lane>(std::move(p[l]), scenario, classNames.size(), laneOptions));
        }
    }

    void build();
    /// Gives `actor` `count` instances in every lane: a streamed log's clients are not known
    /// ahead, and each becomes an instance at its first request, numbered as a log read into
    /// memory numbers them (RecordedTraffic::clients).
    void growInstances(std::size_t actor, std::size_t count);
    std::int64_t decideBatch(Nanos before, std::int64_t room);
    void account(std::size_t j);
    void closeSample();
    void endWithTraffic();
    void applyChangesThrough(Nanos t);
    Nanos nextBoundary() const {
        Nanos change =
            nextChange < changes.size() ? changes[nextChange]->from : ActorTraffic::kNever;
        return std::min(change, sampleEnd);
    }

    const Scenario scenario;
    RunSettings run;
    RunnerOptions options;
    std::uint64_t seed;
    std::vector<std::string> classNames;
    std::vector<std::size_t> actorClass;
    std::vector<bool> legitimateClass;
    std::vector<std::unique_ptr<Lane>> lanes;

    TrafficMix mix;
    // The batch being decided: request j was generated into slots[j] at times[j] by actors[j],
    // for replica replicaOf[j]; each lane decides it (RequestBatch).
    std::size_t batchSize = 1;
    bool replicasInterchangeable = true;  // one limiter may decide for every replica
    std::vector<RequestSlot> slots;
    std::vector<RequestView> views;
    std::vector<Nanos> times;
    std::vector<int> actors;
    std::vector<std::size_t> replicaOf;
    std::vector<std::uint8_t> shares;  // per request of the batch: counted for bucket sharing
    std::vector<const ScenarioEvent*> changes;  // policy_change events in time order
    std::size_t nextChange = 0;
    // Per actor and instance (like Lane::instances): 1 + the sample interval of its latest
    // request counted for bucket sharing. An instance is counted at its first request of each
    // interval, so keys are captured once per instance and interval, not on every request.
    std::vector<std::vector<std::uint32_t>> sharedIn;
    std::uint32_t sampleIndex = 0;

    Nanos now = 0;
    Nanos lastRequestAt = 0;
    std::int64_t requests = 0;
    std::size_t nextReplica = 0;

    Nanos sampleStart = 0;
    Nanos sampleEnd = 0;
    // Times the lanes' engine calls: options.engineClock, else the steady clock; empty when
    // options.measureWallTime is off.
    std::function<Nanos()> engineClock;
    std::int64_t requestsAtSampleStart = 0;
};

void ScenarioRunner::Impl::build() {
    for (const Actor& a : scenario.actors) {
        auto it = std::find(classNames.begin(), classNames.end(), a.className);
        actorClass.push_back(static_cast<std::size_t>(it - classNames.begin()));
    }
    for (const std::string& c : classNames)
        legitimateClass.push_back(isLegitimateClass(c));
    for (const Actor& a : scenario.actors)
        sharedIn.emplace_back(static_cast<std::size_t>(a.count), 0);
    sampleEnd = std::min(run.sampleInterval, run.duration);

    for (const ScenarioEvent& e : scenario.events) {
        if (e.kind == ScenarioEvent::Kind::PolicyChange) changes.push_back(&e);
    }
    std::stable_sort(
        changes.begin(), changes.end(),
        [](const ScenarioEvent* a, const ScenarioEvent* b) { return a->from < b->from; });
    replicasInterchangeable = std::all_of(lanes.begin(), lanes.end(), [](const auto& lane) {
        return lane->replicasInterchangeable();
    });

    // Replicas with a store each (or faults of their own) decide their own requests one at a
    // time, in order; replicas that share one store undecorated are the same limiter, so one of
    // them decides every batch. On the memory store a batch of 16 keeps a batch's requests,
    // checks and calls in the first-level cache; on Redis one pipeline per batch wants more
    // (docs/BENCHMARKS.md, "Why the code is as it is").
    const std::shared_ptr<Store>& shared = options.store;
    batchSize = options.batchSize > 0                 ? options.batchSize
                : shared && shared->kind() == "redis" ? 256
                                                      : 16;
    if (!replicasInterchangeable) batchSize = 1;
    // A replayed log's cursor keeps the views of its last kRecordedBatch requests alive
    // (replay_source.h).
    for (const Actor& a : scenario.actors)
        if (a.recorded) batchSize = std::min(batchSize, kRecordedBatch);
    slots.resize(batchSize);
    views.resize(batchSize);
    times.resize(batchSize);
    actors.resize(batchSize);
    replicaOf.resize(batchSize);
    shares.resize(batchSize);
}

void ScenarioRunner::Impl::growInstances(std::size_t actor, std::size_t count) {
    sharedIn[actor].resize(count, 0);
    for (auto& lane : lanes)
        lane->growInstances(actor, count);
}

void ScenarioRunner::Impl::applyChangesThrough(Nanos t) {
    while (nextChange < changes.size() && changes[nextChange]->from <= t) {
        for (auto& lane : lanes)
            lane->applyChange(changes[nextChange]->change);
        ++nextChange;
    }
}

void ScenarioRunner::Impl::closeSample() {
    const std::int64_t n = requests - requestsAtSampleStart;
    requestsAtSampleStart = requests;
    for (auto& lane : lanes)
        lane->closeSample(sampleStart, sampleEnd, n);

    ++sampleIndex;
    sampleStart = sampleEnd;
    sampleEnd = std::min(sampleEnd + run.sampleInterval, run.duration);
    if (sampleStart >= run.duration) {
        sampleEnd = ActorTraffic::kNever;
    } else if (scenario.maxSamples > 0 &&
               static_cast<std::int64_t>(lanes.front()->samples().size()) >= scenario.maxSamples) {
        for (auto& lane : lanes)
            lane->mergeSamples();
        run.sampleInterval *= 2;
        sampleEnd = std::min(sampleStart + run.sampleInterval, run.duration);
    }
}

// A streamed replay has run dry: the sample holding its last request is the last.
void ScenarioRunner::Impl::endWithTraffic() {
    const Nanos interval = run.sampleInterval;
    const Nanos end = requests > 0 ? (lastRequestAt / interval + 1) * interval : interval;
    run.duration = std::min(run.duration, end);
    run.endsWithTraffic = false;
    if (sampleEnd != ActorTraffic::kNever) sampleEnd = std::min(sampleEnd, run.duration);
}

// Generates and decides the requests due before `before`, at most `room` of them and at most a
// batch, in every lane. Traffic is open-loop (no request depends on a decision), so a batch can
// be generated ahead of its decisions.
std::int64_t ScenarioRunner::Impl::decideBatch(Nanos before, std::int64_t room) {
    std::size_t n = 0;
    while (n < batchSize && static_cast<std::int64_t>(n) < room) {
        const Nanos at = mix.nextTime();
        if (at >= before) break;
        times[n] = at;
        lastRequestAt = at;
        const int actor = mix.writeNext(slots[n]);
        actors[n] = actor;
        if (static_cast<std::size_t>(slots[n].instance) >=
            sharedIn[static_cast<std::size_t>(actor)].size()) {
            growInstances(static_cast<std::size_t>(actor),
                          static_cast<std::size_t>(slots[n].instance) + 1);
        }
        slots[n].writeView(views[n]);
        replicaOf[n] = nextReplica;
        nextReplica = nextReplica + 1 == lanes.front()->replicas() ? 0 : nextReplica + 1;
        // Bucket sharing reads a legitimate instance's keys at its first request of the
        // interval.
        bool share = false;
        if (legitimateClass[actorClass[static_cast<std::size_t>(actor)]]) {
            std::uint32_t& seen = sharedIn[static_cast<std::size_t>(actor)]
                                          [static_cast<std::size_t>(slots[n].instance)];
            share = seen != sampleIndex + 1;
            seen = sampleIndex + 1;
        }
        shares[n] = share;
        ++n;
    }
    const RequestBatch batch{std::span(views).first(n),  std::span(times).first(n),
                             std::span(actors).first(n), std::span(replicaOf).first(n),
                             std::span(slots).first(n),  std::span(shares).first(n)};
    for (auto& lane : lanes)
        lane->decide(batch, replicasInterchangeable, engineClock);
    for (const auto& lane : lanes) {
        for (std::size_t j = 0; j < n; ++j) {
            lane->prefetchRecord(j, actors[j], slots[j].instance,
                                 actorClass[static_cast<std::size_t>(actors[j])], shares[j]);
        }
    }
    for (std::size_t j = 0; j < n; ++j)
        account(j);
    return static_cast<std::int64_t>(n);
}

// Counts request j of the batch just decided in every lane, and streams its flip and decision.
void ScenarioRunner::Impl::account(std::size_t j) {
    const int actor = actors[j];
    const std::size_t cls = actorClass[static_cast<std::size_t>(actor)];
    const std::int64_t instance = slots[j].instance;
    std::size_t outcomeA = 0;
    std::size_t outcomeB = 0;
    for (std::size_t l = 0; l < lanes.size(); ++l) {
        Lane& lane = *lanes[l];
        const std::size_t outcome = lane.record(j, actor, instance, cls, shares[j]);
        lane.noteClient(j, actor, instance, times[j], outcome);
        if (l == 0) outcomeA = outcome;
        if (l == 1) outcomeB = outcome;
        if (l > 0 && outcome != outcomeA) lane.countFlip(actor, outcomeA, outcome);
    }

    if (options.flips && outcomeA != outcomeB) {
        FlipRecord f;
        f.seq = requests;
        f.at = times[j];
        f.actor = actor;
        f.instance = instance;
        const Check& b = lanes[1]->check(j);
        if (!b.policies().empty()) f.key = b.policies().front().key;
        f.client = slots[j].clientText;
        f.outcomeA = outcomeA;
        f.outcomeB = outcomeB;
        options.flips->onFlip(f);
    }

    if (options.decisions) {
        const Check& check = lanes.front()->check(j);
        DecisionRecord d;
        d.seq = requests;
        d.at = times[j];
        d.allowed = check.allowed;
        d.status = check.status;
        d.answer = slots[j].status;
        d.retryAfter = check.retryAfter;
        d.actor = actor;
        d.instance = instance;
        d.replica = static_cast<int>(replicaOf[j]);
        d.check = &check;
        d.remaining = -1;
        for (const PolicyResult& r : check.policies()) {
            const Decision& decision = r.decision;
            if (d.remaining < 0 || decision.remaining < d.remaining)
                d.remaining = decision.remaining;
        }
        // A refused request is keyed as the policy that refused it was.
        if (const PolicyResult* refusal = check.refusal()) {
            d.key = refusal->key;
        } else if (!check.policies().empty()) {
            d.key = check.policies().front().key;
        }
        d.client = slots[j].clientText;
        d.method = slots[j].method;
        d.path = slots[j].path;
        d.logFile = slots[j].logFile;
        d.logLine = slots[j].logLine;
        options.decisions->onDecision(d);
    }
    ++requests;
}

std::int64_t OutcomeFlips::total() const {
    std::int64_t n = 0;
    for (std::size_t a = 0; a < kOutcomeCount; ++a) {
        for (std::size_t b = 0; b < kOutcomeCount; ++b) {
            if (a != b) n += transitions[a][b];
        }
    }
    return n;
}

OutcomeFlips& OutcomeFlips::operator+=(const OutcomeFlips& o) {
    for (std::size_t a = 0; a < kOutcomeCount; ++a) {
        for (std::size_t b = 0; b < kOutcomeCount; ++b)
            transitions[a][b] += o.transitions[a][b];
    }
    return *this;
}

ScenarioRunner::ScenarioRunner(Scenario scenario, PolicySet policies, RunnerOptions options)
    : ScenarioRunner(std::move(scenario), std::vector<PolicySet>{std::move(policies)},
                     std::move(options)) {}

ScenarioRunner::ScenarioRunner(Scenario scenario, std::vector<PolicySet> lanes,
                               RunnerOptions options)
    : impl_(std::make_unique<Impl>(std::move(scenario), std::move(lanes), std::move(options))) {
    impl_->build();
}

ScenarioRunner::~ScenarioRunner() = default;

const Scenario& ScenarioRunner::scenario() const {
    return impl_->scenario;
}
std::size_t ScenarioRunner::laneCount() const {
    return impl_->lanes.size();
}
const PolicySet& ScenarioRunner::policies(std::size_t lane) const {
    return impl_->lanes[lane]->policies();
}
const PolicySet& ScenarioRunner::initialPolicies(std::size_t lane) const {
    return impl_->lanes[lane]->initialPolicies();
}
std::uint64_t ScenarioRunner::seed() const {
    return impl_->seed;
}
const std::vector<std::string>& ScenarioRunner::classNames() const {
    return impl_->classNames;
}
Nanos ScenarioRunner::now() const {
    return impl_->now;
}
Nanos ScenarioRunner::duration() const {
    return impl_->run.duration;
}
Nanos ScenarioRunner::sampleInterval() const {
    return impl_->run.sampleInterval;
}
std::int64_t ScenarioRunner::requests() const {
    return impl_->requests;
}

bool ScenarioRunner::finished() const {
    return impl_->sampleStart >= impl_->run.duration;
}

std::int64_t ScenarioRunner::advance(Nanos until, std::int64_t maxRequests) {
    Impl& m = *impl_;
    until = std::min(until, m.run.duration);
    if (until < m.now || finished()) return 0;
    std::int64_t decided = 0;
    for (;;) {
        const Nanos t = m.mix.nextTime();
        if (t == ActorTraffic::kNever && m.run.endsWithTraffic) {
            m.endWithTraffic();
            until = std::min(until, m.run.duration);
        }
        // Before the request at `t`: samples that end by then close, and policy changes due by
        // then apply (a change at exactly `until` waits for the next call, since requests at
        // `until` belong to it).
        const Nanos sampleLimit = std::min(t, until);
        if (m.nextBoundary() <= sampleLimit) {
            const Nanos changeLimit = std::min(t, until - 1);
            for (;;) {
                const Nanos change = m.nextChange < m.changes.size() ? m.changes[m.nextChange]->from
                                                                     : ActorTraffic::kNever;
                const bool doChange = change <= changeLimit;
                const bool doSample = m.sampleEnd <= sampleLimit;
                if (doChange && (!doSample || change < m.sampleEnd)) {
                    m.applyChangesThrough(change);
                } else if (doSample) {
                    m.closeSample();
                } else {
                    break;
                }
            }
        }
        if (t >= until) {
            m.now = until;
            break;
        }
        if (decided >= maxRequests) {
            m.now = std::max(m.now, t);
            break;
        }
        // Requests at the next sample end or policy change wait for it.
        decided += m.decideBatch(std::min(m.nextBoundary(), until), maxRequests - decided);
    }
    return decided;
}

std::int64_t ScenarioRunner::step() {
    if (finished()) return 0;
    return advance(impl_->sampleEnd);
}

std::int64_t ScenarioRunner::runToEnd() {
    return advance(impl_->run.duration);
}

std::vector<Sample> ScenarioRunner::takeSamples(std::size_t lane) {
    return impl_->lanes[lane]->takeSamples();
}

const std::vector<Sample>& ScenarioRunner::samples(std::size_t lane) const {
    return impl_->lanes[lane]->samples();
}

std::vector<ActorRow> ScenarioRunner::actorRows(std::size_t lane) const {
    const Impl& m = *impl_;
    const Lane& l = *m.lanes[lane];
    std::vector<ActorRow> rows;
    rows.reserve(m.scenario.actors.size());
    for (std::size_t i = 0; i < m.scenario.actors.size(); ++i) {
        const Actor& a = m.scenario.actors[i];
        rows.push_back(ActorRow{a.name, a.className,
                                static_cast<std::int64_t>(l.instances(i).size()),
                                l.actorTotals(i)});
    }
    return rows;
}

std::span<const InstanceCounters> ScenarioRunner::instances(std::size_t actor,
                                                            std::size_t lane) const {
    return impl_->lanes[lane]->instances(actor);
}

std::span<const ClientInterval> ScenarioRunner::clientTimeline(std::size_t actor,
                                                               std::int64_t instance,
                                                               std::size_t lane) const {
    return impl_->lanes[lane]->clientTimeline(actor, instance);
}

std::span<const ClientSeen> ScenarioRunner::clientsSeen(std::size_t actor, std::size_t lane) const {
    return impl_->lanes[lane]->clientsSeen(actor);
}

const std::vector<OutcomeFlips>& ScenarioRunner::flips(std::size_t lane) const {
    return impl_->lanes[lane]->flips();
}

std::vector<LogEntry> ScenarioRunner::takeLog(std::size_t lane) {
    return impl_->lanes[lane]->takeLog();
}

RunTotals ScenarioRunner::totals(std::size_t lane) const {
    const Impl& m = *impl_;
    const Lane& l = *m.lanes[lane];
    RunTotals t = l.totals();
    t.requests = m.requests;
    t.virtualTime = m.now;
    // Per class: instances that sent anything, those throttled, and Jain's index over them.
    struct Sums {
        double allowed = 0;
        double squares = 0;
    };
    std::vector<Sums> sums(m.classNames.size());
    t.spread.assign(m.classNames.size(), ClassSpread{});
    for (std::size_t a = 0; a < m.scenario.actors.size(); ++a) {
        const std::size_t c = m.actorClass[a];
        ClassSpread& spread = t.spread[c];
        for (const InstanceCounters& i : instances(a, lane)) {
            if (i.offered == 0) continue;
            spread.instances += 1;
            spread.throttledInstances += i.throttled > 0 ? 1 : 0;
            const double x = static_cast<double>(i.allowed);
            sums[c].allowed += x;
            sums[c].squares += x * x;
        }
    }
    for (std::size_t c = 0; c < t.spread.size(); ++c) {
        ClassSpread& spread = t.spread[c];
        if (sums[c].squares > 0) {
            spread.fairness = sums[c].allowed * sums[c].allowed /
                              (static_cast<double>(spread.instances) * sums[c].squares);
        }
        spread.peakInstancesPerBucket = l.peakInstancesPerBucket(c);
    }
    return t;
}

void ScenarioRunner::retune(std::size_t policyIndex, const PolicyTuning& tuning, std::size_t lane) {
    impl_->lanes[lane]->retune(policyIndex, tuning);
}

}  // namespace ratelab::sim
