// The keyed-check figures of docs/BENCHMARKS.md: one keyed check against the embedded store
// versus the naive limiter, one by one and in batches, at 10^3 to 10^7 uniformly visited keys
// (the summary reads 10^3 and 10^6), on one and two threads; and memory per live key. Each
// check of the store reports `huge_pages`, the share of the store's large slot arrays on
// transparent huge pages (see hugePageShare(): with several sizes in one process it covers
// every store built so far, so the scaling table runs one size per process).

#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "algorithms/rate.h"
#include "memory/fingerprint.h"
#include "memory/flat_table.h"
#include "memory/limit_table.h"
#include "bench/populated.h"
#include "bench/summary.h"

namespace ratelab::bench {
namespace {

void BM_KeyedCheck_Ratelab(benchmark::State& state) {
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    const KeySet& keys = KeySet::of(n);
    PopulatedStore& s = populated<PopulatedStore>(n);
    ConsumeRequest r = s.request();
    std::size_t i = static_cast<std::size_t>(state.thread_index()) * 7919;
    Nanos now = kNanosPerSecond;
    for (auto _ : state) {
        const KeyBytes key(keys.index(i++));
        // Two plain assignments: a chained one makes g++ copy the view back as one 16-byte load
        // of two 8-byte stores, a store-forwarding stall of ~6 ns that is the harness's own.
        r.key = key.view();
        r.partition = key.view();
        r.now = now += kCheckStep;
        benchmark::DoNotOptimize(s.store->consume(r));
    }
    state.SetItemsProcessed(state.iterations());
    state.counters["huge_pages"] = hugePageShare();
}

void BM_KeyedCheck_Naive(benchmark::State& state) {
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    const KeySet& keys = KeySet::of(n);
    PopulatedNaive& s = populated<PopulatedNaive>(n);
    std::size_t i = static_cast<std::size_t>(state.thread_index()) * 7919;
    Nanos now = kNanosPerSecond;
    for (auto _ : state) {
        const KeyBytes key(keys.index(i++));
        benchmark::DoNotOptimize(s.limiter.check(key.view(), now += kCheckStep));
    }
    state.SetItemsProcessed(state.iterations());
}

// The store's batch path (Store::consumeBatch, what Limiter::checkBatch calls): kBatch requests
// hashed, prefetched and decided per call. One iteration is one batch (items/s counts checks).
constexpr std::size_t kBatch = 32;

void BM_KeyedCheckBatch_Ratelab(benchmark::State& state) {
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    const KeySet& keys = KeySet::of(n);
    PopulatedStore& s = populated<PopulatedStore>(n);
    std::vector<ConsumeRequest> requests(kBatch, s.request());
    std::vector<ConsumeResult> results(kBatch);
    std::vector<KeyBytes> bytes(kBatch, KeyBytes(0));
    std::size_t i = static_cast<std::size_t>(state.thread_index()) * 7919;
    Nanos now = kNanosPerSecond;
    for (auto _ : state) {
        for (std::size_t k = 0; k < kBatch; ++k) {
            bytes[k] = KeyBytes(keys.index(i++));
            requests[k].key = bytes[k].view();
            requests[k].partition = bytes[k].view();
            requests[k].now = now += kCheckStep;
        }
        s.store->consumeBatch(requests, results);
        benchmark::DoNotOptimize(results.data());
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kBatch));
    state.counters["huge_pages"] = hugePageShare();
}

// The batch's work without the store around it: each key's fingerprint and shard as the
// memory store computes them (memory/fingerprint.h), one FlatTable per shard, the token bucket,
// kBatch keys at a time with their slots prefetched first. No ConsumeRequest or ConsumeResult,
// no locks, no check of the limit. What this design of hash, table and bucket can reach on the
// machine: the store's batch figures against this one are what its interface costs.
struct PopulatedFloor {
    using Table = memory::FlatTable<algorithms::RateState>;
    static constexpr std::uint64_t kSeed = 1;
    const unsigned bits = memory::shardBitsFor(0);  // the store's default shard count
    std::unique_ptr<Table[]> shards{new Table[std::size_t(1) << bits]};
    const unsigned shift = 64 - bits;
    Limit limit = benchLimit();

