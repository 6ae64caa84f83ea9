#pragma once

// Deterministic key sets for the benchmarks: n random 16-byte binary keys and a random visiting
// order, so the timed loop does no random-number work.

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string_view>
#include <vector>

namespace ratelab::bench {

struct KeySet {
    static constexpr std::size_t kOrderLength = 1u << 22;

    std::vector<std::array<char, 16>> keys;
    std::vector<std::string_view> views;  ///< views of `keys`
    std::vector<std::uint32_t> order;     ///< kOrderLength indices into keys

    std::string_view key(std::size_t i) const { return views[order[i & (kOrderLength - 1)]]; }

    /// The set of `n` keys; built once per process and shared.
    static const KeySet& of(std::size_t n) {
        static std::mutex mutex;
        static std::map<std::size_t, std::unique_ptr<KeySet>> sets;
        std::lock_guard<std::mutex> lock(mutex);
        auto& set = sets[n];
        if (!set) {
            set = std::make_unique<KeySet>();
            std::mt19937_64 random(n);
            set->keys.resize(n);
            for (auto& k : set->keys) {
                for (std::size_t b = 0; b < k.size(); b += 8) {
                    std::uint64_t r = random();
                    for (std::size_t j = 0; j < 8; ++j)
                        k[b + j] = static_cast<char>(r >> (8 * j));
                }
            }
            for (const auto& k : set->keys)
                set->views.emplace_back(k.data(), k.size());
            set->order.resize(kOrderLength);
            for (auto& o : set->order)
                o = static_cast<std::uint32_t>(random() % n);
        }
        return *set;
    }
};

}  // namespace ratelab::bench
