#pragma once

// An open-addressing hash table of (64-bit fingerprint, small state) slots: linear probing,
// "fastrange" placement so capacities need not be powers of two, backward-shift deletion (no
// tombstones), growth by a quarter while the table is small and by an eighth once it is large.
// Written here rather than taken from a library because bytes per key is a product target:
// power-of-two tables (absl::flat_hash_map, std::unordered_map's nodes) spend up to twice the
// memory at unlucky sizes, while a large table here runs 80 to 90 % full, 18 to 20 bytes per
// live key for a 16-byte slot. Not thread-safe; the memory store guards each table with its
// shard's lock.

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace ratelab::memory {

/// Where a fingerprint would live in a table of `capacity` slots: fastrange, a multiply and a
/// shift instead of a modulo.
inline std::uint64_t homeSlot(std::uint64_t fingerprint, std::uint64_t capacity) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(fingerprint) * capacity) >>
                                      64);
}

/// Slot arrays of 64 KiB and more get their own anonymous mapping, returned to the kernel when
/// the table grows past it (from malloc's heap, freed arrays would stay resident as
/// fragmentation). Mappings of 2 MiB and more start at a 2 MiB boundary with transparent huge
/// pages requested, so each whole 2 MiB of the array sits in one TLB entry (one huge page covers
/// 131,072 16-byte slots). A mapping is exactly as long as the array, rounded to 4 KiB: only the
/// tail past the last 2 MiB boundary stays on small pages, and nothing is wasted.
class SlotMemory {
public:
    static void* allocate(std::size_t bytes) {
        if (bytes < kMapThreshold) return std::calloc(1, bytes);
        const std::size_t length = roundUp(bytes, kSmallPage);
        const std::size_t alignment = length >= kHugePage ? kHugePage : kSmallPage;
        // Over-map by the alignment, then give back what lies outside the aligned range.
        const std::size_t span = length + alignment - kSmallPage;
        void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw == MAP_FAILED) return nullptr;
        const auto start = reinterpret_cast<std::uintptr_t>(raw);
        const std::uintptr_t aligned = roundUp(start, alignment);
        if (aligned > start) munmap(raw, aligned - start);
        const std::uintptr_t end = start + span;
        if (end > aligned + length) {
            munmap(reinterpret_cast<void*>(aligned + length), end - aligned - length);
        }
        void* p = reinterpret_cast<void*>(aligned);
        if (alignment == kHugePage) madvise(p, length, MADV_HUGEPAGE);
        return p;  // zero-filled by the kernel
    }
    static void release(void* p, std::size_t bytes) {
        if (!p) return;
        if (bytes < kMapThreshold) {
            std::free(p);
        } else {
            munmap(p, roundUp(bytes, kSmallPage));
        }
    }

private:
    static constexpr std::size_t kSmallPage = 4096;
    static constexpr std::size_t kMapThreshold = 64u << 10;
    static constexpr std::size_t kHugePage = 2u << 20;
    static constexpr std::size_t roundUp(std::size_t n, std::size_t unit) {
        return (n + unit - 1) / unit * unit;
    }
};

/// REQUIRES: State is trivially copyable; fingerprint 0 is reserved for empty slots (callers
/// map a computed 0 to 1).
/// `kMaxLoadPercent`: the load past which a small table grows, by a quarter (40-50 % full at
/// 50); `kLargeMaxLoadPercent`: the same for a large one, which grows by an eighth (80-90 % full
/// at 90). A table mostly asked about keys it lacks (a budget scope under rotation) wants both
/// lower, since a miss walks the whole probe run.
/// Where a table becomes large (`largeBytes`) is its owner's to say, on each call that sizes the
/// table, not kept in it: a table stays three words, since the memory store's cache-line-aligned
/// shards hold one beside their lock and limit (docs/BENCHMARKS.md, "Why the code is as it is"),
/// and the store's bound depends on its shard count.
template <class State, int kMaxLoadPercent = 50, int kLargeMaxLoadPercent = 90>
class FlatTable {
    static_assert(std::is_trivially_copyable_v<State>);

public:
    struct Slot {
        std::uint64_t fingerprint;  ///< 0: empty
        State state;
    };

    static constexpr std::uint64_t kMinCapacity = 8;

    FlatTable() = default;
    ~FlatTable() { SlotMemory::release(slots_, capacity_ * sizeof(Slot)); }
    FlatTable(const FlatTable&) = delete;
    FlatTable& operator=(const FlatTable&) = delete;
    FlatTable(FlatTable&& other) noexcept { swap(other); }
    FlatTable& operator=(FlatTable&& other) noexcept {
        swap(other);
        return *this;
    }

