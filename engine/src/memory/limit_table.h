#pragma once

// One limit's buckets in the memory store: shards, each a FlatTable of (fingerprint, state)
// slots plus the shard's budget scopes behind one spin lock. Keys are placed by partition, so
// every key of one decision (the bucket, its budget scopes, their fallback buckets) lives in one
// shard and one lock makes the budget check and the consumption one atomic step.
//
// Two ways in, with the same decisions: consume() for one request, and consumeRun() for a run
// of requests that were hashed beforehand, which prefetches every slot, takes each shard's lock
// once for the whole run (in shard order, so runs on other threads cannot deadlock with it) and
// decides the requests in order.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/algorithms.h"
#include "memory/budget_chain.h"
#include "memory/budget_scopes.h"
#include "memory/fingerprint.h"
#include "memory/flat_table.h"
#include "memory/spin_lock.h"
#include "memory/store_accounts.h"
#include "ratelab/store.h"
#include "store/fair_share.h"

namespace ratelab::memory {

/// Shards per limit unless the store is told otherwise (MemoryStoreOptions::shards), as a power
/// of two: enough that threads rarely meet on one lock (twice the hardware threads), few enough
/// that each shard's table is large, since large tables get 2 MiB pages and spare a check at many
/// keys the page walk (docs/BENCHMARKS.md, "Why the code is as it is"). At least 4, at most 64
/// (a run's shards fit one 64-bit mask).
inline constexpr unsigned kMinShardBits = 2;
inline constexpr unsigned kMaxShardBits = 6;

/// The shard bits for `shards` (0: twice the hardware threads): the next power of two, within
/// kMinShardBits and kMaxShardBits.
inline unsigned shardBitsFor(unsigned shards) {
    if (shards == 0) shards = 2 * std::max(1u, std::thread::hardware_concurrency());
    unsigned b = kMinShardBits;
    while (b < kMaxShardBits && (1u << b) < shards)
        ++b;
    return b;
}

/// Where a limit's bucket tables, all its shards together, stop running half full and run
/// 80-90 % full (FlatTable's `largeBytes`): 1 MiB a shard with four shards, 64 KiB with 64.
/// Below it a table stays in cache and a check pays for every slot its probe walk looks at, so a
/// short walk is worth the memory, which the bound per limit keeps small; past it a check waits
/// for memory whatever the walk, and the tables are what the store's memory is made of, so they
/// run full (figures: docs/BENCHMARKS.md, "Why the code is as it is").
inline constexpr std::size_t kLimitLargeBytes = std::size_t(4) << 20;

/// kLimitLargeBytes's share of one shard's table, with 2^shardBits shards: where each of a
/// limit's tables is large.
inline std::size_t shardLargeBytes(unsigned shardBits) {
    return kLimitLargeBytes >> shardBits;
}

/// How many slots past its cursor eviction looks at per new bucket (LimitTable::evictSome): two
/// in a small table, where more would cost every insert more than idle buckets cost the walks;
/// four in a large one, which runs fuller (kLimitLargeBytes), so that idle buckets do not linger
/// there and lengthen every miss's probe walk (docs/BENCHMARKS.md, "Why the code is as it is").
inline constexpr int kEvictionsPerInsert = 2;
inline constexpr int kEvictionsPerInsertLarge = 4;

/// The most requests LimitTable::consumeRun() takes: enough to overlap a few dozen cache misses,
/// few enough that the shard locks are held for a microsecond or so.
inline constexpr std::size_t kMaxRun = 32;

class LimitTableBase {
public:
    LimitTableBase(Algorithm algorithm, bool stamped) : algorithm_(algorithm), stamped_(stamped) {}
    virtual ~LimitTableBase() = default;
    Algorithm algorithm() const { return algorithm_; }
    /// Whether buckets keep a settle stamp (algorithms::keepsStamp): a table serves only limits
    /// that agree, since the layout of its buckets differs.
    bool stamped() const { return stamped_; }
    bool serves(const Limit& limit) const {
        return algorithm_ == limit.algorithm && stamped_ == algorithms::keepsStamp(limit);
    }
    /// Evicts every idle bucket and expired scope; returns the earliest time a surviving bucket
    /// becomes idle.
    virtual Nanos sweep(StoreAccounts& store, Nanos now) = 0;
    virtual void addStats(KeyspaceStats& stats) = 0;
    /// Store::keyspaceAt's counts: buckets not fresh again at `now` (Algo::idleAt later), budget
    /// slots live at now and the scopes holding one; no bytes.
    virtual void addLiveStats(KeyspaceStats& stats, Nanos now) = 0;

