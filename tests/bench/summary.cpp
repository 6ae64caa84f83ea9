#include "bench/summary.h"

#include <algorithm>
#include <stdexcept>

namespace ratelab::bench {

namespace {
std::vector<SummaryFigure>& registry() {
    static std::vector<SummaryFigure> figures;
    return figures;
}
}  // namespace

bool registerSummary(SummaryFigure figure) {
    registry().push_back(std::move(figure));
    std::stable_sort(
        registry().begin(), registry().end(),
        [](const SummaryFigure& a, const SummaryFigure& b) { return a.order < b.order; });
    return true;
}

const std::vector<SummaryFigure>& summaryFigures() {
    return registry();
}

double nanos(const Results& results, const std::string& run) {
    auto it = results.find(run);
    if (it == results.end()) throw std::out_of_range("no result for benchmark " + run);
    return it->second.nanosPerIteration;
}

double counter(const Results& results, const std::string& run, const std::string& name) {
    auto it = results.find(run);
    if (it == results.end()) throw std::out_of_range("no result for benchmark " + run);
    auto c = it->second.counters.find(name);
    if (c == it->second.counters.end())
        throw std::out_of_range("no counter " + name + " in " + run);
    return c->second;
}

}  // namespace ratelab::bench
