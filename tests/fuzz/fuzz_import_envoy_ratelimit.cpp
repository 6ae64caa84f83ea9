// envoyproxy/ratelimit's YAML and, after a "---" line, the Envoy route configuration whose
// rate_limits actions build the descriptors (as `export --to envoy-ratelimit` writes them):
// the route reader and the mapping to policies (the service's YAML alone is fuzz_rls_config's).
// The properties checked are every importer's: fuzz/fuzz_import_check.h.

#include "formats/import/envoy_ratelimit/envoy_rls_import.h"
#include "fuzz/fuzz_import_check.h"

using namespace ratelab;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
    const std::string_view text = fuzz::text(data, size);
    const std::size_t cut = text.find("\n---\n");
    const std::string config(text.substr(0, cut == std::string_view::npos ? text.size() : cut + 1));
    std::optional<formats::envoy::RlsSource> routes;
    if (cut != std::string_view::npos)
        routes = formats::envoy::RlsSource{"routes.yaml", std::string(text.substr(cut + 5))};
    fuzz::checkImport("fuzz_import_envoy_ratelimit", text, [&] {
        return formats::envoy_ratelimit::importEnvoyRatelimitText({{"ratelimit.yaml", config}},
                                                                  routes);
    });
    return 0;
}