    // A full store's path (StoreAccounts::consumeFull), with every shard lock of every table
    // and the fair-share index's mutex held.
    virtual void lockAll() = 0;
    virtual void unlockAll() = 0;
    /// The fair-share rule's decision of `request` (fair_index.h) and what follows from it.
    virtual void consumeFullLocked(StoreAccounts& store, const ConsumeRequest& request,
                                   const HashedRequest& h, ConsumeResult& out) = 0;
    /// When the bucket `fingerprint` of shard `shard` is fresh again; false when the table does
    /// not hold it.
    virtual bool idleAtLocked(unsigned shard, std::uint64_t fingerprint, Nanos& at) = 0;
    /// Takes the bucket out of the table and the store's count (not out of the index).
    virtual void evictLocked(StoreAccounts& store, unsigned shard, std::uint64_t fingerprint) = 0;
    /// Indexes every shard not yet indexed (StoreAccounts::fairEpoch), so that the index holds
    /// every placed bucket of the table.
    virtual void indexRemainingLocked(StoreAccounts& store) = 0;

    /// What indexFreeShard did.
    enum class IndexStep : std::uint8_t {
        Indexed,  ///< indexed one shard
        Busy,     ///< indexed none: those left were locked by others
        Done,     ///< every shard is indexed
    };
    /// Indexes the first shard not yet indexed whose lock is free: one step of the index's
    /// building, which never waits for a shard lock. REQUIRES: the index's mutex held, the index
    /// on; the caller may hold shard locks of any table.
    virtual IndexStep indexFreeShard(StoreAccounts& store) = 0;

protected:
    /// Whether the table ever held a bucket placed among networks: only then does an eviction
    /// look for its BucketPlace. Set under a shard lock.
    std::atomic<bool> placed_{false};

private:
    const Algorithm algorithm_;
    const bool stamped_;
};

template <class Algo>
class LimitTable final : public LimitTableBase {
    using State = typename Algo::State;
    using Table = FlatTable<State>;
    using Slot = typename Table::Slot;
    using Places = FlatTable<BucketPlace>;

public:
    /// `shardBits`: 2^shardBits shards (shardBitsFor()); `limitId` the limit it serves.
    LimitTable(Algorithm algorithm, bool stamped, unsigned shardBits, std::uint32_t limitId)
        : LimitTableBase(algorithm, stamped)
        , limitId_(limitId)
        , shardCount_(1u << shardBits)
        , shardShift_(64 - shardBits)
        , shards_(new Shard[shardCount_]) {}

    ~LimitTable() override {
        for (Shard& shard : std::span(shards_.get(), shardCount_)) {
            shard.buckets.forEach([](Slot& s) { Algo::release(s.state); });
        }
    }

    /// Decides one request. REQUIRES: no shard lock held by the caller.
    [[gnu::always_inline]] void consume(StoreAccounts& store, const ConsumeRequest& request,
                                        const HashedRequest& h, ConsumeResult& out) {
        if (!consumeFast(request, h, out)) consumeSlow(store, request, h, out);
    }

