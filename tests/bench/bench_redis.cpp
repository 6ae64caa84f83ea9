// The Redis figures of docs/BENCHMARKS.md: the Redis store against redis-benchmark running the
// very same EVALSHA (same script, same arguments, same key names, same client count and
// pipelining), on a redis-server this benchmark starts itself; the budgeted figure beside it; and a
// flood from one key with and without the over-limit cache.
//
// Every run makes kDecisions decisions and reports decisions per second (wall time) and the
// server's own microseconds per EVALSHA (INFO commandstats): 1e6 / that is what one Redis core
// sustains, whatever else the machine runs.

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ratelab/policy_file.h"
#include "ratelab/redis_store.h"
#include "redis/lua_scripts.h"
#include "fixtures/redis_fixture.h"
#include "sim/run/scenario_runner.h"
#include "bench/summary.h"

extern char** environ;

namespace ratelab::bench {
namespace {

constexpr int kClients = 8;    // redis-benchmark -c
constexpr int kPipeline = 16;  // redis-benchmark -P
constexpr std::int64_t kDecisions = 96'000;
constexpr int kKeyRange = 1'000'000;  // redis-benchmark -r

using SteadyClock = std::chrono::steady_clock;

// One redis-server for every Redis benchmark of the process, started on first use and killed
// when the process exits.
testing::RedisServer& server() {
    static testing::RedisServer instance;
    static const bool started = [] {
        std::string error;
        if (instance.start(&error)) return true;
        std::fprintf(stderr, "bench_redis: cannot start redis-server: %s\n", error.c_str());
        std::exit(1);
    }();
    (void)started;
    return instance;
}

void resetServerStats() {
    server().command({"CONFIG", "RESETSTAT"});
    server().command({"FLUSHALL"});
}

// Server-side microseconds per EVALSHA since the last reset.
double serverMicrosPerCall() {
    const std::string info = server().commandText({"INFO", "commandstats"});
    const std::size_t at = info.find("cmdstat_evalsha:");
    if (at == std::string::npos) return 0;
    const std::size_t u = info.find("usec_per_call=", at);
    return u == std::string::npos ? 0 : std::atof(info.c_str() + u + 14);
}

// CPU seconds (user + system) of this process, or of its reaped children.
double cpuSeconds(int who) {
    rusage u{};
    getrusage(who, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// Runs redis-benchmark; returns its requests per second (0 on failure).
double runRedisBenchmark(const std::vector<std::string>& command) {
    std::vector<std::string> args = {
        "redis-benchmark",          "-s", server().socketPath(),     "-c",
        std::to_string(kClients),   "-P", std::to_string(kPipeline), "-n",
        std::to_string(kDecisions), "-r", std::to_string(kKeyRange), "--csv"};
    args.insert(args.end(), command.begin(), command.end());
    std::vector<char*> argv;
    for (std::string& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return 0;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    pid_t pid = -1;
    const int rc = posix_spawnp(&pid, "redis-benchmark", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    std::string output;
    char buffer[4096];
    ssize_t n;
    while (rc == 0 && (n = read(fds[0], buffer, sizeof buffer)) > 0)
        output.append(buffer, static_cast<std::size_t>(n));
    close(fds[0]);
    if (rc != 0) return 0;
    int status = 0;
    waitpid(pid, &status, 0);
    // The last line: "EVALSHA ...","<rps>","<avg ms>",...
    const std::size_t line = output.rfind("\"EVALSHA");
    if (line == std::string::npos) return 0;
    const std::size_t comma = output.find("\",\"", line);
    return comma == std::string::npos ? 0 : std::atof(output.c_str() + comma + 3);
}

std::unique_ptr<Store> benchStore(std::size_t cacheEntries = 0) {
    RedisStoreOptions o;
    o.urls = {server().url()};
    o.keyNamespace = "bench";
    o.poolSize = kClients;
    o.timeout = 10 * kNanosPerSecond;
    o.overLimitCacheEntries = cacheEntries;
    std::string error;
    std::unique_ptr<Store> store = makeRedisStore(o, &error);
    if (!store) {
        std::fprintf(stderr, "bench_redis: %s\n", error.c_str());
        std::exit(1);
    }
    return store;
}

Limit benchLimit() {
    Limit l;
    l.algorithm = Algorithm::Gcra;
    l.capacity = 20;
    l.emissionInterval = kNanosPerSecond;
    return l;
}

// kClients threads, each making its share of kDecisions through consumeBatch(kPipeline), as
// redis-benchmark's kClients connections with kPipeline requests in flight each. `fill` sets
// the keys of one batch. Returns the wall seconds; counts non-Ok results in *failures.
template <class Fill>
double drive(Store& store, Fill fill, std::atomic<std::int64_t>* failures) {
    const auto start = SteadyClock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < kClients; ++t) {
        threads.emplace_back([&, t] {
            std::mt19937_64 rng(static_cast<std::uint64_t>(t) * 7919 + 1);
            std::vector<ConsumeRequest> requests(kPipeline);
            std::vector<ConsumeResult> results(kPipeline);
            std::vector<std::string> text(3 * kPipeline);
            std::vector<BucketBudget> budgets(kPipeline);
            for (std::int64_t done = 0; done < kDecisions / kClients; done += kPipeline) {
                for (int i = 0; i < kPipeline; ++i)
                    fill(rng, requests[static_cast<std::size_t>(i)], &text[3 * i],
                         budgets[static_cast<std::size_t>(i)]);
                store.consumeBatch(requests, results);
                for (const ConsumeResult& r : results)
                    if (r.status != StoreStatus::Ok) failures->fetch_add(1);
            }
        });
    }
    for (std::thread& t : threads)
        t.join();
    return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// redis-benchmark's __rand_int__: 12 digits, zero-padded.
std::string randomTag(std::mt19937_64& rng) {
    char text[16];
    std::snprintf(text, sizeof text, "%012d", static_cast<int>(rng() % kKeyRange));
    return text;
}

// `clientCpu`: CPU seconds the client spent (our process, or redis-benchmark), shown per
// decision: on a 2-core machine the client competes with redis-server for the cores.
void report(benchmark::State& state, double seconds, std::int64_t failures, double clientCpu) {
    state.SetIterationTime(seconds);
    state.counters["client_us_per_decision"] = clientCpu * 1e6 / static_cast<double>(kDecisions);
    state.counters["decisions_per_s"] = static_cast<double>(kDecisions) / seconds;
    state.counters["server_us_per_call"] = serverMicrosPerCall();
    if (failures) state.SkipWithError("some decisions failed");
}

// The baseline: redis-benchmark sending our GCRA script's EVALSHA with the arguments our store
// sends for benchLimit() on server time, to keys named as our store names them.
void BM_Redis_RedisBenchmark(benchmark::State& state) {
    const redis::Script& s = redis::script(redis::ScriptId::Rate);
    server().command({"SCRIPT", "LOAD", s.source});
    for (auto _ : state) {
        resetServerStats();
        const double cpu = cpuSeconds(RUSAGE_CHILDREN);
        const double rps = runRedisBenchmark({"EVALSHA", s.sha1, "1", "bench:{__rand_int__}:api:k",
                                              "", "0", "1", "20", "1000000000", "0", "0"});
        if (rps <= 0) {
            state.SkipWithError("redis-benchmark failed");
            break;
        }
        report(state, static_cast<double>(kDecisions) / rps, 0, cpuSeconds(RUSAGE_CHILDREN) - cpu);
    }
}
BENCHMARK(BM_Redis_RedisBenchmark)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);

// Our store, the same commands: random keys "bench:{<12 digits>}:api:k", no budget.
void BM_Redis_Store(benchmark::State& state) {
    std::unique_ptr<Store> store = benchStore();
    const Limit limit = benchLimit();
    auto fill = [&](std::mt19937_64& rng, ConsumeRequest& r, std::string* text, BucketBudget&) {
        text[0] = randomTag(rng);
        r.limitName = "api";
        r.limit = &limit;
        r.partition = text[0];
        r.key = "k";
    };
    for (auto _ : state) {
        resetServerStats();
        std::atomic<std::int64_t> failures{0};
        const double cpu = cpuSeconds(RUSAGE_SELF);
        const double seconds = drive(*store, fill, &failures);
        report(state, seconds, failures.load(), cpuSeconds(RUSAGE_SELF) - cpu);
    }
}
BENCHMARK(BM_Redis_Store)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);

// With a bucket budget: three keys per decision (bucket, scope ZSET, fallback), a cap of 4
// slots per peer, a new credential per request (credential rotation). Arg: peers. Over 1000
// peers the scopes fill at once and nearly every request is charged to its peer's fallback (the
// attack the budget is for); over 100k peers nearly every request takes a new slot.
void BM_Redis_StoreBudget(benchmark::State& state) {
    const int peers = static_cast<int>(state.range(0));
    std::unique_ptr<Store> store = benchStore();
    const Limit limit = benchLimit();
    auto fill = [&](std::mt19937_64& rng, ConsumeRequest& r, std::string* text,
                    BucketBudget& budget) {
        const int peer = static_cast<int>(rng() % static_cast<std::uint64_t>(peers));
        text[0] = "peer:10." + std::to_string(peer >> 8) + "." + std::to_string(peer & 255);
        text[1] = "auth:" + randomTag(rng);
        text[2] = "ip:10." + std::to_string(peer >> 8) + "." + std::to_string(peer & 255);
        budget.scope = text[0];
        budget.fallbackKey = text[2];
        budget.cap = 4;
        r.limitName = "api";
        r.limit = &limit;
        r.partition = text[0];
        r.key = text[1];
        r.budget = &budget;
    };
    for (auto _ : state) {
        resetServerStats();
        std::atomic<std::int64_t> failures{0};
        const double cpu = cpuSeconds(RUSAGE_SELF);
        const double seconds = drive(*store, fill, &failures);
        report(state, seconds, failures.load(), cpuSeconds(RUSAGE_SELF) - cpu);
    }
}
BENCHMARK(BM_Redis_StoreBudget)
    ->Arg(1000)
    ->Arg(100'000)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// Store::keyspaceAt over Arg buckets of a caller-time store (GCRA, one key each, every one live):
// the walk a simulated run's sample pays on Redis, one script call per 1,000 keys. Reports
// milliseconds per walk, and `us_per_key`.
void BM_Redis_KeyspaceAt(benchmark::State& state) {
    const std::int64_t keys = state.range(0);
    server().command({"FLUSHALL"});
    RedisStoreOptions o;
    o.urls = {server().url()};
    o.keyNamespace = "bench";
    o.timeSource = RedisTimeSource::Caller;
    o.timeout = 10 * kNanosPerSecond;
    std::string error;
    std::unique_ptr<Store> store = makeRedisStore(o, &error);
    if (!store) {
        state.SkipWithError(error.c_str());
        return;
    }
    const Limit limit = benchLimit();
    constexpr std::size_t kBatch = 256;
    std::vector<std::string> names(kBatch);
    std::vector<ConsumeRequest> requests(kBatch);
    std::vector<ConsumeResult> results(kBatch);
    for (std::int64_t done = 0; done < keys;) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::int64_t>(kBatch, keys - done));
        for (std::size_t i = 0; i < n; ++i) {
            names[i] = "ip:" + std::to_string(done + static_cast<std::int64_t>(i));
            requests[i].limitName = "api";
            requests[i].limit = &limit;
            requests[i].partition = names[i];
            requests[i].key = names[i];
            requests[i].now = kNanosPerSecond;
        }
        store->consumeBatch({requests.data(), n}, {results.data(), n});
        done += static_cast<std::int64_t>(n);
    }
    std::int64_t counted = 0;
    double seconds = 0;
    for (auto _ : state) {
        const auto start = SteadyClock::now();
        counted = store->keyspaceAt(kNanosPerSecond).buckets;
        const double walk = std::chrono::duration<double>(SteadyClock::now() - start).count();
        state.SetIterationTime(walk);
        seconds += walk;
    }
    if (counted != keys) state.SkipWithError("the walk counted another number of buckets");
    state.counters["us_per_key"] =
        seconds * 1e6 / (static_cast<double>(state.iterations()) * static_cast<double>(keys));
    server().command({"FLUSHALL"});
}
BENCHMARK(BM_Redis_KeyspaceAt)
    ->Arg(100'000)
    ->Iterations(3)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// B6: one key floods at full speed (20 per second allowed); the over-limit cache answers it
// locally after the first refusal. Arg: cache entries (0: off).
void BM_Redis_Flood(benchmark::State& state) {
    std::unique_ptr<Store> store = benchStore(static_cast<std::size_t>(state.range(0)));
    const Limit limit = benchLimit();
    auto fill = [&](std::mt19937_64&, ConsumeRequest& r, std::string*, BucketBudget&) {
        r.limitName = "api";
        r.limit = &limit;
        r.partition = "auth:flooder";
        r.key = "auth:flooder";
    };
    for (auto _ : state) {
        resetServerStats();
        const std::int64_t before = dynamic_cast<RedisStore&>(*store).counters().commands;
        std::atomic<std::int64_t> failures{0};
        const double cpu = cpuSeconds(RUSAGE_SELF);
        const double seconds = drive(*store, fill, &failures);
        report(state, seconds, failures.load(), cpuSeconds(RUSAGE_SELF) - cpu);
        state.counters["redis_calls_per_request"] =
            static_cast<double>(dynamic_cast<RedisStore&>(*store).counters().commands - before) /
            kDecisions;
    }
}
BENCHMARK(BM_Redis_Flood)
    ->Arg(0)
    ->Arg(4096)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// `ratelab-cli run --store redis://` on the shipped header-rotation scenario (its own
// policy: budgets, so every request is a three-key script), in caller-time mode as the CLI
// runs it. Arg: the runner's batch size; 1 decides in order, one round trip per request, as
// the simulator did before it batched; 0 is the default, one pipeline per batch of 256.
void BM_SimRedis(benchmark::State& state) {
    const std::string root = RATELAB_SOURCE_DIR;
    sim::ScenarioLoadResult loaded =
        sim::loadScenarioFile(root + "/scenarios/header-rotation.json");
    PolicyLoadResult policy = loadPolicyFile(root + "/resources/policies/default.json");
    if (!loaded.ok() || !policy.ok()) {
        state.SkipWithError("the shipped scenario or policy does not load");
        return;
    }
    std::int64_t requests = 0;
    double seconds = 0;
    for (auto _ : state) {
        RedisStoreOptions o;
        o.urls = {server().url()};
        o.timeSource = RedisTimeSource::Caller;
        o.keyNamespace = "bench-sim";
        std::string error;
        std::shared_ptr<Store> store = makeRedisStore(o, &error);
        resetServerStats();
        sim::RunnerOptions options;
        options.store = store;
        options.measureWallTime = false;
        options.batchSize = static_cast<std::size_t>(state.range(0));
        const auto start = SteadyClock::now();
        sim::ScenarioRunner runner(*loaded.scenario, *policy.policies, options);
        runner.runToEnd();
        seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
        requests = runner.totals().requests;
        state.SetIterationTime(seconds);
        if (runner.totals().storeErrors != 0) state.SkipWithError("store errors on Redis");
    }
    state.counters["requests_per_s"] = static_cast<double>(requests) / seconds;
    state.counters["server_us_per_call"] = serverMicrosPerCall();
}
BENCHMARK(BM_SimRedis)
    ->Arg(1)
    ->Arg(0)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

double decisionsPerSecond(const Results& r, const std::string& run) {
    return counter(r, run, "decisions_per_s");
}

const bool registered = [] {
    registerSummary({"redis_vs_redis_benchmark",
                     {"BM_Redis_Store/iterations:1/manual_time",
                      "BM_Redis_RedisBenchmark/iterations:1/manual_time"},
                     [](const Results& r) {
                         return decisionsPerSecond(r, "BM_Redis_Store/iterations:1/manual_time") /
                                decisionsPerSecond(
                                    r, "BM_Redis_RedisBenchmark/iterations:1/manual_time");
                     },
                     2,
                     60});
    registerSummary({"redis_decisions_per_s",
                     {"BM_Redis_Store/iterations:1/manual_time"},
                     [](const Results& r) {
                         return decisionsPerSecond(r, "BM_Redis_Store/iterations:1/manual_time");
                     },
                     0,
                     61});
    registerSummary({"redis_core_decisions_per_s",
                     {"BM_Redis_Store/iterations:1/manual_time"},
                     [](const Results& r) {
                         return 1e6 / counter(r, "BM_Redis_Store/iterations:1/manual_time",
                                              "server_us_per_call");
                     },
                     0,
                     62});
    registerSummary({"redis_budget_decisions_per_s",
                     {"BM_Redis_StoreBudget/1000/iterations:1/manual_time"},
                     [](const Results& r) {
                         return decisionsPerSecond(
                             r, "BM_Redis_StoreBudget/1000/iterations:1/manual_time");
                     },
                     0,
                     63});
    registerSummary({"redis_flood_calls_per_request",
                     {"BM_Redis_Flood/4096/iterations:1/manual_time"},
                     [](const Results& r) {
                         return counter(r, "BM_Redis_Flood/4096/iterations:1/manual_time",
                                        "redis_calls_per_request");
                     },
                     4,
                     64});
    registerSummary(
        {"sim_redis_speedup",
         {"BM_SimRedis/0/iterations:1/manual_time", "BM_SimRedis/1/iterations:1/manual_time"},
         [](const Results& r) {
             return counter(r, "BM_SimRedis/0/iterations:1/manual_time", "requests_per_s") /
                    counter(r, "BM_SimRedis/1/iterations:1/manual_time", "requests_per_s");
         },
         1,
         66});
    registerSummary({"sim_redis_req_per_s",
                     {"BM_SimRedis/0/iterations:1/manual_time"},
                     [](const Results& r) {
                         return counter(r, "BM_SimRedis/0/iterations:1/manual_time",
                                        "requests_per_s");
                     },
                     0,
                     67});
    registerSummary({"redis_flood_cache_speedup",
                     {"BM_Redis_Flood/4096/iterations:1/manual_time",
                      "BM_Redis_Flood/0/iterations:1/manual_time"},
                     [](const Results& r) {
                         return decisionsPerSecond(r,
                                                   "BM_Redis_Flood/4096/iterations:1/manual_time") /
                                decisionsPerSecond(r, "BM_Redis_Flood/0/iterations:1/manual_time");
                     },
                     1,
                     65});
    return true;
}();

}  // namespace
}  // namespace ratelab::bench
