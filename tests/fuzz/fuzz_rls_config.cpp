// Envoy's rate limit service configuration (app/formats/envoy): one YAML file. Every diagnostic
// has a message and a position inside the text; reading is deterministic; a file that loads
// decides a call for each of its top-level descriptors (and one it does not know) with an
// answer, never an error, one status per descriptor.

#include <algorithm>
#include <memory>

#include "formats/envoy/rls_config.h"
#include "fuzz/fuzz_check.h"
#include "ratelab/memory_store.h"
#include "serve/rls/rls_decider.h"

using namespace ratelab;
namespace fe = ratelab::formats::envoy;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
    constexpr const char* kHarness = "fuzz_rls_config";
    const std::string text(fuzz::text(data, size));
    const fe::RlsLoadResult loaded = fe::parseRlsConfig({{"fuzz.yaml", text}});
    const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
    for (const Diagnostic& d : loaded.diagnostics) {
        fuzz::require(!d.message.empty(), kHarness, "a diagnostic without a message");
        fuzz::require(d.line >= 1 && d.line <= lines + 1 && d.column >= 1, kHarness,
                      "a diagnostic outside the text: " + formatDiagnostic(d));
    }
    const fe::RlsLoadResult again = fe::parseRlsConfig({{"fuzz.yaml", text}});
    fuzz::require(formatDiagnostics(again.diagnostics) == formatDiagnostics(loaded.diagnostics),
                  kHarness, "reading the same text twice gives other diagnostics");
    if (!loaded.ok()) return 0;

    auto config = std::make_shared<const fe::RlsConfig>(*loaded.config);
    serve::rls::RlsDecider decider(config, makeMemoryStore());
    for (const fe::DomainConfig& domain : config->domains) {
        serve::rls::RlsRequest request;
        request.domain = domain.domain;
        for (const fe::DescriptorNode& node : domain.descriptors) {
            request.descriptors.push_back(
                {{{node.key, node.value.empty() ? "x" : node.value}}, std::nullopt});
            if (request.descriptors.size() == 16) break;
        }
        request.descriptors.push_back({{{"unknown", "y"}}, 0});
        const serve::rls::RlsResult r = decider.decide(request, 1'700'000'000LL * kNanosPerSecond);
        fuzz::require(r.ok(), kHarness,
                      "a call on a loaded configuration failed: " + r.error.message);
        fuzz::require(r.response.statuses.size() == request.descriptors.size(), kHarness,
                      "not one status per descriptor");
    }
    return 0;
}
