#pragma once

// Deterministic key sets for the benchmarks: n distinct 16-byte binary keys visited in a random
// order. A key's bytes are computed from its index into a small buffer, as a server computes a
// request's key from the request in hand: hot in cache, like any key a limiter is asked about.
// Only the visiting order is a table (read sequentially).

#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string_view>
#include <vector>

namespace ratelab::bench {

/// 16 key bytes for index i: two distinct 64-bit words, cheap to compute.
struct KeyBytes {
    std::array<char, 16> bytes;

    explicit KeyBytes(std::uint64_t i) {
        const std::uint64_t a = (i + 1) * 0x9E3779B97F4A7C15ULL;
        const std::uint64_t b = (i ^ 0xD6E8FEB86659FD93ULL) * 0xC2B2AE3D27D4EB4FULL;
        std::memcpy(bytes.data(), &a, 8);
        std::memcpy(bytes.data() + 8, &b, 8);
    }
    std::string_view view() const { return {bytes.data(), bytes.size()}; }
};

struct KeySet {
    static constexpr std::size_t kOrderLength = 1u << 22;

    std::size_t size = 0;
    std::vector<std::uint32_t> order;  ///< kOrderLength indices in [0, size)

    std::uint32_t index(std::size_t i) const { return order[i & (kOrderLength - 1)]; }

    /// The set of `n` keys; built once per process and shared.
    static const KeySet& of(std::size_t n) {
        static std::mutex mutex;
        static std::map<std::size_t, std::unique_ptr<KeySet>> sets;
        std::lock_guard<std::mutex> lock(mutex);
        auto& set = sets[n];
        if (!set) {
            set = std::make_unique<KeySet>();
            set->size = n;
            std::mt19937_64 random(n);
            set->order.resize(kOrderLength);
            for (auto& o : set->order)
                o = static_cast<std::uint32_t>(random() % n);
        }
        return *set;
    }
};

}  // namespace ratelab::bench
