#pragma once

// One lane of a scenario run: a policy set deciding the run's requests on its own engine and
// stores, and what it counts of them (per actor and instance, per sample, the limit-hit log,
// the bucket sharing of legitimate instances). Private to scenario_runner.cpp, which generates
// the requests and hands each batch to every lane; Lane::record is on the per-request path and
// stays inline here.

#include <xxhash.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "ratelab/limiter.h"
#include "sim/hash_index.h"
#include "sim/run/scenario_runner.h"
#include "sim/traffic/traffic.h"  // mixSeed

namespace ratelab::sim {

// Legitimate instances charged to one bucket within a sample interval: the peak per class.
// Buckets and (bucket, instance) pairs are held as 64-bit hashes; a collision among the few
// thousand buckets of one interval is vanishingly unlikely and would only undercount.
class BucketSharing {
public:
    void reset(std::size_t classes) { peak_.assign(classes, 0); }
    // Out of line: called once per instance and interval, it keeps the per-request path small.
    [[gnu::noinline]] void add(const Check& check, std::size_t cls, std::uint64_t instance) {
        for (const PolicyResult& r : check.policies()) {
            if (!r.key.empty()) add(cls, r.policy, r.key, instance);
        }
    }
    void add(std::size_t cls, std::uint32_t policy, std::string_view key, std::uint64_t instance) {
        const std::uint64_t bucket = bucketHash(cls, policy, key);
        if (!pairs_.insert(mixSeed(bucket, instance)).inserted) return;
        const HashIndex::Found b = buckets_.insert(bucket);
        if (b.inserted) {
            if (b.index >= perBucket_.size()) perBucket_.resize(b.index + 1);
            perBucket_[b.index] = 0;
        }
        const std::int64_t n = ++perBucket_[b.index];
        if (n > peak_[cls]) peak_[cls] = n;
    }
    /// Starts loading the slots add(check, ...) will look at: with many instances they are
    /// cache misses, which a batch then overlaps instead of waiting for each in turn.
    [[gnu::always_inline]] void prefetch(const Check& check, std::size_t cls,
                                         std::uint64_t instance) const {
        for (const PolicyResult& r : check.policies()) {
            if (r.key.empty()) continue;
            const std::uint64_t bucket = bucketHash(cls, r.policy, r.key);
            pairs_.prefetch(mixSeed(bucket, instance));
            buckets_.prefetch(bucket);
        }
    }
    void closeInterval() {
        pairs_.clear();
        buckets_.clear();
    }
    std::int64_t peak(std::size_t cls) const { return peak_[cls]; }

private:
    static std::uint64_t bucketHash(std::size_t cls, std::uint32_t policy, std::string_view key) {
        return mixSeed(XXH3_64bits(key.data(), key.size()),
                       (static_cast<std::uint64_t>(cls) << 32) | policy);
    }

    HashIndex pairs_;
    HashIndex buckets_;
    std::vector<std::int64_t> perBucket_;  // by buckets_'s index: instances this interval
    std::vector<std::int64_t> peak_;
};

/// How the lanes of a run are built: what they share, and what each keeps.
struct LaneOptions {
    std::uint64_t seed = 0;        ///< the run's: seeds the memory stores and the key hashing
    std::shared_ptr<Store> store;  ///< RunnerOptions::store; null: the scenario's memory stores
    std::size_t logCapacity = 0;   ///< RunnerOptions::logCapacity; 0: no engine observer
    /// Every decision's keys, not only those bucket sharing reads: the decisions file reads
    /// lane 0's, streamed flips lane 1's.
    bool keepKeys = false;
    /// RunnerOptions::clientTimelines; per interval of this length (the scenario's sample
    /// interval as given).
    bool clientTimelines = false;
    Nanos timelineInterval = kNanosPerSecond;
};

/// One batch of the run's requests, generated once and decided by every lane. Request j is
/// views[j] at times[j], sent by actors[j] (an index into Scenario::actors) to replica
/// replicas[j], generated into slots[j] (its instance and the status the service answers);
/// shares[j]: bucket sharing counts its keys.
struct RequestBatch {
    std::span<const RequestView> views;
    std::span<const Nanos> times;
    std::span<const int> actors;
    std::span<const std::size_t> replicas;
    std::span<const RequestSlot> slots;
    std::span<const std::uint8_t> shares;

    std::size_t size() const { return views.size(); }
};

/// One policy set deciding the run's requests on its own engine and stores, and what it counts
/// of them. Not thread-safe: the runner's thread only.
class Lane final : public LimitObserver {
public:
    /// Builds the stores (one shared memory store, one per replica, or options.store), wraps
    /// them in the scenario's faults where a fault applies, and makes one Limiter per replica;
    /// the counters start empty, for `classCount` classes. `scenario` must outlive the lane.
    Lane(PolicySet policies, const Scenario& scenario, std::size_t classCount,
         const LaneOptions& options);
    Lane(const Lane&) = delete;
    Lane& operator=(const Lane&) = delete;

