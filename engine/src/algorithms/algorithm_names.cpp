#include "algorithms/algorithm_names.h"

namespace ratelab {

std::string_view algorithmName(Algorithm algorithm) {
    for (const auto& [name, a] : algo::kAlgorithmNames) {
        if (a == algorithm) return name;
    }
    return "unknown";
}

std::optional<Algorithm> parseAlgorithm(std::string_view name) {
    for (const auto& [n, a] : algo::kAlgorithmNames) {
        if (n == name) return a;
    }
    return std::nullopt;
}

}  // namespace ratelab
