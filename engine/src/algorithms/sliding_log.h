#pragma once

// Sliding window log (exact): one timestamp per admitted unit; a request of cost c passes when
// the units admitted in (now - W, now] plus c fit the quota. Memory grows with the quota, which
// is why it is the exact reference and not the default.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "ratelab/limit.h"

namespace ratelab::algorithms {

/// A ring of timestamps, oldest first, allocated as one block. Not thread-safe.
class LogRing {
public:
    static LogRing* create(std::uint32_t capacity) {
        void* memory = std::malloc(sizeof(LogRing) + sizeof(Nanos) * capacity);
        if (!memory) return nullptr;
        return new (memory) LogRing(capacity);
    }
    static void destroy(LogRing* ring) { std::free(ring); }

    std::uint32_t size() const { return size_; }
    std::uint32_t capacity() const { return capacity_; }
    Nanos at(std::uint32_t i) const { return entries()[(head_ + i) % capacity_]; }  ///< 0: oldest
    Nanos newest() const { return at(size_ - 1); }
    void popOldest() {
        head_ = (head_ + 1) % capacity_;
        --size_;
    }
    /// REQUIRES: size() < capacity().
    void push(Nanos t) {
        entries()[(head_ + size_) % capacity_] = t;
        ++size_;
    }
    /// A ring with room for `capacity` holding the same entries; frees `ring`. Null on OOM.
    static LogRing* grow(LogRing* ring, std::uint32_t capacity) {
        LogRing* bigger = create(capacity);
        if (!bigger) return nullptr;
        for (std::uint32_t i = 0; i < ring->size_; ++i)
            bigger->push(ring->at(i));
        destroy(ring);
        return bigger;
    }
    std::size_t bytes() const { return sizeof(LogRing) + sizeof(Nanos) * capacity_; }

private:
    explicit LogRing(std::uint32_t capacity) : capacity_(capacity) {}
    Nanos* entries() { return reinterpret_cast<Nanos*>(this + 1); }
    const Nanos* entries() const { return reinterpret_cast<const Nanos*>(this + 1); }

    std::uint32_t head_ = 0;
    std::uint32_t size_ = 0;
    std::uint32_t capacity_;
    [[maybe_unused]] std::uint32_t padding_ = 0;  // entries() starts 8-byte aligned
};

struct SlidingLogState {
    LogRing* ring = nullptr;  ///< null: never used (or nothing live); owned by the state's holder
};

inline Nanos slidingLogIdleAt(const SlidingLogState& s, Nanos window) {
    if (!s.ring || s.ring->size() == 0) return std::numeric_limits<Nanos>::min();
    return s.ring->newest() + window;
}

inline bool isIdle(const SlidingLogState& s, Nanos now, Nanos window) {
    return slidingLogIdleAt(s, window) <= now;
}

/// REQUIRES: 1 <= limit.capacity <= UINT32_MAX, limit.window >= 1 ms, cost >= 1.
/// Sets `outOfMemory` and refuses when the ring cannot grow.
inline Decision slidingLogConsume(SlidingLogState& state, Nanos now, std::int64_t cost,
                                  const Limit& limit, bool& outOfMemory) {
    const Nanos w = limit.window;
    const std::int64_t quota = limit.capacity;
    outOfMemory = false;
    // Entries at or before now - W have left the window. Pruning changes nothing observable.
    LogRing* ring = state.ring;
    while (ring && ring->size() > 0 && ring->at(0) <= now - w)
        ring->popOldest();
    const std::int64_t live = ring ? ring->size() : 0;
    Decision d;
    d.limit = quota;
    d.remaining = std::max<std::int64_t>(0, quota - live);
    d.resetAfter = live > 0 ? std::max<Nanos>(0, ring->newest() + w - now) : 0;
    if (cost > quota) {
        d.reason = DenyReason::CostExceedsCapacity;
        return d;
    }
    if (live + cost > quota) {
        d.reason = DenyReason::OverLimit;
        // The (live + cost - quota)-th oldest entry must leave first.
        const Nanos leaving = ring->at(static_cast<std::uint32_t>(live + cost - quota - 1));
        d.retryAfter = std::max<Nanos>(1, leaving + w - now);
        return d;
    }
    const std::uint32_t needed = static_cast<std::uint32_t>(live + cost);
    if (!ring || ring->capacity() < needed) {
        // Grow geometrically, never past the quota.
        std::uint32_t capacity = ring ? ring->capacity() : 4;
        while (capacity < needed)
            capacity = capacity * 2;
        capacity = static_cast<std::uint32_t>(std::min<std::int64_t>(capacity, quota));
        LogRing* grown = ring ? LogRing::grow(ring, capacity) : LogRing::create(capacity);
        if (!grown) {
            outOfMemory = true;
            d.reason = DenyReason::OverLimit;
            return d;
        }
        ring = grown;
        state.ring = ring;
    }
    // Keep the ring sorted when the clock steps back: stamp with the newest time seen, which
    // only ever makes the entry leave later (never admits extra).
    const Nanos stamp = ring->size() > 0 ? std::max(now, ring->newest()) : now;
    for (std::int64_t i = 0; i < cost; ++i)
        ring->push(stamp);
    d.allowed = true;
    d.remaining = quota - (live + cost);
    d.resetAfter = stamp + w - now;
    return d;
}

}  // namespace ratelab::algorithms