    std::size_t replicas() const { return limiters_.size(); }
    /// True when every replica decides on the one store, undecorated, and has no store of its
    /// own for outages: one limiter may then decide for all of them.
    bool replicasInterchangeable() const;

    /// Decides `batch`, each request by its replica's limiter: together with one checkBatch()
    /// call when `together` (the replicas of every lane are interchangeable) and no policy
    /// settles, else one by one, each passed request settled at once with the status its slot
    /// carries (a settle changes what the next request finds). With `engineClock` (nanoseconds
    /// from any epoch), the engine's calls, the store's included, are timed for the sample's
    /// engine time per decision; empty: not timed.
    void decide(const RequestBatch& batch, bool together,
                const std::function<Nanos()>& engineClock);
    /// Request j's decision in the batch decided last.
    const Check& check(std::size_t j) const { return checks_[j]; }

    /// Starts loading what record() will write for request j of the batch and is out of cache
    /// once a scenario has many clients: the instance's counters and, with `shares`, bucket
    /// sharing's slots. Called for a whole batch before recording it, so that its cache misses
    /// overlap.
    [[gnu::always_inline]] void prefetchRecord(std::size_t j, int actor, std::int64_t instance,
                                               std::size_t cls, bool shares) const {
        __builtin_prefetch(
            &instances_[static_cast<std::size_t>(actor)][static_cast<std::size_t>(instance)], 1);
        if (shares) sharing_.prefetch(checks_[j], cls, static_cast<std::uint64_t>(instance));
    }
    /// Counts request j's decision for `actor`'s `instance` of class `cls`; returns its outcome
    /// (kOutcomeFields).
    std::size_t record(std::size_t j, int actor, std::int64_t instance, std::size_t cls,
                       bool shares);
    /// Counts a request of `actor` whose outcome was `from` in lane 0 and `to` here.
    void countFlip(int actor, std::size_t from, std::size_t to) {
        flips_[static_cast<std::size_t>(actor)].transitions[from][to] += 1;
    }
    /// Gives `actor` `count` instances (a streamed log's clients appear as it is read).
    void growInstances(std::size_t actor, std::size_t count) {
        instances_[actor].resize(count);
        if (actors_[actor].recorded) seen_[actor].resize(count);
        if (!timelines_[actor].empty()) timelines_[actor].resize(count);
    }
    /// Notes request j of a replayed client: its key (the first matching policy's, on its first
    /// request) and when it was first and last seen, and with LaneOptions::clientTimelines its
    /// `outcome` (kOutcomeFields) in the interval of `at`. Nothing for an actor that replays no
    /// log.
    void noteClient(std::size_t j, int actor, std::int64_t instance, Nanos at, std::size_t outcome);
    /// Closes the sample [start, end) of `decisions` requests: per-class counters into the
    /// totals, keyspace figures, the engine's time per decision (what decide() timed).
    void closeSample(Nanos start, Nanos end, std::int64_t decisions);
    /// Pairs of samples become one of twice the interval (Scenario::maxSamples).
    void mergeSamples();

    /// Applies a policy_change event: the policy it names, or the first.
    void applyChange(const PolicyChange& change);
    /// Replaces policy `policyIndex`'s tunable fields on every replica, then in policies().
    void retune(std::size_t policyIndex, const PolicyTuning& tuning);

    /// The policies as they are now, and as the lane was built with them.
    const PolicySet& policies() const { return policies_; }
    const PolicySet& initialPolicies() const { return initialPolicies_; }
    const std::vector<Sample>& samples() const { return samples_; }
    /// The samples closed since the previous call.
    std::vector<Sample> takeSamples();
    /// The limit hits and store failures logged since the previous call, oldest first.
    std::vector<LogEntry> takeLog();
    const ClassCounters& actorTotals(std::size_t actor) const { return actorTotals_[actor]; }
    std::span<const InstanceCounters> instances(std::size_t actor) const {
        return instances_[actor];
    }
    std::span<const ClientSeen> clientsSeen(std::size_t actor) const { return seen_[actor]; }
    std::span<const ClientInterval> clientTimeline(std::size_t actor, std::int64_t instance) const {
        const auto& clients = timelines_[actor];
        const auto i = static_cast<std::size_t>(instance);
        return instance >= 0 && i < clients.size() ? std::span<const ClientInterval>(clients[i])
                                                   : std::span<const ClientInterval>();
    }
    const std::vector<OutcomeFlips>& flips() const { return flips_; }
    /// Totals without ClassSpread, which the runner computes over the instances.
    const RunTotals& totals() const { return totals_; }
    std::int64_t peakInstancesPerBucket(std::size_t cls) const { return sharing_.peak(cls); }

private:
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
    // The ring keeps the newest entries; strings reuse their capacity. `request` is the event's
    // index in the engine call that reported it, whose actors decide() holds in eventActors_.
    LogEntry& pushLog(std::uint32_t request);
    // Sets settles_ from the policies as they are now.
    void noteSettling();