    explicit PopulatedFloor(const KeySet& keys) {
        const std::size_t largeBytes = memory::shardLargeBytes(bits);  // as the store's tables
        for (std::size_t i = 0; i < keys.size; ++i) {
            const KeyBytes k(i);
            std::uint64_t shard = 0;
            const std::uint64_t fp = fingerprint(k, shard);
            shards[shard].insert(fp, algorithms::RateState{}, largeBytes);
        }
    }
    std::uint64_t fingerprint(const KeyBytes& key, std::uint64_t& shard) const {
        const std::uint64_t partition = memory::partitionHash(key.view(), kSeed);
        shard = partition >> shift;
        return memory::keyFingerprint(key.view(), key.view(), partition, kSeed);
    }
};

void BM_KeyedCheckBatch_Floor(benchmark::State& state) {
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    const KeySet& keys = KeySet::of(n);
    PopulatedFloor& s = populated<PopulatedFloor>(n);
    std::uint64_t fingerprints[kBatch];
    std::uint64_t shards[kBatch];
    Decision decisions[kBatch];
    std::size_t i = 0;
    Nanos now = kNanosPerSecond;
    for (auto _ : state) {
        for (std::size_t k = 0; k < kBatch; ++k) {
            fingerprints[k] = s.fingerprint(KeyBytes(keys.index(i++)), shards[k]);
            s.shards[shards[k]].prefetchUnlocked(fingerprints[k]);
        }
        for (std::size_t k = 0; k < kBatch; ++k) {
            auto* slot = s.shards[shards[k]].find(fingerprints[k]);
            decisions[k] = algorithms::tokenBucketConsume(slot->state, now += kCheckStep, 1, s.limit);
        }
        benchmark::DoNotOptimize(decisions);
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kBatch));
}
BENCHMARK(BM_KeyedCheckBatch_Floor)->Arg(1000)->Arg(1'000'000);

// 10^3 to 10^7 keys: the scaling table of docs/BENCHMARKS.md.
void scaling(benchmark::internal::Benchmark* b) {
    for (std::int64_t n = 1000; n <= 10'000'000; n *= 10)
        b->Arg(n);
}

BENCHMARK(BM_KeyedCheck_Ratelab)->Apply(scaling);
BENCHMARK(BM_KeyedCheckBatch_Ratelab)->Apply(scaling);
BENCHMARK(BM_KeyedCheck_Naive)->Apply(scaling);
BENCHMARK(BM_KeyedCheck_Ratelab)->Arg(1000)->Arg(1'000'000)->Threads(2)->UseRealTime();
BENCHMARK(BM_KeyedCheck_Naive)->Arg(1000)->Arg(1'000'000)->Threads(2)->UseRealTime();

// Bytes per key as the kernel sees them: the growth of the resident set while `build` fills a
// structure with n keys, measured in a forked child so that no memory this process freed
// earlier can be reused and hide the cost (reuse could only flatter either side).
template <class Build>
void measureBytesPerKey(benchmark::State& state, Build&& build) {
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    const KeySet& keys = KeySet::of(n);
    double bytesPerKey = 0;
    for (auto _ : state) {
        int fds[2];
        if (pipe(fds) != 0) {
            state.SkipWithError("pipe failed");
            return;
        }
        const pid_t child = fork();
        if (child == 0) {
            const std::int64_t before = residentBytes();
            auto holder = build(keys);
            benchmark::DoNotOptimize(holder);
            const double perKey =
                static_cast<double>(residentBytes() - before) / static_cast<double>(n);
            const ssize_t written = write(fds[1], &perKey, sizeof perKey);
            _exit(written == sizeof perKey ? 0 : 1);
        }
        close(fds[1]);
        if (read(fds[0], &bytesPerKey, sizeof bytesPerKey) != sizeof bytesPerKey) {
            state.SkipWithError("the measuring child failed");
        }
        close(fds[0]);
        waitpid(child, nullptr, 0);
    }
    state.counters["bytes_per_key"] = bytesPerKey;
}

void BM_BytesPerKey_Ratelab(benchmark::State& state) {
    measureBytesPerKey(state, [](const KeySet& keys) {
        // The default cap (1,000,000) is what a service runs with.
        Limit limit = benchLimit();
        MemoryStoreOptions options;
        options.maxBuckets =
            std::max<std::int64_t>(1'000'000, static_cast<std::int64_t>(keys.size));
        auto store = makeMemoryStore(options);
        ConsumeRequest r;
        r.limitName = "bench";
        r.limit = &limit;
        for (std::size_t i = 0; i < keys.size; ++i) {
            const KeyBytes k(i);
            r.key = k.view();
            r.partition = k.view();
            store->consume(r);
        }
        return store;
    });
}

