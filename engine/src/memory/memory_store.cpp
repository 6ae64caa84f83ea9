// The embedded store. Keys are placed by partition: every key of one decision (the bucket, its
// budget scope, the fallback bucket) hashes to the same shard, so one shard lock makes the
// budget check and the consumption one atomic step. Per limit, 64 shards, each a FlatTable of
// (fingerprint, state) slots plus the shard's budget scopes. Keys are stored as 64-bit keyed
// fingerprints (xxh3 with a per-store seed), not as strings: 16 or 24 bytes per bucket.

#include "ratelab/memory_store.h"

// xxh3 inlined: a call through the shared library's PLT costs as much as hashing 16 bytes.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <array>
#include <atomic>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <thread>

#include "algorithms/algorithms.h"
#include "memory/budget_scopes.h"
#include "memory/flat_table.h"
#include "memory/spin_lock.h"

namespace ratelab {

namespace memory {
namespace {

// Shards per limit: enough that threads rarely meet on one lock (twice the hardware threads),
// few enough that each shard's table is large, because large tables get 2 MiB pages and a
// keyed check at a million keys is then one cache miss instead of a cache miss plus a page
// walk (90 -> 48 ns measured on the 2-core VM). At least 4, at most 64.
unsigned shardBits() {
    static const unsigned bits = [] {
        const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
        unsigned b = 2;
        while (b < 6 && (1u << b) < 2 * threads)
            ++b;
        return b;
    }();
    return bits;
}
constexpr std::uint32_t kMaxLimits = 4096;
constexpr int kEvictionsPerInsert = 2;

std::uint64_t nonZero(std::uint64_t x) {
    return x != 0 ? x : 1;
}

std::uint64_t hashOf(std::string_view text, std::uint64_t seed) {
    return XXH3_64bits_withSeed(text.data(), text.size(), seed);
}

// A second, independent 64-bit value from a hash (xxh3's own final mix, with another constant),
// for keys that are their own partition: one hash of the key serves both purposes.
std::uint64_t remix(std::uint64_t h) {
    h ^= h >> 37;
    h *= 0x165667919E3779F9ULL;
    h ^= h >> 32;
    return h;
}

std::int64_t toMillisCeil(Nanos t) {
    return (t + kNanosPerMilli - 1) / kNanosPerMilli;
}

class MemoryStoreImpl;

class LimitTableBase {
public:
    explicit LimitTableBase(Algorithm algorithm) : algorithm_(algorithm) {}
    virtual ~LimitTableBase() = default;
    Algorithm algorithm() const { return algorithm_; }
    /// Evicts every idle bucket and expired scope; returns the earliest time a surviving bucket
    /// becomes idle.
    virtual Nanos sweep(MemoryStoreImpl& store, Nanos now) = 0;
    virtual void addStats(KeyspaceStats& stats) = 0;

private:
    const Algorithm algorithm_;
};

class MemoryStoreImpl final : public Store {
public:
    explicit MemoryStoreImpl(const MemoryStoreOptions& options)
        : maxBuckets_(options.maxBuckets), seed_(options.hashSeed) {
        if (seed_ == 0) {
            std::random_device device;
            seed_ = (static_cast<std::uint64_t>(device()) << 32) ^ device();
        }
        for (auto& t : tables_)
            t.store(nullptr, std::memory_order_relaxed);
    }

    ~MemoryStoreImpl() override {
        for (auto& t : tables_)
            delete t.load(std::memory_order_relaxed);
    }

    ConsumeResult consume(const ConsumeRequest& request) override;
    KeyspaceStats keyspace() const override;
    std::string_view kind() const override { return "memory"; }

    std::uint64_t seed() const { return seed_; }

    /// A bucket's fingerprint: its key hashed within its partition. A key that is its own
    /// partition (the address bucket, principal and header keys) is hashed once, as the
    /// partition. The one function for keys and budget fallbacks alike, so a fallback charge
    /// lands in the very bucket the same key has when it is asked for directly.
    std::uint64_t keyFingerprint(std::string_view key, std::string_view partition,
                                 std::uint64_t partitionHash) const {
        const bool same =
            key.size() == partition.size() && (key.data() == partition.data() || key == partition);
        return same ? nonZero(remix(partitionHash)) : nonZero(hashOf(key, partitionHash ^ seed_));
    }

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
    void sweepAll(Nanos now);

