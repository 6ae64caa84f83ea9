#include "sim/run/runner_lane.h"

#include "ratelab/memory_store.h"
#include "sim/run/fault_store.h"

namespace ratelab::sim {

namespace {

/// The simulated memory stores' shards per limit, the limiters' local stores included: what the
/// store takes by default on one or two hardware threads. Fixed, so that a report's byte counts
/// and evictions (each shard sizes its own table) do not depend on the machine; a run decides
/// on one thread, so more shards would buy it nothing.
constexpr unsigned kSimulatedShards = 4;

}  // namespace

Lane::Lane(PolicySet policies, const Scenario& scenario, std::size_t classCount,
           const LaneOptions& options)
    : initialPolicies_(policies)
    , policies_(std::move(policies))
    , actors_(scenario.actors)
    , keepKeys_(options.keepKeys)
    , timelineInterval_(std::max<Nanos>(1, options.timelineInterval)) {
    actorTotals_.assign(scenario.actors.size(), ClassCounters{});
    flips_.assign(scenario.actors.size(), OutcomeFlips{});
    for (const Actor& a : scenario.actors) {
        instances_.emplace_back(static_cast<std::size_t>(a.count));
        seen_.emplace_back(a.recorded ? static_cast<std::size_t>(a.count) : 0);
        timelines_.emplace_back(
            a.recorded && options.clientTimelines ? static_cast<std::size_t>(a.count) : 0);
    }
    current_.assign(classCount, ClassCounters{});
    totals_.classes.assign(classCount, ClassCounters{});
    totals_.peakAllowed.assign(classCount, 0);
    sharing_.reset(classCount);
    if (options.logCapacity > 0) log_.resize(options.logCapacity);
    noteSettling();

    MemoryStoreOptions memory;
    memory.maxBuckets = scenario.maxBuckets > 0 ? scenario.maxBuckets : policies_.store.maxBuckets;
    memory.shards = kSimulatedShards;
    const int replicas = scenario.replicas;
    std::shared_ptr<Store> shared = options.store;
    ownStores_ = !shared;
    if (!shared && (scenario.sharedStore || replicas == 1)) {
        memory.hashSeed = mixSeed(options.seed, 0x73746f7265);
        shared = makeMemoryStore(memory);
    }
    if (shared) innerStores_.push_back(shared);
    LimiterOptions limiterOptions;
    limiterOptions.observer = options.logCapacity > 0 ? this : nullptr;
    limiterOptions.keyHashSecret = mixSeed(options.seed, 0x6b6579);
    limiterOptions.localStoreShards = kSimulatedShards;
    for (int r = 0; r < replicas; ++r) {
        std::shared_ptr<Store> inner = shared;
        if (!inner) {
            memory.hashSeed =
                mixSeed(options.seed, 0x73746f7265 + static_cast<std::uint64_t>(r) + 1);
            inner = makeMemoryStore(memory);
            innerStores_.push_back(inner);
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
        limiters_.push_back(std::make_unique<Limiter>(policies_, store, limiterOptions));
    }
}

bool Lane::replicasInterchangeable() const {
    // A replica with a store of its own for outages (on_store_error "local") is itself.
    return std::all_of(limiters_.begin(), limiters_.end(), [&](const auto& limiter) {
        return &limiter->store() == &limiters_.front()->store() && !limiter->localStore();
    });
}

void Lane::decide(const RequestBatch& batch, bool together,
                  const std::function<Nanos()>& engineClock) {
    const std::size_t n = batch.size();
    if (checks_.size() < n) checks_.resize(n);
    // Keys are captured only where they are read: bucket sharing, the decisions file, streamed
    // flips, and a replayed client's first request (its key is what the client table shows).
    for (std::size_t j = 0; j < n; ++j) {
        const std::vector<ClientSeen>& seen = seen_[static_cast<std::size_t>(batch.actors[j])];
        const bool firstOfClient =
            !seen.empty() && seen[static_cast<std::size_t>(batch.slots[j].instance)].firstSeen < 0;
        checks_[j].captureKeys = batch.shares[j] || keepKeys_ || firstOfClient;
    }
    // What the engine spends: the limiter's calls, the store's included, timed per batch (the
    // runner's own work around them is not).
    const Nanos started = engineClock ? engineClock() : 0;
    if (n > 1 && together && !settles_) {
        eventActors_ = batch.actors.data();
        limiters_.front()->checkBatch(batch.views, batch.times, std::span(checks_).first(n));
    } else {
        for (std::size_t j = 0; j < n; ++j) {
            eventActors_ = &batch.actors[j];
            const Limiter& limiter = *limiters_[batch.replicas[j]];
            Check& check = checks_[j];
            limiter.check(batch.views[j], batch.times[j], check);
            // The service answers at once, with the status the actor's model drew (a replay:
            // the logged one; a line without one stays charged as decided).
            const int status = batch.slots[j].status;
            if (settles_ && check.allowed && status != 0)
                limiter.settle(check, status, batch.times[j]);
        }
    }
    eventActors_ = nullptr;
    if (engineClock) engineNanos_ += engineClock() - started;
}

LogEntry& Lane::pushLog(std::uint32_t request) {
    std::size_t index = (logHead_ + logCount_) % log_.size();
    if (logCount_ < log_.size()) {
        ++logCount_;
    } else {
        logHead_ = (logHead_ + 1) % log_.size();
    }
    LogEntry& e = log_[index];
    e.actor.assign(actors_[static_cast<std::size_t>(eventActors_[request])].name);
    return e;
}

void Lane::applyChange(const PolicyChange& change) {
    for (std::size_t i = 0; i < policies_.policies.size(); ++i) {
        if (!change.policy.empty() && policies_.policies[i].name != change.policy) continue;
        retune(i, change.tuning(policies_.policies[i]));
        return;
    }
}

void Lane::retune(std::size_t policyIndex, const PolicyTuning& tuning) {
    for (auto& limiter : limiters_)
        limiter->retune(policyIndex, tuning);
    applyTuning(policies_.policies[policyIndex], tuning);
    noteSettling();
}

void Lane::noteSettling() {
    settles_ = std::any_of(policies_.policies.begin(), policies_.policies.end(),
                           [](const Policy& p) { return chargesByOutcome(p); });
}

std::vector<Sample> Lane::takeSamples() {
    std::vector<Sample> out(samples_.begin() + static_cast<std::ptrdiff_t>(samplesTaken_),
                            samples_.end());
    samplesTaken_ = samples_.size();
    return out;
}

std::vector<LogEntry> Lane::takeLog() {
    std::vector<LogEntry> out;
    out.reserve(logCount_);
    for (std::size_t i = 0; i < logCount_; ++i)
        out.push_back(log_[(logHead_ + i) % log_.size()]);
    logHead_ = 0;
    logCount_ = 0;
    return out;
}

void Lane::closeSample(Nanos start, Nanos end, std::int64_t decisions) {
    Sample s;
    s.start = start;
    s.end = end;
    s.classes = current_;
    // Figures are counted at the sample's end (Store::keyspaceAt): buckets turn fresh and slots
    // expire without a decision, so an idle stretch (a replayed log's quiet night) repeats the
    // previous sample's figures, without walking every shard again, only once nothing is live.
    if (!samples_.empty() && decisions == 0 && ownStores_ &&
        samples_.back().keyspace.buckets == 0 && samples_.back().keyspace.budgetSlots == 0) {
        s.keyspace = samples_.back().keyspace;
    } else {
        // The shared stores, and the replicas' own stores under on_store_error "local".
        std::vector<const Store*> stores;
        for (const auto& store : innerStores_)
            stores.push_back(store.get());
        for (const auto& limiter : limiters_) {
            if (const Store* local = limiter->localStore()) stores.push_back(local);
        }
        for (const Store* store : stores) {
            KeyspaceStats k = store->keyspaceAt(end);
            s.keyspace.buckets += k.buckets;
            s.keyspace.budgetSlots += k.budgetSlots;
            s.keyspace.scopes += k.scopes;
            s.keyspace.bytes += k.bytes;
            s.keyspace.maxBuckets += k.maxBuckets;
        }
    }
    const std::int64_t errors = storeErrors_;
    s.storeErrors = errors - errorsAtSampleStart_;
    errorsAtSampleStart_ = errors;
    s.engineNanosPerDecision =
        decisions > 0 ? static_cast<double>(engineNanos_) / static_cast<double>(decisions) : 0.0;
    engineNanos_ = 0;

    for (std::size_t c = 0; c < current_.size(); ++c) {
        totals_.classes[c] += current_[c];
        totals_.peakAllowed[c] = std::max(totals_.peakAllowed[c], current_[c].allowed);
        current_[c] = ClassCounters{};
    }
    totals_.maxBuckets = std::max(totals_.maxBuckets, s.keyspace.buckets);
    totals_.maxBudgetSlots = std::max(totals_.maxBudgetSlots, s.keyspace.budgetSlots);
    totals_.maxBytes = std::max(totals_.maxBytes, s.keyspace.bytes);
    totals_.finalBuckets = s.keyspace.buckets;
    totals_.storeErrors = errors;
    samples_.push_back(std::move(s));
    sharing_.closeInterval();
}

// The closed samples are an even number of whole intervals from 0, so the open one starts on a
// boundary of the doubled interval.
void Lane::mergeSamples() {
    std::vector<Sample> merged;
    merged.reserve(samples_.size() / 2 + 1);
    for (std::size_t i = 0; i < samples_.size(); i += 2) {
        Sample m = std::move(samples_[i]);
        if (i + 1 < samples_.size()) {
            const Sample& b = samples_[i + 1];
            m.end = b.end;
            for (std::size_t c = 0; c < m.classes.size(); ++c)
                m.classes[c] += b.classes[c];
            m.keyspace = b.keyspace;
            m.storeErrors += b.storeErrors;
            m.engineNanosPerDecision = b.engineNanosPerDecision;
        }
        merged.push_back(std::move(m));
    }
    samples_ = std::move(merged);
    samplesTaken_ = std::min(samplesTaken_, samples_.size());
    // Peaks are over samples: those of the merged ones, as a run at this interval has them.
    std::fill(totals_.peakAllowed.begin(), totals_.peakAllowed.end(), 0);
    totals_.maxBuckets = totals_.maxBudgetSlots = totals_.maxBytes = 0;
    for (const Sample& x : samples_) {
        for (std::size_t c = 0; c < x.classes.size(); ++c)
            totals_.peakAllowed[c] = std::max(totals_.peakAllowed[c], x.classes[c].allowed);
        totals_.maxBuckets = std::max(totals_.maxBuckets, x.keyspace.buckets);
        totals_.maxBudgetSlots = std::max(totals_.maxBudgetSlots, x.keyspace.budgetSlots);
        totals_.maxBytes = std::max(totals_.maxBytes, x.keyspace.bytes);
    }
}

void Lane::noteClient(std::size_t j, int actor, std::int64_t instance, Nanos at,
                      std::size_t outcome) {
    std::vector<ClientSeen>& seen = seen_[static_cast<std::size_t>(actor)];
    if (seen.empty()) return;
    std::vector<std::vector<ClientInterval>>& timelines =
        timelines_[static_cast<std::size_t>(actor)];
    if (!timelines.empty() && (outcome == kAllowedOutcome || outcome == kThrottledOutcome)) {
        std::vector<ClientInterval>& line = timelines[static_cast<std::size_t>(instance)];
        const std::int64_t interval = at / timelineInterval_;
        if (line.empty() || line.back().interval != interval) line.push_back({interval, 0, 0});
        (outcome == kAllowedOutcome ? line.back().allowed : line.back().throttled) += 1;
    }
    ClientSeen& client = seen[static_cast<std::size_t>(instance)];
    if (client.firstSeen < 0) {
        client.firstSeen = at;
        const Check& check = checks_[j];
        if (!check.policies().empty()) client.key = check.policies().front().key;
    }
    client.lastSeen = at;
}

}  // namespace ratelab::sim
