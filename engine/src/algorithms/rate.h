#pragma once

// Token bucket and GCRA: one admission schedule, two ways of telling it. Both hold one integer
// per key, so a bucket costs 8 bytes of state, and both are pure functions of
// (state, now, cost, limit): no clock, no floating point, no drift.
//
// The schedule: a limit of capacity B refilling one token every T ns admits a request of cost c
// at `now` when the bucket holds at least c tokens, where
//     tokens(now) = B - (max(tat, now) - now) / T        (tat: the moment the bucket is full)
// GCRA calls `tat` the theoretical arrival time and writes the same test as
//     max(tat, now) + c*T - now <= B*T                   (tolerance tau = (B - 1) * T)
// A refused request writes nothing, so a flood of refusals costs reads only.

#include <algorithm>
#include <cstdint>
#include <limits>

#include "ratelab/limit.h"

namespace ratelab::algorithms {

/// The state of a token bucket or GCRA key: when it is (or was) full again.
struct RateState {
    static constexpr Nanos kFresh = std::numeric_limits<Nanos>::min();
    Nanos tat = kFresh;  ///< kFresh: never used, indistinguishable from full
};

/// True when the state is the same as a fresh one at `now`: safe to evict.
inline bool isIdle(const RateState& s, Nanos now) {
    return s.tat <= now;
}

/// How long a bucket takes to refill from empty: B * T.
inline Nanos refillTime(const Limit& limit) {
    return limit.capacity * limit.emissionInterval;
}

/// Whole tokens in `credit` ns of refill at one token every `t` ns (credit < 0 counts as none).
/// A bucket that is empty, or nearly, holds less than one: answered without the 64-bit
/// division, whose latency sat on every check of an exhausted bucket (a flood's every check).
[[gnu::always_inline]] inline std::int64_t wholeTokens(Nanos credit, Nanos t) {
    return credit < t ? 0 : credit / t;
}

/// GCRA. REQUIRES: limit.capacity >= 1, limit.emissionInterval >= 1, cost >= 0 (0: a check),
/// capacity * emissionInterval <= kMaxDuration (policies are validated for it).
[[gnu::always_inline]] inline Decision gcraConsume(RateState& state, Nanos now, std::int64_t cost,
                                                   const Limit& limit) {
    const Nanos t = limit.emissionInterval;
    const Nanos burst = limit.capacity * t;  // tau + T
    const Nanos tat = std::max(state.tat, now);
    Decision d;
    d.limit = limit.capacity;
    if (cost > limit.capacity) {
        d.reason = DenyReason::CostExceedsCapacity;
        d.remaining = wholeTokens(burst - (tat - now), t);
        d.resetAfter = tat - now;
        return d;
    }
    const Nanos newTat = tat + cost * t;
    if (newTat - now > burst) {
        d.reason = DenyReason::OverLimit;
        d.remaining = wholeTokens(burst - (tat - now), t);
        d.retryAfter = newTat - now - burst;
        d.resetAfter = tat - now;
        return d;
    }
    state.tat = newTat;
    d.allowed = true;
    d.remaining = wholeTokens(burst - (newTat - now), t);
    d.resetAfter = newTat - now;
    return d;
}

/// Token bucket: capacity B, one token every T ns, starts full. The same schedule as GCRA,
/// written in tokens; `state.tat` is the moment the bucket is full again.
/// REQUIRES: as gcraConsume.
[[gnu::always_inline]] inline Decision tokenBucketConsume(RateState& state, Nanos now,
                                                          std::int64_t cost, const Limit& limit) {
    const Nanos t = limit.emissionInterval;
    const Nanos full = std::max(state.tat, now);
    // Tokens held now, in nanoseconds of refill: B*T when full, less by what is owed. Negative
    // only after a retune lowered the capacity below what is owed.
    const Nanos credit = limit.capacity * t - (full - now);
    Decision d;
    d.limit = limit.capacity;
    d.resetAfter = full - now;
    if (cost > limit.capacity) {
        d.reason = DenyReason::CostExceedsCapacity;
        d.remaining = wholeTokens(credit, t);
        return d;
    }
    const Nanos need = cost * t;
    if (credit < need) {
        d.reason = DenyReason::OverLimit;
        d.remaining = wholeTokens(credit, t);
        d.retryAfter = need - credit;
        return d;
    }
    state.tat = full + need;
    d.allowed = true;
    d.remaining = wholeTokens(credit - need, t);
    d.resetAfter = state.tat - now;
    return d;
}

/// Settles a charge on a token bucket or GCRA key (Store::settle): `cost` units more (a penalty,
/// > 0) or back (a refund, < 0). It applies only while the key still owes something: a bucket
/// that is full at `now` has forgotten every charge, so settling it changes nothing (and a
/// bucket that was full and then charged again owes other requests, which is why stores match a
/// stamp first). A refund stops at full; a penalty stops at empty, or at what is owed when a
/// retune left more than the capacity owed. Returns whether the key was adjusted.
/// REQUIRES: as gcraConsume, cost != 0.
inline bool rateSettle(RateState& state, Nanos now, std::int64_t cost, const Limit& limit) {
    if (state.tat <= now) return false;
    const Nanos t = limit.emissionInterval;
    const Nanos burst = limit.capacity * t;
    const Nanos owed = state.tat - now;
    // Never more than a whole bucket, so the product stays below kMaxDuration.
    const std::int64_t units = std::min(cost < 0 ? -cost : cost, limit.capacity);
    const Nanos delta = units * t;
    Nanos next = owed;
    if (cost < 0) {
        next = owed > delta ? owed - delta : 0;
    } else if (owed < burst) {
        next = std::min(burst, owed + delta);
    }
    state.tat = now + next;
    return true;
}

}  // namespace ratelab::algorithms
