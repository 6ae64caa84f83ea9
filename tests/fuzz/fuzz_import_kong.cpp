// Kong declarative configuration text (kong.yml), read as YAML and mapped to policies (services,
// routes, rate-limiting plugins and their scopes). The properties checked are every importer's:
// fuzz/fuzz_import_check.h.

#include "formats/import/kong/kong_import.h"
#include "fuzz/fuzz_import_check.h"

using namespace ratelab;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
    const std::string_view text = fuzz::text(data, size);
    fuzz::checkImport("fuzz_import_kong", text,
                      [&] { return formats::kong::importKongText(text, "kong.yml"); });
    return 0;
}