    /// Decides requests[i] into results[i], in order, as consume() would one after the other.
    /// REQUIRES: every request is for this table and carries the same Limit numbers; no shard
    /// lock held by the caller; at most kMaxRun requests (the locks are held for the whole run).
    void consumeRun(StoreAccounts& store, std::span<const ConsumeRequest> requests,
                    std::span<ConsumeResult> results) {
        HashedRequest hashes[kMaxRun];
        unsigned shardIndex[kMaxRun];
        std::uint64_t touched = 0;
        const std::uint64_t seed = store.seed();
        const unsigned shift = shardShift_;
        for (std::size_t i = 0; i < requests.size(); ++i) {
            const ConsumeRequest& request = requests[i];
            HashedRequest& h = hashes[i];
            h.partition = partitionHash(request.partition, seed);
            h.key = keyFingerprint(request.key, request.partition, h.partition, seed);
            h.scope = 0;
            const unsigned s = static_cast<unsigned>(h.partition >> shift);
            shardIndex[i] = s;
            touched |= std::uint64_t(1) << s;
            shards_[s].buckets.prefetchUnlocked(h.key);
            if (request.budget) prefetchScope(store, shards_[s], request, h);
        }
        const Limit& limit = *requests[0].limit;
        lockShards(touched);
        // Whether each shard's limit is the run's, compared once per shard rather than per
        // request; the full path brings a stale one up to date.
        std::uint64_t current = 0;
        for (std::uint64_t m = touched; m != 0; m &= m - 1) {
            const unsigned s = static_cast<unsigned>(__builtin_ctzll(m));
            if (shards_[s].limit == limit) current |= std::uint64_t(1) << s;
        }
        for (std::size_t i = 0; i < requests.size(); ++i) {
            const ConsumeRequest& request = requests[i];
            ConsumeResult& out = results[i];
            out.status = StoreStatus::Ok;
            out.chargedFallback = false;
            out.chargedLevel = 0;
            if (!out.error.empty()) out.error.clear();
            const unsigned s = shardIndex[i];
            Shard& shard = shards_[s];
            // Whether the key was just looked for and is not there: under the same lock, a
            // second look (a whole probe run in a full table) would find nothing either.
            bool absent = false;
            if (!Algo::kOwnsMemory && !request.budget && (current >> s & 1)) {
                if (Slot* slot = shard.buckets.find(hashes[i].key)) {
                    bool oom = false;
                    out.decision =
                        Algo::consume(slot->state, request.now, request.cost, limit, oom);
                    out.stamp = Algo::stamp(slot->state);
                    continue;
                }
                absent = true;
            }
            shard.limit = limit;
            current |= std::uint64_t(1) << s;
            if (consumeLocked(store, shard, request, hashes[i], out, absent)) continue;
            // The store is full: as consume() does, sweep once (without any lock) and retry,
            // then let the fair-share rule decide.
            unlockShards(touched);
            store.sweepAll(request.now);
            lockShards(touched);
            if (consumeLocked(store, shard, request, hashes[i], out)) continue;
            unlockShards(touched);
            store.consumeFull(*this, request, hashes[i], out);
            lockShards(touched);
        }
        unlockShards(touched);
    }

    /// Applies a settled outcome to the bucket `h.key` names, if it is there, under the same
    /// numbers, and still holds the charge request.stamp names (Algo::settle). Never creates a
    /// bucket. REQUIRES: no shard lock held by the caller.
    void settle(StoreAccounts& store, const SettleRequest& request, HashedRequest h,
                SettleResult& out) {
        out.status = StoreStatus::Ok;
        out.applied = false;
        Shard& shard = shards_[shardOf(h)];
        std::lock_guard<SpinLock> lock(shard.lock);
        if (!(shard.limit == *request.limit)) return;  // retuned since: another bucket's terms
        Slot* slot = shard.buckets.find(h.key);
        if (!slot) return;
        out.applied =
            Algo::settle(slot->state, request.now, request.cost, *request.limit, request.stamp);
        // A refund may bring the bucket's idle moment forward: a full store may sweep it then.
        if (out.applied) store.noteIdleAt(Algo::idleAt(slot->state, shard.limit));
    }

    Nanos sweep(StoreAccounts& store, Nanos now) override {
        Nanos next = std::numeric_limits<Nanos>::max();
        for (Shard& shard : std::span(shards_.get(), shardCount_)) {
            std::lock_guard<SpinLock> lock(shard.lock);
            next = std::min(next, rebuildDroppingIdle(store, shard, now, shard.buckets.capacity(),
                                                      /*indexHeld=*/false));
            shard.scopes.sweep(now / kNanosPerMilli, /*all=*/true);
        }
        return next;
    }

    void addStats(KeyspaceStats& stats) override {
        for (Shard& shard : std::span(shards_.get(), shardCount_)) {
            std::lock_guard<SpinLock> lock(shard.lock);
            stats.bytes += static_cast<std::int64_t>(shard.buckets.bytes() + shard.places.bytes());
            shard.scopes.addStats(stats);
        }
    }

    void addLiveStats(KeyspaceStats& stats, Nanos now) override {
        for (Shard& shard : std::span(shards_.get(), shardCount_)) {
            std::lock_guard<SpinLock> lock(shard.lock);
            shard.buckets.forEach(
                [&](const Slot& s) { stats.buckets += Algo::idleAt(s.state, shard.limit) > now; });
            // Slots on BudgetChain's clock: whole ms, truncated.
            shard.scopes.addLiveStats(stats, now / kNanosPerMilli);
        }
    }

    void lockAll() override { lockShards(allShards()); }
    void unlockAll() override { unlockShards(allShards()); }

