// The memory store's slowest decision while an attack fills it: a new /64 on every request, each
// a new bucket placed among networks, through the fair-share index's high-water mark and on past
// the moment the store has no room (docs/RELIABILITY.md, "A full store"). A consume() holds its
// shard's lock, and for the index's work the index's mutex (on a full store's path every lock of
// the store), for nearly all of its time: the slowest one is about the longest any other
// decision of the process may wait behind it. One thread, so that nothing but the store's own
// work is timed; on a loaded machine the steady clock also counts the time the thread was not
// running, so each call's thread CPU time is reported beside it.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "ratelab/ip_address.h"
#include "ratelab/memory_store.h"
#include "ratelab/store.h"

namespace ratelab::bench {
namespace {

// Requests after the store first has no room: each goes the full store's path.
constexpr std::int64_t kAfterFull = 1000;

struct MintedKeys {
    std::vector<std::string> keys;
    std::vector<KeyPlace> places;

    // The n-th /64 of 2001:d00::/24, spread over its 256 /32s.
    explicit MintedKeys(std::int64_t count) {
        keys.reserve(static_cast<std::size_t>(count));
        places.reserve(static_cast<std::size_t>(count));
        for (std::int64_t n = 0; n < count; ++n) {
            char text[64];
            std::snprintf(text, sizeof text, "2001:d%02x:%x:%x::", static_cast<unsigned>(n % 256),
                          static_cast<unsigned>((n / 256) % 65536),
                          static_cast<unsigned>((n / (256 * 65536)) % 65536));
            KeyPlace place;
            place.address = *IpAddress::parse(text);
            place.prefix = 64;
            places.push_back(place);
            keys.push_back(std::string("ip:") + text + "/64");
        }
    }
};

double threadCpuMillis() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

double millisBetween(std::chrono::steady_clock::time_point a,
                     std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

// Arguments: the store's max_buckets, its shards per limit.
void BM_FairFill_SlowestConsume(benchmark::State& state) {
    const std::int64_t buckets = state.range(0);
    const MintedKeys minted(buckets + kAfterFull);
    Limit limit;  // burst 20, one token per 100 s: no bucket goes idle during the run
    limit.capacity = 20;
    limit.emissionInterval = 100 * kNanosPerSecond;
    double slowestWithRoom = 0;
    double slowestFull = 0;
    double firstFull = 0;
    double slowestAt = 0;
    double slowestCpu = 0;
    double slowestCpuWithRoom = 0;
    double slowestCpuFull = 0;
    for (auto _ : state) {
        state.PauseTiming();
        MemoryStoreOptions options;
        options.maxBuckets = buckets;
        options.hashSeed = 1;
        options.shards = static_cast<unsigned>(state.range(1));
        std::unique_ptr<Store> store = makeMemoryStore(options);
        state.ResumeTiming();
        bool full = false;
        for (std::size_t i = 0; i < minted.keys.size(); ++i) {
            ConsumeRequest request;
            request.limitId = 0;
            request.limitName = "api";
            request.limit = &limit;
            request.partition = minted.keys[i];
            request.key = minted.keys[i];
            request.now = kNanosPerSecond;
            request.place = &minted.places[i];
            const double cpuStart = threadCpuMillis();
            const auto start = std::chrono::steady_clock::now();
            const ConsumeResult result = store->consume(request);
            const double took = millisBetween(start, std::chrono::steady_clock::now());
            const double cpu = threadCpuMillis() - cpuStart;
            benchmark::DoNotOptimize(result.decision.remaining);
            const bool room = static_cast<std::int64_t>(i) < buckets;
            if (!room && !full) {
                full = true;
                firstFull = std::max(firstFull, took);
            }
            double& slowest = room ? slowestWithRoom : slowestFull;
            if (took > slowest) slowest = took;
            if (took > slowestAt) slowestAt = took;
            if (cpu > slowestCpu) slowestCpu = cpu;
            double& slowestCpuHere = room ? slowestCpuWithRoom : slowestCpuFull;
            if (cpu > slowestCpuHere) slowestCpuHere = cpu;
        }
        state.PauseTiming();
        store.reset();
        state.ResumeTiming();
    }
    state.counters["slowest_ms"] = slowestAt;
    state.counters["slowest_with_room_ms"] = slowestWithRoom;
    state.counters["first_full_ms"] = firstFull;
    state.counters["slowest_full_ms"] = slowestFull;
    state.counters["slowest_cpu_ms"] = slowestCpu;
    state.counters["slowest_cpu_with_room_ms"] = slowestCpuWithRoom;
    state.counters["slowest_cpu_full_ms"] = slowestCpuFull;
    state.SetItemsProcessed(state.iterations() * (buckets + kAfterFull));
}

BENCHMARK(BM_FairFill_SlowestConsume)
    ->Args({100'000, 4})
    ->Args({1'000'000, 4})
    ->Args({1'000'000, 64})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ratelab::bench
