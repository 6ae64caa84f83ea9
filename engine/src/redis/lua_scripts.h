#pragma once

// The Redis store's Lua scripts: one per algorithm, each doing the budget step and the
// consumption in one atomic EVALSHA. They reproduce engine/src/algorithms/*.h decision for
// decision; the calling convention is fixed here and in redis_request.cpp.
//
// KEYS: [1] the bucket, and per budget level i = 1..n (innermost first, n <= 4)
//       [2i] the level's scope ZSET, [2i+1] its fallback bucket.
// ARGV: [1] now, whole seconds (floor), or "" to read the server's TIME
//       [2] now, nanoseconds within the second (0..999999999)
//       [3] cost   [4] capacity   [5] emission interval (ns), window (ns) or leaky rate
//       [6] leaky delay (-1: nodelay); for token bucket and GCRA 1 when the limit settles (the
//           bucket then keeps "<tat> <since>": since when it owes, the settle stamp); for the
//           HAProxy rate its expire in ms when refused requests count, -1 - expire when not
//           ([5] is then its period in ms); else 0
//       [7] least PX in ms (the caller-time floor) or 0
//       with a budget: [8] slot lifetime in ms   [9] the key's scope member (the bucket key)
//       and per level i: [8+2i] its cap, [9+2i] its fallback's member (the fallback key)
// Reply: {reason (0 allowed, 1 over limit, 2 cost exceeds capacity), remaining, retryAfter ns,
//         resetAfter ns, delay ns, charged level (0 the key, i level i's fallback), stamp
//         (ConsumeResult::stamp: a settling rate bucket's since, a fixed window's end, else 0)};
//         a time
//         too large for a Lua number
//         (beyond 2^53 ns, only when a caller's clock jumps back by months) comes as a decimal
//         string, every other field as an integer.

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "ratelab/limit.h"

namespace ratelab::redis {

enum class ScriptId : std::uint8_t {
    Rate,  ///< token bucket and GCRA: the same schedule, the same outputs (rate.h)
    FixedWindow,
    SlidingWindow,
    SlidingLog,
    LeakyBucket,
    HaproxyRate,
    /// Store::settle on a token bucket, GCRA or fixed window (rate.h rateSettle, window.h
    /// fixedWindowSettle). KEYS: [1] the charged bucket. ARGV: [1], [2] now as above, [3] the
    /// signed cost, [4] capacity, [5] emission interval (ns) or window (ns), [6] "r" (rate) or
    /// "f" (fixed window), [7] least PX as above, [8] the stamp (decimal). Reply: 1 applied,
    /// 0 not (no bucket, another stamp, full or ended).
    Settle,
};
inline constexpr std::size_t kScriptCount = 7;

ScriptId scriptFor(Algorithm algorithm);

struct Script {
    std::string_view name;  ///< "rate", "fixed_window", ...
    std::string source;     ///< the full Lua text, shebang included
    std::string sha1;       ///< lower-case hex SHA1 of `source`, as SCRIPT LOAD answers it
};

/// The scripts, built and hashed once. Thread-safe (immutable after first use).
const std::array<Script, kScriptCount>& scripts();

inline const Script& script(ScriptId id) {
    return scripts()[static_cast<std::size_t>(id)];
}

/// Store::keyspaceAt's script (lua/keyspace.lua), read-only, sent with EVAL by the walk over
/// every master; not one of the decision scripts. KEYS: none. ARGV: [1] the SCAN cursor ("0"
/// first), [2] the MATCH pattern of the store's keys, [3] the 1-based position where a key's
/// partition starts (after "<ns>:{"), [4] the keys to look at in this call, at least;
/// [5], [6] now as for the decision scripts, "" for the server's TIME; then per limit seven
/// fields: its name, its kind ("r" token bucket and GCRA, "f" fixed window, "w" sliding window,
/// "l" sliding log, "k" leaky bucket, "h" HAProxy's rate counter), its window (ns), leaky rate
/// or HAProxy period (ms) (0 for r and f), HAProxy's expire in ms (0 otherwise), now (s, n) in
/// the time its scripts are given (calendar windows: Unix time) or "" "0" for the server's, its
/// budget slots' lifetime in ms (0: unknown). Reply: {cursor ("0" at the end), buckets,
/// budget slots, scopes holding a live slot}.
const Script& keyspaceScript();

/// Lower-case hex SHA1 of `text` (OpenSSL).
std::string sha1Hex(std::string_view text);

}  // namespace ratelab::redis