    // The store has no room for the bucket the request needs, even after a sweep. Decides again
    // (another thread may have made room or the very bucket since), then as the fair-share rule
    // says: a new bucket in place of one of the densest aggregate's, a charge to the bucket of
    // an aggregate over its share, or a refusal.
    void consumeFullLocked(StoreAccounts& store, const ConsumeRequest& request,
                           const HashedRequest& h, ConsumeResult& out) override {
        Shard& shard = shards_[shardOf(h)];
        if (!(shard.limit == *request.limit)) shard.limit = *request.limit;
        if (consumeLocked(store, shard, request, h, out, false, /*indexHeld=*/true)) return;
        BudgetChain chain;
        chain.choose<Algo>(shard.scopes, request, h, store.seed());
        store::FairPath path;
        BucketPlace place;
        if (placeOf(request, chain, place)) pathOf(place, path);
        const FairIndex::Verdict verdict = store.fairIndex().decide(path);
        switch (verdict.kind) {
            case FairIndex::Verdict::Kind::Admit:
                if (!store.evictOwnOf(verdict.victimNode) ||
                    !consumeLocked(store, shard, request, h, out, false, true)) {
                    refuseFull(store, out);
                }
                return;
            case FairIndex::Verdict::Kind::Charge:
                chargeAggregate(store, request, path, verdict.level, out);
                return;
            case FairIndex::Verdict::Kind::Full:
                break;
        }
        refuseFull(store, out);
    }

    bool idleAtLocked(unsigned shardIndex, std::uint64_t fingerprint, Nanos& at) override {
        Shard& shard = shards_[shardIndex];
        Slot* slot = shard.buckets.find(fingerprint);
        if (!slot) return false;
        at = Algo::idleAt(slot->state, shard.limit);
        return true;
    }

    void evictLocked(StoreAccounts& store, unsigned shardIndex,
                     std::uint64_t fingerprint) override {
        Shard& shard = shards_[shardIndex];
        Slot* slot = shard.buckets.find(fingerprint);
        if (!slot) return;
        addOwnedBytes(store, -static_cast<std::int64_t>(Algo::ownedBytes(slot->state)));
        Algo::release(slot->state);
        shard.buckets.erase(slot);
        store.releaseBuckets(1);
        if (auto* place = shard.places.find(fingerprint)) shard.places.erase(place);
    }

    void indexRemainingLocked(StoreAccounts& store) override {
        for (Shard& shard : std::span(shards_.get(), shardCount_)) {
            if (!store.shardIndexed(shard.indexedEpoch)) indexShard(store, shard);
        }
    }

    // A shard's indexedEpoch is written under its lock and the index's mutex: read here under
    // the mutex alone.
    IndexStep indexFreeShard(StoreAccounts& store) override {
        IndexStep step = IndexStep::Done;
        for (Shard& shard : std::span(shards_.get(), shardCount_)) {
            if (store.shardIndexed(shard.indexedEpoch)) continue;
            if (!shard.lock.try_lock()) {
                step = IndexStep::Busy;
                continue;
            }
            indexShard(store, shard);
            shard.lock.unlock();
            return IndexStep::Indexed;
        }
        return step;
    }

private:
    struct alignas(64) Shard {
        SpinLock lock;
        Limit limit;
        Table buckets;
        BudgetScopes scopes;
        std::uint64_t evictCursor = 0;
        /// The place of each of `buckets` placed among networks, under its fingerprint. Last,
        /// so that the fields every request reads keep their cache lines.
        Places places;
        /// The fair-share index's epoch when this shard's places went into it
        /// (StoreAccounts::shardIndexed); written under the lock and the index's mutex.
        std::uint32_t indexedEpoch = 0;
    };

    std::size_t largeBytes() const { return shardLargeBytes(64 - shardShift_); }
    std::uint64_t allShards() const {
        return shardCount_ == 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << shardCount_) - 1;
    }

    unsigned shardOf(const HashedRequest& h) const {
        return static_cast<unsigned>(h.partition >> shardShift_);
    }

    void lockShards(std::uint64_t mask) {
        for (std::uint64_t m = mask; m != 0; m &= m - 1)
            shards_[__builtin_ctzll(m)].lock.lock();
    }
    void unlockShards(std::uint64_t mask) {
        for (std::uint64_t m = mask; m != 0; m &= m - 1)
            shards_[__builtin_ctzll(m)].lock.unlock();
    }

