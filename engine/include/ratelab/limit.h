#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ratelab {

/// Time in integer nanoseconds. Every algorithm takes `now` as data and none reads a clock, so
/// a virtual clock, a manual test clock and steady_clock drive the engine alike.
using Nanos = std::int64_t;

inline constexpr Nanos kNanosPerMicro = 1'000;
inline constexpr Nanos kNanosPerMilli = 1'000'000;
inline constexpr Nanos kNanosPerSecond = 1'000'000'000;

/// `t` in whole milliseconds, rounded up: the unit of slot lifetimes, key lifetimes on Redis and
/// retry times in logs and reports. REQUIRES: t >= 0 (and 10^6 below the int64 limit).
constexpr std::int64_t ceilMillis(Nanos t) {
    return (t + kNanosPerMilli - 1) / kNanosPerMilli;
}

/// Longest window, burst tolerance or slot lifetime the engine accepts: 90 days. Every duration
/// the Redis scripts handle stays far below 2^53 ns, where Lua's doubles stop being exact.
inline constexpr Nanos kMaxDuration = 90LL * 24 * 3600 * kNanosPerSecond;

/// Longest window a fixed window aligned on the calendar accepts (WindowAlign::Calendar): 366
/// days, a leap year. Such windows are computed in whole milliseconds (exact in the Redis
/// scripts), so kMaxDuration does not bound them.
inline constexpr Nanos kMaxAlignedWindow = 366LL * 24 * 3600 * kNanosPerSecond;

enum class Algorithm : std::uint8_t {
    TokenBucket,    ///< capacity B refilled at R per second; starts full
    Gcra,           ///< the token bucket's schedule held in one timestamp (TAT)
    FixedWindow,    ///< quota per window, from the key's first request or on the calendar
    SlidingWindow,  ///< approximate: previous window weighted by its overlap
    SlidingLog,     ///< exact: one timestamp per admitted unit
    LeakyBucket,    ///< nginx limit_req: rate, burst, nodelay / delay=N, millisecond arithmetic
    HaproxyRate,    ///< HAProxy's stick-table rate counter (http_req_rate), read "gt capacity"
};

/// "token_bucket", "gcra", "fixed_window", "sliding_window", "sliding_log", "leaky_bucket",
/// "haproxy_rate".
std::string_view algorithmName(Algorithm algorithm);
std::optional<Algorithm> parseAlgorithm(std::string_view name);

/// True for the algorithms that refill continuously (token bucket, GCRA, leaky bucket).
constexpr bool isRateAlgorithm(Algorithm a) {
    return a == Algorithm::TokenBucket || a == Algorithm::Gcra || a == Algorithm::LeakyBucket;
}

/// `delay` value meaning nginx's `nodelay`: excess requests within the burst pass at once.
inline constexpr std::int64_t kNoDelay = -1;

/// Where a fixed window's windows fall.
enum class WindowAlign : std::uint8_t {
    FirstRequest,  ///< a key's windows tile time from its first request
    /// The same windows for every key, on the Unix epoch (UTC): [t - t mod W, t - t mod W + W)
    /// for the Unix time t, or the UTC calendar's months or years (CalendarUnit).
    Calendar,
};

/// A calendar-aligned window's length when it is not a fixed number of milliseconds.
enum class CalendarUnit : std::uint8_t {
    None,   ///< `window` milliseconds
    Month,  ///< UTC calendar months, 28 to 31 days
    Year,   ///< UTC calendar years, 365 or 366 days
};

