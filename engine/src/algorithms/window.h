#pragma once

// Window algorithms. A key's windows start at its first request and tile time from there:
// [start, start + W), [start + W, start + 2W), ...
//
// Fixed window (the fixed-window seed's semantics): the first Q units pass; the request that
// takes the count past Q is refused and still counted; the window is never extended; the first
// request at or after start + W opens a new window. Aligned on the calendar
// (WindowAlign::Calendar), the window a request opens is the calendar's window holding it
// (calendar.h), the same for every key; the rest is alike. A clock stepping back keeps a key in
// the window it is in until that window's end, whatever the alignment.
//
// Sliding window counter (approximate): the previous window's count, weighted by how much of
// it the sliding window [now - W, now) still covers, plus the current window's count. The
// weight is quantised to 1/65536 so that the Redis script computes the very same integers.

#include <algorithm>
#include <cstdint>
#include <limits>

#include "algorithms/calendar.h"
#include "ratelab/limit.h"

namespace ratelab::algorithms {

struct FixedWindowState {
    static constexpr Nanos kFresh = std::numeric_limits<Nanos>::min();
    Nanos windowEnd = kFresh;  ///< kFresh: never used
    std::int64_t count = 0;    ///< units charged in this window, refused ones included
};

inline bool isIdle(const FixedWindowState& s, Nanos now) {
    return s.windowEnd <= now;
}

/// REQUIRES: limit.capacity >= 1, limit.window >= 1 ms (unless months or years), cost >= 0 (0:
/// a check).
[[gnu::always_inline]] inline Decision fixedWindowConsume(FixedWindowState& state, Nanos now,
                                                          std::int64_t cost, const Limit& limit) {
    Decision d;
    d.limit = limit.capacity;
    const bool expired = state.windowEnd <= now;  // fresh keys too (kFresh is the minimum)
    const std::int64_t count = expired ? 0 : state.count;
    const Nanos windowEnd = !expired ? state.windowEnd
                            : limit.align == WindowAlign::FirstRequest
                                ? now + limit.window
                                : alignedWindowEnd(now, limit);
    d.resetAfter = windowEnd - now;
    if (cost > limit.capacity) {
        d.reason = DenyReason::CostExceedsCapacity;
        d.remaining = std::max<std::int64_t>(0, limit.capacity - count);
        if (expired) d.resetAfter = 0;  // nothing was opened
        return d;
    }
    // Refused requests still count; saturate far below overflow.
    state.count =
        std::min<std::int64_t>(count + cost, std::numeric_limits<std::int64_t>::max() / 2);
    state.windowEnd = windowEnd;
    d.allowed = state.count <= limit.capacity;
    d.remaining = std::max<std::int64_t>(0, limit.capacity - state.count);
    if (!d.allowed) {
        d.reason = DenyReason::OverLimit;
        d.retryAfter = windowEnd - now;
    }
    return d;
}

/// Settles a charge on a fixed-window key (Store::settle): `cost` units more (a penalty, > 0) or
/// back (a refund, < 0), only in the window the charge went into (`windowEnd`, the stamp) and
/// only while it lasts. A refund stops at a count of 0; a penalty spends what is left of the
/// quota, never more (refused requests past the quota still count, as they always do).
/// Returns whether the key was adjusted. REQUIRES: cost != 0.
inline bool fixedWindowSettle(FixedWindowState& state, Nanos now, std::int64_t cost,
                              const Limit& limit, Nanos windowEnd) {
    if (state.windowEnd != windowEnd || state.windowEnd <= now) return false;
    if (cost < 0) {
        state.count = state.count > -cost ? state.count + cost : 0;
    } else if (state.count < limit.capacity) {
        state.count = limit.capacity - state.count > cost ? state.count + cost : limit.capacity;
    }
    return true;
}

struct SlidingWindowState {
    static constexpr Nanos kFresh = std::numeric_limits<Nanos>::min();
    Nanos windowStart = kFresh;  ///< start of the current window; kFresh: never used
    std::uint32_t current = 0;   ///< units admitted in the current window
    std::uint32_t previous = 0;  ///< units admitted in the window before it
};

/// floor((W - into) * 65536 / W): the share of the previous window still inside the sliding
/// window, in 1/65536. REQUIRES: 0 <= into <= W.
inline std::int64_t previousWeight(Nanos into, Nanos window) {
    using Wide = unsigned __int128;
    return static_cast<std::int64_t>((static_cast<Wide>(window - into) << 16) /
                                     static_cast<Wide>(window));
}

/// The state rolled forward to the window holding `now`; time going backwards stays put.
inline SlidingWindowState rollForward(const SlidingWindowState& s, Nanos now, Nanos window) {
    if (s.windowStart == SlidingWindowState::kFresh) return SlidingWindowState{now, 0, 0};
    if (now < s.windowStart + window) return s;
    const std::int64_t passed = (now - s.windowStart) / window;
    if (passed >= 2) return SlidingWindowState{now, 0, 0};  // idle (slidingIdleAt): a new key
    SlidingWindowState r;
    r.windowStart = s.windowStart + passed * window;
    r.previous = passed == 1 ? s.current : 0;
    r.current = 0;
    return r;
}

inline Nanos slidingIdleAt(const SlidingWindowState& s, Nanos window) {
    if (s.windowStart == SlidingWindowState::kFresh) return std::numeric_limits<Nanos>::min();
    return s.windowStart + (s.current > 0 ? 2 : 1) * window;
}

inline bool isIdle(const SlidingWindowState& s, Nanos now, Nanos window) {
    return slidingIdleAt(s, window) <= now;
}

/// The weighted count at `into` nanoseconds after `r.windowStart`.
inline std::int64_t slidingEstimate(const SlidingWindowState& r, Nanos into, Nanos window) {
    return ((static_cast<std::int64_t>(r.previous) * previousWeight(into, window)) >> 16) +
           r.current;
}

/// REQUIRES: 1 <= limit.capacity <= UINT32_MAX, limit.window >= 1 ms, cost >= 0 (0: a check).
[[gnu::always_inline]] inline Decision slidingWindowConsume(SlidingWindowState& state, Nanos now,
                                                            std::int64_t cost, const Limit& limit) {
    const Nanos w = limit.window;
    const std::int64_t quota = limit.capacity;
    SlidingWindowState r = rollForward(state, now, w);
    const Nanos into = std::clamp<Nanos>(now - r.windowStart, 0, w);
    const std::int64_t estimate = slidingEstimate(r, into, w);
    Decision d;
    d.limit = quota;
    if (cost > quota || estimate + cost > quota) {
        d.reason = cost > quota ? DenyReason::CostExceedsCapacity : DenyReason::OverLimit;
        d.remaining = std::max<std::int64_t>(0, quota - estimate);
        d.resetAfter = std::max<Nanos>(0, slidingIdleAt(r, w) - now);
        if (d.reason == DenyReason::CostExceedsCapacity) return d;
        // The estimate only falls as time passes: search the first instant it admits `cost`,
        // in this window if the current count leaves room, else in the next one.
        SlidingWindowState at = r;
        Nanos base = r.windowStart;
        Nanos lo = into;
        if (r.current + cost > quota) {
            at = SlidingWindowState{r.windowStart + w, 0, r.current};
            base = at.windowStart;
            lo = 0;
        }
        Nanos hi = w;  // weight 0 at the window's end: admits since at.current == 0 or fits
        while (lo < hi) {
            const Nanos mid = lo + (hi - lo) / 2;
            if (slidingEstimate(at, mid, w) + cost <= quota) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        d.retryAfter = std::max<Nanos>(1, base + lo - now);
        return d;
    }
    r.current = static_cast<std::uint32_t>(r.current + cost);
    state = r;
    d.allowed = true;
    d.remaining = quota - (estimate + cost);
    d.resetAfter = slidingIdleAt(state, w) - now;
    return d;
}

}  // namespace ratelab::algorithms
