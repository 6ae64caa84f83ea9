#pragma once

// HAProxy's rate counter (a stick table's `http_req_rate(PERIOD)` read by `sc_http_req_rate gt
// X`), reproduced arithmetic for arithmetic so that an imported HAProxy limit and HAProxy decide
// alike. The counter keeps the tick T where its current period started, the events C counted in
// that period and the events P of the period before, in integer milliseconds:
//   counting at `now`: C += n while now - T < p; else the period rotates (P = C, C = n,
//     T += p), and after two periods or more without events P = 0 and T = now; T is always even
//     (HAProxy keeps a lock in the tick's low bit).
//   reading at `now`: r = T + p - now, the part of the current period still to come; past the
//     period's end r += p, P' = C (0 past two periods), C' = 0. The estimate is P' when C' == 0
//     and P' <= 1, else C' + floor(P' * r / p).
// A request is refused when the estimate exceeds the capacity X, HAProxy's `gt X`. With
// count_refused (HAProxy's `track-sc` before its `deny`) every request is counted first and the
// estimate read after it; without (the `deny` before the `track-sc`) the estimate is read first
// and only an admitted request is counted, so a new period admits X + 1 requests, as HAProxy
// does. A cost n > 1 counts n events; read first, it is judged as if n - 1 of them were counted.
// An entry unused for `expire` (the table's expire) is gone: the next request finds a new one.
//
// Differences from HAProxy, deliberate: time is the caller's milliseconds on 64 bits, not a tick
// wrapping at 2^32 (a new entry starts its period at its first request, where HAProxy's first
// rotation depends on the tick's value), a clock stepping back stays at the latest time counted,
// and the counts stop at kHaproxyMaxCount (HAProxy's 32-bit counts wrap), which keeps the state
// in 16 bytes, the size of the other algorithms' states.

#include <algorithm>
#include <cstdint>
#include <limits>

#include "algorithms/leaky_bucket.h"
#include "ratelab/limit.h"