    // The common case: a known key, no budget, state that owns no memory, the shard's limit
    // unchanged. Returns false, having changed nothing, when the full path is needed.
    // REQUIRES: the shard's lock held.
    [[gnu::always_inline]] bool decideKnownLocked(Shard& shard, const ConsumeRequest& request,
                                                  const HashedRequest& h, ConsumeResult& out) {
        if constexpr (Algo::kOwnsMemory) return false;
        if (request.budget || !(shard.limit == *request.limit)) return false;
        Slot* slot = shard.buckets.find(h.key);
        if (!slot) return false;
        bool oom = false;
        out.decision = Algo::consume(slot->state, request.now, request.cost, *request.limit, oom);
        out.stamp = Algo::stamp(slot->state);
        return true;
    }

    // consume()'s common case, kept small so it inlines into the store's entry point.
    [[gnu::always_inline]] bool consumeFast(const ConsumeRequest& request, const HashedRequest& h,
                                            ConsumeResult& out) {
        if constexpr (Algo::kOwnsMemory) return false;
        if (request.budget) return false;
        Shard& shard = shards_[shardOf(h)];
        shard.buckets.prefetchUnlocked(h.key);
        shard.lock.lock();
        const bool decided = decideKnownLocked(shard, request, h, out);
        shard.lock.unlock();
        return decided;
    }

    // A budgeted request's first looks under the lock are its bucket and its innermost scope.
    // Its callers prefetch the bucket's slot, this the scope's, before the lock, so that the two
    // cache misses overlap each other and the lock (the full path's check of a returning
    // client, 10^4 clients: a third of the store's time was these misses one after the other).
    // Keeps the scope's fingerprint in `h` for BudgetChain::choose.
    void prefetchScope(StoreAccounts& store, const Shard& shard, const ConsumeRequest& request,
                       HashedRequest& h) const {
        h.scope =
            scopeFingerprint(request.budget->scope, request.partition, h.partition, store.seed());
        shard.scopes.prefetchUnlocked(h.scope);
    }

    // Everything else: budgets, new keys, a changed limit, the sliding log, a full store.
    [[gnu::noinline]] void consumeSlow(StoreAccounts& store, const ConsumeRequest& request,
                                       HashedRequest h, ConsumeResult& out) {
        Shard& shard = shards_[shardOf(h)];
        if (request.budget) {
            shard.buckets.prefetchUnlocked(h.key);
            prefetchScope(store, shard, request, h);
        }
        shard.lock.lock();
        if (!(shard.limit == *request.limit)) shard.limit = *request.limit;
        bool decided = consumeLocked(store, shard, request, h, out);
        shard.lock.unlock();
        if (decided) return;
        // The store is full. Evict idle state everywhere once and decide again; then the
        // fair-share rule decides.
        store.sweepAll(request.now);
        shard.lock.lock();
        decided = consumeLocked(store, shard, request, h, out);
        shard.lock.unlock();
        if (!decided) store.consumeFull(*this, request, h, out);
    }

    // Only StoreStatus::Ok carries a decision.
    static void refuseFull(StoreAccounts& store, ConsumeResult& out) {
        out.status = StoreStatus::Full;
        out.decision = Decision{};
        out.error = "memory store full: " + std::to_string(store.maxBuckets()) +
                    " live buckets and none idle";
    }

    // Returns false when a new bucket is needed and the store is full.
    // `keyAbsent`: the caller looked for the request's own key under this lock and it is not
    // there. `indexHeld`: the caller holds the fair-share index's mutex.
    bool consumeLocked(StoreAccounts& store, Shard& shard, const ConsumeRequest& request,
                       HashedRequest h, ConsumeResult& out, bool keyAbsent = false,
                       bool indexHeld = false) {
        const Limit& limit = *request.limit;
        BudgetChain chain;
        chain.choose<Algo>(shard.scopes, request, h, store.seed());

        Slot* slot = keyAbsent && chain.charged == 0
                         ? nullptr
                         : shard.buckets.find(chain.candidate[chain.charged]);
        if (!slot) {
            // Decide on a fresh state first: a refusal of a new key stores nothing.
            State fresh{};
            bool oom = false;
            Decision d = Algo::consume(fresh, request.now, request.cost, limit, oom);
            if (oom) return refuseOutOfMemory(out);
            if (std::memcmp(&fresh, &kFreshState, sizeof(State)) == 0) {
                out.decision = d;
                out.stamp = 0;
                chain.reportCharged(out);
                chain.record(shard.scopes);
                return true;
            }
            if (!store.reserveBucket()) {
                Algo::release(fresh);
                return false;
            }
            evictSome(store, shard, request.now, indexHeld);
            if (shard.buckets.wouldGrow(largeBytes())) {
                growDroppingIdle(store, shard, request.now, indexHeld);
            }
            slot = shard.buckets.insert(chain.candidate[chain.charged], fresh, largeBytes());
            if (!slot) {
                store.releaseBuckets(1);
                Algo::release(fresh);
                return refuseOutOfMemory(out);
            }
            BucketPlace place;
            if (placeOf(request, chain, place)) {
                recordPlace(store, shard, chain.candidate[chain.charged], place, indexHeld);
            }
            if (!indexHeld && store.fairWanted()) indexSome(store, shard);
            addOwnedBytes(store, static_cast<std::int64_t>(Algo::ownedBytes(fresh)));
            store.noteIdleAt(Algo::idleAt(fresh, limit));
            out.decision = d;
            out.stamp = Algo::stamp(fresh);
        } else {
            decideExisting(store, *slot, request, out);
            if (out.status != StoreStatus::Ok) return true;
        }
        out.status = StoreStatus::Ok;
        chain.reportCharged(out);
        chain.record(shard.scopes);
        return true;
    }

