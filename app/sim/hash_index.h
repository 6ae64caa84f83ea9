#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ratelab::sim {

/// Numbers distinct 64-bit hashes densely (0, 1, 2, ... in order of first insert): the
/// simulator's per-request counting of clients and buckets, where std::unordered_map's node per
/// entry cost an allocation and a cache miss a request. Open addressing with linear probing,
/// at most half full; the keys must already be hashes (their low bits pick the slot). clear()
/// is O(1): each slot carries the generation it was written in. Not thread-safe.
class HashIndex {
public:
    struct Found {
        std::uint32_t index;
        bool inserted;  ///< `h` was not in the index before
    };

    Found insert(std::uint64_t h) {
        if ((size_ + 1) * 2 > slots_.size()) grow();
        const std::size_t mask = slots_.size() - 1;
        for (std::size_t i = static_cast<std::size_t>(h) & mask;; i = (i + 1) & mask) {
            Slot& s = slots_[i];
            if (s.generation != generation_) {
                s = Slot{h, generation_, size_};
                return {size_++, true};
            }
            if (s.hash == h) return {s.index, false};
        }
    }

    /// Starts loading the slot insert(h) will look at first, so that a caller with other work
    /// to do before the insert does not wait for it. Forced inline: GCC drops calls to a
    /// function made only of prefetches, taking it for one without effects.
    [[gnu::always_inline]] void prefetch(std::uint64_t h) const {
        if (!slots_.empty())
            __builtin_prefetch(&slots_[static_cast<std::size_t>(h) & (slots_.size() - 1)]);
    }
    std::uint32_t size() const { return size_; }

    /// Forgets every hash; the next insert is numbered 0 again. The table keeps its size.
    void clear() {
        size_ = 0;
        if (++generation_ == 0) {  // after 2^32 clears: reset the stamps once
            for (Slot& s : slots_)
                s.generation = 0;
            generation_ = 1;
        }
    }

private:
    struct Slot {
        std::uint64_t hash = 0;
        std::uint32_t generation = 0;  // 0: never written; the index's starts at 1
        std::uint32_t index = 0;
    };

    void grow() {
        std::vector<Slot> old(std::max<std::size_t>(1024, slots_.size() * 2));
        old.swap(slots_);
        const std::size_t mask = slots_.size() - 1;
        for (const Slot& s : old) {
            if (s.generation != generation_) continue;
            std::size_t i = static_cast<std::size_t>(s.hash) & mask;
            while (slots_[i].generation == generation_)
                i = (i + 1) & mask;
            slots_[i] = s;
        }
    }

    std::vector<Slot> slots_;
    std::uint32_t generation_ = 1;
    std::uint32_t size_ = 0;
};

}  // namespace ratelab::sim
