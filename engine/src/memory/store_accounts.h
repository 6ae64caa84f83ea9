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

    /// The index's epoch: 0 while it is off, a new number each time it starts. A shard's
    /// buckets are in the index when the epoch the shard was indexed in (its indexedEpoch) is
    /// the current one (shardIndexed). A shard is indexed under its own lock and the index's
    /// mutex; the index starts and stops only under the mutex. So a shard lock's holder that
    /// reads false may leave the index alone until it lets go (a later start is a new epoch);
    /// one that reads true reads it again under the mutex.
    std::uint32_t fairEpoch() const { return fairEpoch_.load(std::memory_order_relaxed); }
    bool shardIndexed(std::uint32_t indexedEpoch) const {
        return indexedEpoch != 0 && indexedEpoch == fairEpoch();
    }
    /// Whether a new bucket should index a shard (LimitTable::indexSome): the store is past its
    /// high-water mark and the index is off, or it is on with shards left to index.
    bool fairWanted() const {
        return fairBuilding_.load(std::memory_order_relaxed) ||
               (fairEpoch() == 0 && liveBuckets() >= highWater());
    }
    /// Whether shards may be left to index since the index started.
    bool fairBuilding() const { return fairBuilding_.load(std::memory_order_relaxed); }
    /// Starts the index, empty and with no shard indexed, when it is off. REQUIRES:
    /// fairMutex() held.
    void startFairIndex() {
        if (fairEpoch() != 0) return;
        if (++lastEpoch_ == 0) ++lastEpoch_;
        fairEpoch_.store(lastEpoch_, std::memory_order_relaxed);
        fairBuilding_.store(true, std::memory_order_relaxed);
        restartIndexing();
    }
    /// Every shard of every table is indexed. REQUIRES: fairMutex() held.
    void setFairBuilt() { fairBuilding_.store(false, std::memory_order_relaxed); }
    /// Where the index starts, at 7/8 of max_buckets: shard by shard from there, so that it is
    /// whole, or nearly, by the time the store has no room.
    std::int64_t highWater() const { return maxBuckets_ - maxBuckets_ / 8; }
    /// Drops the index once the store is back under a quarter's room, so that a store that was
    /// nearly full once pays its upkeep only while it may be full again. REQUIRES: fairMutex()
    /// held, outside a full store's path.
    void dropFairIndexIfRoomy() {
        if (fairEpoch() != 0 && liveBuckets() < maxBuckets_ - maxBuckets_ / 4) {
            fairIndex_.clear();
            fairEpoch_.store(0, std::memory_order_relaxed);
            fairBuilding_.store(false, std::memory_order_relaxed);
        }
    }
    /// Indexes one shard not yet indexed, of any table, whose lock is free (try_lock): what a
    /// new bucket does for the index while it is building. Ends the building when none is
    /// left. REQUIRES: fairMutex() held, the index on; the caller may hold shard locks.
    virtual void indexNextShard() = 0;

protected:
    /// indexNextShard starts over from the first table. REQUIRES: fairMutex() held.
    virtual void restartIndexing() = 0;
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
    std::atomic<std::uint32_t> fairEpoch_{0};
    std::atomic<bool> fairBuilding_{false};
    std::uint32_t lastEpoch_ = 0;  ///< guarded by fairMutex_
};

}  // namespace ratelab::memory