    void decideExisting(StoreAccounts& store, Slot& slot, const ConsumeRequest& request,
                        ConsumeResult& out) {
        bool oom = false;
        if constexpr (Algo::kOwnsMemory) {
            const std::size_t before = Algo::ownedBytes(slot.state);
            out.decision =
                Algo::consume(slot.state, request.now, request.cost, *request.limit, oom);
            store.addOwnedBytes(static_cast<std::int64_t>(Algo::ownedBytes(slot.state)) -
                                static_cast<std::int64_t>(before));
        } else {
            out.decision =
                Algo::consume(slot.state, request.now, request.cost, *request.limit, oom);
        }
        out.stamp = Algo::stamp(slot.state);
        if (oom) refuseOutOfMemory(out);
    }

    // Counts memory buckets own beyond their slots (the sliding log's rings) in the store's
    // total. The other algorithms own none: no atomic add for them, on every new bucket and
    // every eviction.
    static void addOwnedBytes(StoreAccounts& store, std::int64_t bytes) {
        if constexpr (Algo::kOwnsMemory) store.addOwnedBytes(bytes);
    }

    static bool refuseOutOfMemory(ConsumeResult& out) {
        out.status = StoreStatus::Refused;
        out.decision = Decision{};
        out.error = "memory store out of memory";
        return true;
    }

    // Looks at a few slots past a cursor and evicts the idle ones, so that memory follows
    // the live keys without a background thread. An idle slot goes with every idle slot after
    // it in its probe run, in one pass (FlatTable::eraseRun): when nearly every bucket is idle
    // (clients that come back after their bucket refilled), erasing them one look at a time
    // shifted each run back once per slot and made inserts quadratic in the run's length.
    void evictSome(StoreAccounts& store, Shard& shard, Nanos now, bool indexHeld) {
        const int looks =
            shard.buckets.large(largeBytes()) ? kEvictionsPerInsertLarge : kEvictionsPerInsert;
        const bool placed = placed_.load(std::memory_order_relaxed);
        const bool live = store.shardIndexed(shard.indexedEpoch);
        std::vector<std::uint32_t>& gone = evictedScratch();
        for (int i = 0; i < looks; ++i) {
            Slot* s = shard.buckets.occupiedFrom(shard.evictCursor);
            if (!s) break;
            if (Algo::idleAt(s->state, shard.limit) <= now) {
                std::int64_t freed = 0;
                auto evict = [&](Slot& slot) {
                    freed += static_cast<std::int64_t>(Algo::ownedBytes(slot.state));
                    Algo::release(slot.state);
                    if (placed) forgetPlace(shard, slot.fingerprint, live, gone);
                };
                evict(*s);
                const std::uint64_t evicted = shard.buckets.eraseRun(s, [&](Slot& slot) {
                    if (Algo::idleAt(slot.state, shard.limit) > now) return false;
                    evict(slot);
                    return true;
                });
                addOwnedBytes(store, -freed);
                store.releaseBuckets(static_cast<std::int64_t>(evicted));
            } else {
                ++shard.evictCursor;
            }
        }
        forgetEvicted(store, shard, gone, indexHeld);
    }

    void growDroppingIdle(StoreAccounts& store, Shard& shard, Nanos now, bool indexHeld) {
        rebuildDroppingIdle(store, shard, now, shard.buckets.grownCapacity(largeBytes()),
                            indexHeld);
    }

