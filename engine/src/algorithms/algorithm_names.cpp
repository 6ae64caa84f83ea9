#include <array>
#include <utility>

#include "ratelab/limit.h"

namespace ratelab {

namespace {
constexpr std::array<std::pair<Algorithm, std::string_view>, 6> kNames{{
    {Algorithm::TokenBucket, "token_bucket"},
    {Algorithm::Gcra, "gcra"},
    {Algorithm::FixedWindow, "fixed_window"},
    {Algorithm::SlidingWindow, "sliding_window"},
    {Algorithm::SlidingLog, "sliding_log"},
    {Algorithm::LeakyBucket, "leaky_bucket"},
}};
}  // namespace

std::string_view algorithmName(Algorithm algorithm) {
    for (const auto& [a, name] : kNames) {
        if (a == algorithm) return name;
    }
    return "unknown";
}

std::optional<Algorithm> parseAlgorithm(std::string_view name) {
    for (const auto& [a, n] : kNames) {
        if (n == name) return a;
    }
    return std::nullopt;
}

}  // namespace ratelab
