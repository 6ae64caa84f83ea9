// Policy text: load, and for every file that loads, the canonical text round trip (save, load,
// save gives the same bytes and the same set) and the three exports (deterministic, and never
// text alongside a refusal).

#include "fuzz/fuzz_check.h"
#include "formats/policy_export.h"
#include "ratelab/policy_file.h"

using namespace ratelab;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
    constexpr const char* kHarness = "fuzz_policy";
    const PolicyLoadResult loaded = parsePolicyText(fuzz::text(data, size), "fuzz.json");
    for (const Diagnostic& d : loaded.diagnostics)
        fuzz::require(!d.message.empty(), kHarness, "a diagnostic without a message");
    if (!loaded.ok()) return 0;

    const std::string saved = savePolicyText(*loaded.policies);
    const PolicyLoadResult again = parsePolicyText(saved, "saved.json");
    if (!again.ok())
        fuzz::fail(kHarness, "the canonical text of a valid policy does not load:\n" + saved);
    fuzz::require(*again.policies == *loaded.policies, kHarness,
                  "loading the canonical text gives another policy set");
    fuzz::require(savePolicyText(*again.policies) == saved, kHarness,
                  "saving the reloaded set gives other bytes");

    for (formats::ExportTarget target : {formats::ExportTarget::Nginx, formats::ExportTarget::Envoy, formats::ExportTarget::Haproxy}) {
        const formats::ExportResult first = formats::exportPolicySet(*loaded.policies, target);
        const formats::ExportResult second = formats::exportPolicySet(*loaded.policies, target);
        fuzz::require(first.text == second.text, kHarness, "an export is not deterministic");
        fuzz::require(first.ok() != first.text.empty(), kHarness,
                      "an export wrote text and refused, or wrote nothing and did not refuse");
        for (const formats::ExportNote& note : first.notes)
            fuzz::require(!note.message.empty(), kHarness, "an export note without a message");
    }
    return 0;
}