    // Rebuilds the shard's buckets into `capacity` slots without the idle ones (releasing what
    // they own) and returns the earliest time a surviving bucket goes idle.
    Nanos rebuildDroppingIdle(StoreAccounts& store, Shard& shard, Nanos now,
                              std::uint64_t capacity, bool indexHeld) {
        Nanos next = std::numeric_limits<Nanos>::max();
        std::int64_t evicted = 0;
        std::int64_t freed = 0;
        const bool placed = placed_.load(std::memory_order_relaxed);
        const bool live = store.shardIndexed(shard.indexedEpoch);
        std::vector<std::uint32_t>& gone = evictedScratch();
        shard.buckets.rebuild(capacity, largeBytes(), [&](const Slot& s) {
            const Nanos idle = Algo::idleAt(s.state, shard.limit);
            if (idle > now) {
                next = std::min(next, idle);
                return true;
            }
            State dropped = s.state;
            freed += static_cast<std::int64_t>(Algo::ownedBytes(dropped));
            Algo::release(dropped);
            if (placed) forgetPlace(shard, s.fingerprint, live, gone);
            ++evicted;
            return false;
        });
        store.releaseBuckets(evicted);
        addOwnedBytes(store, -freed);
        forgetEvicted(store, shard, gone, indexHeld);
        return next;
    }

    // The fair-share place of the bucket the chain charges: the key's, or a network fallback's.
    // False when it has none (the fair-share rule does not place it). Its FairPath is computed
    // only when the index needs it (pathOf), so a store with room never hashes its levels.
    static bool placeOf(const ConsumeRequest& request, const BudgetChain& chain,
                        BucketPlace& place) {
        if (!request.place) return false;
        place.address = request.place->address;
        if (chain.charged == 0) {
            place.prefix = request.place->prefix;
            place.withinPeer = request.place->withinPeer;
            place.order = place.withinPeer ? store::keyOrder(request.key) : 0;
        } else {
            place.prefix = chain.budget[chain.charged - 1]->fallbackPrefix;
            if (place.prefix == 0) return false;
            place.withinPeer = false;
            place.order = 0;
        }
        return true;
    }

    // Keeps the place of a new bucket beside it in its shard, and adds the bucket to the index
    // while the index is live. REQUIRES: the shard's lock held.
    void recordPlace(StoreAccounts& store, Shard& shard, std::uint64_t fingerprint,
                     BucketPlace place, bool indexHeld) {
        placed_.store(true, std::memory_order_relaxed);
        place.own = FairIndex::kNone;
        auto* slot = shard.places.insert(fingerprint, place, largeBytes());
        if (!slot || !store.shardIndexed(shard.indexedEpoch)) return;
        store::FairPath path;
        pathOf(place, path);
        if (path.depth == 0) return;
        const auto shardIndex = static_cast<unsigned>(&shard - shards_.get());
        std::unique_lock<std::mutex> lock(store.fairMutex(), std::defer_lock);
        if (!indexHeld) lock.lock();
        if (store.shardIndexed(shard.indexedEpoch)) {
            slot->state.own = store.fairIndex().add(path, limitId_, shardIndex, fingerprint);
        }
    }

    // A placed bucket went: its place goes, and its index entry is kept in `gone` for
    // forgetEvicted when its shard was indexed. REQUIRES: the shard's lock held.
    static void forgetPlace(Shard& shard, std::uint64_t fingerprint, bool live,
                            std::vector<std::uint32_t>& gone) {
        auto* place = shard.places.find(fingerprint);
        if (!place) return;
        if (live && place->state.own != FairIndex::kNone) gone.push_back(place->state.own);
        shard.places.erase(place);
    }

    // The index entries of evicted buckets, kept by forgetPlace: out of the index, unless it
    // stopped since (a start since is a new epoch, and indexing the shard again takes its lock).
    static std::vector<std::uint32_t>& evictedScratch() {
        thread_local std::vector<std::uint32_t> gone;
        return gone;
    }
    void forgetEvicted(StoreAccounts& store, const Shard& shard, std::vector<std::uint32_t>& gone,
                       bool indexHeld) {
        if (gone.empty()) return;
        std::unique_lock<std::mutex> lock(store.fairMutex(), std::defer_lock);
        if (!indexHeld) lock.lock();
        if (store.shardIndexed(shard.indexedEpoch)) {
            for (std::uint32_t own : gone)
                store.fairIndex().remove(own);
            if (!indexHeld) store.dropFairIndexIfRoomy();
        }
        gone.clear();
    }

