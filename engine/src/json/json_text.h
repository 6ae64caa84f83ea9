#pragma once

// Writing small JSON texts by hand on hot paths (problem bodies, log lines), where building a
// document object per request would cost more than the text itself.

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace ratelab::json {

/// Appends `text` as JSON string contents (without the quotes): '"', '\' and control
/// characters escaped.
inline void appendJsonEscaped(std::string& out, std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    for (unsigned char c : text) {
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(static_cast<char>(c));
        } else if (c < 0x20) {
            out += "\\u00";
            out.push_back(kHex[c >> 4]);
            out.push_back(kHex[c & 15]);
        } else {
            out.push_back(static_cast<char>(c));
        }
    }
}

/// Appends `text` as a quoted JSON string.
inline void appendJsonString(std::string& out, std::string_view text) {
    out.push_back('"');
    appendJsonEscaped(out, text);
    out.push_back('"');
}

inline void appendInt(std::string& out, std::int64_t value) {
    char buffer[24];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    // (pointer, length): the iterator-pair append goes through a general replace, and every
    // header number of every request is appended here.
    out.append(buffer, static_cast<std::size_t>(end - buffer));
}

}  // namespace ratelab::json
