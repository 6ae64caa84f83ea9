// nginx configuration text: read with nginx's grammar and mapped to policies (includes not
// followed). Every diagnostic has a message and, if it has a line, a line of the text; the same
// text gives the same diagnostics and policies; and a configuration that maps to policies gives
// a set the policy loader accepts.

#include <algorithm>

#include "formats/import/nginx/nginx_import.h"
#include "formats/import/import_common.h"
#include "fuzz/fuzz_check.h"
#include "ratelab/policy_file.h"

using namespace ratelab;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
    constexpr const char* kHarness = "fuzz_import_nginx";
    const std::string_view text = fuzz::text(data, size);
    const formats::ImportResult first = formats::nginx::importNginxText(text, "fuzz.conf");
    const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
    for (const Diagnostic& d : first.diagnostics) {
        fuzz::require(!d.message.empty(), kHarness, "a diagnostic without a message");
        fuzz::require(d.line <= lines, kHarness, "a diagnostic after the text's last line");
        fuzz::require(!d.message.starts_with(formats::kImportedPoliciesDoNotLoad), kHarness,
                      "the policies an import wrote do not load: " + d.message);
    }
    fuzz::require(first.policies.has_value() != hasErrors(first.diagnostics), kHarness,
                  "policies alongside an error, or neither");
    const formats::ImportResult second = formats::nginx::importNginxText(text, "fuzz.conf");
    fuzz::require(formatDiagnostics(first.diagnostics) == formatDiagnostics(second.diagnostics),
                  kHarness, "the same text gave other diagnostics");
    fuzz::require(first.policies == second.policies, kHarness, "the same text gave other policies");
    return 0;
}
