#include "sim/run/runner_lane.h"

namespace ratelab::sim {

void Lane::closeSample(Nanos start, Nanos end, std::int64_t decisions) {
    Sample s;
    s.start = start;
    s.end = end;
    s.classes = current;
    // The memory stores change only when consumed from: over an idle stretch (a replayed log's
    // quiet night) the figures are the previous sample's, without walking every shard again.
    if (!samples.empty() && decisions == 0 && ownStores) {
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
    s.engineNanosPerDecision =
        decisions > 0 ? static_cast<double>(engineNanos) / static_cast<double>(decisions) : 0.0;
    engineNanos = 0;

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
    sharing.closeInterval();
}

// The closed samples are an even number of whole intervals from 0, so the open one starts on a
// boundary of the doubled interval.
void Lane::mergeSamples() {
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
            m.engineNanosPerDecision = b.engineNanosPerDecision;
        }
        merged.push_back(std::move(m));
    }
    samples = std::move(merged);
    samplesTaken = std::min(samplesTaken, samples.size());
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

}  // namespace ratelab::sim