    std::int64_t maxBuckets() const { return maxBuckets_; }

private:
    LimitTableBase* table(const ConsumeRequest& request);

    const std::int64_t maxBuckets_;
    std::uint64_t seed_;
    std::atomic<std::int64_t> live_{0};
    std::atomic<std::int64_t> ownedBytes_{0};
    std::atomic<Nanos> nextSweep_{std::numeric_limits<Nanos>::min()};
    std::mutex sweepMutex_;
    std::array<std::atomic<LimitTableBase*>, kMaxLimits> tables_;
};

template <class Algo>
class LimitTable final : public LimitTableBase {
    using State = typename Algo::State;
    using Table = FlatTable<State>;
    using Slot = typename Table::Slot;

public:
    explicit LimitTable(Algorithm algorithm)
        : LimitTableBase(algorithm)
        , shardCount_(1u << shardBits())
        , shardShift_(64 - shardBits())
        , shards_(new Shard[shardCount_]) {}

    ~LimitTable() override {
        for (Shard& shard : std::span(shards_.get(), shardCount_)) {
            shard.buckets.forEach([](Slot& s) { Algo::release(s.state); });
        }
    }

    /// The common case, kept small so it inlines into the store's entry point: a known key, no
    /// budget, state that owns no memory. Returns false, having changed nothing, when the full
    /// path is needed.
    [[gnu::always_inline]] bool consumeFast(const ConsumeRequest& request,
                                            std::uint64_t partitionHash, std::uint64_t keyFp,
                                            ConsumeResult& out) {
        if constexpr (Algo::kOwnsMemory) return false;
        if (request.budget) return false;
        Shard& shard = shards_[partitionHash >> shardShift_];
        shard.buckets.prefetchUnlocked(keyFp);
        shard.lock.lock();
        Slot* slot = shard.limit == *request.limit ? shard.buckets.find(keyFp) : nullptr;
        if (!slot) {
            shard.lock.unlock();
            return false;
        }
        bool oom = false;
        out.decision = Algo::consume(slot->state, request.now, request.cost, *request.limit, oom);
        shard.lock.unlock();
        return true;
    }

    /// Everything else: budgets, new keys, a changed limit, the sliding log, a full store.
    [[gnu::noinline]] void consumeSlow(MemoryStoreImpl& store, const ConsumeRequest& request,
                                       std::uint64_t partitionHash, std::uint64_t keyFp,
                                       ConsumeResult& out) {
        Shard& shard = shards_[partitionHash >> shardShift_];
        shard.lock.lock();
        if (!(shard.limit == *request.limit)) shard.limit = *request.limit;
        bool decided = consumeLocked(store, shard, request, partitionHash, keyFp, out, false);
        shard.lock.unlock();
        if (decided) return;
        // The store is full. Evict idle state everywhere once, then decide again, charging an
        // enclosing bucket that exists before refusing (the refusal is the last resort).
        store.sweepAll(request.now);
        shard.lock.lock();
        decided = consumeLocked(store, shard, request, partitionHash, keyFp, out, true);
        shard.lock.unlock();
        if (decided) return;
        out.status = StoreStatus::Full;
        out.error = "memory store full: " + std::to_string(store.maxBuckets()) +
                    " live buckets and none idle";
    }

    Nanos sweep(MemoryStoreImpl& store, Nanos now) override {
        Nanos next = std::numeric_limits<Nanos>::max();
        for (Shard& shard : std::span(shards_.get(), shardCount_)) {
            std::lock_guard<SpinLock> lock(shard.lock);
            next = std::min(next, rebuildDroppingIdle(store, shard, now, shard.buckets.capacity()));
            shard.scopes.sweep(now / kNanosPerMilli, /*all=*/true);
        }
        return next;
    }

    void addStats(KeyspaceStats& stats) override {
        for (Shard& shard : std::span(shards_.get(), shardCount_)) {
            std::lock_guard<SpinLock> lock(shard.lock);
            stats.bytes += static_cast<std::int64_t>(shard.buckets.bytes());
            shard.scopes.addStats(stats);
        }
    }

private:
    struct alignas(64) Shard {
        SpinLock lock;
        Limit limit;
        Table buckets;
        BudgetScopes scopes;
        std::uint64_t evictCursor = 0;
    };

