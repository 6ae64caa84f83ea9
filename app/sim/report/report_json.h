#pragma once

// The parts of the report JSON that other JSON documents repeat (the diff and tune reports):
// one writer per part, so a class's counters read the same everywhere. Simulator internals.

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "sim/report/counters.h"
#include "sim/report/report.h"

namespace ratelab::sim::report_json {

using Json = nlohmann::ordered_json;

/// Six decimals: enough for any rate or fraction, and stable to read.
double rounded(double x);

/// A class's counters (kCounterFields), its rates over `duration` and, when given, its spread
/// (instances, throttled_instances, fairness_jain; max_instances_per_bucket for legitimate
/// classes).
Json classCounters(const ClassCounters& c, Nanos duration, const ClassSpread* spread,
                   std::string_view className);
/// The counters alone (kCounterFields), e.g. for a difference.
Json counters(const ClassCounters& c);
Json expectations(const std::vector<ExpectationResult>& results);
Json replay(const ReplayInfo& r);
Json timing(const Timing& t);

}  // namespace ratelab::sim::report_json
