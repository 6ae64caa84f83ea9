#pragma once

// Reading what a command is given: a path, or "-" for standard input, for every file argument.
// Problems are printed on stderr as diagnostics ("FILE:LINE:COLUMN: error: ..."; "<stdin>" names
// standard input) and end in the exit code that tells them apart: kIoError when a file cannot
// be read, kInvalidInput when it has errors.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "ratelab/diagnostic.h"
#include "ratelab/policy.h"
#include "ratelab/policy_file.h"
#include "sim/scenario/scenario.h"

namespace ratelab::cli {

/// A value, or the exit code saying why there is none (the reason is already printed).
template <class T>
class Result {
public:
    Result(T value) : value_(std::move(value)) {}
    Result(ExitCode failure) : failure_(failure) {}
    explicit operator bool() const { return value_.has_value(); }
    T& operator*() { return *value_; }
    T* operator->() { return &*value_; }
    /// REQUIRES: !*this.
    ExitCode failure() const { return failure_; }

private:
    std::optional<T> value_;
    ExitCode failure_ = kSuccess;
};

/// How diagnostics name standard input.
inline constexpr const char* kStdinName = "<stdin>";

/// Prints each diagnostic on stderr; warnings only when `warnings`. Returns whether any is an
/// error.
bool printDiagnostics(const std::vector<Diagnostic>& diagnostics, bool warnings = true);

/// Loads and validates a policy file argument ("-": standard input; "KIND:PATH" imports PATH,
/// formats::loadPolicySource) without printing. The result's `unreadable` tells an I/O failure
/// from an invalid file (exitCodeOf). Every --policy of every command is read here.
PolicyLoadResult readPolicyArgument(const std::string& path,
                                    const PolicyCheckOptions& options = {});

/// kSuccess for a valid file, kIoError for an unreadable one, kInvalidInput otherwise.
ExitCode exitCodeOf(const PolicyLoadResult& loaded);

/// Loads and validates a policy file argument, printing its diagnostics (warnings when
/// `warnings`).
Result<PolicySet> loadPolicy(const std::string& path, bool warnings = true);

/// Loads a scenario file argument ("-": standard input), printing its diagnostics.
Result<sim::Scenario> loadScenario(const std::string& path, bool warnings = true);

/// The policy a scenario runs under: `policyPath` when given (--policy), else the file the
/// scenario names (an unreadable one is reported at the scenario's line naming it). Also checks
/// the scenario's policy_change events against it.
Result<PolicySet> loadPolicyFor(const sim::Scenario& scenario, const std::string& policyPath,
                                bool warnings = true);

}  // namespace ratelab::cli
