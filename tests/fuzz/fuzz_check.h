#pragma once

// What every harness shares: a property check that stops the run with a message. libFuzzer
// records the input that broke the property as a crash, like any sanitizer report.

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace ratelab::fuzz {

[[noreturn]] inline void fail(const char* harness, std::string_view what) {
    std::fprintf(stderr, "%s: property broken: %.*s\n", harness, static_cast<int>(what.size()),
                 what.data());
    std::abort();
}

inline void require(bool ok, const char* harness, std::string_view what) {
    if (!ok) fail(harness, what);
}

inline std::string_view text(const unsigned char* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

}  // namespace ratelab::fuzz
