// The simulator's throughput: whole scenario runs of 10^7 requests on one thread (a new
// Authorization header on every request; IPv4 peers only), the engine's own Limiter::check on the
// same request streams (so the simulator's share can be read off); access-log replays are in
// bench_replay.cpp. Rates are per CPU second: the simulator is single-threaded, and CPU time
// does not count the time other processes on a shared machine take from it.

#include <benchmark/benchmark.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench/default_policy.h"
#include "bench/summary.h"
#include "ratelab/limiter.h"
#include "ratelab/memory_store.h"
#include "sim/run/scenario_runner.h"
#include "sim/traffic/twister.h"

namespace ratelab::bench {
namespace {

constexpr std::int64_t kRunRequests = 10'000'000;

// 10^6 requests a second for 10 s of virtual time.
sim::Scenario scenario(const std::string& actors) {
    const std::string json =
        R"({ "name": "bench", "seed": 1, "duration_s": 10, "sample_ms": 1000, "actors": [)" +
        actors + "] }";
    sim::ScenarioLoadResult r = sim::parseScenarioText(json, "bench.json");
    if (!r.ok()) std::abort();
    return std::move(*r.scenario);
}

const char* const kRotating =
    R"({ "name": "rotator", "class": "attacker", "arrival": {"kind":"constant","rate_per_s":1000000},
         "identity": { "peer": {"kind":"ipv4","address":"203.0.113.7"}, "authorization": "rotate" } })";
const char* const kIpv4 =
    R"({ "name": "clients", "count": 10000, "arrival": {"kind":"constant","rate_per_s":100},
         "identity": { "peer": {"kind":"ipv4_pool","cidr":"10.0.0.0/16"} } })";

void runScenario(benchmark::State& state, const char* actors) {
    const sim::Scenario s = scenario(actors);
    const PolicySet policies = defaultPolicy();
    std::int64_t requests = 0;
    for (auto _ : state) {
        sim::RunnerOptions options;
        options.measureWallTime = false;
        sim::ScenarioRunner runner(s, policies, options);
        runner.runToEnd();
        requests += runner.totals().requests;
    }
    if (requests != kRunRequests * static_cast<std::int64_t>(state.iterations())) {
        state.SkipWithError("the scenario did not send 10^7 requests");
    }
    state.counters["requests_per_s"] =
        benchmark::Counter(static_cast<double>(requests), benchmark::Counter::kIsRate);
}

void BM_Sim_RotatingAuthorization(benchmark::State& state) {
    runScenario(state, kRotating);
}
void BM_Sim_Ipv4(benchmark::State& state) {
    runScenario(state, kIpv4);
}
BENCHMARK(BM_Sim_RotatingAuthorization)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Sim_Ipv4)->Iterations(1)->Unit(benchmark::kMillisecond);

// The scaling table's simulator rows: the IPv4 stream's 10^7 requests spread over Arg clients
// (10^3 to 10^6 addresses of 10.0.0.0/8, so as many buckets), each sending 10^6/Arg a second.
void BM_Sim_Ipv4Clients(benchmark::State& state) {
    const std::int64_t clients = state.range(0);
    const std::string actors =
        R"({ "name": "clients", "count": )" + std::to_string(clients) +
        R"(, "arrival": {"kind":"constant","rate_per_s":)" + std::to_string(1'000'000 / clients) +
        R"(}, "identity": { "peer": {"kind":"ipv4_pool","cidr":"10.0.0.0/8"} } })";
    runScenario(state, actors.c_str());
}
BENCHMARK(BM_Sim_Ipv4Clients)
    ->RangeMultiplier(10)
    ->Range(1000, 1'000'000)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// The engine alone on the same streams: Limiter::check with requests prepared beforehand and a
// clock advanced by 1 us per request, as in the scenario. The difference is the simulator's own
// cost (traffic generation, metrics, the fault-store decorator).
// 2^20 distinct "Bearer r<32 hex>" tokens, made once (Google Benchmark calls a benchmark
// several times while it sizes the run).
const std::vector<std::string>& rotatingTokens() {
    static const std::vector<std::string> tokens = [] {
        std::vector<std::string> out(std::size_t(1) << 20);
        std::mt19937_64 rng(1);
        char text[64];
        for (std::string& t : out) {
            std::snprintf(text, sizeof text, "Bearer r%016llx%016llx",
                          static_cast<unsigned long long>(rng()),
                          static_cast<unsigned long long>(rng()));
            t = text;
        }
        return out;
    }();
    return tokens;
}

