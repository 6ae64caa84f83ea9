#include "sim/scenario_runner.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "ratelab/limiter.h"
#include "ratelab/memory_store.h"
#include "sim/fault_store.h"
#include "sim/traffic.h"

namespace ratelab::sim {

namespace {

using WallClock = std::chrono::steady_clock;

std::int64_t wallNanos(WallClock::time_point from, WallClock::time_point to) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(to - from).count();
}

}  // namespace

// Legitimate instances charged to one bucket within a sample interval: the peak per class.
// Buckets and (bucket, instance) pairs are held as 64-bit hashes; a collision among the few
// thousand buckets of one interval is vanishingly unlikely and would only undercount.
class BucketSharing {
public:
    void reset(std::size_t classes) { peak_.assign(classes, 0); }
    void add(std::size_t cls, std::uint32_t policy, std::string_view key, std::uint64_t instance) {
        const std::uint64_t bucket = mixSeed(std::hash<std::string_view>{}(key),
                                             (static_cast<std::uint64_t>(cls) << 32) | policy);
        if (!pairs_.insert(mixSeed(bucket, instance)).second) return;
        const std::int64_t n = ++perBucket_[bucket];
        if (n > peak_[cls]) peak_[cls] = n;
    }
    void closeInterval() {
        pairs_.clear();
        perBucket_.clear();
    }
    std::int64_t peak(std::size_t cls) const { return peak_[cls]; }

private:
    std::unordered_set<std::uint64_t> pairs_;
    std::unordered_map<std::uint64_t, std::int64_t> perBucket_;
    std::vector<std::int64_t> peak_;
};

// One policy set deciding the run's requests on its own engine and stores.
struct Lane final : LimitObserver {
    Lane(PolicySet p, const std::vector<Actor>& a)
        : initialPolicies(p), policies(std::move(p)), actors(a) {}

    void onLimitHit(const LimitEvent& event) override {
        LogEntry& e = pushLog();
        e.at = event.now;
        e.policy.assign(event.policy);
        e.outcome = event.outcome;
        e.keyHash.assign(event.keyHash);
        e.retryAfter = event.decision.retryAfter;
        e.error.clear();
    }
    void onStoreError(const StoreErrorEvent& event) override {
        LogEntry& e = pushLog();
        e.at = event.now;
        e.policy.assign(event.policy);
        e.outcome = event.outcome;
        e.keyHash.assign(event.keyHash);
        e.retryAfter = 0;
        e.error.assign(event.error);
    }
    // The ring keeps the newest logCapacity entries; strings reuse their capacity.
    LogEntry& pushLog() {
        std::size_t index = (logHead + logCount) % log.size();
        if (logCount < log.size()) {
            ++logCount;
        } else {
            logHead = (logHead + 1) % log.size();
        }
        LogEntry& e = log[index];
        e.actor.assign(actors[static_cast<std::size_t>(currentActor)].name);
        return e;
    }

    /// Counts the decision in `check` for `actor`'s `instance` of class `cls`; returns its
    /// outcome (kOutcomeFields).
    std::size_t record(int actor, std::int64_t instance, std::size_t cls, bool shares);

    const PolicySet initialPolicies;
    PolicySet policies;
    const std::vector<Actor>& actors;
    std::vector<std::shared_ptr<Store>> innerStores;  // distinct stores, for keyspace figures
    std::vector<std::unique_ptr<Limiter>> limiters;   // one per replica
    Check check;
    std::int64_t storeErrors = 0;  // store calls that failed: injected or the store's own
    std::int64_t errorsAtSampleStart = 0;
    std::vector<ClassCounters> current;
    std::vector<Sample> samples;
    std::size_t samplesTaken = 0;
    std::vector<ClassCounters> actorTotals;
    std::vector<std::vector<InstanceCounters>> instances;  // per actor
    std::vector<OutcomeFlips> flips;                       // per actor, against lane 0
    RunTotals totals;
    BucketSharing sharing;