    // A new bucket went into `shard` past the store's high-water mark: starts the index if it
    // is off, then indexes one shard, the caller's own first; another only if its lock is free,
    // so that no shard lock's holder waits for another. Each step holds the index's mutex for
    // one shard's places, never the whole store's. REQUIRES: the shard's lock held, not the
    // index's mutex.
    [[gnu::noinline]] void indexSome(StoreAccounts& store, Shard& shard) {
        std::lock_guard<std::mutex> lock(store.fairMutex());
        if (store.fairEpoch() == 0) {
            if (store.liveBuckets() < store.highWater()) return;
            store.startFairIndex();
        }
        if (!store.fairBuilding()) return;
        if (!store.shardIndexed(shard.indexedEpoch)) {
            indexShard(store, shard);
            return;
        }
        store.indexNextShard();
    }

    // Adds every placed bucket of the shard to the index. REQUIRES: the shard's lock and the
    // index's mutex held, the index on.
    void indexShard(StoreAccounts& store, Shard& shard) {
        const auto s = static_cast<unsigned>(&shard - shards_.get());
        if (placed_.load(std::memory_order_relaxed)) {
            FairIndex& index = store.fairIndex();
            shard.places.forEach([&](typename Places::Slot& slot) {
                store::FairPath path;
                pathOf(slot.state, path);
                slot.state.own = path.depth > 0 ? index.add(path, limitId_, s, slot.fingerprint)
                                                : FairIndex::kNone;
            });
        }
        shard.indexedEpoch = store.fairEpoch();
    }

    // Charges the bucket of the path's aggregate `level` ("ip:<network>", in its own partition),
    // making it in place of a bucket of the densest aggregate when it does not exist: the
    // bucket of an aggregate over its share is always admitted.
    void chargeAggregate(StoreAccounts& store, const ConsumeRequest& request,
                         const store::FairPath& path, std::size_t level, ConsumeResult& out) {
        const int prefix = path.prefix[level];
        const std::string key = store::networkKey(request.place->address, prefix);
        HashedRequest a;
        a.partition = partitionHash(key, store.seed());
        a.key = keyFingerprint(key, key, a.partition, store.seed());
        a.scope = 0;
        Shard& shard = shards_[shardOf(a)];
        if (!(shard.limit == *request.limit)) shard.limit = *request.limit;
        const auto charged = [&] {
            out.chargedLevel = kChargedAggregate;
            out.chargedPrefix = static_cast<std::uint8_t>(prefix);
            out.chargedFallback = true;
        };
        if (Slot* slot = shard.buckets.find(a.key)) {
            decideExisting(store, *slot, request, out);
            if (out.status == StoreStatus::Ok) charged();
            return;
        }
        State fresh{};
        bool oom = false;
        const Decision d = Algo::consume(fresh, request.now, request.cost, *request.limit, oom);
        if (oom) {
            refuseOutOfMemory(out);
            return;
        }
        out.status = StoreStatus::Ok;
        out.decision = d;
        out.stamp = 0;
        if (std::memcmp(&fresh, &kFreshState, sizeof(State)) == 0) {
            charged();
            return;
        }
        if (!store.reserveBucket()) {
            const std::uint32_t victim = store.fairIndex().densestFromRoot();
            if (victim == FairIndex::kNone || !store.evictOwnOf(victim) || !store.reserveBucket()) {
                Algo::release(fresh);
                refuseFull(store, out);
                return;
            }
        }
        Slot* slot = shard.buckets.insert(a.key, fresh, largeBytes());
        if (!slot) {
            store.releaseBuckets(1);
            Algo::release(fresh);
            refuseOutOfMemory(out);
            return;
        }
        addOwnedBytes(store, static_cast<std::int64_t>(Algo::ownedBytes(fresh)));
        store.noteIdleAt(Algo::idleAt(fresh, *request.limit));
        out.stamp = Algo::stamp(fresh);
        charged();
        BucketPlace place;
        place.address = request.place->address;
        place.prefix = static_cast<std::uint8_t>(prefix);
        recordPlace(store, shard, a.key, place, /*indexHeld=*/true);
    }

    static constexpr State kFreshState{};

    const std::uint32_t limitId_;
    const unsigned shardCount_;
    const unsigned shardShift_;
    std::unique_ptr<Shard[]> shards_;
};

}  // namespace ratelab::memory
