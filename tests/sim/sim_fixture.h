#pragma once

// Shared helpers for the simulator tests: policies built in code and scenarios from JSON text.

#include <QtTest>

#include <cinttypes>
#include <cstdio>
#include <string>
#include <string_view>

#include "engine/limiter_fixture.h"
#include "ratelab/policy.h"
#include "ratelab/policy_file.h"
#include "sim/metrics.h"
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
        qFatal("scenario does not parse:\n%s", formatDiagnostics(r.diagnostics).c_str());
    }
    return std::move(*r.scenario);
}

/// Loads a policy file of the source tree (path relative to the repository root).
inline PolicySet policyFile(const std::string& relative) {
    PolicyLoadResult r = loadPolicyFile(std::string(RATELAB_SOURCE_DIR) + "/" + relative);
    if (!r.ok()) {
        qFatal("policy %s does not load:\n%s", relative.c_str(),
               formatDiagnostics(r.diagnostics).c_str());
    }
    return std::move(*r.policies);
}

/// Appends a decision as one line of text (sequence, time, verdict, status, remaining,
/// Retry-After, actor, replica, key): the form in which runs' decisions are compared and hashed.
inline void appendDecisionLine(const sim::DecisionRecord& d, std::string& text) {
    char line[160];
    std::snprintf(line, sizeof line, "%" PRId64 " %" PRId64 " %d %d %" PRId64 " %" PRId64 " %d %d ",
                  d.seq, d.at, d.allowed ? 1 : 0, d.status, d.remaining, d.retryAfter, d.actor,
                  d.replica);
    text += line;
    text.append(d.key);
    text += '\n';
}

}  // namespace ratelab::simtest