    std::vector<LogEntry> log;
    std::size_t logHead = 0;
    std::size_t logCount = 0;
    int currentActor = 0;
};

std::size_t Lane::record(int actor, std::int64_t instance, std::size_t cls, bool shares) {
    const auto a = static_cast<std::size_t>(actor);
    ClassCounters& c = current[cls];
    ClassCounters& t = actorTotals[a];
    InstanceCounters& i = instances[a][static_cast<std::size_t>(instance)];
    c.offered += 1;
    t.offered += 1;
    i.offered += 1;
    bool failedOpen = false;
    for (const PolicyResult& r : check.policies()) {
        const PolicyOutcome o = r.outcome;
        if (o == PolicyOutcome::FailedOpen || o == PolicyOutcome::FailedClosed ||
            o == PolicyOutcome::StoreRefused) {
            ++storeErrors;
            failedOpen = failedOpen || o == PolicyOutcome::FailedOpen;
        }
        if (shares && !r.key.empty())
            sharing.add(cls, r.policy, r.key, static_cast<std::uint64_t>(instance));
    }
    const std::size_t outcome = requestOutcome(check.status);
    const auto member = kOutcomeFields[outcome].member;
    c.*member += 1;
    t.*member += 1;
    if (outcome == kAllowedOutcome) {
        i.allowed += 1;
        if (failedOpen) {
            c.failedOpen += 1;
            t.failedOpen += 1;
        }
    } else if (outcome == kThrottledOutcome) {
        i.throttled += 1;
    }
    return outcome;
}

struct ScenarioRunner::Impl {
    Impl(Scenario s, std::vector<PolicySet> p, RunnerOptions o)
        : scenario(std::move(s))
        , options(std::move(o))
        , seed(options.seed.value_or(scenario.seed))
        , classNames(scenario.classNames())
        , mix(scenario.actors, seed, scenario.duration) {
        for (PolicySet& set : p)
            lanes.push_back(std::make_unique<Lane>(std::move(set), scenario.actors));
    }

    void build();
    void buildLane(Lane& lane);
    void decideNext();
    void closeSample();
    void applyChangesThrough(Nanos t);
    Nanos nextBoundary() const {
        Nanos change =
            nextChange < changes.size() ? changes[nextChange]->from : ActorTraffic::kNever;
        return std::min(change, sampleEnd);
    }

    Scenario scenario;
    RunnerOptions options;
    std::uint64_t seed;
    std::vector<std::string> classNames;
    std::vector<std::size_t> actorClass;
    std::vector<bool> legitimateClass;
    std::vector<std::unique_ptr<Lane>> lanes;

    TrafficMix mix;
    RequestSlot slot;
    std::vector<const ScenarioEvent*> changes;  // policy_change events in time order
    std::size_t nextChange = 0;
    std::array<std::size_t, 2> outcomes{};  // lanes 0 and 1, for the flip sink

    Nanos now = 0;
    std::int64_t requests = 0;
    std::size_t nextReplica = 0;

    Nanos sampleStart = 0;
    Nanos sampleEnd = 0;
    std::int64_t requestsAtSampleStart = 0;
    std::int64_t sampleWallNanos = 0;

    bool measuring = false;
    WallClock::time_point wallMark;
};

void ScenarioRunner::Impl::build() {
    for (const Actor& a : scenario.actors) {
        auto it = std::find(classNames.begin(), classNames.end(), a.className);
        actorClass.push_back(static_cast<std::size_t>(it - classNames.begin()));
    }
    for (const std::string& c : classNames)
        legitimateClass.push_back(isLegitimateClass(c));
    sampleEnd = std::min(scenario.sampleInterval, scenario.duration);

    for (const ScenarioEvent& e : scenario.events) {
        if (e.kind == ScenarioEvent::Kind::PolicyChange) changes.push_back(&e);
    }
    std::stable_sort(
        changes.begin(), changes.end(),
        [](const ScenarioEvent* a, const ScenarioEvent* b) { return a->from < b->from; });
    for (auto& lane : lanes)
        buildLane(*lane);
}

