#pragma once

// The properties every importer's harness checks, whatever its grammar: every diagnostic has a
// message and, if it has a line, a line of the text; an import never writes policies the policy
// loader refuses; policies come exactly when there is no error; and the same text read twice
// gives the same diagnostics and the same policies.

#include <algorithm>
#include <string_view>

#include "formats/import/import_common.h"
#include "fuzz/fuzz_check.h"
#include "ratelab/policy_file.h"

namespace ratelab::fuzz {

/// Checks `read`'s properties on `text`; `read()` imports `text` and returns its ImportResult.
template <typename Read>
void checkImport(const char* harness, std::string_view text, Read read) {
    const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
    const formats::ImportResult first = read();
    for (const Diagnostic& d : first.diagnostics) {
        require(!d.message.empty(), harness, "a diagnostic without a message");
        require(d.line <= lines, harness, "a diagnostic after the text's last line");
        require(!d.message.starts_with(formats::kImportedPoliciesDoNotLoad), harness,
                "the policies an import wrote do not load: " + d.message);
    }
    require(first.policies.has_value() != hasErrors(first.diagnostics), harness,
            "policies alongside an error, or neither");
    const formats::ImportResult second = read();
    require(formatDiagnostics(first.diagnostics) == formatDiagnostics(second.diagnostics), harness,
            "the same text gave other diagnostics");
    require(first.policies == second.policies, harness, "the same text gave other policies");
}

}  // namespace ratelab::fuzz