    // A budget chain as the shard sees it: per level its scope (null until it holds a slot), and
    // per candidate (the key, then each level's fallback) its bucket fingerprint.
    struct Chain {
        std::size_t levels = 0;
        std::array<const BucketBudget*, kMaxBudgetLevels> budget{};
        std::array<std::uint64_t, kMaxBudgetLevels> scopeFp{};
        std::array<ScopeSet*, kMaxBudgetLevels> scope{};
        std::array<std::uint64_t, kMaxBudgetLevels + 1> candidate{};
        std::size_t charged = 0;  // the candidate charged: 0 the key, i level i's fallback
        std::int64_t nowMs = 0;
        std::int64_t ttlMs = 0;
    };

    // Whether level i's scope (0-based) admits candidate c: a live member, or a scope with room
    // once its expired slots are dropped.
    static bool admits(Chain& chain, std::size_t i, std::uint64_t c) {
        ScopeSet* scope = chain.scope[i];
        if (!scope) return true;
        if (scope->holds(c, chain.nowMs, chain.ttlMs)) return true;
        const std::uint32_t cap = chain.budget[i]->cap;
        if (scope->size() >= cap) scope->expire(chain.nowMs, chain.ttlMs);
        return scope->size() < cap;
    }

    // Picks the candidate to charge (BucketBudget: the innermost one that every scope above it
    // admits; the outermost fallback always).
    void chooseCandidate(MemoryStoreImpl& store, Shard& shard, const ConsumeRequest& request,
                         std::uint64_t partitionHash, std::uint64_t keyFp, Chain& chain) {
        chain.candidate[0] = keyFp;
        if (!request.budget) return;
        chain.nowMs = request.now / kNanosPerMilli;
        chain.ttlMs =
            toMillisCeil(std::max(request.budget->slotTtl, Algo::freshAfter(*request.limit)));
        for (const BucketBudget* b = request.budget; b && chain.levels < kMaxBudgetLevels;
             b = b->next) {
            const std::size_t i = chain.levels++;
            chain.budget[i] = b;
            chain.scopeFp[i] =
                scopeFingerprint(b->scope, request.partition, partitionHash, store.seed());
            chain.scope[i] = shard.scopes.find(chain.scopeFp[i]);
        }
        for (std::size_t k = 0; k <= chain.levels; ++k) {
            if (k > 0) {
                chain.candidate[k] = store.keyFingerprint(chain.budget[k - 1]->fallbackKey,
                                                          request.partition, partitionHash);
            }
            bool admitted = true;
            for (std::size_t i = k; i < chain.levels && admitted; ++i)
                admitted = admits(chain, i, chain.candidate[k]);
            if (admitted) {
                chain.charged = k;
                return;
            }
        }
    }

    // Returns false when a new bucket is needed and the store is full. With `lastResort`, a full
    // store first charges the nearest enclosing bucket of the chain that already exists (a /64
    // collapses onto its /48's bucket, say): a new client is limited with its network before it
    // is refused.
    bool consumeLocked(MemoryStoreImpl& store, Shard& shard, const ConsumeRequest& request,
                       std::uint64_t partitionHash, std::uint64_t keyFp, ConsumeResult& out,
                       bool lastResort) {
        const Limit& limit = *request.limit;
        Chain chain;
        chooseCandidate(store, shard, request, partitionHash, keyFp, chain);

        Slot* slot = shard.buckets.find(chain.candidate[chain.charged]);
        if (!slot) {
            // Decide on a fresh state first: a refusal of a new key stores nothing.
            State fresh{};
            bool oom = false;
            Decision d = Algo::consume(fresh, request.now, request.cost, limit, oom);
            if (oom) return refuseOutOfMemory(out);
            if (std::memcmp(&fresh, &kFreshState, sizeof(State)) == 0) {
                out.decision = d;
                charged(chain, out);
                recordScopes(shard, chain);
                return true;
            }
            if (!store.reserveBucket()) {
                Algo::release(fresh);
                if (!lastResort) return false;
                for (std::size_t k = chain.charged + 1; k <= chain.levels && !slot; ++k) {
                    chain.candidate[k] = store.keyFingerprint(chain.budget[k - 1]->fallbackKey,
                                                              request.partition, partitionHash);
                    slot = shard.buckets.find(chain.candidate[k]);
                    if (slot) chain.charged = k;
                }
                if (!slot) return false;
                decideExisting(store, *slot, request, out);
                if (out.status != StoreStatus::Ok) return true;
                charged(chain, out);
                refreshMemberships(chain);
                return true;
            }
            evictSome(store, shard, request.now);
            if (shard.buckets.wouldGrow()) growDroppingIdle(store, shard, request.now);
            slot = shard.buckets.insert(chain.candidate[chain.charged], fresh);
            if (!slot) {
                store.releaseBuckets(1);
                Algo::release(fresh);
                return refuseOutOfMemory(out);
            }
            store.addOwnedBytes(static_cast<std::int64_t>(Algo::ownedBytes(fresh)));
            store.noteIdleAt(Algo::idleAt(fresh, limit));
            out.decision = d;
        } else {
            decideExisting(store, *slot, request, out);
            if (out.status != StoreStatus::Ok) return true;
        }
        out.status = StoreStatus::Ok;
        charged(chain, out);
        recordScopes(shard, chain);
        return true;
    }