void BM_BytesPerKey_Naive(benchmark::State& state) {
    measureBytesPerKey(state, [](const KeySet& keys) {
        auto naive = std::make_unique<NaiveLimiter>(20, 1.0);
        for (std::size_t i = 0; i < keys.size; ++i)
            naive->check(KeyBytes(i).view(), 0);
        return naive;
    });
}

BENCHMARK(BM_BytesPerKey_Ratelab)->Apply(scaling)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BytesPerKey_Naive)->Apply(scaling)->Iterations(1)->Unit(benchmark::kMillisecond);

double ratio(const Results& r, const std::string& baseline, const std::string& ours) {
    return nanos(r, baseline) / nanos(r, ours);
}

[[maybe_unused]] const bool registered = [] {
    registerSummary({"keyed_check_ratio_1k",
                     {"BM_KeyedCheck_Naive/1000", "BM_KeyedCheck_Ratelab/1000"},
                     [](const Results& r) {
                         return ratio(r, "BM_KeyedCheck_Naive/1000", "BM_KeyedCheck_Ratelab/1000");
                     },
                     1,
                     10});
    registerSummary({"keyed_check_ratio_1m",
                     {"BM_KeyedCheck_Naive/1000000", "BM_KeyedCheck_Ratelab/1000000"},
                     [](const Results& r) {
                         return ratio(r, "BM_KeyedCheck_Naive/1000000",
                                      "BM_KeyedCheck_Ratelab/1000000");
                     },
                     1,
                     11});
    registerSummary({"keyed_check_ratio_1m_2t",
                     {"BM_KeyedCheck_Naive/1000000/real_time/threads:2",
                      "BM_KeyedCheck_Ratelab/1000000/real_time/threads:2"},
                     [](const Results& r) {
                         return ratio(r, "BM_KeyedCheck_Naive/1000000/real_time/threads:2",
                                      "BM_KeyedCheck_Ratelab/1000000/real_time/threads:2");
                     },
                     1,
                     12});
    // The batch against the naive limiter, per check (one iteration decides kBatch), for the
    // store and for its floor (the most the store's figure can be with this design).
    const auto registerBatchRatio = [](const std::string& name, const std::string& batch,
                                       const std::string& keys, int order) {
        const std::string naive = "BM_KeyedCheck_Naive/" + keys;
        const std::string ours = batch + "/" + keys;
        registerSummary({name,
                         {naive, ours},
                         [naive, ours](const Results& r) {
                             return nanos(r, naive) /
                                    (nanos(r, ours) / static_cast<double>(kBatch));
                         },
                         1,
                         order});
    };
    registerBatchRatio("batch_ratio_1k", "BM_KeyedCheckBatch_Ratelab", "1000", 15);
    registerBatchRatio("batch_ratio_1m", "BM_KeyedCheckBatch_Ratelab", "1000000", 16);
    registerBatchRatio("floor_ratio_1k", "BM_KeyedCheckBatch_Floor", "1000", 16);
    registerBatchRatio("floor_ratio_1m", "BM_KeyedCheckBatch_Floor", "1000000", 16);
    // Whether the 10^6-key table ran on huge pages: both of its figures depend on it.
    registerSummary(
        {"huge_pages_1m",
         {"BM_KeyedCheck_Ratelab/1000000"},
         [](const Results& r) { return counter(r, "BM_KeyedCheck_Ratelab/1000000", "huge_pages"); },
         2,
         17});
    registerSummary({"bytes_per_key",
                     {"BM_BytesPerKey_Ratelab/1000000/iterations:1"},
                     [](const Results& r) {
                         return counter(r, "BM_BytesPerKey_Ratelab/1000000/iterations:1",
                                        "bytes_per_key");
                     },
                     1,
                     13});
    registerSummary({"naive_bytes_per_key",
                     {"BM_BytesPerKey_Naive/1000000/iterations:1"},
                     [](const Results& r) {
                         return counter(r, "BM_BytesPerKey_Naive/1000000/iterations:1",
                                        "bytes_per_key");
                     },
                     1,
                     14});
    return true;
}();

}  // namespace
}  // namespace ratelab::bench
