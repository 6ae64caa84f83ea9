#pragma once

// One lane of a scenario run: a policy set deciding the run's requests on its own engine and
// stores, and what it counts of them (per actor and instance, per sample, the limit-hit log,
// the bucket sharing of legitimate instances). Private to scenario_runner.cpp, which drives
// the lanes; Lane::record is on the per-request path and stays inline here.

#include <xxhash.h>

#include <algorithm>
#include <memory>
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

// One policy set deciding the run's requests on its own engine and stores.
struct Lane final : LimitObserver {
    Lane(PolicySet p, const std::vector<Actor>& a)
        : initialPolicies(p), policies(std::move(p)), actors(a) {}

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
        e.actor.assign(actors[static_cast<std::size_t>(eventActors[request])].name);
        return e;
    }

    /// Starts loading what record() will write for this request and is out of cache once a
    /// scenario has many clients: the instance's counters and, with `shares`, bucket sharing's
    /// slots. Called for a whole batch before recording it, so that its cache misses overlap.
    [[gnu::always_inline]] void prefetchRecord(const Check& check, int actor, std::int64_t instance,
                                               std::size_t cls, bool shares) const {
        __builtin_prefetch(
            &instances[static_cast<std::size_t>(actor)][static_cast<std::size_t>(instance)], 1);
        if (shares) sharing.prefetch(check, cls, static_cast<std::uint64_t>(instance));
    }

    /// Counts the decision in `check` for `actor`'s `instance` of class `cls`; returns its
    /// outcome (kOutcomeFields).
    std::size_t record(const Check& check, int actor, std::int64_t instance, std::size_t cls,
                       bool shares);
    /// Closes the sample [start, end) of `decisions` requests: per-class counters into the
    /// totals, keyspace figures, the engine's time per decision (engineNanos).
    void closeSample(Nanos start, Nanos end, std::int64_t decisions);
    /// Pairs of samples become one of twice the interval (Scenario::maxSamples).
    void mergeSamples();
    /// Replaces policy `policyIndex`'s tunable fields on every replica, then in `policies`.
    void retune(std::size_t policyIndex, const PolicyTuning& tuning) {
        for (auto& limiter : limiters)
            limiter->retune(policyIndex, tuning);
        applyTuning(policies.policies[policyIndex], tuning);
        noteSettling();
    }
    /// Sets `settles` from the policies as they are now.
    void noteSettling() {
        settles = std::any_of(policies.policies.begin(), policies.policies.end(),
                              [](const Policy& p) { return chargesByOutcome(p); });
    }

    const PolicySet initialPolicies;
    PolicySet policies;
    const std::vector<Actor>& actors;
    std::vector<std::shared_ptr<Store>> innerStores;  // distinct stores, for keyspace figures
    std::vector<std::unique_ptr<Limiter>> limiters;   // one per replica
    bool ownStores = true;                            // false on RunnerOptions::store
    // Some policy settles by the response's status (charge by outcome, a penalty): each
    // passed request is settled before the next is decided, so this lane decides one by one.
    bool settles = false;
    std::vector<Check> checks;         // the batch's decisions, as Impl::slots
    const int* eventActors = nullptr;  // actors of the requests being decided
    std::int64_t storeErrors = 0;      // store calls that failed: injected or the store's own
    std::int64_t errorsAtSampleStart = 0;
    std::int64_t engineNanos = 0;  // wall time in this lane's limiter calls, this sample
    std::vector<ClassCounters> current;
    std::vector<Sample> samples;
    std::size_t samplesTaken = 0;
    std::vector<ClassCounters> actorTotals;
    // Per actor, its instances; a streamed log's grow as new clients appear (Impl::grow).
    std::vector<std::vector<InstanceCounters>> instances;
    // Per actor replaying a log, its clients' keys and times (ScenarioRunner::clientsSeen);
    // empty for every other actor, so generated crowds pay nothing for it.
    std::vector<std::vector<ClientSeen>> seen;
    std::vector<OutcomeFlips> flips;  // per actor, against lane 0
    RunTotals totals;
    BucketSharing sharing;

    std::vector<LogEntry> log;
    std::size_t logHead = 0;
    std::size_t logCount = 0;
};

inline std::size_t Lane::record(const Check& check, int actor, std::int64_t instance,
                                std::size_t cls, bool shares) {
    const auto a = static_cast<std::size_t>(actor);
    ClassCounters& c = current[cls];
    ClassCounters& t = actorTotals[a];
    InstanceCounters& i = instances[a][static_cast<std::size_t>(instance)];
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
            ++storeErrors;
            failedOpen = failedOpen || o == PolicyOutcome::FailedOpen;
            decidedLocally = decidedLocally || o == PolicyOutcome::DecidedLocally;
        }
    }
    if (decidedLocally) {
        c.decidedLocally += 1;
        t.decidedLocally += 1;
    }
    if (shares) sharing.add(check, cls, static_cast<std::uint64_t>(instance));
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
