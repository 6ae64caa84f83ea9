// The embedded store: per limit, a LimitTable (memory/limit_table.h) of sharded flat tables of
// (fingerprint, state) slots. Keys are stored as 64-bit keyed fingerprints (memory/
// fingerprint.h), not as strings: 16 or 24 bytes per bucket. This file routes requests to
// their limit's table, one at a time or in batches, and owns the store-wide sweep.

#include "ratelab/memory_store.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <vector>

#include "memory/fingerprint.h"
#include "memory/limit_table.h"
#include "memory/store_accounts.h"

namespace ratelab {

namespace memory {
namespace {

constexpr std::uint32_t kMaxLimits = 4096;

std::uint64_t seedOrRandom(std::uint64_t seed) {
    if (seed != 0) return seed;
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

class MemoryStoreImpl final : public Store, public StoreAccounts {
public:
    explicit MemoryStoreImpl(const MemoryStoreOptions& options)
        : StoreAccounts(options.maxBuckets, seedOrRandom(options.hashSeed))
        , shardBits_(shardBitsFor(options.shards)) {
        for (auto& t : tables_)
            t.store(nullptr, std::memory_order_relaxed);
    }

    ~MemoryStoreImpl() override {
        for (auto& t : tables_)
            delete t.load(std::memory_order_relaxed);
    }

    ConsumeResult consume(const ConsumeRequest& request) override;
    void consumeBatch(std::span<const ConsumeRequest> requests,
                      std::span<ConsumeResult> results) override;
    SettleResult settle(const SettleRequest& request) override;
    KeyspaceStats keyspace() const override;
    KeyspaceStats keyspaceAt(Nanos now) const override;
    std::string_view kind() const override { return "memory"; }

    void sweepAll(Nanos now) override;
    void consumeFull(LimitTableBase& table, const ConsumeRequest& request, const HashedRequest& h,
                     ConsumeResult& out) override;
    bool evictOwnOf(std::uint32_t node) override;
    void indexNextShard() override;

protected:
    void restartIndexing() override { indexCursor_ = 0; }

private:
    // The table of the request's limit, made on first use; null when the id is out of range or
    // names a table of another algorithm. The lookup inlines into every entry point.
    LimitTableBase* table(const ConsumeRequest& request) {
        if (request.limitId >= kMaxLimits) return nullptr;
        LimitTableBase* t = tables_[request.limitId].load(std::memory_order_acquire);
        if (!t) t = install(request);
        return t && t->serves(*request.limit) ? t : nullptr;
    }
    [[gnu::noinline]] LimitTableBase* install(const ConsumeRequest& request);
    template <class Request>
    HashedRequest hashed(const Request& request) const {
        HashedRequest h;
        h.partition = partitionHash(request.partition, seed());
        // A key that is its own partition (principal, header and composite keys) is hashed once.
        h.key = keyFingerprint(request.key, request.partition, h.partition, seed());
        h.scope = 0;
        return h;
    }
    static void refuseUnknownLimit(ConsumeResult& out) {
        out.status = StoreStatus::Refused;
        out.decision = Decision{};
        out.chargedFallback = false;
        out.chargedLevel = 0;
        out.error = "limit id out of range or reused with another algorithm";
    }

    // The mutex that orders installs, every shard lock of every table in the order tables were
    // made, then the fair-share index's mutex: a full store's path, during which no table is
    // made (so that every table's buckets are in the index it completes). Returns the tables
    // locked.
    std::vector<LimitTableBase*> lockWorld();
    void unlockWorld(const std::vector<LimitTableBase*>& locked);
    // During consumeFull: the table of `limit` when it is among those locked, else null.
    LimitTableBase* lockedTable(std::uint32_t limit) const {
        if (limit >= kMaxLimits || !lockedTables_) return nullptr;
        LimitTableBase* t = tables_[limit].load(std::memory_order_acquire);
        return std::find(lockedTables_->begin(), lockedTables_->end(), t) != lockedTables_->end()
                   ? t
                   : nullptr;
    }

    std::mutex sweepMutex_;
    std::array<std::atomic<LimitTableBase*>, kMaxLimits> tables_;
    std::mutex installedMutex_;
    std::vector<LimitTableBase*> installed_;  ///< tables in the order they were made
    const std::vector<LimitTableBase*>* lockedTables_ = nullptr;  ///< during consumeFull
    const unsigned shardBits_;  ///< of every limit's table (shardBitsFor)
    /// One past the largest limit id with a table: where indexNextShard stops looking.
    std::atomic<std::uint32_t> limitsEnd_{0};
    /// The first limit id whose table may have shards left to index (fairMutex()).
    std::uint32_t indexCursor_ = 0;
};

ConsumeResult MemoryStoreImpl::consume(const ConsumeRequest& request) {
    ConsumeResult out;
    LimitTableBase* t = table(request);
    if (!t) {
        refuseUnknownLimit(out);
        return out;
    }
    const HashedRequest h = hashed(request);
    algorithms::visitAlgorithm(t->algorithm(), t->stamped(), [&](auto traits) {
        static_cast<LimitTable<decltype(traits)>*>(t)->consume(*this, request, h, out);
    });
    return out;
}

// A settle finds its bucket as the consumption did: the same table, shard and fingerprint (a
// budget fallback's key hashes to the very bucket the fallback charge went to). A limit the
// store never saw has no bucket to settle.
SettleResult MemoryStoreImpl::settle(const SettleRequest& request) {
    SettleResult out;
    if (request.limitId >= kMaxLimits) {
        out.status = StoreStatus::Refused;
        out.error = "limit id out of range";
        return out;
    }
    LimitTableBase* t = tables_[request.limitId].load(std::memory_order_acquire);
    if (!t) return out;
    if (!t->serves(*request.limit)) {
        out.status = StoreStatus::Refused;
        out.error = "limit id reused with another algorithm";
        return out;
    }
    const HashedRequest h = hashed(request);
    algorithms::visitAlgorithm(t->algorithm(), t->stamped(), [&](auto traits) {
        static_cast<LimitTable<decltype(traits)>*>(t)->settle(*this, request, h, out);
    });
    return out;
}

// Each run of consecutive requests on one limit (same id, same numbers) goes to its table,
// which hashes them, prefetches their slots, takes each shard's lock once and decides them in
// order. Requests of different runs never hold locks together.
void MemoryStoreImpl::consumeBatch(std::span<const ConsumeRequest> requests,
                                   std::span<ConsumeResult> results) {
    std::size_t i = 0;
    while (i < requests.size()) {
        const ConsumeRequest& first = requests[i];
        LimitTableBase* t = table(first);
        if (!t) {
            refuseUnknownLimit(results[i]);
            ++i;
            continue;
        }
        std::size_t end = i + 1;
        while (end < requests.size() && end - i < kMaxRun &&
               requests[end].limitId == first.limitId &&
               (requests[end].limit == first.limit || *requests[end].limit == *first.limit)) {
            ++end;
        }
        algorithms::visitAlgorithm(t->algorithm(), t->stamped(), [&](auto traits) {
            auto* typed = static_cast<LimitTable<decltype(traits)>*>(t);
            if (end - i == 1) {  // nothing to overlap: the one-request path
                ConsumeResult& out = results[i];
                out.status = StoreStatus::Ok;
                out.chargedFallback = false;
                out.chargedLevel = 0;
                if (!out.error.empty()) out.error.clear();
                typed->consume(*this, first, hashed(first), out);
            } else {
                typed->consumeRun(*this, requests.subspan(i, end - i), results.subspan(i, end - i));
            }
        });
        i = end;
    }
}

LimitTableBase* MemoryStoreImpl::install(const ConsumeRequest& request) {
    std::atomic<LimitTableBase*>& entry = tables_[request.limitId];
    const bool stamped = algorithms::keepsStamp(*request.limit);
    LimitTableBase* created = algorithms::visitAlgorithm(
        request.limit->algorithm, stamped, [&](auto traits) -> LimitTableBase* {
            return new (std::nothrow) LimitTable<decltype(traits)>(
                request.limit->algorithm, stamped, shardBits_, request.limitId);
        });
    if (!created) return nullptr;
    std::lock_guard<std::mutex> guard(installedMutex_);
    LimitTableBase* t = nullptr;
    if (entry.compare_exchange_strong(t, created, std::memory_order_acq_rel)) {
        installed_.push_back(created);
        if (request.limitId >= limitsEnd_.load(std::memory_order_relaxed)) {
            limitsEnd_.store(request.limitId + 1, std::memory_order_relaxed);
        }
        return created;
    }
    delete created;  // another thread installed one first
    return t;
}

std::vector<LimitTableBase*> MemoryStoreImpl::lockWorld() {
    installedMutex_.lock();
    std::vector<LimitTableBase*> locked = installed_;
    for (LimitTableBase* t : locked)
        t->lockAll();
    fairMutex().lock();
    return locked;
}

void MemoryStoreImpl::unlockWorld(const std::vector<LimitTableBase*>& locked) {
    fairMutex().unlock();
    for (auto it = locked.rbegin(); it != locked.rend(); ++it)
        (*it)->unlockAll();
    installedMutex_.unlock();
}

void MemoryStoreImpl::consumeFull(LimitTableBase& table, const ConsumeRequest& request,
                                  const HashedRequest& h, ConsumeResult& out) {
    const std::vector<LimitTableBase*> locked = lockWorld();
    // The index is kept only while the store may be full. New buckets past the high-water mark
    // index it shard by shard (LimitTable::indexSome); what they left, usually nothing, is
    // indexed here, so that the rule sees every placed bucket.
    startFairIndex();
    for (LimitTableBase* t : locked)
        t->indexRemainingLocked(*this);
    setFairBuilt();
    lockedTables_ = &locked;
    table.consumeFullLocked(*this, request, h, out);
    lockedTables_ = nullptr;
    unlockWorld(locked);
}

// The least recently used of the node's own buckets (the one fresh again soonest: a bucket
// used once, or used alike, goes in the order of its last use), ties by the order the
// fair-share path gives, then by limit.
bool MemoryStoreImpl::evictOwnOf(std::uint32_t node) {
    FairIndex& index = fairIndex();
    {
        std::uint32_t best = FairIndex::kNone;
        Nanos bestAt = 0;
        for (std::uint32_t o = index.firstOwn(node); o != FairIndex::kNone;
             o = index.own(o).next) {
            const FairIndex::Own& own = index.own(o);
            LimitTableBase* t = lockedTable(own.limit);
            Nanos at = 0;
            if (!t || !t->idleAtLocked(own.shard, own.fingerprint, at)) continue;
            const FairIndex::Own* b = best == FairIndex::kNone ? nullptr : &index.own(best);
            if (!b || at < bestAt ||
                (at == bestAt && (own.order < b->order ||
                                  (own.order == b->order &&
                                   (own.orderTag < b->orderTag ||
                                    (own.orderTag == b->orderTag && own.limit < b->limit)))))) {
                best = o;
                bestAt = at;
            }
        }
        if (best == FairIndex::kNone) return false;
        const FairIndex::Own victim = index.own(best);
        lockedTable(victim.limit)->evictLocked(*this, victim.shard, victim.fingerprint);
        index.remove(best);
        return true;
    }
}

// Tables from the cursor on, each asked for one free shard; the cursor stays at the first table
// that may have shards left. A table made after the cursor passed its id is indexed by the full
// store's path.
void MemoryStoreImpl::indexNextShard() {
    const std::uint32_t end = limitsEnd_.load(std::memory_order_relaxed);
    bool busy = false;
    for (std::uint32_t id = indexCursor_; id < end; ++id) {
        LimitTableBase* t = tables_[id].load(std::memory_order_acquire);
        if (!t) continue;
        switch (t->indexFreeShard(*this)) {
            case LimitTableBase::IndexStep::Indexed:
                if (!busy) indexCursor_ = id;
                return;
            case LimitTableBase::IndexStep::Busy:
                busy = true;
                break;
            case LimitTableBase::IndexStep::Done:
                if (!busy) indexCursor_ = id + 1;
                break;
        }
    }
    if (!busy) setFairBuilt();
}

void MemoryStoreImpl::sweepAll(Nanos now) {
    std::lock_guard<std::mutex> guard(sweepMutex_);
    if (now < nextSweep()) return;  // nothing can be idle yet
    Nanos next = std::numeric_limits<Nanos>::max();
    for (auto& entry : tables_) {
        if (LimitTableBase* t = entry.load(std::memory_order_acquire)) {
            next = std::min(next, t->sweep(*this, now));
        }
    }
    // Buckets inserted from now on lower it again (noteIdleAt).
    setNextSweep(next);
}

KeyspaceStats MemoryStoreImpl::keyspace() const {
    KeyspaceStats stats;
    stats.buckets = liveBuckets();
    stats.maxBuckets = maxBuckets();
    stats.bytes = ownedBytes();
    for (const auto& entry : tables_) {
        if (LimitTableBase* t = entry.load(std::memory_order_acquire)) t->addStats(stats);
    }
    auto& self = const_cast<MemoryStoreImpl&>(*this);  // the index's mutex is not const
    std::lock_guard<std::mutex> lock(self.fairMutex());
    stats.bytes += static_cast<std::int64_t>(self.fairIndex().bytes());
    return stats;
}

KeyspaceStats MemoryStoreImpl::keyspaceAt(Nanos now) const {
    const KeyspaceStats held = keyspace();
    KeyspaceStats stats;
    stats.bytes = held.bytes;
    stats.maxBuckets = held.maxBuckets;
    for (const auto& entry : tables_) {
        if (LimitTableBase* t = entry.load(std::memory_order_acquire)) t->addLiveStats(stats, now);
    }
    return stats;
}

}  // namespace
}  // namespace memory

std::unique_ptr<Store> makeMemoryStore(const MemoryStoreOptions& options) {
    return std::make_unique<memory::MemoryStoreImpl>(options);
}

}  // namespace ratelab
