#pragma once

// One traits type per algorithm, so that stores are written once over all of them:
//   State                      per-key state (trivially copyable, 8 or 16 bytes)
//   consume(s, now, cost, l)   the pure decision; may update s
//   idleAt(s, l)               when s becomes indistinguishable from a fresh key
//   freshAfter(l)              the longest a used key takes to become fresh again; saturates at
//                              INT64_MAX, so that validation can ask it of any numbers
//   release(s)                 frees memory s owns (the sliding log's ring)
//   kOwnsMemory                whether any state owns memory (only the log does)
//   stamp(s)                   which state a charge went into, for settling it later
//                              (ConsumeResult::stamp); 0 where settling is not supported
//   settle(s, now, cost, l, stamp)
//                              applies a settled outcome when s still holds the charge that
//                              `stamp` names; false, changing nothing, otherwise
//
// The fixed-size algorithms' consume functions are always inlined: called out of line, their
// Decision comes back through memory written 8 bytes at a time and is read back 16 bytes at a
// time, a store-forwarding stall that cost a tenth of a keyed check.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>

#include "algorithms/haproxy_rate.h"
#include "algorithms/leaky_bucket.h"
#include "algorithms/rate.h"
#include "algorithms/sliding_log.h"
#include "algorithms/window.h"
#include "ratelab/limit.h"

