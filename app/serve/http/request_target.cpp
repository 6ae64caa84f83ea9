#include "serve/http/request_target.h"

namespace ratelab::serve {

namespace {

int hexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Writes `byte` as an upper-case percent-escape.
void appendEscape(std::string& segment, unsigned char byte) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    segment += '%';
    segment += kHex[byte >> 4];
    segment += kHex[byte & 15];
}

// Drops the last segment written to `out` (and its slash), never the leading "/".
void popSegment(std::string& out) {
    while (out.size() > 1 && out.back() != '/')
        out.pop_back();
    if (out.size() > 1) out.pop_back();
}

}  // namespace

bool normalizedPath(std::string_view target, std::string& out, std::string_view* whyNot) {
    auto refuse = [&](std::string_view why) {
        if (whyNot) *whyNot = why;
        return false;
    };
    out.clear();
    if (target == "*") {
        out.assign(1, '*');
        return true;
    }
    if (target.starts_with("http://") || target.starts_with("https://")) {
        const std::size_t authority = target.find("//") + 2;
        const std::size_t path = target.find_first_of("/?#", authority);
        target = path == std::string_view::npos || target[path] != '/' ? std::string_view("/")
                                                                       : target.substr(path);
    }
    if (target.empty() || target.front() != '/') return refuse("the target is not a path");
    target = target.substr(0, target.find_first_of("?#"));

    // One pass: decode, then resolve each segment as it ends.
    out.reserve(target.size());
    std::string segment;
    auto endSegment = [&] {
        if (segment == ".") {
            // nothing: "/a/./b" is "/a/b"
        } else if (segment == "..") {
            popSegment(out);
        } else if (!segment.empty()) {
            if (out.empty() || out.back() != '/') out.push_back('/');
            out += segment;
        }
        segment.clear();
    };
    for (std::size_t i = 0; i < target.size(); ++i) {
        char c = target[i];
        if (c == '%') {
            if (i + 2 >= target.size()) return refuse("a malformed percent-escape");
            const int high = hexValue(target[i + 1]);
            const int low = hexValue(target[i + 2]);
            if (high < 0 || low < 0) return refuse("a malformed percent-escape");
            const int byte = high * 16 + low;
            i += 2;
            c = static_cast<char>(byte);
            if (byte < 0x20 || byte == 0x7f)
                return refuse("an escape decodes to a control character");
            // Bytes that would mean something else unescaped ('%', and '?' or '#', which end
            // a path) stay escaped, like non-ASCII ones, so the result normalises to itself.
            if (byte >= 0x80 || c == '%' || c == '?' || c == '#') {
                appendEscape(segment, static_cast<unsigned char>(byte));
                continue;
            }
            if (c != '/') {
                segment += c;
                continue;
            }
        } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            return refuse("a control character in the path");
        } else if (static_cast<unsigned char>(c) >= 0x80) {
            appendEscape(segment, static_cast<unsigned char>(c));
            continue;
        }
        if (c == '/') {
            endSegment();
            if (out.empty()) out.push_back('/');
            continue;
        }
        segment += c;
    }
    const bool trailingSlash = target.size() > 1 && target.back() == '/' && segment.empty();
    const bool endsInDots = segment == "." || segment == "..";
    endSegment();
    if (out.empty()) out.push_back('/');
    // "/a/" and "/a/b/.." keep their trailing slash, as a directory.
    if ((trailingSlash || endsInDots) && out.back() != '/') out.push_back('/');
    return true;
}

}  // namespace ratelab::serve
