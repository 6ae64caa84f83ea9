#pragma once

// What the memory store's tables share: the hard cap on live buckets, the memory buckets own
// beyond their slots (the sliding log's rings), and the earliest moment a full store can hope
// to find an idle bucket. Thread-safe (atomics; the sweep itself is the store's).

#include <atomic>
#include <cstdint>
#include <limits>

#include "ratelab/limit.h"

namespace ratelab::memory {

class StoreAccounts {
public:
    StoreAccounts(std::int64_t maxBuckets, std::uint64_t seed)
        : maxBuckets_(maxBuckets), seed_(seed) {}
    virtual ~StoreAccounts() = default;

    std::uint64_t seed() const { return seed_; }
    std::int64_t maxBuckets() const { return maxBuckets_; }
    std::int64_t liveBuckets() const { return live_.load(std::memory_order_relaxed); }
    std::int64_t ownedBytes() const { return ownedBytes_.load(std::memory_order_relaxed); }

    /// Takes one unit of the live-bucket cap; false when the store is full.
    bool reserveBucket() {
        std::int64_t live = live_.load(std::memory_order_relaxed);
        while (live < maxBuckets_) {
            if (live_.compare_exchange_weak(live, live + 1, std::memory_order_relaxed)) return true;
        }
        return false;
    }
    void releaseBuckets(std::int64_t n) { live_.fetch_sub(n, std::memory_order_relaxed); }
    void addOwnedBytes(std::int64_t n) { ownedBytes_.fetch_add(n, std::memory_order_relaxed); }

    /// A new bucket goes idle at `t`: a full store may sweep from then on.
    void noteIdleAt(Nanos t) {
        Nanos next = nextSweep_.load(std::memory_order_relaxed);
        while (t < next && !nextSweep_.compare_exchange_weak(next, t, std::memory_order_relaxed)) {
        }
    }

    /// Evicts idle state in every table; skipped while nothing can have become idle.
    /// REQUIRES: the caller holds no shard lock.
    virtual void sweepAll(Nanos now) = 0;

protected:
    Nanos nextSweep() const { return nextSweep_.load(std::memory_order_relaxed); }
    void setNextSweep(Nanos t) { nextSweep_.store(t, std::memory_order_relaxed); }

private:
    const std::int64_t maxBuckets_;
    const std::uint64_t seed_;
    std::atomic<std::int64_t> live_{0};
    std::atomic<std::int64_t> ownedBytes_{0};
    std::atomic<Nanos> nextSweep_{std::numeric_limits<Nanos>::min()};
};

}  // namespace ratelab::memory
