// Envoy configuration text with the local rate limit filter, read as YAML and mapped
// to policies (filter-level and per-route token buckets). Every
// diagnostic has a message and, if it has a line, a line of the text; the same text gives the
// same diagnostics and policies; policies come exactly when there is no error, and the policy
// loader accepts them.

#include <algorithm>

#include "formats/import/envoy_local/envoy_local_import.h"
#include "formats/import/import_common.h"
#include "fuzz/fuzz_check.h"
#include "ratelab/policy_file.h"

using namespace ratelab;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
    constexpr const char* kHarness = "fuzz_import_envoy_local";
    const std::string_view text = fuzz::text(data, size);
    const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
    const formats::ImportResult first =
        formats::envoy_local::importEnvoyLocalText(text, "envoy.yaml");
    for (const Diagnostic& d : first.diagnostics) {
        fuzz::require(!d.message.empty(), kHarness, "a diagnostic without a message");
        fuzz::require(d.line <= lines, kHarness, "a diagnostic after the text's last line");
        fuzz::require(!d.message.starts_with(formats::kImportedPoliciesDoNotLoad), kHarness,
                      "the policies an import wrote do not load: " + d.message);
    }
    fuzz::require(first.policies.has_value() != hasErrors(first.diagnostics), kHarness,
                  "policies alongside an error, or neither");
    const formats::ImportResult second =
        formats::envoy_local::importEnvoyLocalText(text, "envoy.yaml");
    fuzz::require(formatDiagnostics(first.diagnostics) == formatDiagnostics(second.diagnostics),
                  kHarness, "the same text gave other diagnostics");
    fuzz::require(first.policies == second.policies, kHarness, "the same text gave other policies");
    return 0;
}
