#pragma once

// Which bucket a budgeted request charges in the memory store (BucketBudget): its own key when
// every scope above it admits it, else the innermost fallback whose scopes above admit it, the
// outermost fallback always; and the scope slots the charge takes or refreshes. Every key of a
// chain lives in the request's partition, so in one shard: all of this runs under that shard's
// lock (memory/limit_table.h). Not thread-safe.

#include <array>
#include <cstdint>

#include "memory/budget_scopes.h"
#include "memory/fingerprint.h"
#include "ratelab/store.h"

namespace ratelab::memory {

/// A request's hashes, computed before any lock is taken. No default member values: a run's
/// array of kMaxRun of them was zero-filled per call for nothing (768 bytes, a `rep stos`);
/// whoever makes one sets all three.
struct HashedRequest {
    std::uint64_t partition;  ///< partitionHash(): picks the shard
    std::uint64_t key;        ///< keyFingerprint(): the bucket asked for
    /// scopeFingerprint() of the innermost budget level, when it was computed ahead of the
    /// lock; 0 otherwise (no fingerprint is 0).
    std::uint64_t scope;
};

/// A request's budget chain as its shard sees it: per level its scope (null until it holds a
/// slot), and per candidate (the key, then each level's fallback) its bucket fingerprint.
/// Only the first `levels` entries of the arrays, and the candidates up to the one charged (or
/// tried last), are ever written or read: left uninitialised, since zeroing the whole chain on
/// every request weighs on the store's budgeted path. choose() and record() inline into the
/// store's locked path, which they are part of (docs/BENCHMARKS.md, "Why the code is as it is").
struct BudgetChain {
    std::size_t levels = 0;
    std::array<const BucketBudget*, kMaxBudgetLevels> budget;
    std::array<std::uint64_t, kMaxBudgetLevels> scopeFp;
    std::array<ScopeSet*, kMaxBudgetLevels> scope;
    std::array<std::uint64_t, kMaxBudgetLevels + 1> candidate;
    std::size_t charged = 0;  ///< the candidate charged: 0 the key, k level k's fallback
    std::int64_t nowMs = 0;
    std::int64_t ttlMs = 0;

    /// Picks the candidate to charge. Without a budget, the key.
    ///
    /// Each level's scope holds one slot per bucket it admitted, stamped with the bucket's last
    /// use; slots expire max(slotTtl, the time the limit takes to become fresh, Algo::freshAfter)
    /// after their last use, so a slot always outlives its bucket.
    template <class Algo>
    [[gnu::always_inline]] void choose(BudgetScopes& scopes, const ConsumeRequest& request,
                                       const HashedRequest& h, std::uint64_t seed) {
        candidate[0] = h.key;
        if (!request.budget) return;
        nowMs = request.now / kNanosPerMilli;
        ttlMs = slotLifetimeMillis(*request.budget, Algo::freshAfter(*request.limit));
        for (const BucketBudget* b = request.budget; b && levels < kMaxBudgetLevels; b = b->next) {
            const std::size_t i = levels++;
            budget[i] = b;
            scopeFp[i] = i == 0 && h.scope != 0
                             ? h.scope
                             : scopeFingerprint(b->scope, request.partition, h.partition, seed);
            scope[i] = scopes.find(scopeFp[i]);
        }
        for (std::size_t k = 0; k <= levels; ++k) {
            if (k > 0) candidate[k] = fallback(k, request, h, seed);
            bool admitted = true;
            for (std::size_t i = k; i < levels && admitted; ++i)
                admitted = admits(i, candidate[k]);
            if (admitted) {
                charged = k;
                return;
            }
        }
    }

    /// Level k's fallback bucket (1 <= k <= levels).
    std::uint64_t fallback(std::size_t k, const ConsumeRequest& request, const HashedRequest& h,
                           std::uint64_t seed) const {
        return keyFingerprint(budget[k - 1]->fallbackKey, request.partition, h.partition, seed);
    }

    /// The charged candidate, as the result reports it.
    void reportCharged(ConsumeResult& out) const {
        out.chargedLevel = static_cast<std::uint8_t>(charged);
        out.chargedFallback = charged > 0;
    }

    /// After the bucket was decided: the charged key takes or refreshes its slot in every scope
    /// above it (choose() made sure each admits it); scopes at or below a charged fallback stay
    /// untouched.
    [[gnu::always_inline]] void record(BudgetScopes& scopes) {
        const std::uint64_t c = candidate[charged];
        for (std::size_t i = charged; i < levels; ++i) {
            if (!scope[i]) scope[i] = scopes.create(scopeFp[i], nowMs);
            if (scope[i]) scope[i]->use(c, nowMs, ttlMs);
        }
    }

    /// A last-resort charge of an existing enclosing bucket takes no slot it was not given: it
    /// refreshes the scopes that already hold it, so that no scope grows past its cap.
    void refreshMemberships() {
        const std::uint64_t c = candidate[charged];
        for (std::size_t i = charged; i < levels; ++i) {
            if (scope[i] && scope[i]->holds(c, nowMs, ttlMs)) scope[i]->use(c, nowMs, ttlMs);
        }
    }

private:
    // Whether level i's scope (0-based) admits candidate c: a live member, or a scope with room
    // once its expired slots are dropped.
    bool admits(std::size_t i, std::uint64_t c) {
        ScopeSet* s = scope[i];
        if (!s) return true;
        if (s->holds(c, nowMs, ttlMs)) return true;
        const std::uint32_t cap = budget[i]->cap;
        if (s->size() >= cap) s->expire(nowMs, ttlMs);
        return s->size() < cap;
    }
};

}  // namespace ratelab::memory