    const PolicySet initialPolicies_;
    PolicySet policies_;
    const std::vector<Actor>& actors_;
    const bool keepKeys_;
    std::vector<std::shared_ptr<Store>> innerStores_;  // distinct stores, for keyspace figures
    std::vector<std::unique_ptr<Limiter>> limiters_;   // one per replica
    bool ownStores_ = true;                            // false on LaneOptions::store
    // Some policy settles by the response's status (charge by outcome, a penalty): each
    // passed request is settled before the next is decided, so this lane decides one by one.
    bool settles_ = false;
    std::vector<Check> checks_;         // the batch's decisions, as RequestBatch's requests
    const int* eventActors_ = nullptr;  // during decide(): the actors of the engine call's requests
    std::int64_t storeErrors_ = 0;      // store calls that failed: injected or the store's own
    std::int64_t errorsAtSampleStart_ = 0;
    std::int64_t engineNanos_ = 0;  // wall time in this lane's limiter calls, this sample
    std::vector<ClassCounters> current_;
    std::vector<Sample> samples_;
    std::size_t samplesTaken_ = 0;
    std::vector<ClassCounters> actorTotals_;
    // Per actor, its instances; a streamed log's grow as new clients appear (growInstances).
    std::vector<std::vector<InstanceCounters>> instances_;
    // Per actor replaying a log, its clients' keys and times (ScenarioRunner::clientsSeen);
    // empty for every other actor, so generated crowds pay nothing for it.
    std::vector<std::vector<ClientSeen>> seen_;
    // Per actor replaying a log, with LaneOptions::clientTimelines: per client, its allowed and
    // throttled requests per interval it was active in (ScenarioRunner::clientTimeline).
    std::vector<std::vector<std::vector<ClientInterval>>> timelines_;
    Nanos timelineInterval_ = kNanosPerSecond;
    std::vector<OutcomeFlips> flips_;  // per actor, against lane 0
    RunTotals totals_;
    BucketSharing sharing_;

    std::vector<LogEntry> log_;
    std::size_t logHead_ = 0;
    std::size_t logCount_ = 0;
};

inline std::size_t Lane::record(std::size_t j, int actor, std::int64_t instance, std::size_t cls,
                                bool shares) {
    const Check& check = checks_[j];
    const auto a = static_cast<std::size_t>(actor);
    ClassCounters& c = current_[cls];
    ClassCounters& t = actorTotals_[a];
    InstanceCounters& i = instances_[a][static_cast<std::size_t>(instance)];
    c.offered += 1;
    t.offered += 1;
    i.offered += 1;
    bool failedOpen = false;
    bool decidedLocally = false;
    for (const PolicyResult& r : check.policies()) {
        const PolicyOutcome o = r.outcome;
        c.outcomes[static_cast<std::size_t>(o)] += 1;
        t.outcomes[static_cast<std::size_t>(o)] += 1;
        if (o == PolicyOutcome::FailedOpen || o == PolicyOutcome::FailedClosed ||
            o == PolicyOutcome::StoreRefused || o == PolicyOutcome::StoreFull ||
            o == PolicyOutcome::DecidedLocally) {
            ++storeErrors_;
            failedOpen = failedOpen || o == PolicyOutcome::FailedOpen;
            decidedLocally = decidedLocally || o == PolicyOutcome::DecidedLocally;
        }
    }
    if (decidedLocally) {
        c.decidedLocally += 1;
        t.decidedLocally += 1;
    }
    if (shares) sharing_.add(check, cls, static_cast<std::uint64_t>(instance));
    // Spelled out rather than through kOutcomeFields' member pointers: this runs per request.
    const std::size_t outcome = requestOutcome(check.status);
    switch (outcome) {
        case kAllowedOutcome:
            c.allowed += 1;
            t.allowed += 1;
            i.allowed += 1;
            if (failedOpen) {
                c.failedOpen += 1;
                t.failedOpen += 1;
            }
            break;
        case kThrottledOutcome:
            c.throttled += 1;
            t.throttled += 1;
            i.throttled += 1;
            break;
        case kRefusedOutcome:
            c.refused += 1;
            t.refused += 1;
            break;
        default:
            c.failedClosed += 1;
            t.failedClosed += 1;
            if (check.code == RefusalCode::StoreFull) {
                c.storeFull += 1;
                t.storeFull += 1;
            }
            break;
    }
    return outcome;
}

}  // namespace ratelab::sim