void ScenarioRunner::Impl::buildLane(Lane& lane) {
    lane.actorTotals.assign(scenario.actors.size(), ClassCounters{});
    lane.flips.assign(scenario.actors.size(), OutcomeFlips{});
    for (const Actor& a : scenario.actors)
        lane.instances.emplace_back(static_cast<std::size_t>(a.count));
    lane.current.assign(classNames.size(), ClassCounters{});
    lane.totals.classes.assign(classNames.size(), ClassCounters{});
    lane.totals.peakAllowed.assign(classNames.size(), 0);
    lane.sharing.reset(classNames.size());
    if (options.logCapacity > 0) lane.log.resize(options.logCapacity);

    const PolicySet& policies = lane.policies;
    MemoryStoreOptions memory;
    memory.maxBuckets = scenario.maxBuckets > 0 ? scenario.maxBuckets : policies.store.maxBuckets;
    const int replicas = scenario.replicas;
    std::shared_ptr<Store> shared = options.store;
    if (!shared && (scenario.sharedStore || replicas == 1)) {
        memory.hashSeed = mixSeed(seed, 0x73746f7265);
        shared = makeMemoryStore(memory);
    }
    if (shared) lane.innerStores.push_back(shared);
    LimiterOptions limiterOptions;
    limiterOptions.observer = options.logCapacity > 0 ? &lane : nullptr;
    limiterOptions.keyHashSecret = mixSeed(seed, 0x6b6579);
    for (int r = 0; r < replicas; ++r) {
        std::shared_ptr<Store> inner = shared;
        if (!inner) {
            memory.hashSeed = mixSeed(seed, 0x73746f7265 + static_cast<std::uint64_t>(r) + 1);
            inner = makeMemoryStore(memory);
            lane.innerStores.push_back(inner);
        }
        std::vector<ScenarioEvent> faults;
        for (const ScenarioEvent& e : scenario.events) {
            if (e.kind != ScenarioEvent::Kind::PolicyChange && (e.replica < 0 || e.replica == r)) {
                faults.push_back(e);
            }
        }
        // Faults reach the engine through a decorator, only where a fault window applies.
        auto fault = std::make_shared<FaultStore>(inner, faults);
        std::shared_ptr<Store> store = fault->hasFaults() ? fault : inner;
        lane.limiters.push_back(std::make_unique<Limiter>(policies, store, limiterOptions));
    }
}

void ScenarioRunner::Impl::applyChangesThrough(Nanos t) {
    while (nextChange < changes.size() && changes[nextChange]->from <= t) {
        const PolicyChange& change = changes[nextChange]->change;
        for (auto& lane : lanes) {
            PolicySet& policies = lane->policies;
            for (std::size_t i = 0; i < policies.policies.size(); ++i) {
                if (!change.policy.empty() && policies.policies[i].name != change.policy) continue;
                Policy updated = change.apply(policies.policies[i]);
                for (auto& limiter : lane->limiters)
                    limiter->retune(i, updated);
                policies.policies[i] = std::move(updated);
                break;
            }
        }
        ++nextChange;
    }
}

