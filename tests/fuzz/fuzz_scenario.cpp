// Scenario text: load, and for every scenario that loads, check it against a default policy and
// decide its first requests (traffic generation from fuzzed identities, arrivals and events).

#include <algorithm>

#include "fuzz/fuzz_check.h"
#include "sim/scenario/scenario.h"
#include "sim/run/scenario_runner.h"

using namespace ratelab;

namespace {

PolicySet defaultPolicies() {
    PolicySet set;
    Policy p;
    p.name = "api";
    set.policies.push_back(p);
    set.store.maxBuckets = 10'000;
    return set;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
    constexpr const char* kHarness = "fuzz_scenario";
    sim::ScenarioLoadResult loaded = sim::parseScenarioText(fuzz::text(data, size), "fuzz.json");
    if (!loaded.ok()) {
        fuzz::require(!loaded.diagnostics.empty(), kHarness, "refused without a diagnostic");
        return 0;
    }
    static const PolicySet policies = defaultPolicies();
    if (!sim::checkScenarioAgainstPolicy(*loaded.scenario, policies).empty()) return 0;
    // A run is bounded in requests and in samples, so that one input stays cheap: a scenario may
    // legally ask for 10^10 requests or a million samples.
    sim::Scenario& s = *loaded.scenario;
    s.maxBuckets = 10'000;
    if (s.replicas > 8) return 0;
    sim::RunnerOptions options;
    options.measureWallTime = false;
    options.logCapacity = 16;
    sim::ScenarioRunner runner(s, policies, options);
    const Nanos until = std::min(runner.duration(), 4 * runner.sampleInterval());
    const std::int64_t decided = runner.advance(until, 2'000);
    fuzz::require(decided >= 0 && decided <= 2'000, kHarness, "advance decided out of bounds");
    std::int64_t offered = 0;
    for (const sim::ActorRow& row : runner.actorRows()) {
        fuzz::require(row.counters.offered == row.counters.allowed + row.counters.throttled +
                                                  row.counters.refused + row.counters.failedClosed,
                      kHarness, "a request was not counted exactly once");
        offered += row.counters.offered;
    }
    fuzz::require(offered == decided, kHarness, "actor rows do not add up to the requests");
    return 0;
}
