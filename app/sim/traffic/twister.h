#pragma once

// The simulator's random bits: std::mt19937_64's sequence, bit for bit, without its cost.
//
// Why not std::mt19937_64 itself: libstdc++ 12 refills the state with a branch on each word's
// low bit, a coin flip the CPU mispredicts half the time, and a rotating-Authorization scenario
// draws twice a request; here the same words are computed without the branch
// (docs/BENCHMARKS.md, "Why the code is as it is").
// Scenario streams and reports depend on every bit, so the sequence must stay the standard's;
// tst_twister compares it with std::mt19937_64 draw for draw.

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace ratelab::sim {

/// MT19937-64 with the parameters [rand.predef] gives std::mt19937_64. A uniform random bit
/// generator, so the standard distributions take it. Not thread-safe.
class Twister64 {
public:
    using result_type = std::uint64_t;

    /// The state std::mt19937_64(seed) starts from.
    explicit Twister64(std::uint64_t seed) {
        state_[0] = seed;
        for (std::size_t i = 1; i < kWords; ++i) {
            const std::uint64_t prev = state_[i - 1];
            state_[i] = kInitMultiplier * (prev ^ (prev >> 62)) + i;
        }
        next_ = kWords;
    }

    static constexpr result_type min() { return 0; }
    static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

    result_type operator()() {
        if (next_ >= kWords) refill();
        std::uint64_t z = state_[next_++];
        z ^= (z >> 29) & 0x5555555555555555ULL;
        z ^= (z << 17) & 0x71d67fffeda60000ULL;
        z ^= (z << 37) & 0xfff7eee000000000ULL;
        return z ^ (z >> 43);
    }

private:
    static constexpr std::size_t kWords = 312;
    static constexpr std::size_t kShift = 156;
    static constexpr std::uint64_t kInitMultiplier = 6364136223846793005ULL;

    // The upper 33 bits of `upper`'s word and the lower 31 of `lower`'s, shifted and twisted
    // into `far`. The low bit selects the twist by a mask, not a branch.
    static std::uint64_t twist(std::uint64_t upper, std::uint64_t lower, std::uint64_t far) {
        const std::uint64_t y = (upper & 0xffffffff80000000ULL) | (lower & 0x7fffffffULL);
        return far ^ (y >> 1) ^ ((std::uint64_t{0} - (y & 1)) & 0xb5026f5aa96619e9ULL);
    }

    void refill() {
        std::size_t k = 0;
        for (; k < kWords - kShift; ++k)
            state_[k] = twist(state_[k], state_[k + 1], state_[k + kShift]);
        for (; k < kWords - 1; ++k)
            state_[k] = twist(state_[k], state_[k + 1], state_[k + kShift - kWords]);
        state_[kWords - 1] = twist(state_[kWords - 1], state_[0], state_[kShift - 1]);
        next_ = 0;
    }

    std::array<std::uint64_t, kWords> state_;
    std::size_t next_;
};

}  // namespace ratelab::sim