    static void charged(const Chain& chain, ConsumeResult& out) {
        out.chargedLevel = static_cast<std::uint8_t>(chain.charged);
        out.chargedFallback = chain.charged > 0;
    }

    void decideExisting(MemoryStoreImpl& store, Slot& slot, const ConsumeRequest& request,
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
        if (oom) refuseOutOfMemory(out);
    }

    bool refuseOutOfMemory(ConsumeResult& out) {
        out.status = StoreStatus::Refused;
        out.error = "memory store out of memory";
        return true;
    }

    // After the bucket was decided: the charged key takes or refreshes its slot in every scope
    // above it (chooseCandidate made sure each admits it); scopes at or below a charged
    // fallback stay untouched.
    void recordScopes(Shard& shard, Chain& chain) {
        const std::uint64_t c = chain.candidate[chain.charged];
        for (std::size_t i = chain.charged; i < chain.levels; ++i) {
            ScopeSet*& scope = chain.scope[i];
            if (!scope) scope = shard.scopes.create(chain.scopeFp[i], chain.nowMs);
            if (scope) scope->use(c, chain.nowMs, chain.ttlMs);
        }
    }

    // A last-resort charge of an existing enclosing bucket takes no slot it was not given: it
    // refreshes the scopes that already hold it, so that no scope grows past its cap.
    static void refreshMemberships(Chain& chain) {
        const std::uint64_t c = chain.candidate[chain.charged];
        for (std::size_t i = chain.charged; i < chain.levels; ++i) {
            ScopeSet* scope = chain.scope[i];
            if (scope && scope->holds(c, chain.nowMs, chain.ttlMs))
                scope->use(c, chain.nowMs, chain.ttlMs);
        }
    }

    // The scope's fingerprint. A scope named like its partition (the peerless "global") reuses
    // the partition's hash: one xxh3 fewer per budgeted request.
    static std::uint64_t scopeFingerprint(std::string_view scope, std::string_view partition,
                                          std::uint64_t partitionHash, std::uint64_t seed) {
        if (scope == partition) return nonZero(remix(partitionHash ^ 0x5C0BEULL));
        return nonZero(hashOf(scope, partitionHash ^ ~seed));
    }

    // Looks at a couple of slots past a cursor and evicts the idle ones, so that memory follows
    // the live keys without a background thread.
    void evictSome(MemoryStoreImpl& store, Shard& shard, Nanos now) {
        for (int i = 0; i < kEvictionsPerInsert; ++i) {
            Slot* s = shard.buckets.occupiedFrom(shard.evictCursor);
            if (!s) return;
            if (Algo::idleAt(s->state, shard.limit) <= now) {
                store.addOwnedBytes(-static_cast<std::int64_t>(Algo::ownedBytes(s->state)));
                Algo::release(s->state);
                shard.buckets.erase(s);
                store.releaseBuckets(1);
            } else {
                ++shard.evictCursor;
            }
        }
    }

    void growDroppingIdle(MemoryStoreImpl& store, Shard& shard, Nanos now) {
        const std::uint64_t capacity = shard.buckets.capacity();
        rebuildDroppingIdle(store, shard, now, capacity + capacity / 4);
    }

