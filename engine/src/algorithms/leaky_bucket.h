#pragma once

// nginx limit_req, reproduced arithmetic for arithmetic so that a policy exported to nginx and
// replayed here decide alike: millisecond time, "excess" in thousandths of a request, the rate
// in thousandths of a request per second, truncating division, `last` moved only when at least
// a millisecond passed (nginx 1.22's limit_req lookup and account steps, as documented and as
// observed). Two deliberate differences: a cost above 1 adds 1000 per extra unit (nginx has no
// cost), and time going backwards never leaks (nginx counts a jump back of over 60 s as 1 ms).

#include <algorithm>
#include <cstdint>
#include <limits>

#include "ratelab/limit.h"

namespace ratelab::algorithms {

struct LeakyState {
    static constexpr std::int64_t kFresh = std::numeric_limits<std::int64_t>::min();
    std::int64_t excess = 0;       ///< thousandths of a request queued beyond the rate
    std::int64_t lastMs = kFresh;  ///< nginx `last`, in ms; kFresh: never used
};

/// nginx's `rate`: thousandths of a request per second, at least 1: the limit's own (compiled
/// from a policy), else what its interval comes to.
inline std::int64_t leakyRate(const Limit& limit) {
    if (limit.milliRate > 0) return limit.milliRate;
    return std::max<std::int64_t>(1, 1'000'000'000'000LL / limit.emissionInterval);
}

/// Floor division to milliseconds (nginx's msec clock), correct for negative times too.
inline std::int64_t toMillis(Nanos t) {
    return t >= 0 ? t / kNanosPerMilli : -((-t + kNanosPerMilli - 1) / kNanosPerMilli);
}

/// Ceiling of a / b for a >= 0, b > 0.
inline std::int64_t ceilDiv(std::int64_t a, std::int64_t b) {
    return (a + b - 1) / b;
}

/// When the key becomes the same as a new one: the next request's excess would be 0, i.e. the
/// excess plus the request's own 1000 has leaked away. In ns.
inline Nanos leakyIdleAt(const LeakyState& s, const Limit& limit) {
    if (s.lastMs == LeakyState::kFresh) return std::numeric_limits<Nanos>::min();
    return (s.lastMs + ceilDiv((s.excess + 1000) * 1000, leakyRate(limit))) * kNanosPerMilli;
}

inline bool isIdle(const LeakyState& s, Nanos now, const Limit& limit) {
    return leakyIdleAt(s, limit) <= now;
}

/// One request of `cost` at `now`. The first unit follows nginx exactly; each further unit adds
/// a full request (1000) to the excess. Decision::limit is burst + 1 (requests accepted at
/// once); Decision::delay is how long nginx would hold the request (0 with nodelay).
/// REQUIRES: limit.capacity (nginx burst) >= 0, limit.emissionInterval >= 1, cost >= 1.
[[gnu::always_inline]] inline Decision leakyConsume(LeakyState& state, Nanos now, std::int64_t cost,
                                                    const Limit& limit) {
    const std::int64_t rate = leakyRate(limit);
    const std::int64_t burst = limit.capacity * 1000;
    const std::int64_t nowMs = toMillis(now);
    const bool fresh = state.lastMs == LeakyState::kFresh;
    Decision d;
    d.limit = limit.capacity + 1;
    // ms since `last`; never negative, so a clock going back never leaks.
    const std::int64_t ms = fresh ? 0 : std::max<std::int64_t>(0, nowMs - state.lastMs);
    // nginx: excess = last excess - rate * ms / 1000 + 1000, at least 0 (0 for a new key).
    const std::int64_t first =
        fresh ? 0 : std::max<std::int64_t>(0, state.excess - rate * ms / 1000 + 1000);
    if (cost > limit.capacity + 1) {
        d.reason = DenyReason::CostExceedsCapacity;
        d.remaining = first > burst ? 0 : (burst - first) / 1000 + 1;
        d.resetAfter = fresh ? 0 : std::max<Nanos>(0, leakyIdleAt(state, limit) - now);
        return d;
    }
    const std::int64_t excess = first + 1000 * (cost - 1);
    if (excess > burst) {
        d.reason = DenyReason::OverLimit;
        d.remaining = first > burst ? 0 : (burst - first) / 1000 + 1;
        // Passes once rate * ms' / 1000 >= last excess + 1000 - (burst - 1000 * (cost - 1)).
        const std::int64_t need = state.excess + 1000 - (burst - 1000 * (cost - 1));
        const std::int64_t passMs = state.lastMs + ceilDiv(need * 1000, rate);
        d.retryAfter = std::max<Nanos>(1, passMs * kNanosPerMilli - now);
        d.resetAfter = std::max<Nanos>(0, leakyIdleAt(state, limit) - now);
        return d;
    }
    state.excess = excess;
    if (ms != 0 || fresh) state.lastMs = nowMs;  // nginx moves `last` only when time moved
    d.allowed = true;
    d.remaining = (burst - excess) / 1000;
    d.resetAfter = std::max<Nanos>(0, leakyIdleAt(state, limit) - now);
    if (limit.delay != kNoDelay && excess > limit.delay * 1000) {
        d.delay = (excess - limit.delay * 1000) * 1000 / rate * kNanosPerMilli;
    }
    return d;
}

}  // namespace ratelab::algorithms