void BM_Check_RotatingAuthorization(benchmark::State& state) {
    const std::vector<std::string>& tokens = rotatingTokens();
    const std::size_t mask = tokens.size() - 1;
    Limiter limiter(defaultPolicy(), makeMemoryStore({1'000'000, 42}), {nullptr, 7});
    const IpAddress peer = *IpAddress::parse("203.0.113.7");
    Check check;
    std::size_t i = 0;
    for (auto _ : state) {
        const Header header{"authorization", tokens[i & mask]};
        RequestView v;
        v.method = "GET";
        v.path = "/";
        v.peer = &peer;
        v.headers = std::span<const Header>(&header, 1);
        limiter.check(v, static_cast<Nanos>(i) * kNanosPerMicro, check);
        benchmark::DoNotOptimize(check.allowed);
        ++i;
    }
    state.SetItemsProcessed(state.iterations());
}

void BM_Check_Ipv4(benchmark::State& state) {
    std::vector<IpAddress> peers;
    for (std::uint32_t k = 0; k < 10'000; ++k)
        peers.push_back(IpAddress::fromV4(0x0a000000u + k + 1));
    Limiter limiter(defaultPolicy(), makeMemoryStore({1'000'000, 42}), {nullptr, 7});
    Check check;
    std::size_t i = 0;
    for (auto _ : state) {
        RequestView v;
        v.method = "GET";
        v.path = "/";
        v.peer = &peers[i % peers.size()];
        limiter.check(v, static_cast<Nanos>(i) * kNanosPerMicro, check);
        benchmark::DoNotOptimize(check.allowed);
        ++i;
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Check_RotatingAuthorization);
BENCHMARK(BM_Check_Ipv4);

// The traffic generator's random bits (sim/traffic/twister.h) against the standard engine they
// copy.
template <class Engine>
void BM_Rng(benchmark::State& state) {
    Engine engine(1);
    for (auto _ : state)
        benchmark::DoNotOptimize(engine());
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Rng<std::mt19937_64>)->Name("BM_Rng_StdMt19937_64");
BENCHMARK(BM_Rng<sim::Twister64>)->Name("BM_Rng_Twister64");

[[maybe_unused]] const bool registered = [] {
    registerSummary(
        {"sim_rotate_mreq_per_s",
         {"BM_Sim_RotatingAuthorization/iterations:1"},
         [](const Results& r) {
             return counter(r, "BM_Sim_RotatingAuthorization/iterations:1", "requests_per_s") / 1e6;
         },
         2,
         40});
    registerSummary({"sim_ipv4_mreq_per_s",
                     {"BM_Sim_Ipv4/iterations:1"},
                     [](const Results& r) {
                         return counter(r, "BM_Sim_Ipv4/iterations:1", "requests_per_s") / 1e6;
                     },
                     2,
                     41});
    // The simulator's whole cost per request over the engine's alone, on the same streams.
    registerSummary(
        {"sim_over_check_rotate",
         {"BM_Sim_RotatingAuthorization/iterations:1", "BM_Check_RotatingAuthorization"},
         [](const Results& r) {
             const double sim =
                 1e9 / counter(r, "BM_Sim_RotatingAuthorization/iterations:1", "requests_per_s");
             return sim / nanos(r, "BM_Check_RotatingAuthorization");
         },
         2,
         42});
    registerSummary({"sim_over_check_ipv4",
                     {"BM_Sim_Ipv4/iterations:1", "BM_Check_Ipv4"},
                     [](const Results& r) {
                         const double sim =
                             1e9 / counter(r, "BM_Sim_Ipv4/iterations:1", "requests_per_s");
                         return sim / nanos(r, "BM_Check_Ipv4");
                     },
                     2,
                     43});
    registerSummary({"sim_rng_speedup",
                     {"BM_Rng_StdMt19937_64", "BM_Rng_Twister64"},
                     [](const Results& r) {
                         return nanos(r, "BM_Rng_StdMt19937_64") / nanos(r, "BM_Rng_Twister64");
                     },
                     1,
                     44});
    return true;
}();

}  // namespace
}  // namespace ratelab::bench
