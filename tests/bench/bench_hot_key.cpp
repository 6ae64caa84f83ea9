// One hot key checked from 1, 2, 4 and 8 threads at once: the memory store (every check of the
// key meets on one shard's lock) against the naive limiter (every check meets on its one
// mutex). On a machine with fewer cores than threads this also measures how each lock behaves
// when its holder is descheduled.

#include <benchmark/benchmark.h>

#include <string>

#include "bench/populated.h"
#include "bench/summary.h"

namespace ratelab::bench {
namespace {

// Each thread keeps its own virtual clock, so the threads' times interleave out of order. The
// store takes a time earlier than the bucket's as "no refill"; the naive limiter subtracts the
// negative refill, which refuses a little more but costs the same. Either way the interleaving
// decides only who is refused, not what a check costs.
Nanos threadStart(const benchmark::State& state) {
    return kNanosPerSecond + static_cast<Nanos>(state.thread_index()) * 7;
}

void BM_HotKey_Ratelab(benchmark::State& state) {
    PopulatedStore& s = populated<PopulatedStore>(1);
    ConsumeRequest r = s.request();
    const KeyBytes key(0);
    r.key = key.view();
    r.partition = key.view();
    Nanos now = threadStart(state);
    for (auto _ : state) {
        r.now = now += kCheckStep;
        benchmark::DoNotOptimize(s.store->consume(r));
    }
    state.SetItemsProcessed(state.iterations());
}

void BM_HotKey_Naive(benchmark::State& state) {
    PopulatedNaive& s = populated<PopulatedNaive>(1);
    const KeyBytes key(0);
    Nanos now = threadStart(state);
    for (auto _ : state)
        benchmark::DoNotOptimize(s.limiter.check(key.view(), now += kCheckStep));
    state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_HotKey_Ratelab)->ThreadRange(1, 8)->UseRealTime();
BENCHMARK(BM_HotKey_Naive)->ThreadRange(1, 8)->UseRealTime();

[[maybe_unused]] const bool registered = [] {
    int order = 30;
    for (int threads : {1, 2, 4, 8}) {
        const std::string suffix = "/real_time/threads:" + std::to_string(threads);
        const std::string naive = "BM_HotKey_Naive" + suffix;
        const std::string ours = "BM_HotKey_Ratelab" + suffix;
        registerSummary(
            {"hot_key_ratio_" + std::to_string(threads) + "t",
             {naive, ours},
             [naive, ours](const Results& r) { return nanos(r, naive) / nanos(r, ours); },
             1,
             order++});
    }
    return true;
}();

}  // namespace
}  // namespace ratelab::bench
