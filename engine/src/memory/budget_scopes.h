#pragma once

// Bucket budgets in the memory store: a scope ("peer:198.51.100.7", "global") holds a slot per
// bucket it admitted, stamped with the bucket's last use; a slot unused for the scope's TTL
// expires. The memory store keeps a shard's scopes in the shard, so the budget check and the
// consumption take one lock. Not thread-safe.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <new>

#include "memory/flat_table.h"
#include "ratelab/store.h"

namespace ratelab::memory {

/// Where the scope tables count as large (FlatTable): 1 MiB, the L2 of the machine the store's
/// figures come from. A scope's own slots run half full at every size, so for them it only
/// decides how much a table grows at a time.
inline constexpr std::size_t kScopeLargeBytes = std::size_t(1) << 20;

/// One scope's slots: bucket fingerprint -> last use, in whole milliseconds. The first
/// kInline slots live in the object itself, and a table takes over from the one after: most
/// scopes hold a slot or two (a peer with its one credential), and the table's own array was one
/// more cache miss, behind the scope's, on every budgeted request of a returning client.
class alignas(64) ScopeSet {
public:
    /// Slots held, expired ones included until expire() drops them.
    std::uint64_t size() const { return spilled_ ? slots_.size() : inlineCount_; }
    std::size_t bytes() const { return sizeof(ScopeSet) + slots_.bytes(); }

    /// Whether `bucket` holds a slot still live at nowMs.
    bool holds(std::uint64_t bucket, std::int64_t nowMs, std::int64_t ttlMs) {
        const std::int64_t* lastUse = find(bucket);
        return lastUse && *lastUse + ttlMs > nowMs;
    }

    /// Drops the slots unused for ttlMs. Cheap to call often: skips while none can have expired.
    void expire(std::int64_t nowMs, std::int64_t ttlMs) {
        // Written so that it cannot overflow: an empty scope's earliest use is the largest time.
        if (earliestUseMs_ > nowMs - ttlMs) return;
        std::int64_t earliest = std::numeric_limits<std::int64_t>::max();
        if (spilled_) {
            slots_.rebuild(slots_.capacity(), kScopeLargeBytes, [&](const auto& slot) {
                if (slot.state + ttlMs <= nowMs) return false;
                earliest = std::min(earliest, slot.state);
                return true;
            });
        } else {
            std::uint32_t kept = 0;
            for (std::uint32_t i = 0; i < inlineCount_; ++i) {
                if (inline_[i].lastUseMs + ttlMs <= nowMs) continue;
                earliest = std::min(earliest, inline_[i].lastUseMs);
                inline_[kept++] = inline_[i];
            }
            inlineCount_ = kept;
        }
        earliestUseMs_ = earliest;
    }

    /// Marks `bucket` used at nowMs: refreshes its slot, or takes a new one (none when memory
    /// cannot be had). The scope's TTL becomes ttlMs (the latest use decides when the whole
    /// scope may go).
    void use(std::uint64_t bucket, std::int64_t nowMs, std::int64_t ttlMs) {
        if (std::int64_t* lastUse = find(bucket)) {
            *lastUse = nowMs;
        } else if (!spilled_ && inlineCount_ < kInline) {
            inline_[inlineCount_++] = Member{bucket, nowMs};
        } else if (spill()) {
            slots_.insert(bucket, nowMs, kScopeLargeBytes);
        }
        earliestUseMs_ = std::min(earliestUseMs_, nowMs);  // also when a clock steps back
        ttlMs_ = ttlMs;
    }

    /// Slots live at nowMs under the scope's TTL (the latest use's), expired ones not yet
    /// dropped left out.
    std::uint64_t liveCount(std::int64_t nowMs) const {
        std::uint64_t live = 0;
        if (spilled_) {
            slots_.forEach([&](const auto& slot) { live += slot.state + ttlMs_ > nowMs; });
        } else {
            for (std::uint32_t i = 0; i < inlineCount_; ++i)
                live += inline_[i].lastUseMs + ttlMs_ > nowMs;
        }
        return live;
    }

    /// Whether every slot has expired at nowMs (dropping them on the way).
    bool expiredAll(std::int64_t nowMs) {
        expire(nowMs, ttlMs_);
        return size() == 0;
    }

private:
    static constexpr std::uint32_t kInline = 2;
    struct Member {
        std::uint64_t bucket;
        std::int64_t lastUseMs;
    };