    std::uint64_t size() const { return size_; }
    std::uint64_t capacity() const { return capacity_; }
    std::size_t bytes() const { return capacity_ * sizeof(Slot); }
    /// Whether the table is large (`largeBytes` and more) and so runs fuller.
    bool large(std::size_t largeBytes) const { return large(capacity_, largeBytes); }

    /// The slot holding `fingerprint`, or null.
    Slot* find(std::uint64_t fingerprint) {
        if (capacity_ == 0) return nullptr;
        std::uint64_t i = homeSlot(fingerprint, capacity_);
        for (;;) {
            Slot& s = slots_[i];
            if (s.fingerprint == fingerprint) return &s;
            if (s.fingerprint == 0) return nullptr;
            if (++i == capacity_) i = 0;
        }
    }

    /// True when the next insert() would grow (and so rebuild) the table.
    bool wouldGrow(std::size_t largeBytes) const {
        return (size_ + 1) * 100 > capacity_ * maxLoadPercent(capacity_, largeBytes);
    }

    /// The capacity the table grows to: a quarter more while small, an eighth once large.
    std::uint64_t grownCapacity(std::size_t largeBytes) const {
        if (capacity_ < kMinCapacity) return kMinCapacity;
        return capacity_ + capacity_ / (large(capacity_, largeBytes) ? 8 : 4);
    }

    /// Inserts a slot for a fingerprint known to be absent, with `initial` state; grows when
    /// the load would pass the maximum. Returns null only when memory cannot be had.
    /// Invalidates pointers to other slots when it grows.
    Slot* insert(std::uint64_t fingerprint, const State& initial, std::size_t largeBytes) {
        if (wouldGrow(largeBytes) &&
            !rebuild(grownCapacity(largeBytes), largeBytes, [](const Slot&) { return true; })) {
            return nullptr;
        }
        return place(fingerprint, initial);
    }

    /// Removes the slot, shifting later entries of its probe run back (no tombstones).
    /// REQUIRES: `slot` points into this table.
    void erase(Slot* slot) {
        std::uint64_t hole = static_cast<std::uint64_t>(slot - slots_);
        std::uint64_t j = hole;
        for (;;) {
            if (++j == capacity_) j = 0;
            Slot& next = slots_[j];
            if (next.fingerprint == 0) break;
            std::uint64_t home = homeSlot(next.fingerprint, capacity_);
            // `next` may fill the hole unless its home lies strictly after the hole (cyclically
            // within (hole, j]), where moving it would put it before its home.
            bool homeAfterHole =
                hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
            if (!homeAfterHole) {
                slots_[hole] = next;
                hole = j;
            }
        }
        slots_[hole].fingerprint = 0;
        --size_;
    }

    /// Removes `slot` and every later slot of its probe run (up to the next empty slot) that
    /// drop(slot) selects, in two passes over the run: erase() once per slot would shift the
    /// rest of the run back each time, k^2/2 moves for k slots. drop() runs exactly once per
    /// later slot of the run, so it may release what a dropped slot owns. Returns how many
    /// slots went (at least `slot`). Invalidates pointers into the run.
    /// REQUIRES: `slot` points into this table.
    template <class Drop>
    std::uint64_t eraseRun(Slot* slot, Drop&& drop) {
        const std::uint64_t first = static_cast<std::uint64_t>(slot - slots_);
        slot->fingerprint = 0;
        std::uint64_t removed = 1;
        std::uint64_t end = first;  // the empty slot that ends the run
        for (;;) {
            if (++end == capacity_) end = 0;
            Slot& s = slots_[end];
            if (s.fingerprint == 0) break;
            if (drop(s)) {
                s.fingerprint = 0;
                ++removed;
            }
        }
        size_ -= removed;
        // The run now has holes. Each survivor, in run order, is placed again from its home:
        // the first free slot from there is at or before its old one, and a lookup from its
        // home meets no hole before it.
        for (std::uint64_t i = first; i != end; i = i + 1 == capacity_ ? 0 : i + 1) {
            if (slots_[i].fingerprint == 0) continue;
            const Slot moving = slots_[i];
            slots_[i].fingerprint = 0;
            --size_;
            place(moving.fingerprint, moving.state);
        }
        return removed;
    }

