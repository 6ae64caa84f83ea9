#pragma once

// Policy files: JSON, "version": 1, described by resources/schema/policy.schema.json.
//
// Loading checks four levels and reports every problem it finds at once, each as
// "FILE:LINE:COLUMN: error|warning: message (at /json/pointer)":
//   syntax     well-formed JSON, duplicate keys, size and depth limits (a document the JSON layer
//              refuses is not looked at further);
//   schema     types, ranges, enums, required and unknown keys, and the few rules between fields
//              of one object (a redis store needs a url, source "header" needs a header name, ...).
//              The shipped JSON Schema accepts exactly what the syntax and schema levels accept;
//   semantics  what a schema cannot say: unique policy names, strict CIDRs, a cost that can never
//              pass, a Redis URL that does not parse, path patterns, budget slot TTL against the
//              bucket's time to refill, derived durations within kMaxDuration, the default tier.
//              Checked for every part of the file that has no schema error;
//   lint       warnings about known traps, each saying what to do. Checked when there is no error.

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ratelab/diagnostic.h"
#include "ratelab/policy.h"

namespace ratelab {

/// The level a diagnostic belongs to (see the top of this file).
enum class CheckLevel : std::uint8_t { Syntax, Schema, Semantics, Lint };

struct SourceLocation {
    int line = 0;    ///< 1-based; 0 when unknown
    int column = 0;  ///< 1-based, in characters
};

/// Where each value of a loaded file was written, by JSON pointer. Lets later stages (semantic
/// checks, exports) report FILE:LINE:COLUMN for a pointer. Not thread-safe to build; const use is.
class PolicySourceMap {
public:
    void add(std::string pointer, SourceLocation at);
    /// The location of `pointer`, else of its nearest ancestor that has one, else {0, 0}.
    SourceLocation locate(std::string_view pointer) const;
    bool empty() const { return locations_.empty(); }

private:
    std::unordered_map<std::string, SourceLocation> locations_;
};

struct PolicyCheckOptions {
    /// The version deployed before this one, for the lints that compare versions (a window or
    /// algorithm changed under the same policy name). Null skips them.
    const PolicySet* previous = nullptr;
};

struct PolicyLoadResult {
    std::optional<PolicySet> policies;    ///< set when there is no error (warnings allowed)
    std::vector<Diagnostic> diagnostics;  ///< every problem found, errors and lint warnings
    std::vector<CheckLevel> levels;       ///< levels[i] is the level of diagnostics[i]
    PolicySourceMap sources;              ///< positions of the file's values, by pointer
    /// The file could not be read at all (missing, a directory, no permission): the one
    /// diagnostic says why, without a position. Its content was never checked.
    bool unreadable = false;
    bool ok() const { return policies.has_value(); }
    /// True when no diagnostic of `level` is an error.
    bool passed(CheckLevel level) const;
};

/// Loads and validates a policy file: syntax, schema (types, ranges, unknown and duplicate keys),
/// semantics and lint warnings, all reported at once with file, line, column and JSON pointer.
/// Oversized or deeply nested input is refused cleanly. Compiles the limits (compileLimits).
/// Diagnostics come in file order. `path` may name a pipe or a process substitution
/// (/dev/stdin, /dev/fd/N): the file is read to its end, never sized. Thread-safe.
PolicyLoadResult loadPolicyFile(const std::string& path, const PolicyCheckOptions& options = {});

/// The same, on text already in memory; `fileName` is used in diagnostics.
PolicyLoadResult parsePolicyText(std::string_view text, std::string_view fileName,
                                 const PolicyCheckOptions& options = {});

/// The canonical text of a policy set: two-space indented JSON, fields in a fixed order, every
/// field written (absent optional values as null), ending in a newline. Loading it gives the same
/// set; saving that again gives the same bytes. Durations are written in whole milliseconds.
/// Thread-safe.
std::string savePolicyText(const PolicySet& policies);

/// Every check the loader makes, on a set built or edited in code (the workbench editor): the
/// set's canonical text is checked at all levels. Diagnostics carry JSON pointers but no line
/// (line 0), since the set has no file; `fileName` names it in messages. Thread-safe.
std::vector<Diagnostic> validatePolicySet(const PolicySet& policies, std::string_view fileName,
                                          const PolicyCheckOptions& options = {});

}  // namespace ratelab
