#pragma once

// The record a validated export embeds in a policy file: which scenarios the policy was replayed
// against before it was exported, and how each went. Written by the simulator and the workbench;
// the engine only loads and saves it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ratelab {

/// One expectation checked in a replay, as embedded in a validated export.
struct ValidationExpectation {
    std::string metric;
    std::optional<double> min;
    std::optional<double> max;
    double actual = 0;
    bool pass = false;
    friend bool operator==(const ValidationExpectation&, const ValidationExpectation&) = default;
};

/// A scenario a policy was replayed against before export, and how it went.
struct ValidationRun {
    std::string scenario;
    std::uint64_t seed = 0;
    std::int64_t requests = 0;
    bool pass = false;
    std::vector<ValidationExpectation> expectations;
    friend bool operator==(const ValidationRun&, const ValidationRun&) = default;
};

struct ValidationRecord {
    std::string generator;  ///< "ratelab 0.1.0"
    std::vector<ValidationRun> runs;
    friend bool operator==(const ValidationRecord&, const ValidationRecord&) = default;
};

}  // namespace ratelab