/// The numbers of one limit. Validated once, when the policy is loaded; the hot path trusts them.
struct Limit {
    Algorithm algorithm = Algorithm::TokenBucket;
    /// Fixed window: where windows fall. Calendar windows end where the UTC calendar says, with
    /// `unixTimeAtZero` telling what Unix time the caller's `now` counts from.
    WindowAlign align = WindowAlign::FirstRequest;
    CalendarUnit calendarUnit = CalendarUnit::None;  ///< Calendar only: months or years
    /// Token bucket, GCRA: the burst in tokens (>= 1). Window algorithms: the quota per window in
    /// requests (>= 1). Leaky bucket: nginx's `burst`, requests held beyond the rate (>= 0).
    /// HAProxy rate: the X of "gt X", the highest estimate admitted (>= 0).
    std::int64_t capacity = 1;
    /// Rate algorithms: nanoseconds per token (one request for the leaky bucket), >= 1.
    /// The policy's `refill_per_second` R becomes round(1e9 / R).
    Nanos emissionInterval = kNanosPerSecond;
    /// Window algorithms: the window length, >= 1 ms (a whole number of ms when aligned).
    /// HAProxy rate: the counter's period, a whole number of ms.
    Nanos window = 60 * kNanosPerSecond;
    /// Calendar alignment: the Unix time, in ns, of `now` == 0 (LimiterOptions::unixTimeAtZero);
    /// 0 when `now` is Unix time. States and results stay in the caller's time.
    Nanos unixTimeAtZero = 0;
    /// Leaky bucket only: nginx's rate, in thousandths of a request per second (>= 1), exactly
    /// as nginx holds it: the policy's refill_per_second R becomes floor(R * 1000), as nginx
    /// truncates `rate=Nr/m` to N * 1000 / 60. 0: derived from emissionInterval (leakyRate()).
    std::int64_t milliRate = 0;
    /// Leaky bucket only: excess requests passed without delay (nginx `delay=N`), or kNoDelay.
    std::int64_t delay = 0;
    /// Charged by outcome (chargesByOutcome() in policy.h): Store::settle() may adjust this
    /// limit's buckets after the response. A token bucket or GCRA bucket then also keeps when it
    /// last started owing (8 more bytes per bucket in memory, a second number in Redis), the
    /// stamp a settle must match. Token bucket, GCRA and fixed window only.
    bool settles = false;
    /// HAProxy rate only: refused requests are counted too (its track-sc before its deny); false:
    /// the estimate is read before counting and only admitted requests count.
    bool countRefused = true;
    /// HAProxy rate only: an entry unused this long (the table's `expire`, whole ms) is gone and
    /// starts again from zero; 0: never.
    Nanos expire = 0;

    friend bool operator==(const Limit&, const Limit&) = default;
};

/// Most replicas a policy may name (StoreConfig::replicas): the per-replica limit's interval,
/// the 90-day maximum times this, stays far inside int64 nanoseconds.
inline constexpr int kMaxReplicas = 1000;

/// The limit each of `replicas` processes holds alone so that together they admit about what
/// `limit` admits on one shared store (on_store_error "local" during an outage): what passes at
/// once is divided by `replicas`, rounded down but at least one request, and the rate is divided
/// by `replicas`; windows stay. REQUIRES: 1 <= replicas <= kMaxReplicas.
Limit perReplicaLimit(const Limit& limit, int replicas);

/// Why a decision refused, if it did.
enum class DenyReason : std::uint8_t {
    None,                 ///< allowed
    OverLimit,            ///< the bucket or window has not enough left; retry later
    CostExceedsCapacity,  ///< the request costs more than the limit can ever hold; never passes
};

/// What one algorithm decided for one key. Plain data, returned by value.
struct Decision {
    bool allowed = false;
    DenyReason reason = DenyReason::None;
    std::int64_t limit = 0;      ///< capacity or quota, as advertised to clients
    std::int64_t remaining = 0;  ///< whole units left after this request
    Nanos retryAfter = 0;  ///< refused: time until this request's cost could pass; 0 when allowed
    Nanos resetAfter = 0;  ///< time until the key is back to a fresh state (full bucket, new window)
    Nanos delay = 0;       ///< leaky bucket without nodelay: how long to hold an allowed request
};

}  // namespace ratelab
