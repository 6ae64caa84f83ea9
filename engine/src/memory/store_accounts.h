#pragma once

// What the memory store's tables share: the hard cap on live buckets, the memory buckets own
// beyond their slots (the sliding log's rings), the earliest moment a full store can hope to
// find an idle bucket, and the fair-share index of which networks hold the buckets. Thread-safe
// (atomics, and the index's mutex; the sweep and the full store's path are the store's).

#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>

#include "memory/fair_index.h"
#include "ratelab/limit.h"
#include "ratelab/store.h"

namespace ratelab::memory {

class LimitTableBase;
struct HashedRequest;

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

    /// Decides `request` on `table` when the store has no room even after a sweep: takes every
    /// shard lock of every table and the index's mutex, and lets the fair-share rule decide
    /// (LimitTableBase::consumeFullLocked). REQUIRES: the caller holds no shard lock.
    virtual void consumeFull(LimitTableBase& table, const ConsumeRequest& request,
                             const HashedRequest& h, ConsumeResult& out) = 0;
    /// Under consumeFull's locks, with the index live: takes the least recently used of
    /// `node`'s own buckets out of the store (the one fresh again soonest; ties by FairPath order,
    /// then limit). False when the node holds none.
    virtual bool evictOwnOf(std::uint32_t node) = 0;

    /// The fair-share index (fair_index.h), guarded by fairMutex(): taken after shard locks,
    /// never before one.
    FairIndex& fairIndex() { return fairIndex_; }
    std::mutex& fairMutex() { return fairMutex_; }

    /// Whether the index is live: it holds every placed bucket and each new or evicted one
    /// must update it. It goes live only under every shard lock and the index's mutex (a full
    /// store's path builds it from the shards' BucketPlaces), and stops only under the mutex:
    /// a shard lock's holder that reads false may leave the index alone until it lets go; one
    /// that reads true reads it again under the mutex.
    bool fairLive() const { return fairLive_.load(std::memory_order_relaxed); }
    void setFairLive() { fairLive_.store(true, std::memory_order_relaxed); }
    /// Drops the index once the store is back under a quarter's room, so that a store that was
    /// full once pays its upkeep only while it may be full again. REQUIRES: fairMutex() held,
    /// outside a full store's path.
    void dropFairIndexIfRoomy() {
        if (fairLive() && liveBuckets() < maxBuckets_ - maxBuckets_ / 4) {
            fairIndex_.clear();
            fairLive_.store(false, std::memory_order_relaxed);
        }
    }

protected:
    Nanos nextSweep() const { return nextSweep_.load(std::memory_order_relaxed); }
    void setNextSweep(Nanos t) { nextSweep_.store(t, std::memory_order_relaxed); }

private:
    const std::int64_t maxBuckets_;
    const std::uint64_t seed_;
    std::atomic<std::int64_t> live_{0};
    std::atomic<std::int64_t> ownedBytes_{0};
    std::atomic<Nanos> nextSweep_{std::numeric_limits<Nanos>::min()};
    std::mutex fairMutex_;
    FairIndex fairIndex_;
    std::atomic<bool> fairLive_{false};
};

}  // namespace ratelab::memory
