#pragma once

// Shared helpers for the simulator tests: policies built in code and scenarios from JSON text.

#include <QtTest>

#include <string>
#include <string_view>

#include "engine/limiter_fixture.h"
#include "ratelab/policy.h"
#include "ratelab/policy_file.h"
#include "sim/scenario.h"

namespace ratelab::simtest {

using testing::policySet;

/// A token bucket policy on every path.
inline Policy tokenBucket(std::string name, std::int64_t capacity, double refillPerSecond) {
    return testing::tokenBucketPolicy(std::move(name), capacity, refillPerSecond);
}

/// Parses a scenario written in a test; fails the test with the diagnostics otherwise.
inline sim::Scenario scenarioFrom(std::string_view json, std::string_view name = "test.json") {
    sim::ScenarioLoadResult r = sim::parseScenarioText(json, name);
    if (!r.ok()) {
        std::string all;
        for (const Diagnostic& d : r.diagnostics)
            all += formatDiagnostic(d) + "\n";
        qFatal("scenario does not parse:\n%s", all.c_str());
    }
    return std::move(*r.scenario);
}

/// Loads a policy file of the source tree (path relative to the repository root).
inline PolicySet policyFile(const std::string& relative) {
    PolicyLoadResult r = loadPolicyFile(std::string(RATELAB_SOURCE_DIR) + "/" + relative);
    if (!r.ok()) {
        std::string all;
        for (const Diagnostic& d : r.diagnostics)
            all += formatDiagnostic(d) + "\n";
        qFatal("policy %s does not load:\n%s", relative.c_str(), all.c_str());
    }
    return std::move(*r.policies);
}

}  // namespace ratelab::simtest
