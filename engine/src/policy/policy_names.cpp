#include "policy/policy_names.h"

#include <algorithm>
#include <string>

namespace ratelab::policy {

std::string keyPartText(const KeyPart& part) {
    switch (part.kind) {
        case KeyPart::Kind::Route:
            return "route";
        case KeyPart::Kind::Method:
            return "method";
        case KeyPart::Kind::Peer:
            return "peer";
        case KeyPart::Kind::Principal:
            return "principal";
        case KeyPart::Kind::Header:
            return "header:" + part.name;
        case KeyPart::Kind::Attribute:
            return "attribute:" + part.name;
    }
    return "route";
}

bool isTokenChar(char c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool isNameChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
}

bool isValidName(std::string_view name) {
    if (name.empty() || name.size() > 64) return false;
    char first = name.front();
    bool alnum = (first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z') ||
                 (first >= '0' && first <= '9');
    return alnum && std::all_of(name.begin(), name.end(), isNameChar);
}

bool isValidToken(std::string_view token) {
    return !token.empty() && token.size() <= 256 &&
           std::all_of(token.begin(), token.end(), isTokenChar);
}

bool isRouteChar(char c) {
    return c > ' ' && c < 0x7f;
}

bool isValidRoutePath(std::string_view path) {
    return !path.empty() && path.front() == '/' && path.size() <= kMaxRouteBytes &&
           std::all_of(path.begin(), path.end(), isRouteChar);
}

}  // namespace ratelab::policy
