#include "policy/policy_paths.h"

#include <cstdio>
#include <vector>

namespace ratelab::policy {

namespace {

std::vector<std::string_view> segments(std::string_view path) {
    std::vector<std::string_view> out;
    path.remove_prefix(1);  // the leading '/'
    while (true) {
        std::size_t slash = path.find('/');
        out.push_back(path.substr(0, slash));
        if (slash == std::string_view::npos) break;
        path.remove_prefix(slash + 1);
    }
    return out;
}

void appendLiteral(std::string& out, std::string_view text) {
    for (char c : text) {
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '/' || c == '_' || c == '-';
        if (plain) {
            out.push_back(c);
        } else {
            char buffer[8];
            std::snprintf(buffer, sizeof buffer, "\\x%02x", static_cast<unsigned char>(c));
            out += buffer;
        }
    }
}

}  // namespace

bool checkPathPattern(std::string_view pattern, std::string* whyNot) {
    auto fail = [whyNot](std::string why) {
        if (whyNot) *whyNot = std::move(why);
        return false;
    };
    if (pattern.empty() || pattern.front() != '/') return fail("a pattern starts with \"/\"");
    int doubleStars = 0;
    for (std::string_view segment : segments(pattern)) {
        if (segment.empty()) {
            return fail("empty segment (\"//\" or a trailing \"/\"); write each segment out");
        }
        if (segment == "**") {
            if (++doubleStars > 1) return fail("\"**\" may appear only once in a pattern");
            continue;
        }
        if (segment != "*" && segment.find('*') != std::string_view::npos) {
            return fail("\"*\" must be a whole segment (\"/a/*/b\", not \"/a*\")");
        }
    }
    return true;
}

bool matchesEveryPath(const RouteMatch& match) {
    return match.pathPattern.empty() && (match.pathPrefix.empty() || match.pathPrefix == "/");
}

std::string_view routeText(const RouteMatch& match) {
    return match.pathPattern.empty() ? std::string_view(match.pathPrefix)
                                     : std::string_view(match.pathPattern);
}

std::string pathRegex(const RouteMatch& match, bool allowQuery) {
    std::string out = "^";
    const char* segment = allowQuery ? "[^/?]*" : "[^/]*";
    if (!match.pathPattern.empty()) {
        // RouteMatch: "*" is one segment (possibly empty), "**" zero or more; a trailing "/"
        // in the path is accepted.
        for (std::string_view part : segments(match.pathPattern)) {
            if (part == "**") {
                out += std::string("(/") + segment + ")*";
            } else if (part == "*") {
                out += std::string("/") + segment;
            } else {
                out += "/";
                appendLiteral(out, part);
            }
        }
        out += "/?";
    } else if (matchesEveryPath(match)) {
        out += "/.*";
        return out + "$";
    } else {
        // RouteMatch: the prefix on a segment boundary ("/api" matches "/api" and "/api/x").
        std::string_view prefix = match.pathPrefix;
        if (prefix.size() > 1 && prefix.back() == '/') prefix.remove_suffix(1);
        appendLiteral(out, prefix);
        out += allowQuery ? "(/[^?]*)?" : "(/.*)?";
    }
    if (allowQuery) out += "(\\?.*)?";
    return out + "$";
}

}  // namespace ratelab::policy