    std::int64_t* find(std::uint64_t bucket) {
        if (spilled_) {
            auto* slot = slots_.find(bucket);
            return slot ? &slot->state : nullptr;
        }
        for (std::uint32_t i = 0; i < inlineCount_; ++i) {
            if (inline_[i].bucket == bucket) return &inline_[i].lastUseMs;
        }
        return nullptr;
    }

    // Moves the inline slots into the table, for good; false, nothing moved, when its array
    // cannot be had. The table's first array holds kInline + 1 slots without growing.
    bool spill() {
        if (spilled_) return true;
        for (std::uint32_t i = 0; i < inlineCount_; ++i) {
            if (!slots_.insert(inline_[i].bucket, inline_[i].lastUseMs, kScopeLargeBytes)) {
                return false;
            }
        }
        inlineCount_ = 0;
        spilled_ = true;
        return true;
    }

    // What every request of an inline scope reads, in its first cache line.
    Member inline_[kInline];
    std::int64_t ttlMs_ = 0;
    std::int64_t earliestUseMs_ = std::numeric_limits<std::int64_t>::max();  ///< a lower bound
    std::uint32_t inlineCount_ = 0;
    bool spilled_ = false;
    // Rotation asks mostly about buckets a scope lacks, which walks a whole probe run: keep the
    // runs short, at most half full at every size (bucket tables run fuller once large).
    FlatTable<std::int64_t, 50, 50> slots_;
};

/// A shard's scopes by fingerprint; owns them.
class BudgetScopes {
public:
    BudgetScopes() = default;
    BudgetScopes(const BudgetScopes&) = delete;
    BudgetScopes& operator=(const BudgetScopes&) = delete;
    ~BudgetScopes() {
        scopes_.forEach([](auto& slot) { delete slot.state; });
    }

    /// Brings in the slot `scope` would have; safe without the shard's lock
    /// (FlatTable::prefetchUnlocked).
    void prefetchUnlocked(std::uint64_t scope) const { scopes_.prefetchUnlocked(scope); }

    ScopeSet* find(std::uint64_t scope) {
        auto* slot = scopes_.find(scope);
        return slot ? slot->state : nullptr;
    }

    /// A new, empty scope; null when memory cannot be had. Before the table grows it drops a
    /// couple of wholly expired scopes, so memory follows the live scopes.
    ScopeSet* create(std::uint64_t scope, std::int64_t nowMs) {
        if (scopes_.wouldGrow(kScopeLargeBytes)) sweep(nowMs, /*all=*/false);
        auto* set = new (std::nothrow) ScopeSet;
        if (!set) return nullptr;
        if (!scopes_.insert(scope, set, kScopeLargeBytes)) {
            delete set;
            return nullptr;
        }
        return set;
    }

    /// Deletes scopes whose every slot has expired: all of them, or a couple past a cursor.
    void sweep(std::int64_t nowMs, bool all) {
        if (all) {
            scopes_.rebuild(scopes_.capacity(), kScopeLargeBytes, [&](const auto& slot) {
                if (!slot.state->expiredAll(nowMs)) return true;
                delete slot.state;
                return false;
            });
            return;
        }
        for (int i = 0; i < 2; ++i) {
            auto* slot = scopes_.occupiedFrom(cursor_);
            if (!slot) return;
            if (slot->state->expiredAll(nowMs)) {
                delete slot->state;
                scopes_.erase(slot);
            } else {
                ++cursor_;
            }
        }
    }

    void addStats(KeyspaceStats& stats) {
        stats.bytes += static_cast<std::int64_t>(scopes_.bytes());
        scopes_.forEach([&](auto& slot) {
            stats.scopes += 1;
            stats.budgetSlots += static_cast<std::int64_t>(slot.state->size());
            stats.bytes += static_cast<std::int64_t>(slot.state->bytes());
        });
    }

    /// Keyspace::keyspaceAt's figures: the slots live at nowMs and the scopes holding one.
    void addLiveStats(KeyspaceStats& stats, std::int64_t nowMs) const {
        scopes_.forEach([&](const auto& slot) {
            const std::uint64_t live = slot.state->liveCount(nowMs);
            stats.scopes += live > 0;
            stats.budgetSlots += static_cast<std::int64_t>(live);
        });
    }

private:
    FlatTable<ScopeSet*> scopes_;
    std::uint64_t cursor_ = 0;
};

}  // namespace ratelab::memory
