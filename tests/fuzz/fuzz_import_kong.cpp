// Kong declarative configuration text (kong.yml), read as YAML and mapped to policies
// (services, routes, rate-limiting plugins and their scopes). Every
// diagnostic has a message and, if it has a line, a line of the text; the same text gives the
// same diagnostics and policies; policies come exactly when there is no error, and the policy
// loader accepts them.

#include <algorithm>

#include "formats/import/kong/kong_import.h"
#include "formats/import/import_common.h"
#include "fuzz/fuzz_check.h"
#include "ratelab/policy_file.h"

using namespace ratelab;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
    constexpr const char* kHarness = "fuzz_import_kong";
    const std::string_view text = fuzz::text(data, size);
    const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
    const formats::ImportResult first = formats::kong::importKongText(text, "kong.yml");
    for (const Diagnostic& d : first.diagnostics) {
        fuzz::require(!d.message.empty(), kHarness, "a diagnostic without a message");
        fuzz::require(d.line <= lines, kHarness, "a diagnostic after the text's last line");
        fuzz::require(!d.message.starts_with(formats::kImportedPoliciesDoNotLoad), kHarness,
                      "the policies an import wrote do not load: " + d.message);
    }
    fuzz::require(first.policies.has_value() != hasErrors(first.diagnostics), kHarness,
                  "policies alongside an error, or neither");
    const formats::ImportResult second = formats::kong::importKongText(text, "kong.yml");
    fuzz::require(formatDiagnostics(first.diagnostics) == formatDiagnostics(second.diagnostics),
                  kHarness, "the same text gave other diagnostics");
    fuzz::require(first.policies == second.policies, kHarness, "the same text gave other policies");
    return 0;
}
