#include "redis/over_limit_cache.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <mutex>

namespace ratelab::redis {

namespace {

Nanos saturatingAdd(Nanos a, Nanos b) {
    Nanos sum = 0;
    if (__builtin_add_overflow(a, b, &sum)) return b > 0 ? INT64_MAX : INT64_MIN;
    return sum;
}

}  // namespace

OverLimitCache::OverLimitCache(std::size_t entries)
    : mask_(std::bit_ceil(std::max<std::size_t>(entries, 64)) - 1)
    , entries_(new Entry[mask_ + 1])
    , locks_(new memory::SpinLock[kStripes]) {}

bool OverLimitCache::find(std::uint64_t fingerprint, std::int64_t cost, Nanos now,
                          Decision* decision) {
    const std::size_t index = fingerprint & mask_;
    std::lock_guard<memory::SpinLock> lock(locks_[index % kStripes]);
    const Entry& e = entries_[index];
    if (e.fingerprint != fingerprint || e.cost != cost || now >= e.retryAt) return false;
    decision->allowed = false;
    decision->reason = DenyReason::OverLimit;
    decision->limit = e.limit;
    decision->remaining = e.remaining;
    decision->retryAfter = e.retryAt - now;
    decision->resetAfter = std::max<Nanos>(0, e.resetAt - now);
    decision->delay = 0;
    return true;
}

void OverLimitCache::remember(std::uint64_t fingerprint, std::int64_t cost, Nanos now,
                              const Decision& refusal) {
    if (refusal.allowed || refusal.reason != DenyReason::OverLimit || refusal.retryAfter <= 0)
        return;
    const std::size_t index = fingerprint & mask_;
    std::lock_guard<memory::SpinLock> lock(locks_[index % kStripes]);
    Entry& e = entries_[index];
    e.fingerprint = fingerprint;
    e.cost = cost;
    e.retryAt = saturatingAdd(now, refusal.retryAfter);
    e.resetAt = saturatingAdd(now, refusal.resetAfter);
    e.remaining = refusal.remaining;
    e.limit = refusal.limit;
}

void OverLimitCache::forget(std::uint64_t fingerprint) {
    const std::size_t index = fingerprint & mask_;
    std::lock_guard<memory::SpinLock> lock(locks_[index % kStripes]);
    if (entries_[index].fingerprint == fingerprint) entries_[index].fingerprint = 0;
}

}  // namespace ratelab::redis
