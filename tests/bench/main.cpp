// ratelab-bench: Google Benchmark runs of the engine against baselines measured in the same
// process. Without arguments it runs everything (any --benchmark_* flag works); with --summary
// it runs the headline set in rounds and ends with one line of name=value pairs; with --rls
// (when the decision service is built) it loads Envoy's rate limit service over gRPC instead
// (bench_rls.h).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/summary.h"
#if RATELAB_BENCH_RLS
#include "bench/bench_rls.h"
#endif

namespace {

using namespace ratelab::bench;

double toNanos(double value, benchmark::TimeUnit unit) {
    switch (unit) {
        case benchmark::kNanosecond:
            return value;
        case benchmark::kMicrosecond:
            return value * 1e3;
        case benchmark::kMillisecond:
            return value * 1e6;
        case benchmark::kSecond:
            return value * 1e9;
    }
    return value;
}

// Keeps each run's result (its median when run with repetitions), and shows the console table as
// usual.
class CollectingReporter : public benchmark::ConsoleReporter {
public:
    // Tabular, no colour: the summary line must start clean for scripts that read it.
    CollectingReporter() : ConsoleReporter(OO_Tabular) {}

    Results results;

    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const Run& run : runs) {
            const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
            const bool single = run.run_type == Run::RT_Iteration && run.repetitions <= 1;
            if (!median && !single) continue;
            RunResult r;
            r.nanosPerIteration = toNanos(run.GetAdjustedRealTime(), run.time_unit);
            for (const auto& [name, c] : run.counters)
                r.counters[name] = c.value;
            results[run.run_name.str()] = r;
        }
    }
};

std::string escapeRegex(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (std::strchr(".^$|()[]{}*+?\\", c)) out.push_back('\\');
        out.push_back(c);
    }
    return out;
}

// The summary runs its benchmark set in kRounds rounds, each benchmark once per round in a
// random order, and computes every figure from each round's results alone: a ratio's two sides
// are then measured seconds apart, not up to a minute apart as five interleaved repetitions of
// each left them, so a host whose speed drifts over minutes moves both alike. Each figure is the
// median of its rounds' values; the spread goes to stderr beside the console tables.
constexpr int kRounds = 5;

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

int runSummary(int argc, char** argv) {
    std::string filter = "--benchmark_filter=^(";
    bool first = true;
    for (const SummaryFigure& f : summaryFigures()) {
        for (const std::string& b : f.benchmarks) {
            if (!first) filter += "|";
            filter += escapeRegex(b);
            first = false;
        }
    }
    filter += ")$";
    std::vector<std::string> args = {argv[0], filter, "--benchmark_enable_random_interleaving=true",
                                     "--benchmark_min_time=0.05"};
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--summary") != 0) args.push_back(argv[i]);
    }
    std::vector<char*> cargs;
    for (std::string& a : args)
        cargs.push_back(a.data());
    int cargc = static_cast<int>(cargs.size());
    benchmark::Initialize(&cargc, cargs.data());
    std::vector<Results> rounds;
    for (int round = 0; round < kRounds; ++round) {
        CollectingReporter reporter;
        benchmark::RunSpecifiedBenchmarks(&reporter);
        rounds.push_back(std::move(reporter.results));
    }
    benchmark::Shutdown();

    std::string line = "summary";
    int status = 0;
    for (const SummaryFigure& f : summaryFigures()) {
        try {
            std::vector<double> values;
            for (const Results& results : rounds)
                values.push_back(f.compute(results));
            const auto [low, high] = std::minmax_element(values.begin(), values.end());
            std::fprintf(stderr, "%s: median of %d rounds, range %.*f-%.*f\n", f.name.c_str(),
                         kRounds, f.decimals, *low, f.decimals, *high);
            char value[64];
            std::snprintf(value, sizeof value, "%.*f", f.decimals, median(values));
            line += " " + f.name + "=" + value;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "ratelab-bench: %s: %s\n", f.name.c_str(), e.what());
            line += " " + f.name + "=n/a";
            status = 1;
        }
    }
    std::printf("%s\n", line.c_str());
    return status;
}

}  // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--summary") == 0) return runSummary(argc, argv);
#if RATELAB_BENCH_RLS
        if (std::strcmp(argv[i], "--rls") == 0) return ratelab::bench::runRlsBench(argc, argv);
#endif
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
