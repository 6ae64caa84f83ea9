#pragma once

// Small helpers over RequestView headers shared by the identity code.

#include <span>
#include <string_view>

#include "ratelab/request.h"

namespace ratelab::identity {

/// ASCII case-insensitive equality, as HTTP field names compare.
inline bool headerNameEquals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    if (a == b) return true;  // HTTP/2 and /3 names arrive in lower case, as ours are written
    for (std::size_t k = 0; k < a.size(); ++k) {
        char x = a[k];
        char y = b[k];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x + ('a' - 'A'));
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y + ('a' - 'A'));
        if (x != y) return false;
    }
    return true;
}

/// `value` without leading and trailing spaces and tabs (RFC 9110 optional whitespace).
inline std::string_view trimOws(std::string_view value) {
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
        value.remove_prefix(1);
    }
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
        value.remove_suffix(1);
    return value;
}

/// The first header named `name`, trimmed; empty when absent or blank. An empty credential
/// identifies nobody, so callers treat it as absent rather than as one shared value.
inline std::string_view firstHeaderValue(std::span<const Header> headers, std::string_view name) {
    for (const Header& h : headers) {
        if (headerNameEquals(h.name, name)) return trimOws(h.value);
    }
    return {};
}

}  // namespace ratelab::identity
