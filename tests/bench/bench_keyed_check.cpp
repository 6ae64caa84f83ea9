// B1 in the field notes: one keyed check against the embedded store versus the naive limiter,
// at 1k and 1M uniformly visited keys, on one and two threads; and memory per live key.

#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include <map>
#include <memory>
#include <mutex>
#include <vector>

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
        options.maxBuckets = static_cast<std::int64_t>(keys.size) * 2;
        options.hashSeed = 1;
        store = makeMemoryStore(options);
        ConsumeRequest r = request();
        for (std::size_t i = 0; i < keys.size; ++i) {
            const KeyBytes k(i);
            r.key = k.view();
            r.partition = k.view();
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
        for (std::size_t i = 0; i < keys.size; ++i)
            limiter.check(KeyBytes(i).view(), 0);
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
        const KeyBytes key(keys.index(i++));
        // Two plain assignments: a chained one makes g++ copy the view back as one 16-byte load
        // of two 8-byte stores, a store-forwarding stall of ~6 ns that is the harness's own.
        r.key = key.view();
        r.partition = key.view();
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
        const KeyBytes key(keys.index(i++));
        benchmark::DoNotOptimize(s.limiter.check(key.view(), now += kStep));
    }
    state.SetItemsProcessed(state.iterations());
}

// The store's batch path (Store::consumeBatch, what Limiter::checkBatch calls): kBatch requests
// hashed, prefetched and decided per call. One iteration is one batch; ns_per_check divides.
constexpr std::size_t kBatch = 32;

void BM_KeyedCheckBatch_Ratelab(benchmark::State& state) {
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    const KeySet& keys = KeySet::of(n);
    PopulatedStore& s = shared<PopulatedStore>(n);
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
            requests[k].now = now += kStep;
        }
        s.store->consumeBatch(requests, results);
        benchmark::DoNotOptimize(results.data());
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kBatch));
    state.counters["ns_per_check"] = benchmark::Counter(
        static_cast<double>(state.iterations() * kBatch),
        benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

BENCHMARK(BM_KeyedCheck_Ratelab)->Arg(1000)->Arg(1'000'000);
BENCHMARK(BM_KeyedCheckBatch_Ratelab)->Arg(1000)->Arg(1'000'000);
BENCHMARK(BM_KeyedCheck_Naive)->Arg(1000)->Arg(1'000'000);
BENCHMARK(BM_KeyedCheck_Ratelab)->Arg(1000)->Arg(1'000'000)->Threads(2)->UseRealTime();
BENCHMARK(BM_KeyedCheck_Naive)->Arg(1000)->Arg(1'000'000)->Threads(2)->UseRealTime();

// Resident memory of this process, in bytes.
std::int64_t residentBytes() {
    long pages = 0, resident = 0;
    if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        std::fclose(f);
    }
    return static_cast<std::int64_t>(resident) * sysconf(_SC_PAGESIZE);
}

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
