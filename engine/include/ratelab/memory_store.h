#pragma once

#include <cstdint>
#include <memory>

#include "ratelab/store.h"

namespace ratelab {

struct MemoryStoreOptions {
    /// Hard cap on live buckets over every limit. A consumption that needs a new bucket when the
    /// store is full, even after evicting idle buckets, is refused (StoreStatus::Full).
    std::int64_t maxBuckets = 1'000'000;
    /// Seed of the keyed hash that places and fingerprints keys. 0 picks a random seed, so no
    /// caller can aim collisions; the simulator fixes it so that runs are reproducible.
    std::uint64_t hashSeed = 0;
    /// Shards per limit, each with its own lock and table: rounded up to a power of two, at
    /// least 4 and at most 64. 0, the default, takes twice the hardware threads, so that
    /// threads rarely meet on one lock. The byte counts of keyspace() depend on it (each shard
    /// sizes its own table), so the simulator fixes it: its reports are then the same on
    /// every machine.
    unsigned shards = 0;
};

/// The embedded store: sharded by partition with one small lock per shard (no global lock),
/// 16 to 24 bytes of state per bucket, idle buckets evicted once they would be fresh again.
/// Thread-safe.
std::unique_ptr<Store> makeMemoryStore(const MemoryStoreOptions& options = {});

}  // namespace ratelab
