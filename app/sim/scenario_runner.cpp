#include "sim/scenario_runner.h"

#include <algorithm>
#include <chrono>

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

struct ScenarioRunner::Impl final : LimitObserver {
    Impl(Scenario s, PolicySet p, RunnerOptions o)
        : scenario(std::move(s))
        , initialPolicies(p)
        , policies(std::move(p))
        , options(std::move(o))
        , seed(options.seed.value_or(scenario.seed))
        , classNames(scenario.classNames())
        , mix(scenario.actors, seed, scenario.duration) {}

    void build();
    std::int64_t decideBatch(Nanos before, std::int64_t room);
    void account(std::size_t j);
    void closeSample();
    void mergeSamples();
    void endWithTraffic();
    void applyChangesThrough(Nanos t);
    Nanos nextBoundary() const {
        Nanos change =
            nextChange < changes.size() ? changes[nextChange]->from : ActorTraffic::kNever;
        return std::min(change, sampleEnd);
    }

    void onLimitHit(const LimitEvent& event) override {
        LogEntry& e = pushLog(event.request);
        e.at = event.now;
        e.policy.assign(event.policy);
        e.outcome = event.outcome;
        e.keyHash.assign(event.keyHash);
        e.retryAfter = event.decision.retryAfter;
        e.error.clear();
    }
    void onStoreError(const StoreErrorEvent& event) override {
        LogEntry& e = pushLog(event.request);
        e.at = event.now;
        e.policy.assign(event.policy);
        e.outcome = event.outcome;
        e.keyHash.assign(event.keyHash);
        e.retryAfter = 0;
        e.error.assign(event.error);
    }
    // The ring keeps the newest logCapacity entries; strings reuse their capacity. `request`
    // is the event's index in the checkBatch() call that reported it.
    LogEntry& pushLog(std::uint32_t request) {
        std::size_t index = (logHead + logCount) % log.size();
        if (logCount < log.size()) {
            ++logCount;
        } else {
            logHead = (logHead + 1) % log.size();
        }
        LogEntry& e = log[index];
        e.actor.assign(scenario.actors[static_cast<std::size_t>(eventActors[request])].name);
        return e;
    }

    Scenario scenario;
    const PolicySet initialPolicies;
    PolicySet policies;
    RunnerOptions options;
    std::uint64_t seed;
    std::vector<std::string> classNames;
    std::vector<std::size_t> actorClass;

    std::vector<std::shared_ptr<Store>> innerStores;  // distinct stores, for keyspace figures
    std::vector<std::unique_ptr<Limiter>> limiters;   // one per replica

    TrafficMix mix;
    // The batch being decided: request j was generated into slots[j] at times[j] by actors[j],
    // for replica replicaOf[j], and decided into checks[j].
    std::size_t batchSize = 1;
    bool replicasInterchangeable = true;  // one limiter may decide for every replica
    std::vector<RequestSlot> slots;
    std::vector<RequestView> views;
    std::vector<Nanos> times;
    std::vector<int> actors;
    std::vector<std::size_t> replicaOf;
    std::vector<Check> checks;
    const int* eventActors = nullptr;           // actors of the requests being decided
    std::vector<const ScenarioEvent*> changes;  // policy_change events in time order
    std::size_t nextChange = 0;

    Nanos now = 0;
    Nanos lastRequestAt = 0;
    std::int64_t requests = 0;
    std::int64_t storeErrors = 0;  // store calls that failed: injected or the store's own
    std::size_t nextReplica = 0;

    Nanos sampleStart = 0;
    Nanos sampleEnd = 0;
    std::vector<ClassCounters> current;
    std::int64_t errorsAtSampleStart = 0;
    std::int64_t requestsAtSampleStart = 0;
    std::int64_t sampleWallNanos = 0;
    std::vector<Sample> samples;
    std::size_t samplesTaken = 0;

    std::vector<ClassCounters> actorTotals;
    RunTotals totals;