namespace ratelab::algorithms {

/// a * b for a, b >= 0, or INT64_MAX when that overflows.
inline Nanos saturatingMul(std::int64_t a, std::int64_t b) {
    Nanos out = 0;
    return __builtin_mul_overflow(a, b, &out) ? std::numeric_limits<Nanos>::max() : out;
}

struct TokenBucket {
    using State = RateState;
    static constexpr bool kOwnsMemory = false;
    [[gnu::always_inline]] static Decision consume(State& s, Nanos now, std::int64_t cost,
                                                   const Limit& l, bool&) {
        return tokenBucketConsume(s, now, cost, l);
    }
    static Nanos idleAt(const State& s, const Limit&) { return s.tat; }
    static Nanos freshAfter(const Limit& l) {
        return saturatingMul(l.capacity, l.emissionInterval);
    }
    static void release(State&) {}
    static std::size_t ownedBytes(const State&) { return 0; }
    // Without a stamp a bucket cannot tell its own charges from a later one's: Settled below
    // keeps one for limits that settle.
    static std::int64_t stamp(const State&) { return 0; }
    static bool settle(State&, Nanos, std::int64_t, const Limit&, std::int64_t) { return false; }
};

struct Gcra : TokenBucket {
    [[gnu::always_inline]] static Decision consume(State& s, Nanos now, std::int64_t cost,
                                                   const Limit& l, bool&) {
        return gcraConsume(s, now, cost, l);
    }
};

struct FixedWindow {
    using State = FixedWindowState;
    static constexpr bool kOwnsMemory = false;
    [[gnu::always_inline]] static Decision consume(State& s, Nanos now, std::int64_t cost,
                                                   const Limit& l, bool&) {
        return fixedWindowConsume(s, now, cost, l);
    }
    static Nanos idleAt(const State& s, const Limit&) { return s.windowEnd; }
    static Nanos freshAfter(const Limit& l) { return longestWindow(l); }
    static void release(State&) {}
    static std::size_t ownedBytes(const State&) { return 0; }
    // A window is named by its end: a window opened again after eviction ends later.
    static std::int64_t stamp(const State& s) { return s.windowEnd; }
    static bool settle(State& s, Nanos now, std::int64_t cost, const Limit& l, std::int64_t stamp) {
        return fixedWindowSettle(s, now, cost, l, stamp);
    }
};

struct SlidingWindow {
    using State = SlidingWindowState;
    static constexpr bool kOwnsMemory = false;
    [[gnu::always_inline]] static Decision consume(State& s, Nanos now, std::int64_t cost,
                                                   const Limit& l, bool&) {
        return slidingWindowConsume(s, now, cost, l);
    }
    static Nanos idleAt(const State& s, const Limit& l) { return slidingIdleAt(s, l.window); }
    static Nanos freshAfter(const Limit& l) { return saturatingMul(2, l.window); }
    static void release(State&) {}
    static std::size_t ownedBytes(const State&) { return 0; }
    // Refusing `charge` other than "always" at load (policy_semantics.cpp) keeps these unused.
    static std::int64_t stamp(const State&) { return 0; }
    static bool settle(State&, Nanos, std::int64_t, const Limit&, std::int64_t) { return false; }
};

struct SlidingLog {
    using State = SlidingLogState;
    static constexpr bool kOwnsMemory = true;
    static Decision consume(State& s, Nanos now, std::int64_t cost, const Limit& l, bool& oom) {
        return slidingLogConsume(s, now, cost, l, oom);
    }
    static Nanos idleAt(const State& s, const Limit& l) { return slidingLogIdleAt(s, l.window); }
    static Nanos freshAfter(const Limit& l) { return l.window; }
    static void release(State& s) {
        if (s.ring) LogRing::destroy(s.ring);
        s.ring = nullptr;
    }
    static std::size_t ownedBytes(const State& s) { return s.ring ? s.ring->bytes() : 0; }
    // Refusing `charge` other than "always" at load (policy_semantics.cpp) keeps these unused.
    static std::int64_t stamp(const State&) { return 0; }
    static bool settle(State&, Nanos, std::int64_t, const Limit&, std::int64_t) { return false; }
};

struct LeakyBucket {
    using State = LeakyState;
    static constexpr bool kOwnsMemory = false;
    [[gnu::always_inline]] static Decision consume(State& s, Nanos now, std::int64_t cost,
                                                   const Limit& l, bool&) {
        return leakyConsume(s, now, cost, l);
    }
    static Nanos idleAt(const State& s, const Limit& l) { return leakyIdleAt(s, l); }
    static Nanos freshAfter(const Limit& l) {
        constexpr Nanos kMax = std::numeric_limits<Nanos>::max();
        const Nanos excess = saturatingMul(l.capacity + 1, 1000 * 1000);  // thousandths * 1000
        const std::int64_t rate = leakyRate(l);
        if (excess > kMax - rate) return kMax;
        const Nanos ms = saturatingMul(ceilDiv(excess, rate), kNanosPerMilli);
        return ms == kMax ? ms : ms + kNanosPerMilli;
    }
    static void release(State&) {}
    static std::size_t ownedBytes(const State&) { return 0; }
    // Refusing `charge` other than "always" at load (policy_semantics.cpp) keeps these unused.
    static std::int64_t stamp(const State&) { return 0; }
    static bool settle(State&, Nanos, std::int64_t, const Limit&, std::int64_t) { return false; }
};

struct HaproxyRate {
    using State = HaproxyRateState;
    static constexpr bool kOwnsMemory = false;
    [[gnu::always_inline]] static Decision consume(State& s, Nanos now, std::int64_t cost,
                                                   const Limit& l, bool&) {
        return haproxyRateConsume(s, now, cost, l);
    }
    static Nanos idleAt(const State& s, const Limit& l) { return haproxyIdleAt(s, l); }
    static Nanos freshAfter(const Limit& l) {
        const Nanos twoPeriods = saturatingMul(2, l.window);
        const Nanos idle = twoPeriods == std::numeric_limits<Nanos>::max()
                               ? twoPeriods
                               : twoPeriods + 2 * kNanosPerMilli;  // +1 ms, +1 for an odd start
        return l.expire > 0 ? std::min(idle, l.expire) : idle;
    }
    static void release(State&) {}
    static std::size_t ownedBytes(const State&) { return 0; }
    // Refusing `charge` other than "always" at load (policy_semantics.cpp) keeps these unused.
    static std::int64_t stamp(const State&) { return 0; }
    static bool settle(State&, Nanos, std::int64_t, const Limit&, std::int64_t) { return false; }
};

/// A token bucket or GCRA whose buckets may be settled (Limit::settles): the rate state plus when
/// the bucket last started owing, i.e. the `now` of the charge that found it full. A settle
/// matches that stamp, so it never reaches a bucket that has been full since its charge, or
/// one evicted and made again (it started owing later). 16 bytes of state instead of 8, paid
/// only by the limits that settle.
template <class Rate>
struct Settled : Rate {
    struct State {
        RateState rate;
        Nanos since = 0;
    };
    [[gnu::always_inline]] static Decision consume(State& s, Nanos now, std::int64_t cost,
                                                   const Limit& l, bool& oom) {
        const bool full = s.rate.tat <= now;
        const Decision d = Rate::consume(s.rate, now, cost, l, oom);
        if (full && d.allowed) s.since = now;
        return d;
    }
    static Nanos idleAt(const State& s, const Limit& l) { return Rate::idleAt(s.rate, l); }
    static void release(State&) {}
    static std::size_t ownedBytes(const State&) { return 0; }
    static std::int64_t stamp(const State& s) { return s.since; }
    static bool settle(State& s, Nanos now, std::int64_t cost, const Limit& l, std::int64_t stamp) {
        return s.since == stamp && rateSettle(s.rate, now, cost, l);
    }
};

/// Calls f(Traits{}) with the traits type of `algorithm`.
template <class F>
decltype(auto) visitAlgorithm(Algorithm algorithm, F&& f) {
    switch (algorithm) {
        case Algorithm::TokenBucket:
            return f(TokenBucket{});
        case Algorithm::Gcra:
            return f(Gcra{});
        case Algorithm::FixedWindow:
            return f(FixedWindow{});
        case Algorithm::SlidingWindow:
            return f(SlidingWindow{});
        case Algorithm::SlidingLog:
            return f(SlidingLog{});
        case Algorithm::HaproxyRate:
            return f(HaproxyRate{});
        case Algorithm::LeakyBucket:
            break;
    }
    return f(LeakyBucket{});
}

/// Calls f(Traits{}) with the traits a store keeps `algorithm`'s buckets with: Settled<...> for a
/// token bucket or GCRA that settles (Limit::settles), the algorithm's own otherwise.
template <class F>
decltype(auto) visitAlgorithm(Algorithm algorithm, bool settles, F&& f) {
    if (settles && algorithm == Algorithm::TokenBucket) return f(Settled<TokenBucket>{});
    if (settles && algorithm == Algorithm::Gcra) return f(Settled<Gcra>{});
    return visitAlgorithm(algorithm, std::forward<F>(f));
}

/// Whether a store keeps `limit`'s buckets in another layout than the algorithm's own (Settled).
constexpr bool keepsStamp(const Limit& limit) {
    return limit.settles &&
           (limit.algorithm == Algorithm::TokenBucket || limit.algorithm == Algorithm::Gcra);
}

/// How long a used key of this limit takes to become fresh again (the floor for budget slot
/// lifetimes: a slot must outlive the bucket it admitted).
inline Nanos freshAfter(const Limit& limit) {
    return visitAlgorithm(limit.algorithm,
                          [&](auto traits) { return decltype(traits)::freshAfter(limit); });
}

}  // namespace ratelab::algorithms
