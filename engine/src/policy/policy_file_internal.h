#pragma once

// The stages of loading a policy file, shared by policy_file.cpp and the files of each stage.

#include <string>
#include <string_view>
#include <vector>

#include "identity/key_deriver.h"
#include "json/json_reader.h"
#include "ratelab/policy_file.h"

namespace ratelab::policy {

/// Collects one file's diagnostics with their level. Diagnostics that json::Reader and
/// json::ObjectReader add directly are schema-level. Not thread-safe.
class Diagnostics {
public:
    Diagnostics(std::string file, std::vector<Diagnostic>& out, std::vector<CheckLevel>& levels)
        : reader_(std::move(file), out), out_(out), levels_(levels) {}

    /// For ObjectReader and friends: what they report is schema-level.
    json::Reader& reader() { return reader_; }
    const std::string& file() const { return reader_.file(); }

    void error(CheckLevel level, const json::Value& at, std::string message);
    void report(Diagnostic::Severity severity, CheckLevel level, SourceLocation at,
                std::string pointer, std::string message);

    /// Gives a level to diagnostics added through reader() so far (schema).
    void settle();
    bool hasErrors() const;

private:
    json::Reader reader_;
    std::vector<Diagnostic>& out_;
    std::vector<CheckLevel>& levels_;
};

/// What the checks after the schema level need: where values are, and which parts of the file
/// already have errors (they are not checked further, to avoid reports that follow from one).
class CheckContext {
public:
    CheckContext(Diagnostics& sink, const PolicySourceMap& sources);

    /// Remembers the pointers of the errors in `diagnostics` (those found before this stage).
    void noteErrors(const std::vector<Diagnostic>& diagnostics);
    /// True when no error so far has a pointer at, above or under `pointer`.
    bool clean(std::string_view pointer) const;
    void error(CheckLevel level, const std::string& pointer, std::string message);
    void warning(const std::string& pointer, std::string message);

private:
    Diagnostics& sink_;
    const PolicySourceMap& sources_;
    std::vector<std::string> dirty_;
};

/// Schema level, plus the semantic checks of single values made while reading (CIDRs, Redis
/// URLs, path patterns), tagged Semantics. `out` gets one Policy per array item, in order, so
/// /policies/i is out.policies[i] even when an item is broken.
void readPolicySet(Diagnostics& sink, const json::Value& root, PolicySet& out);

/// Semantic checks across fields and policies, on the parts of the file without errors.
void checkSemantics(const PolicySet& set, CheckContext& context);

/// Lint warnings. REQUIRES: no errors.
void checkLints(const PolicySet& set, const PolicySet* previous, CheckContext& context);
/// The lint warnings on how limits count (policy_lint_limits.cpp), which checkLints runs.
void checkLimitLints(const PolicySet& set, CheckContext& context);

/// JSON pointer of policy `index`, e.g. "/policies/3".
std::string policyPointer(std::size_t index);

/// Whether the engine budgets this policy's keys (identity::budgetApplies, the deriver's rule).
inline bool budgetApplies(const Policy& p) {
    return identity::budgetApplies(p.key, p.budget);
}

}  // namespace ratelab::policy
