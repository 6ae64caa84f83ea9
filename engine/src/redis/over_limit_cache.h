#pragma once

// A small local table of keys Redis recently refused, so that a flood from one key is refused
// without a round trip until its retry time. Fixed size, direct-mapped by a keyed 64-bit
// fingerprint: a collision only evicts (one more Redis call), it never refuses another key.
//
// Where its answers differ from Redis' own (each documented in RedisStoreOptions):
// - it answers only a repeat of the refused cost; any other cost goes to Redis;
// - its retry and reset times are exact while this store alone consumes from the key; another
//   replica consuming meanwhile only makes the real times later (the cache then stops refusing
//   early and Redis refuses);
// - `remaining` is the value at the refusal (a lower bound: Redis might report more by now);
// - fixed-window refusals it answers are not counted in Redis (they would change nothing: the
//   window is over its quota until it ends either way);
// - a budget member's slot is not refreshed by refusals it answers, so the slot may expire
//   meanwhile; refusals charged to the fallback are never cached.
// It never admits: a request it does not refuse goes to Redis, so it cannot let a key through
// early.

#include <cstdint>
#include <memory>

#include "memory/spin_lock.h"
#include "ratelab/limit.h"

namespace ratelab::redis {

/// Thread-safe.
class OverLimitCache {
public:
    /// Rounds `entries` up to a power of two (at least 64).
    explicit OverLimitCache(std::size_t entries);

    /// The refusal remembered for this fingerprint and cost, as it stands at `now`, or false when
    /// there is none or its retry time has come.
    bool find(std::uint64_t fingerprint, std::int64_t cost, Nanos now, Decision* decision);
    /// Remembers a refusal (reason OverLimit, retryAfter > 0) decided at `now`.
    void remember(std::uint64_t fingerprint, std::int64_t cost, Nanos now, const Decision& refusal);

    /// Drops the entry of a key Redis just admitted: its earlier refusal (of another cost) no
    /// longer tells when that cost may pass.
    void forget(std::uint64_t fingerprint);

    std::size_t entries() const { return mask_ + 1; }

private:
    struct Entry {
        std::uint64_t fingerprint = 0;  ///< 0: empty
        std::int64_t cost = 0;
        Nanos retryAt = 0;
        Nanos resetAt = 0;
        std::int64_t remaining = 0;
        std::int64_t limit = 0;
    };
    static constexpr std::size_t kStripes = 64;

    std::size_t mask_;
    std::unique_ptr<Entry[]> entries_;
    std::unique_ptr<memory::SpinLock[]> locks_;
};

}  // namespace ratelab::redis
