// HAProxy configuration text: lines, sections, tables, ACLs and rules mapped to policies.
// The properties checked are every importer's: fuzz/fuzz_import_check.h.

#include "formats/import/haproxy/haproxy_import.h"
#include "fuzz/fuzz_import_check.h"

using namespace ratelab;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
    const std::string_view text = fuzz::text(data, size);
    fuzz::checkImport("fuzz_import_haproxy", text,
                      [&] { return formats::haproxy::importHaproxyText(text, "fuzz.cfg"); });
    return 0;
}
