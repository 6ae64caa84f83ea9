// Envoy configuration text with the local rate limit filter, read as YAML and mapped to policies
// (filter-level and per-route token buckets). The properties checked are every importer's:
// fuzz/fuzz_import_check.h.

#include "formats/import/envoy_local/envoy_local_import.h"
#include "fuzz/fuzz_import_check.h"

using namespace ratelab;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
    const std::string_view text = fuzz::text(data, size);
    fuzz::checkImport("fuzz_import_envoy_local", text, [&] {
        return formats::envoy_local::importEnvoyLocalText(text, "envoy.yaml");
    });
    return 0;
}