    // Rebuilds the shard's buckets into `capacity` slots without the idle ones (releasing what
    // they own) and returns the earliest time a surviving bucket goes idle.
    Nanos rebuildDroppingIdle(MemoryStoreImpl& store, Shard& shard, Nanos now,
                              std::uint64_t capacity) {
        Nanos next = std::numeric_limits<Nanos>::max();
        std::int64_t evicted = 0;
        std::int64_t freed = 0;
        shard.buckets.rebuild(capacity, [&](const Slot& s) {
            const Nanos idle = Algo::idleAt(s.state, shard.limit);
            if (idle > now) {
                next = std::min(next, idle);
                return true;
            }
            State dropped = s.state;
            freed += static_cast<std::int64_t>(Algo::ownedBytes(dropped));
            Algo::release(dropped);
            ++evicted;
            return false;
        });
        store.releaseBuckets(evicted);
        store.addOwnedBytes(-freed);
        return next;
    }

    static constexpr State kFreshState{};

    const unsigned shardCount_;
    const unsigned shardShift_;
    std::unique_ptr<Shard[]> shards_;
};

ConsumeResult MemoryStoreImpl::consume(const ConsumeRequest& request) {
    ConsumeResult out;
    LimitTableBase* t = table(request);
    if (!t) {
        out.status = StoreStatus::Refused;
        out.error = "limit id out of range or reused with another algorithm";
        return out;
    }
    const std::uint64_t partitionHash = hashOf(request.partition, seed_);
    // A key that is its own partition (principal, header and composite keys) is hashed once.
    const std::uint64_t keyFp = keyFingerprint(request.key, request.partition, partitionHash);
    algo::visitAlgorithm(t->algorithm(), [&](auto traits) {
        auto* typed = static_cast<LimitTable<decltype(traits)>*>(t);
        if (!typed->consumeFast(request, partitionHash, keyFp, out)) {
            typed->consumeSlow(*this, request, partitionHash, keyFp, out);
        }
    });
    return out;
}

LimitTableBase* MemoryStoreImpl::table(const ConsumeRequest& request) {
    if (request.limitId >= kMaxLimits) return nullptr;
    std::atomic<LimitTableBase*>& entry = tables_[request.limitId];
    LimitTableBase* t = entry.load(std::memory_order_acquire);
    if (!t) {
        LimitTableBase* created =
            algo::visitAlgorithm(request.limit->algorithm, [&](auto traits) -> LimitTableBase* {
                return new (std::nothrow) LimitTable<decltype(traits)>(request.limit->algorithm);
            });
        if (!created) return nullptr;
        if (entry.compare_exchange_strong(t, created, std::memory_order_acq_rel)) {
            t = created;
        } else {
            delete created;  // another thread installed one first
        }
    }
    return t->algorithm() == request.limit->algorithm ? t : nullptr;
}

void MemoryStoreImpl::sweepAll(Nanos now) {
    std::lock_guard<std::mutex> guard(sweepMutex_);
    if (now < nextSweep_.load(std::memory_order_relaxed)) return;  // nothing can be idle yet
    Nanos next = std::numeric_limits<Nanos>::max();
    for (auto& entry : tables_) {
        if (LimitTableBase* t = entry.load(std::memory_order_acquire)) {
            next = std::min(next, t->sweep(*this, now));
        }
    }
    // Buckets inserted from now on lower it again (noteIdleAt).
    nextSweep_.store(next, std::memory_order_relaxed);
}

KeyspaceStats MemoryStoreImpl::keyspace() const {
    KeyspaceStats stats;
    stats.buckets = live_.load(std::memory_order_relaxed);
    stats.maxBuckets = maxBuckets_;
    stats.bytes = ownedBytes_.load(std::memory_order_relaxed);
    for (const auto& entry : tables_) {
        if (LimitTableBase* t = entry.load(std::memory_order_acquire)) t->addStats(stats);
    }
    return stats;
}

}  // namespace
}  // namespace memory

std::unique_ptr<Store> makeMemoryStore(const MemoryStoreOptions& options) {
    return std::make_unique<memory::MemoryStoreImpl>(options);
}

}  // namespace ratelab
