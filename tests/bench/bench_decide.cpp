// What deciding costs next to one run: `diff` (two policies on the very same requests, one
// pass) against one `run` of the same 10^6-request scenario, measured side by side in the same
// process, so the ratio cancels the machine's load; and a 10 x 10 trade-off map of that
// scenario (100 full runs) on two threads, the figure the workbench's map is held to (30 s).
//
//   ratelab-bench --benchmark_filter='BM_Decide' --benchmark_repetitions=3
//   ratelab-bench --summary     (diff_run_ratio among the headline figures)

#include <benchmark/benchmark.h>

#include "bench/decide_scenario.h"
#include "sim/decide/comparison.h"
#include "sim/report/report.h"
#include "sim/run/scenario_runner.h"
#include "sim/decide/sweep.h"
#include "sim/decide/tradeoff.h"
#include "bench/summary.h"

namespace ratelab::bench {
namespace {

// decide_scenario.h: 10^6 requests in 10 s of virtual time.
const sim::Scenario& scenario() {
    static const sim::Scenario s = [] {
        sim::ScenarioLoadResult r =
            sim::parseScenarioText(kDecideScenarioJson, "decide-bench.json");
        if (!r.ok()) std::abort();
        return std::move(*r.scenario);
    }();
    return s;
}

PolicySet policy(std::int64_t capacity, double refill) {
    PolicySet set;
    Policy p;
    p.name = "api";
    p.capacity = capacity;
    p.refillPerSecond = refill;
    set.policies.push_back(p);
    return set;
}

void BM_Decide_Run(benchmark::State& state) {
    const PolicySet a = policy(20, 5.0);
    for (auto _ : state) {
        sim::RunnerOptions options;
        options.measureWallTime = false;
        sim::ScenarioRunner runner(scenario(), a, options);
        runner.runToEnd();
        const sim::Report report = sim::buildReport(runner, sim::Timing{});
        benchmark::DoNotOptimize(report.totals.requests);
        if (report.totals.requests != 1'000'000) state.SkipWithError("not 10^6 requests");
    }
}

void BM_Decide_Diff(benchmark::State& state) {
    const PolicySet a = policy(20, 5.0);
    const PolicySet b = policy(10, 2.0);
    for (auto _ : state) {
        sim::RunnerOptions options;
        options.measureWallTime = false;
        sim::ScenarioRunner runner(scenario(), std::vector<PolicySet>{a, b}, options);
        runner.runToEnd();
        const sim::Comparison c = sim::buildComparison(runner, 20, sim::Timing{});
        benchmark::DoNotOptimize(c.b.requests);
        if (c.a.requests != 1'000'000) state.SkipWithError("not 10^6 requests");
    }
}

// capacity 4..40 by 4, refill 0.5..5 by 0.5: 100 cells, each a whole run, two at a time.
void BM_Decide_TradeoffMap10x10(benchmark::State& state) {
    std::string error;
    const std::vector<sim::SweepAxis> axes{*sim::parseSweepAxis("capacity=4:40:4", error),
                                           *sim::parseSweepAxis("refill=0.5:5:0.5", error)};
    const PolicySet base = policy(20, 5.0);
    for (auto _ : state) {
        sim::SweepOptions options;
        options.threads = 2;
        const sim::TradeoffMap map =
            sim::readTradeoff(scenario(), axes, sim::runSweep(scenario(), base, axes, options));
        if (map.result.cells.size() != 100) state.SkipWithError("not 100 cells");
        benchmark::DoNotOptimize(map.frontier.size());
    }
}

BENCHMARK(BM_Decide_Run)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Decide_Diff)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Decide_TradeoffMap10x10)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

[[maybe_unused]] const bool registered = [] {
    registerSummary({"diff_run_ratio",
                     {"BM_Decide_Run/real_time", "BM_Decide_Diff/real_time"},
                     [](const Results& r) {
                         return nanos(r, "BM_Decide_Diff/real_time") /
                                nanos(r, "BM_Decide_Run/real_time");
                     },
                     2,
                     60});
    return true;
}();

}  // namespace
}  // namespace ratelab::bench