    /// Rebuilds into `capacity` slots (at least enough for every current slot at the max load),
    /// keeping the slots for which keep(slot) is true. keep() runs exactly once per slot, so it
    /// may release what a dropped slot owns. Returns false, changing nothing, on OOM.
    template <class Keep>
    bool rebuild(std::uint64_t capacity, std::size_t largeBytes, Keep&& keep) {
        const std::uint64_t floor = capacityFor(size_, largeBytes);
        if (capacity < floor) capacity = floor;
        if (capacity < kMinCapacity) capacity = kMinCapacity;
        auto* fresh = static_cast<Slot*>(SlotMemory::allocate(capacity * sizeof(Slot)));
        if (!fresh) return false;
        Slot* old = slots_;
        std::uint64_t oldCapacity = capacity_;
        // Atomic stores pair with prefetchUnlocked(), which reads these two without the lock.
        __atomic_store_n(&slots_, fresh, __ATOMIC_RELAXED);
        __atomic_store_n(&capacity_, capacity, __ATOMIC_RELAXED);
        size_ = 0;
        for (std::uint64_t i = 0; i < oldCapacity; ++i) {
            if (old[i].fingerprint != 0 && keep(old[i])) place(old[i].fingerprint, old[i].state);
        }
        SlotMemory::release(old, oldCapacity * sizeof(Slot));
        return true;
    }

    /// Calls f(slot) for every occupied slot.
    template <class F>
    void forEach(F&& f) {
        for (std::uint64_t i = 0; i < capacity_; ++i) {
            if (slots_[i].fingerprint != 0) f(slots_[i]);
        }
    }
    template <class F>
    void forEach(F&& f) const {
        for (std::uint64_t i = 0; i < capacity_; ++i) {
            if (slots_[i].fingerprint != 0) f(slots_[i]);
        }
    }

    /// The occupied slot at or after `index` (wrapping), or null when empty. For incremental
    /// sweeps; `index` is updated to the slot's position.
    Slot* occupiedFrom(std::uint64_t& index) {
        if (size_ == 0) return nullptr;
        if (index >= capacity_) index = 0;
        while (slots_[index].fingerprint == 0) {
            if (++index == capacity_) index = 0;
        }
        return &slots_[index];
    }

    /// Hints the CPU to bring in the home slot of `fingerprint`. Safe without the table's lock
    /// (a prefetch of a stale array is harmless), so the cache miss overlaps taking the lock and
    /// the work of previous calls.
    void prefetchUnlocked(std::uint64_t fingerprint) const {
        Slot* slots = __atomic_load_n(&slots_, __ATOMIC_RELAXED);
        std::uint64_t capacity = __atomic_load_n(&capacity_, __ATOMIC_RELAXED);
        if (capacity == 0) return;
        const auto home = reinterpret_cast<std::uintptr_t>(slots) +
                          homeSlot(fingerprint, capacity) * sizeof(Slot);
        __builtin_prefetch(reinterpret_cast<const void*>(home), 1);
        // A large table's probe walks run longer (it runs fuller) and often cross into the next
        // cache line: bring that in too (past the array's end, a prefetch is harmless). In a
        // small table it is mostly in cache already, and asking costs nothing measurable.
        __builtin_prefetch(reinterpret_cast<const void*>(home + 64), 1);
    }

private:
    static bool large(std::uint64_t capacity, std::size_t largeBytes) {
        return capacity * sizeof(Slot) >= largeBytes;
    }
    static int maxLoadPercent(std::uint64_t capacity, std::size_t largeBytes) {
        return large(capacity, largeBytes) ? kLargeMaxLoadPercent : kMaxLoadPercent;
    }
    /// The least capacity that holds `n` slots within its maximum load.
    static std::uint64_t capacityFor(std::uint64_t n, std::size_t largeBytes) {
        const std::uint64_t atLarge =
            (n * 100 + kLargeMaxLoadPercent - 1) / kLargeMaxLoadPercent + 1;
        if (large(atLarge, largeBytes)) return atLarge;
        return (n * 100 + kMaxLoadPercent - 1) / kMaxLoadPercent + 1;
    }

    Slot* place(std::uint64_t fingerprint, const State& state) {
        std::uint64_t i = homeSlot(fingerprint, capacity_);
        while (slots_[i].fingerprint != 0) {
            if (++i == capacity_) i = 0;
        }
        slots_[i].fingerprint = fingerprint;
        slots_[i].state = state;
        ++size_;
        return &slots_[i];
    }

    void swap(FlatTable& other) noexcept {
        std::swap(slots_, other.slots_);
        std::swap(capacity_, other.capacity_);
        std::swap(size_, other.size_);
    }

    Slot* slots_ = nullptr;
    std::uint64_t capacity_ = 0;
    std::uint64_t size_ = 0;
};

}  // namespace ratelab::memory
