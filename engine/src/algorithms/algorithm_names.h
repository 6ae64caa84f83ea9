#pragma once

// The spellings of the algorithms, in policy files, reports and messages alike: the one table
// algorithmName() and parseAlgorithm() (limit.h) and the policy reader and writer read.

#include <array>
#include <string_view>
#include <utility>

#include "ratelab/limit.h"

namespace ratelab::algorithms {

inline constexpr std::array<std::pair<std::string_view, Algorithm>, 7> kAlgorithmNames{{
    {"token_bucket", Algorithm::TokenBucket},
    {"gcra", Algorithm::Gcra},
    {"fixed_window", Algorithm::FixedWindow},
    {"sliding_window", Algorithm::SlidingWindow},
    {"sliding_log", Algorithm::SlidingLog},
    {"leaky_bucket", Algorithm::LeakyBucket},
    {"haproxy_rate", Algorithm::HaproxyRate},
}};

}  // namespace ratelab::algorithms
