// Traefik dynamic configuration text, read both as YAML and as TOML and mapped to policies
// (routers, rule expressions, rateLimit and chain middlewares).
// The properties checked, for each reading, are every importer's: fuzz/fuzz_import_check.h.

#include <string>

#include "formats/import/traefik/traefik_import.h"
#include "fuzz/fuzz_import_check.h"

using namespace ratelab;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
    const std::string_view text = fuzz::text(data, size);
    for (const bool toml : {false, true}) {
        const std::string name = toml ? "fuzz.toml" : "fuzz.yaml";
        fuzz::checkImport("fuzz_import_traefik", text,
                          [&] { return formats::traefik::importTraefikText(text, name, toml); });
    }
    return 0;
}
