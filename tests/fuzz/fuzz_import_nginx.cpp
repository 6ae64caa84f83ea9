// nginx configuration text, read with nginx's grammar and mapped to policies (includes not
// followed). The properties checked are every importer's: fuzz/fuzz_import_check.h.

#include "formats/import/nginx/nginx_import.h"
#include "fuzz/fuzz_import_check.h"

using namespace ratelab;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
    const std::string_view text = fuzz::text(data, size);
    fuzz::checkImport("fuzz_import_nginx", text,
                      [&] { return formats::nginx::importNginxText(text, "fuzz.conf"); });
    return 0;
}
