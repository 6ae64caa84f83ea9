#include "algorithms/algorithm_names.h"

namespace ratelab {

std::string_view algorithmName(Algorithm algorithm) {
    for (const auto& [name, a] : algorithms::kAlgorithmNames) {
        if (a == algorithm) return name;
    }
    return "unknown";
}

std::optional<Algorithm> parseAlgorithm(std::string_view name) {
    for (const auto& [n, a] : algorithms::kAlgorithmNames) {
        if (n == name) return a;
    }
    return std::nullopt;
}

}  // namespace ratelab
