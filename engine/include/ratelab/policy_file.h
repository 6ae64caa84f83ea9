#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ratelab/diagnostic.h"
#include "ratelab/policy.h"

namespace ratelab {

struct PolicyLoadResult {
    std::optional<PolicySet> policies;     ///< set when there is no error (warnings allowed)
    std::vector<Diagnostic> diagnostics;   ///< every problem found, errors and lint warnings
    bool ok() const { return policies.has_value(); }
};

/// Loads and validates a policy file: syntax, schema (types, ranges, unknown and duplicate keys),
/// semantics and lint warnings, all reported at once with file, line, column and JSON pointer.
/// Oversized or deeply nested input is refused cleanly.
PolicyLoadResult loadPolicyFile(const std::string& path);

/// The same, on text already in memory; `fileName` is used in diagnostics.
PolicyLoadResult parsePolicyText(std::string_view text, std::string_view fileName);

/// The canonical text of a policy set: two-space indented JSON, fields in a fixed order, ending
/// in a newline. Loading it gives the same set; saving that again gives the same bytes.
std::string savePolicyText(const PolicySet& policies);

/// Semantic checks and lint warnings on a set built or edited in code (the workbench editor).
std::vector<Diagnostic> validatePolicySet(const PolicySet& policies, std::string_view fileName);

}  // namespace ratelab