void ScenarioRunner::Impl::closeSample() {
    if (measuring) {
        WallClock::time_point t = WallClock::now();
        sampleWallNanos += wallNanos(wallMark, t);
        wallMark = t;
    }
    const std::int64_t n = requests - requestsAtSampleStart;
    const double wallPerRequest =
        n > 0 && sampleWallNanos > 0 ? static_cast<double>(sampleWallNanos) / static_cast<double>(n)
                                     : 0.0;
    requestsAtSampleStart = requests;
    sampleWallNanos = 0;

    for (auto& lanePointer : lanes) {
        Lane& lane = *lanePointer;
        Sample s;
        s.start = sampleStart;
        s.end = sampleEnd;
        s.classes = lane.current;
        for (const auto& store : lane.innerStores) {
            KeyspaceStats k = store->keyspace();
            s.keyspace.buckets += k.buckets;
            s.keyspace.budgetSlots += k.budgetSlots;
            s.keyspace.scopes += k.scopes;
            s.keyspace.bytes += k.bytes;
            s.keyspace.maxBuckets += k.maxBuckets;
        }
        const std::int64_t errors = lane.storeErrors;
        s.storeErrors = errors - lane.errorsAtSampleStart;
        lane.errorsAtSampleStart = errors;
        s.wallNanosPerRequest = wallPerRequest;

        RunTotals& totals = lane.totals;
        for (std::size_t c = 0; c < lane.current.size(); ++c) {
            totals.classes[c] += lane.current[c];
            totals.peakAllowed[c] = std::max(totals.peakAllowed[c], lane.current[c].allowed);
            lane.current[c] = ClassCounters{};
        }
        totals.maxBuckets = std::max(totals.maxBuckets, s.keyspace.buckets);
        totals.maxBudgetSlots = std::max(totals.maxBudgetSlots, s.keyspace.budgetSlots);
        totals.maxBytes = std::max(totals.maxBytes, s.keyspace.bytes);
        totals.finalBuckets = s.keyspace.buckets;
        totals.storeErrors = errors;
        lane.samples.push_back(std::move(s));
        lane.sharing.closeInterval();
    }

    sampleStart = sampleEnd;
    sampleEnd = std::min(sampleEnd + scenario.sampleInterval, scenario.duration);
    if (sampleStart >= scenario.duration) sampleEnd = ActorTraffic::kNever;
}

