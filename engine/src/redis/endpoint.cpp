#include "redis/endpoint.h"

#include <charconv>

namespace ratelab::redis {

namespace {

bool parseNumber(std::string_view text, int low, int high, int* out) {
    int value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < low || value > high)
        return false;
    *out = value;
    return true;
}

}  // namespace

bool parseHostPort(std::string_view text, std::string* host, int* port) {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0) return false;
    std::string_view h = text.substr(0, colon);
    if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
    if (h.empty() || !parseNumber(text.substr(colon + 1), 1, 65535, port)) return false;
    host->assign(h);
    return true;
}

}  // namespace ratelab::redis