namespace ratelab::algorithms {

/// Where the counts stop: 2^26 - 1 events in one period of one key.
inline constexpr std::int64_t kHaproxyMaxCount = (std::int64_t{1} << 26) - 1;
/// HAProxy's longest period (its time values stop at 2^31 - 1 ms).
inline constexpr std::int64_t kHaproxyMaxPeriodMs = (std::int64_t{1} << 31) - 1;
/// The milliseconds the state can hold: a 44-bit signed number, +-278 years around 0.
inline constexpr std::int64_t kHaproxyMaxMs = (std::int64_t{1} << 43) - 1;

/// The counter unpacked, in plain integers.
struct HaproxyCounter {
    bool used = false;          ///< false: no entry (new, or gone after `expire`)
    std::int64_t lastMs = 0;    ///< when the entry was last counted (HAProxy's touch)
    std::int64_t tickMs = 0;    ///< T, even
    std::int64_t current = 0;   ///< C
    std::int64_t previous = 0;  ///< P
};

/// The counter packed in 16 bytes: lo = lastMs (44 bits, two's complement) | the low 20 bits of
/// lastMs - T; hi = the high 11 bits of lastMs - T | C (26 bits) | P (26 bits) | used (1 bit).
/// lastMs - T is at most the period, below 2^31. All zeros is an unused entry.
struct HaproxyRateState {
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;
};

inline HaproxyCounter unpack(const HaproxyRateState& s) {
    HaproxyCounter c;
    c.used = (s.hi >> 63) != 0;
    c.lastMs = static_cast<std::int64_t>(s.lo << 20) >> 20;
    const std::int64_t since = static_cast<std::int64_t>((s.lo >> 44) | ((s.hi & 0x7ff) << 20));
    c.tickMs = c.lastMs - since;
    c.current = static_cast<std::int64_t>((s.hi >> 11) & kHaproxyMaxCount);
    c.previous = static_cast<std::int64_t>((s.hi >> 37) & kHaproxyMaxCount);
    return c;
}

/// REQUIRES: c.used, |c.lastMs| <= kHaproxyMaxMs, 0 <= lastMs - tickMs < 2^31, counts in
/// [0, kHaproxyMaxCount].
inline HaproxyRateState pack(const HaproxyCounter& c) {
    const auto since = static_cast<std::uint64_t>(c.lastMs - c.tickMs);
    HaproxyRateState s;
    s.lo = (static_cast<std::uint64_t>(c.lastMs) & ((std::uint64_t{1} << 44) - 1)) |
           ((since & 0xfffff) << 44);
    s.hi = (since >> 20) | static_cast<std::uint64_t>(c.current) << 11 |
           static_cast<std::uint64_t>(c.previous) << 37 | std::uint64_t{1} << 63;
    return s;
}

inline std::int64_t haproxyPeriodMs(const Limit& limit) {
    return limit.window / kNanosPerMilli;
}

inline std::int64_t haproxyExpireMs(const Limit& limit) {
    return limit.expire / kNanosPerMilli;
}

/// The time HAProxy's counter sees: whole ms, within what the state holds.
inline std::int64_t haproxyMillis(Nanos now) {
    return std::clamp(toMillis(now), -kHaproxyMaxMs, kHaproxyMaxMs);
}

/// The entry as found at `nowMs`: unused if it never was or `expire` has passed since its last
/// count. REQUIRES: nowMs >= c.lastMs when c.used.
inline HaproxyCounter haproxyFind(const HaproxyCounter& c, std::int64_t nowMs, const Limit& limit) {
    const std::int64_t expireMs = haproxyExpireMs(limit);
    if (c.used && expireMs > 0 && nowMs - c.lastMs >= expireMs) return HaproxyCounter{};
    return c;
}

/// HAProxy's update_freq_ctr_period: `n` events at `nowMs`. REQUIRES: nowMs >= c.lastMs.
inline HaproxyCounter haproxyCount(HaproxyCounter c, std::int64_t nowMs, std::int64_t n,
                                   std::int64_t periodMs) {
    const auto even = [](std::int64_t t) { return t - (t & 1); };  // floor to even, t < 0 too
    if (!c.used) {
        c = HaproxyCounter{true, nowMs, even(nowMs), std::min(n, kHaproxyMaxCount), 0};
        return c;
    }
    if (nowMs - c.tickMs < periodMs) {
        c.current = std::min(c.current + n, kHaproxyMaxCount);
    } else {
        c.previous = c.current;
        c.current = std::min(n, kHaproxyMaxCount);
        std::int64_t tick = c.tickMs + periodMs;
        if (nowMs - tick >= periodMs) {  // two periods or more without events
            c.previous = 0;
            tick = nowMs;
        }
        c.tickMs = even(tick);
    }
    c.lastMs = nowMs;
    return c;
}

/// HAProxy's read_freq_ctr_period at `nowMs`: the estimate. 0 for an unused entry.
inline std::int64_t haproxyRead(const HaproxyCounter& c, std::int64_t nowMs,
                                std::int64_t periodMs) {
    if (!c.used) return 0;
    std::int64_t r = c.tickMs + periodMs - nowMs;
    std::int64_t previous = c.previous;
    std::int64_t current = c.current;
    if (r < 0) {
        r += periodMs;
        previous = r >= 0 ? current : 0;
        current = 0;
    }
    if (current == 0 && previous <= 1) return previous;  // HAProxy's low-rate correction
    // previous < 2^26 and r <= 2 * period < 2^32: the product fits in 64 bits.
    return current + previous * r / periodMs;
}

/// The estimate a request of `cost` would be judged by at `nowMs` (not counting it).
inline std::int64_t haproxyJudged(const HaproxyCounter& c, std::int64_t nowMs, std::int64_t cost,
                                  const Limit& limit) {
    const std::int64_t periodMs = haproxyPeriodMs(limit);
    const HaproxyCounter found = haproxyFind(c, nowMs, limit);
    if (limit.countRefused)
        return haproxyRead(haproxyCount(found, nowMs, cost, periodMs), nowMs, periodMs);
    return haproxyRead(found, nowMs, periodMs) + cost - 1;
}

/// The largest cost that can ever pass: the capacity, or one more when reading first.
constexpr std::int64_t haproxyMostCost(const Limit& limit) {
    return limit.countRefused ? limit.capacity : limit.capacity + 1;
}

/// When the entry becomes the same as a new one, in ns: past two periods after T (every read
/// then finds 0 and every count starts a new period) or at `expire` after its last count.
inline Nanos haproxyIdleAt(const HaproxyRateState& s, const Limit& limit) {
    const HaproxyCounter c = unpack(s);
    if (!c.used) return std::numeric_limits<Nanos>::min();
    std::int64_t ms = c.tickMs + 2 * haproxyPeriodMs(limit) + 1;
    const std::int64_t expireMs = haproxyExpireMs(limit);
    if (expireMs > 0) ms = std::min(ms, c.lastMs + expireMs);
    return ms * kNanosPerMilli;
}

/// Time from `now` until the entry is the same as a new one; 0 for an unused entry.
inline Nanos haproxyResetAfter(const HaproxyRateState& s, Nanos now, const Limit& limit) {
    if (!unpack(s).used) return 0;
    return std::max<Nanos>(0, haproxyIdleAt(s, limit) - now);
}

/// The first ms at or after `fromMs` at which a request of `cost` would pass: the estimate only
/// falls as time passes, and a new entry admits any cost up to haproxyMostCost().
/// REQUIRES: 1 <= cost <= haproxyMostCost(limit).
inline std::int64_t haproxyPassMs(const HaproxyCounter& c, std::int64_t fromMs, std::int64_t cost,
                                  const Limit& limit) {
    std::int64_t lo = fromMs;
    std::int64_t hi = std::max(fromMs, c.tickMs + 2 * haproxyPeriodMs(limit) + 1);
    while (lo < hi) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        if (haproxyJudged(c, mid, cost, limit) <= limit.capacity) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return lo;
}

/// One request of `cost` at `now` (cost 0: a check that counts nothing). Decision::remaining is
/// capacity minus the estimate; retryAfter is when a request of the same cost would pass.
/// REQUIRES: 0 <= limit.capacity < kHaproxyMaxCount, limit.window a whole number of ms in
/// [1 ms, kHaproxyMaxPeriodMs ms], limit.expire a whole number of ms >= 0, cost >= 0.
[[gnu::always_inline]] inline Decision haproxyRateConsume(HaproxyRateState& state, Nanos now,
                                                          std::int64_t cost, const Limit& limit) {
    const std::int64_t periodMs = haproxyPeriodMs(limit);
    HaproxyCounter c = unpack(state);
    // A clock stepping back stays at the latest time counted.
    const std::int64_t nowMs = c.used ? std::max(haproxyMillis(now), c.lastMs) : haproxyMillis(now);
    const HaproxyCounter found = haproxyFind(c, nowMs, limit);
    Decision d;
    d.limit = limit.capacity;
    if (cost > haproxyMostCost(limit)) {
        d.reason = DenyReason::CostExceedsCapacity;
        d.remaining =
            std::max<std::int64_t>(0, limit.capacity - haproxyRead(found, nowMs, periodMs));
        d.resetAfter = haproxyResetAfter(state, now, limit);
        return d;
    }
    const std::int64_t estimate =
        cost == 0 ? haproxyRead(found, nowMs, periodMs) : haproxyJudged(found, nowMs, cost, limit);
    d.allowed = estimate <= limit.capacity;
    d.remaining = std::max<std::int64_t>(0, limit.capacity - estimate);
    if (cost > 0 && (d.allowed || limit.countRefused)) {
        state = pack(haproxyCount(found, nowMs, cost, periodMs));
    }
    if (!d.allowed) {
        d.reason = DenyReason::OverLimit;
        const HaproxyCounter after = unpack(state);
        const std::int64_t passMs = haproxyPassMs(after, nowMs + 1, cost, limit);
        d.retryAfter = std::max<Nanos>(1, passMs * kNanosPerMilli - now);
    }
    d.resetAfter = haproxyResetAfter(state, now, limit);
    return d;
}

}  // namespace ratelab::algorithms
