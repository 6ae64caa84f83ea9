// B1 in the field notes: one keyed check against the embedded store versus the naive limiter,
// at 1k and 1M uniformly visited keys, on one and two threads; and memory per live key.

#include <benchmark/benchmark.h>
#include <malloc.h>

#include <map>
#include <memory>
#include <mutex>

#include "key_sets.h"
#include "naive_limiter.h"
#include "ratelab/memory_store.h"
#include "summary.h"

namespace ratelab::bench {
namespace {

constexpr Nanos kStep = 1000;  // virtual time between checks on one thread

Limit benchLimit() {
    Limit l;
    l.algorithm = Algorithm::TokenBucket;
    l.capacity = 20;
    l.emissionInterval = kNanosPerSecond;
    return l;
}

// A store holding every key of the set, shared by the threads of one benchmark.
struct PopulatedStore {
    std::unique_ptr<Store> store;
    Limit limit = benchLimit();

    explicit PopulatedStore(const KeySet& keys) {
        MemoryStoreOptions options;
        options.maxBuckets = static_cast<std::int64_t>(keys.keys.size()) * 2;
        options.hashSeed = 1;
        store = makeMemoryStore(options);
        ConsumeRequest r = request();
        for (const auto& k : keys.keys) {
            r.key = r.partition = std::string_view(k.data(), k.size());
            store->consume(r);
        }
    }
    ConsumeRequest request() const {
        ConsumeRequest r;
        r.limitName = "bench";
        r.limit = &limit;
        return r;
    }
};

template <class T>
T& shared(std::size_t keyCount) {
    static std::mutex mutex;
    static std::map<std::size_t, std::unique_ptr<T>> instances;
    std::lock_guard<std::mutex> lock(mutex);
    auto& p = instances[keyCount];
    if (!p) p = std::make_unique<T>(KeySet::of(keyCount));
    return *p;
}

struct PopulatedNaive {
    NaiveLimiter limiter{20, 1.0};
    explicit PopulatedNaive(const KeySet& keys) {
        for (const auto& k : keys.keys)
            limiter.check(std::string_view(k.data(), k.size()), 0);
    }
};

void BM_KeyedCheck_Ratelab(benchmark::State& state) {
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    const KeySet& keys = KeySet::of(n);
    PopulatedStore& s = shared<PopulatedStore>(n);
    ConsumeRequest r = s.request();
    std::size_t i = static_cast<std::size_t>(state.thread_index()) * 7919;
    Nanos now = kNanosPerSecond;
    for (auto _ : state) {
        // Two plain assignments: a chained one makes g++ copy the view back as one 16-byte load
        // of two 8-byte stores, a store-forwarding stall of ~6 ns that is the harness's own.
        const std::string_view key = keys.key(i++);
        r.key = key;
        r.partition = key;
        r.now = now += kStep;
        benchmark::DoNotOptimize(s.store->consume(r));
    }
    state.SetItemsProcessed(state.iterations());
}

void BM_KeyedCheck_Naive(benchmark::State& state) {
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    const KeySet& keys = KeySet::of(n);
    PopulatedNaive& s = shared<PopulatedNaive>(n);
    std::size_t i = static_cast<std::size_t>(state.thread_index()) * 7919;
    Nanos now = kNanosPerSecond;
    for (auto _ : state) {
        benchmark::DoNotOptimize(s.limiter.check(keys.key(i++), now += kStep));
    }
    state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_KeyedCheck_Ratelab)->Arg(1000)->Arg(1'000'000);
BENCHMARK(BM_KeyedCheck_Naive)->Arg(1000)->Arg(1'000'000);
BENCHMARK(BM_KeyedCheck_Ratelab)->Arg(1000)->Arg(1'000'000)->Threads(2)->UseRealTime();
BENCHMARK(BM_KeyedCheck_Naive)->Arg(1000)->Arg(1'000'000)->Threads(2)->UseRealTime();

// Heap bytes in use, malloc's own count: every allocation of both limiters goes through it.
std::int64_t heapInUse() {
    struct mallinfo2 m = mallinfo2();
    return static_cast<std::int64_t>(m.uordblks + m.hblkhd);
}

template <class Build>
void measureBytesPerKey(benchmark::State& state, Build&& build) {
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    const KeySet& keys = KeySet::of(n);
    double bytesPerKey = 0;
    for (auto _ : state) {
        const std::int64_t before = heapInUse();
        auto holder = build(keys);
        bytesPerKey = static_cast<double>(heapInUse() - before) / static_cast<double>(n);
        benchmark::DoNotOptimize(holder);
    }
    state.counters["bytes_per_key"] = bytesPerKey;
}

void BM_BytesPerKey_Ratelab(benchmark::State& state) {
    measureBytesPerKey(state, [](const KeySet& keys) {
        // The default cap (1,000,000) is what a service runs with.
        Limit limit = benchLimit();
        MemoryStoreOptions options;
        options.maxBuckets =
            std::max<std::int64_t>(1'000'000, static_cast<std::int64_t>(keys.keys.size()));
        auto store = makeMemoryStore(options);
        ConsumeRequest r;
        r.limitName = "bench";
        r.limit = &limit;
        for (const auto& k : keys.keys) {
            r.key = r.partition = std::string_view(k.data(), k.size());
            store->consume(r);
        }
        return store;
    });
}

void BM_BytesPerKey_Naive(benchmark::State& state) {
    measureBytesPerKey(state, [](const KeySet& keys) {
        auto naive = std::make_unique<NaiveLimiter>(20, 1.0);
        for (const auto& k : keys.keys)
            naive->check(std::string_view(k.data(), k.size()), 0);
        return naive;
    });
}

BENCHMARK(BM_BytesPerKey_Ratelab)->Arg(1'000'000)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BytesPerKey_Naive)->Arg(1'000'000)->Iterations(1)->Unit(benchmark::kMillisecond);

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
