#pragma once

// The `ratelab-bench --summary` registry. A benchmark file registers the Google Benchmark runs
// a headline figure needs and how to compute the figure from their results (a ratio against a
// baseline measured in the same round, or a plain value). --summary runs just those benchmarks
// in rounds, computes each figure per round, and prints one line of the rounds' medians.

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ratelab::bench {

/// One benchmark run's result (its median over repetitions, when repeated).
struct RunResult {
    double nanosPerIteration = 0;            ///< real time per iteration
    std::map<std::string, double> counters;  ///< user counters (already averaged/rated)
};

/// Results of one round of the summary, by benchmark run name (e.g. "BM_KeyedCheck_Ratelab/1000").
using Results = std::map<std::string, RunResult>;

struct SummaryFigure {
    std::string name;                     ///< "keyed_check_ratio_1k"
    std::vector<std::string> benchmarks;  ///< run names it reads
    std::function<double(const Results&)> compute;
    int decimals = 1;
    int order = 100;  ///< position in the summary line (lower first)
};

/// Adds a figure at static initialisation: `static bool r = registerSummary({...});`.
bool registerSummary(SummaryFigure figure);

const std::vector<SummaryFigure>& summaryFigures();

/// Real ns/iteration of a run; throws std::out_of_range naming it when missing.
double nanos(const Results& results, const std::string& run);
double counter(const Results& results, const std::string& run, const std::string& name);

}  // namespace ratelab::bench