void ScenarioRunner::Impl::decideNext() {
    const Nanos at = mix.nextTime();
    const int actor = mix.emit(slot);
    const std::size_t replica = nextReplica;
    nextReplica = nextReplica + 1 == lanes.front()->limiters.size() ? 0 : nextReplica + 1;
    const std::size_t cls = actorClass[static_cast<std::size_t>(actor)];
    // Keys are captured only where they are read: legitimate requests (bucket sharing), the
    // decisions file, and lane 1 when flips are streamed.
    const bool shares = legitimateClass[cls];
    const RequestView view = slot.view();
    for (std::size_t l = 0; l < lanes.size(); ++l) {
        Lane& lane = *lanes[l];
        lane.check.captureKeys =
            shares || (l == 0 && options.decisions) || (l == 1 && options.flips);
        lane.currentActor = actor;
        lane.limiters[replica]->check(view, at, lane.check);
        const std::size_t outcome = lane.record(actor, slot.instance, cls, shares);
        if (l < 2) outcomes[l] = outcome;
        if (l > 0 && outcome != outcomes[0]) {
            lane.flips[static_cast<std::size_t>(actor)].transitions[outcomes[0]][outcome] += 1;
        }
    }

    if (options.flips && outcomes[0] != outcomes[1]) {
        FlipRecord f;
        f.seq = requests;
        f.at = at;
        f.actor = actor;
        f.instance = slot.instance;
        const Check& b = lanes[1]->check;
        if (!b.policies().empty()) f.key = b.policies().front().key;
        f.client = slot.clientText;
        f.outcomeA = outcomes[0];
        f.outcomeB = outcomes[1];
        options.flips->onFlip(f);
    }

    if (options.decisions) {
        const Check& check = lanes.front()->check;
        DecisionRecord d;
        d.seq = requests;
        d.at = at;
        d.allowed = check.allowed;
        d.status = check.status;
        d.retryAfter = check.retryAfter;
        d.actor = actor;
        d.instance = slot.instance;
        d.replica = static_cast<int>(replica);
        d.check = &check;
        d.remaining = -1;
        for (const PolicyResult& r : check.policies()) {
            const Decision& decision = r.decision;
            if (d.remaining < 0 || decision.remaining < d.remaining)
                d.remaining = decision.remaining;
        }
        if (!slot.clientText.empty()) {
            d.key = slot.clientText;
        } else if (!check.policies().empty()) {
            d.key = check.policies().front().key;
        }
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
    return impl_->lanes[lane]->policies;
}
const PolicySet& ScenarioRunner::initialPolicies(std::size_t lane) const {
    return impl_->lanes[lane]->initialPolicies;
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
    return impl_->scenario.duration;
}
Nanos ScenarioRunner::sampleInterval() const {
    return impl_->scenario.sampleInterval;
}
std::int64_t ScenarioRunner::requests() const {
    return impl_->requests;
}

bool ScenarioRunner::finished() const {
    return impl_->sampleStart >= impl_->scenario.duration;
}

std::int64_t ScenarioRunner::advance(Nanos until, std::int64_t maxRequests) {
    Impl& m = *impl_;
    until = std::min(until, m.scenario.duration);
    if (until < m.now || finished()) return 0;
    m.measuring = m.options.measureWallTime;
    if (m.measuring) m.wallMark = WallClock::now();
    std::int64_t decided = 0;
    for (;;) {
        const Nanos t = m.mix.nextTime();
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
        m.decideNext();
        ++decided;
    }
    if (m.measuring) {
        m.sampleWallNanos += wallNanos(m.wallMark, WallClock::now());
        m.measuring = false;
    }
    return decided;
}

std::int64_t ScenarioRunner::step() {
    if (finished()) return 0;
    return advance(impl_->sampleEnd);
}

std::int64_t ScenarioRunner::runToEnd() {
    return advance(impl_->scenario.duration);
}

std::vector<Sample> ScenarioRunner::takeSamples(std::size_t lane) {
    Lane& l = *impl_->lanes[lane];
    std::vector<Sample> out(l.samples.begin() + static_cast<std::ptrdiff_t>(l.samplesTaken),
                            l.samples.end());
    l.samplesTaken = l.samples.size();
    return out;
}

const std::vector<Sample>& ScenarioRunner::samples(std::size_t lane) const {
    return impl_->lanes[lane]->samples;
}

std::vector<ActorRow> ScenarioRunner::actorRows(std::size_t lane) const {
    const Impl& m = *impl_;
    const Lane& l = *m.lanes[lane];
    std::vector<ActorRow> rows;
    rows.reserve(m.scenario.actors.size());
    for (std::size_t i = 0; i < m.scenario.actors.size(); ++i) {
        const Actor& a = m.scenario.actors[i];
        rows.push_back(ActorRow{a.name, a.className, a.count, l.actorTotals[i]});
    }
    return rows;
}

const std::vector<InstanceCounters>& ScenarioRunner::instances(std::size_t actor,
                                                               std::size_t lane) const {
    return impl_->lanes[lane]->instances[actor];
}

const std::vector<OutcomeFlips>& ScenarioRunner::flips(std::size_t lane) const {
    return impl_->lanes[lane]->flips;
}

std::vector<LogEntry> ScenarioRunner::takeLog(std::size_t lane) {
    Lane& l = *impl_->lanes[lane];
    std::vector<LogEntry> out;
    out.reserve(l.logCount);
    for (std::size_t i = 0; i < l.logCount; ++i)
        out.push_back(l.log[(l.logHead + i) % l.log.size()]);
    l.logHead = 0;
    l.logCount = 0;
    return out;
}

RunTotals ScenarioRunner::totals(std::size_t lane) const {
    const Impl& m = *impl_;
    const Lane& l = *m.lanes[lane];
    RunTotals t = l.totals;
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
        for (const InstanceCounters& i : l.instances[a]) {
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
        spread.peakInstancesPerBucket = l.sharing.peak(c);
    }
    return t;
}

void ScenarioRunner::retune(std::size_t policyIndex, const Policy& updated, std::size_t lane) {
    Lane& l = *impl_->lanes[lane];
    for (auto& limiter : l.limiters)
        limiter->retune(policyIndex, updated);
    l.policies.policies[policyIndex] = updated;
}

}  // namespace ratelab::sim
