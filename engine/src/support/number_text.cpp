#include "ratelab/number_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace ratelab {

namespace {

// Large enough for any double in fixed notation with 30 decimals: 309 digits, a sign, a point.
constexpr int kBufferBytes = 352;

std::string general(double x, int significant) {
    char buffer[kBufferBytes];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, x, std::chars_format::general,
                                   std::clamp(significant, 1, 17));
    return std::string(buffer, ec == std::errc() ? end : buffer);
}

}  // namespace

std::string numberText(double x) {
    if (std::isfinite(x) && std::floor(x) == x && std::fabs(x) < 1e15) return fixedText(x, 0);
    if (!std::isfinite(x)) return general(x, 1);
    std::string text;
    for (int significant = 1; significant <= 17; ++significant) {
        text = general(x, significant);
        double back = 0;
        std::from_chars(text.data(), text.data() + text.size(), back);
        if (back == x) break;
    }
    return text;
}

std::string numberText(double x, int significant) {
    return general(x, significant);
}

std::string fixedText(double x, int decimals) {
    char buffer[kBufferBytes];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, x, std::chars_format::fixed,
                                   std::clamp(decimals, 0, 30));
    return std::string(buffer, ec == std::errc() ? end : buffer);
}

}  // namespace ratelab
