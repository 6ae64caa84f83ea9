#include "sim/report/counters.h"

#include <cmath>

namespace ratelab::sim {

namespace {

constexpr const char* kDerivedNames[] = {"allowed_fraction",
                                         "throttled_fraction",
                                         "allowed_per_s",
                                         "peak_allowed_per_s",
                                         "instances",
                                         "throttled_instances",
                                         "throttled_instance_fraction",
                                         "fairness_jain",
                                         "max_instances_per_bucket"};
constexpr const char* kGlobalNames[] = {
    "keyspace.max_buckets",   "keyspace.max_bytes", "keyspace.max_budget_slots",
    "keyspace.final_buckets", "store.errors",       "requests"};

// Summary metrics carry six decimals: enough for any rate or fraction, and stable to read.
double rounded(double x) {
    return std::round(x * 1e6) / 1e6;
}

std::int64_t counter(const ClassCounters& c, std::string_view name) {
    for (const CounterField& f : kCounterFields) {
        if (f.name == name) return c.*f.member;
    }
    return -1;
}

double fraction(std::int64_t part, std::int64_t whole) {
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

double seconds(Nanos t) {
    return static_cast<double>(t) / 1e9;
}

}  // namespace

std::vector<std::string> metricNames(const std::vector<std::string>& classNames) {
    std::vector<std::string> names;
    for (const std::string& c : classNames) {
        for (const CounterField& f : kCounterFields)
            names.push_back(c + "." + std::string(f.name));
        for (const char* n : kDerivedNames)
            names.push_back(c + "." + n);
    }
    for (const char* n : kGlobalNames)
        names.emplace_back(n);
    return names;
}

std::optional<double> summaryMetric(std::string_view metric,
                                    const std::vector<std::string>& classNames,
                                    const RunTotals& totals, Nanos duration, Nanos sampleInterval) {
    if (metric == "keyspace.max_buckets") return static_cast<double>(totals.maxBuckets);
    if (metric == "keyspace.max_bytes") return static_cast<double>(totals.maxBytes);
    if (metric == "keyspace.max_budget_slots") return static_cast<double>(totals.maxBudgetSlots);
    if (metric == "keyspace.final_buckets") return static_cast<double>(totals.finalBuckets);
    if (metric == "store.errors") return static_cast<double>(totals.storeErrors);
    if (metric == "requests") return static_cast<double>(totals.requests);
    const std::size_t dot = metric.rfind('.');
    if (dot == std::string_view::npos) return std::nullopt;
    const std::string_view className = metric.substr(0, dot);
    const std::string_view name = metric.substr(dot + 1);
    for (std::size_t i = 0; i < classNames.size(); ++i) {
        if (classNames[i] != className) continue;
        const ClassCounters& c = totals.classes[i];
        if (std::int64_t v = counter(c, name); v >= 0) return static_cast<double>(v);
        if (name == "allowed_fraction") return rounded(fraction(c.allowed, c.offered));
        if (name == "throttled_fraction") return rounded(fraction(c.throttled, c.offered));
        if (name == "allowed_per_s") {
            return rounded(duration > 0 ? static_cast<double>(c.allowed) / seconds(duration) : 0.0);
        }
        if (name == "peak_allowed_per_s") {
            return rounded(static_cast<double>(totals.peakAllowed[i]) / seconds(sampleInterval));
        }
        const ClassSpread spread = i < totals.spread.size() ? totals.spread[i] : ClassSpread{};
        if (name == "instances") return static_cast<double>(spread.instances);
        if (name == "throttled_instances") return static_cast<double>(spread.throttledInstances);
        if (name == "throttled_instance_fraction") {
            return rounded(fraction(spread.throttledInstances, spread.instances));
        }
        if (name == "fairness_jain") return rounded(spread.fairness);
        if (name == "max_instances_per_bucket") {
            return static_cast<double>(spread.peakInstancesPerBucket);
        }
        return std::nullopt;
    }
    return std::nullopt;
}

}  // namespace ratelab::sim