    std::vector<LogEntry> log;
    std::size_t logHead = 0;
    std::size_t logCount = 0;

    bool measuring = false;
    WallClock::time_point wallMark;
};

void ScenarioRunner::Impl::build() {
    for (const Actor& a : scenario.actors) {
        auto it = std::find(classNames.begin(), classNames.end(), a.className);
        actorClass.push_back(static_cast<std::size_t>(it - classNames.begin()));
    }
    actorTotals.assign(scenario.actors.size(), ClassCounters{});
    current.assign(classNames.size(), ClassCounters{});
    totals.classes.assign(classNames.size(), ClassCounters{});
    totals.peakAllowed.assign(classNames.size(), 0);
    sampleEnd = std::min(scenario.sampleInterval, scenario.duration);

    for (const ScenarioEvent& e : scenario.events) {
        if (e.kind == ScenarioEvent::Kind::PolicyChange) changes.push_back(&e);
    }
    std::stable_sort(
        changes.begin(), changes.end(),
        [](const ScenarioEvent* a, const ScenarioEvent* b) { return a->from < b->from; });

    if (options.logCapacity > 0) log.resize(options.logCapacity);

    MemoryStoreOptions memory;
    memory.maxBuckets = scenario.maxBuckets > 0 ? scenario.maxBuckets : policies.store.maxBuckets;
    const int replicas = scenario.replicas;
    std::shared_ptr<Store> shared = options.store;
    if (!shared && (scenario.sharedStore || replicas == 1)) {
        memory.hashSeed = mixSeed(seed, 0x73746f7265);
        shared = makeMemoryStore(memory);
    }
    if (shared) innerStores.push_back(shared);
    LimiterOptions limiterOptions;
    limiterOptions.observer = options.logCapacity > 0 ? this : nullptr;
    limiterOptions.keyHashSecret = mixSeed(seed, 0x6b6579);
    for (int r = 0; r < replicas; ++r) {
        std::shared_ptr<Store> inner = shared;
        if (!inner) {
            memory.hashSeed = mixSeed(seed, 0x73746f7265 + static_cast<std::uint64_t>(r) + 1);
            inner = makeMemoryStore(memory);
            innerStores.push_back(inner);
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
        limiters.push_back(std::make_unique<Limiter>(policies, store, limiterOptions));
        // A replica with a store of its own for outages (on_store_error "local") is itself.
        replicasInterchangeable = replicasInterchangeable &&
                                  &limiters.back()->store() == &limiters.front()->store() &&
                                  !limiters.back()->localStore();
    }

    // Replicas with a store each (or faults of their own) decide their own requests one at a
    // time, in order; replicas that share one store undecorated are the same limiter, so one of
    // them decides every batch.
    batchSize = options.batchSize > 0                 ? options.batchSize
                : shared && shared->kind() == "redis" ? 256
                                                      : 64;
    if (!replicasInterchangeable) batchSize = 1;
    // A replayed log's cursor keeps one line's views alive at a time (replay_source.h), so a
    // replay generates and decides its requests one by one.
    for (const Actor& a : scenario.actors)
        if (a.recorded) batchSize = 1;
    slots.resize(batchSize);
    views.resize(batchSize);
    times.resize(batchSize);
    actors.resize(batchSize);
    replicaOf.resize(batchSize);
    checks.resize(batchSize);
    for (Check& c : checks)
        c.captureKeys = options.decisions != nullptr;
}

void ScenarioRunner::Impl::applyChangesThrough(Nanos t) {
    while (nextChange < changes.size() && changes[nextChange]->from <= t) {
        const PolicyChange& change = changes[nextChange]->change;
        for (std::size_t i = 0; i < policies.policies.size(); ++i) {
            if (!change.policy.empty() && policies.policies[i].name != change.policy) continue;
            const PolicyTuning tuning = change.tuning(policies.policies[i]);
            for (auto& limiter : limiters)
                limiter->retune(i, tuning);
            applyTuning(policies.policies[i], tuning);
            break;
        }
        ++nextChange;
    }
}

void ScenarioRunner::Impl::closeSample() {
    Sample s;
    s.start = sampleStart;
    s.end = sampleEnd;
    s.classes = current;
    // The memory stores change only when consumed from: over an idle stretch (a replayed log's
    // quiet night) the figures are the previous sample's, without walking every shard again.
    if (!samples.empty() && requests == requestsAtSampleStart && !options.store) {
        s.keyspace = samples.back().keyspace;
    } else {
        // The shared stores, and the replicas' own stores under on_store_error "local".
        std::vector<const Store*> stores;
        for (const auto& store : innerStores)
            stores.push_back(store.get());
        for (const auto& limiter : limiters) {
            if (const Store* local = limiter->localStore()) stores.push_back(local);
        }
        for (const Store* store : stores) {
            KeyspaceStats k = store->keyspace();
            s.keyspace.buckets += k.buckets;
            s.keyspace.budgetSlots += k.budgetSlots;
            s.keyspace.scopes += k.scopes;
            s.keyspace.bytes += k.bytes;
            s.keyspace.maxBuckets += k.maxBuckets;
        }
    }
    const std::int64_t errors = storeErrors;
    s.storeErrors = errors - errorsAtSampleStart;
    errorsAtSampleStart = errors;
    if (measuring) {
        WallClock::time_point t = WallClock::now();
        sampleWallNanos += wallNanos(wallMark, t);
        wallMark = t;
    }
    const std::int64_t n = requests - requestsAtSampleStart;
    s.wallNanosPerRequest = n > 0 && sampleWallNanos > 0
                                ? static_cast<double>(sampleWallNanos) / static_cast<double>(n)
                                : 0.0;
    requestsAtSampleStart = requests;
    sampleWallNanos = 0;

    for (std::size_t c = 0; c < current.size(); ++c) {
        totals.classes[c] += current[c];
        totals.peakAllowed[c] = std::max(totals.peakAllowed[c], current[c].allowed);
        current[c] = ClassCounters{};
    }
    totals.maxBuckets = std::max(totals.maxBuckets, s.keyspace.buckets);
    totals.maxBudgetSlots = std::max(totals.maxBudgetSlots, s.keyspace.budgetSlots);
    totals.maxBytes = std::max(totals.maxBytes, s.keyspace.bytes);
    totals.finalBuckets = s.keyspace.buckets;
    totals.storeErrors = errors;
    samples.push_back(std::move(s));

    sampleStart = sampleEnd;
    sampleEnd = std::min(sampleEnd + scenario.sampleInterval, scenario.duration);
    if (sampleStart >= scenario.duration) {
        sampleEnd = ActorTraffic::kNever;
    } else if (scenario.maxSamples > 0 &&
               static_cast<std::int64_t>(samples.size()) >= scenario.maxSamples) {
        mergeSamples();
    }
}

// Pairs of samples become one of twice the interval. The closed samples are an even number
// of whole intervals from 0, so the open one starts on a boundary of the doubled interval.
void ScenarioRunner::Impl::mergeSamples() {
    std::vector<Sample> merged;
    merged.reserve(samples.size() / 2 + 1);
    for (std::size_t i = 0; i < samples.size(); i += 2) {
        Sample m = std::move(samples[i]);
        if (i + 1 < samples.size()) {
            const Sample& b = samples[i + 1];
            m.end = b.end;
            for (std::size_t c = 0; c < m.classes.size(); ++c)
                m.classes[c] += b.classes[c];
            m.keyspace = b.keyspace;
            m.storeErrors += b.storeErrors;
            m.wallNanosPerRequest = b.wallNanosPerRequest;
        }
        merged.push_back(std::move(m));
    }
    samples = std::move(merged);
    samplesTaken = std::min(samplesTaken, samples.size());
    scenario.sampleInterval *= 2;
    sampleEnd = std::min(sampleStart + scenario.sampleInterval, scenario.duration);
    // Peaks are over samples: those of the merged ones, as a run at this interval has them.
    std::fill(totals.peakAllowed.begin(), totals.peakAllowed.end(), 0);
    totals.maxBuckets = totals.maxBudgetSlots = totals.maxBytes = 0;
    for (const Sample& x : samples) {
        for (std::size_t c = 0; c < x.classes.size(); ++c)
            totals.peakAllowed[c] = std::max(totals.peakAllowed[c], x.classes[c].allowed);
        totals.maxBuckets = std::max(totals.maxBuckets, x.keyspace.buckets);
        totals.maxBudgetSlots = std::max(totals.maxBudgetSlots, x.keyspace.budgetSlots);
        totals.maxBytes = std::max(totals.maxBytes, x.keyspace.bytes);
    }
}

// A streamed replay has run dry: the sample holding its last request is the last.
void ScenarioRunner::Impl::endWithTraffic() {
    const Nanos interval = scenario.sampleInterval;
    const Nanos end = requests > 0 ? (lastRequestAt / interval + 1) * interval : interval;
    scenario.duration = std::min(scenario.duration, end);
    scenario.endsWithTraffic = false;
    if (sampleEnd != ActorTraffic::kNever) sampleEnd = std::min(sampleEnd, scenario.duration);
}

// Generates and decides the requests due before `before`, at most `room` of them and at most a
// batch. Traffic is open-loop (no request depends on a decision), so a batch can be generated
// ahead of its decisions.
std::int64_t ScenarioRunner::Impl::decideBatch(Nanos before, std::int64_t room) {
    std::size_t n = 0;
    while (n < batchSize && static_cast<std::int64_t>(n) < room) {
        const Nanos at = mix.nextTime();
        if (at >= before) break;
        times[n] = at;
        lastRequestAt = at;
        actors[n] = mix.emit(slots[n]);
        views[n] = slots[n].view();
        replicaOf[n] = nextReplica;
        nextReplica = nextReplica + 1 == limiters.size() ? 0 : nextReplica + 1;
        ++n;
    }
    if (n == 1 || !replicasInterchangeable) {
        for (std::size_t j = 0; j < n; ++j) {
            eventActors = &actors[j];
            limiters[replicaOf[j]]->check(views[j], times[j], checks[j]);
        }
    } else if (n > 1) {
        eventActors = actors.data();
        limiters.front()->checkBatch(std::span(views).first(n), std::span(times).first(n),
                                     std::span(checks).first(n));
    }
    for (std::size_t j = 0; j < n; ++j)
        account(j);
    return static_cast<std::int64_t>(n);
}

// Counts request j of the batch just decided and streams its decision.
void ScenarioRunner::Impl::account(std::size_t j) {
    const Check& check = checks[j];
    const int actor = actors[j];
    ClassCounters& c = current[actorClass[static_cast<std::size_t>(actor)]];
    ClassCounters& a = actorTotals[static_cast<std::size_t>(actor)];
    c.offered += 1;
    a.offered += 1;
    bool failedOpen = false;
    bool decidedLocally = false;
    for (const PolicyResult& r : check.policies()) {
        const PolicyOutcome o = r.outcome;
        c.outcomes[static_cast<std::size_t>(o)] += 1;
        a.outcomes[static_cast<std::size_t>(o)] += 1;
        if (o == PolicyOutcome::FailedOpen || o == PolicyOutcome::FailedClosed ||
            o == PolicyOutcome::StoreRefused || o == PolicyOutcome::StoreFull ||
            o == PolicyOutcome::DecidedLocally) {
            ++storeErrors;
            failedOpen = failedOpen || o == PolicyOutcome::FailedOpen;
            decidedLocally = decidedLocally || o == PolicyOutcome::DecidedLocally;
        }
    }
    if (decidedLocally) {
        c.decidedLocally += 1;
        a.decidedLocally += 1;
    }
    switch (check.status) {
        case 200:
            c.allowed += 1;
            a.allowed += 1;
            if (failedOpen) {
                c.failedOpen += 1;
                a.failedOpen += 1;
            }
            break;
        case 429:
            c.throttled += 1;
            a.throttled += 1;
            break;
        case 412:
            c.refused += 1;
            a.refused += 1;
            break;
        default:
            c.failedClosed += 1;
            a.failedClosed += 1;
            if (check.code == RefusalCode::StoreFull) {
                c.storeFull += 1;
                a.storeFull += 1;
            }
            break;
    }

    if (options.decisions) {
        DecisionRecord d;
        d.seq = requests;
        d.at = times[j];
        d.allowed = check.allowed;
        d.status = check.status;
        d.retryAfter = check.retryAfter;
        d.actor = actor;
        d.replica = static_cast<int>(replicaOf[j]);
        d.remaining = -1;
        for (const PolicyResult& r : check.policies()) {
            const Decision& decision = r.decision;
            if (d.remaining < 0 || decision.remaining < d.remaining)
                d.remaining = decision.remaining;
        }
        if (!check.policies().empty()) d.key = check.policies().front().key;
        d.client = slots[j].clientText;
        d.logFile = slots[j].logFile;
        d.logLine = slots[j].logLine;
        options.decisions->onDecision(d);
    }
    ++requests;
}

ScenarioRunner::ScenarioRunner(Scenario scenario, PolicySet policies, RunnerOptions options)
    : impl_(std::make_unique<Impl>(std::move(scenario), std::move(policies), std::move(options))) {
    impl_->build();
}

ScenarioRunner::~ScenarioRunner() = default;

const Scenario& ScenarioRunner::scenario() const {
    return impl_->scenario;
}
const PolicySet& ScenarioRunner::policies() const {
    return impl_->policies;
}
const PolicySet& ScenarioRunner::initialPolicies() const {
    return impl_->initialPolicies;
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
        if (t == ActorTraffic::kNever && m.scenario.endsWithTraffic) {
            m.endWithTraffic();
            until = std::min(until, m.scenario.duration);
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

std::vector<Sample> ScenarioRunner::takeSamples() {
    Impl& m = *impl_;
    std::vector<Sample> out(m.samples.begin() + static_cast<std::ptrdiff_t>(m.samplesTaken),
                            m.samples.end());
    m.samplesTaken = m.samples.size();
    return out;
}

const std::vector<Sample>& ScenarioRunner::samples() const {
    return impl_->samples;
}

std::vector<ActorRow> ScenarioRunner::actorRows() const {
    const Impl& m = *impl_;
    std::vector<ActorRow> rows;
    rows.reserve(m.scenario.actors.size());
    for (std::size_t i = 0; i < m.scenario.actors.size(); ++i) {
        const Actor& a = m.scenario.actors[i];
        rows.push_back(ActorRow{a.name, a.className, a.count, m.actorTotals[i]});
    }
    return rows;
}

std::vector<LogEntry> ScenarioRunner::takeLog() {
    Impl& m = *impl_;
    std::vector<LogEntry> out;
    out.reserve(m.logCount);
    for (std::size_t i = 0; i < m.logCount; ++i)
        out.push_back(m.log[(m.logHead + i) % m.log.size()]);
    m.logHead = 0;
    m.logCount = 0;
    return out;
}

RunTotals ScenarioRunner::totals() const {
    RunTotals t = impl_->totals;
    t.requests = impl_->requests;
    t.virtualTime = impl_->now;
    return t;
}

void ScenarioRunner::retune(std::size_t policyIndex, const PolicyTuning& tuning) {
    Impl& m = *impl_;
    for (auto& limiter : m.limiters)
        limiter->retune(policyIndex, tuning);
    applyTuning(m.policies.policies[policyIndex], tuning);
}

}  // namespace ratelab::sim
