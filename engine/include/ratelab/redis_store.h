#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ratelab/store.h"

namespace ratelab {

/// Whose clock a Redis store decides on.
enum class RedisTimeSource : std::uint8_t {
    /// The server's TIME, read inside each script: every replica of a service shares one clock,
    /// so there is no skew between them. ConsumeRequest::now is ignored.
    Server,
    /// ConsumeRequest::now: for the simulator, which drives Redis on its virtual clock.
    Caller,
};

struct RedisStoreOptions {
    /// One URL (ratelab/redis_url.h: "redis://[[user]:password@]host[:port][/db]" or
    /// "unix:///path/to/socket[?db=N]"): a standalone server; or
    /// "redis-sentinel://host[:port][,host[:port]]/name[?db=N]": the master Redis Sentinel
    /// monitors under that name, followed through failovers. Several URLs (or `cluster` set):
    /// seeds of one Redis Cluster.
    std::vector<std::string> urls;
    /// AUTH on every connection the store opens (seeds, reconnects, Cluster nodes it discovers):
    /// `password` alone, or `username` and `password` for a Redis 6 ACL user. When `password` is
    /// set it replaces any credentials in the URLs. Never part of an error or a counter.
    std::string username;
    std::string password;
    /// Treat a single URL as a cluster seed. Set automatically when `urls` has several entries.
    bool cluster = false;
    /// First part of every key name: "<namespace>:{<partition>}:<limitName>:<key>". No braces.
    std::string keyNamespace = "ratelab";
    RedisTimeSource timeSource = RedisTimeSource::Server;
    /// Bound on a whole call, retries and redirects included, when ConsumeRequest::timeout is 0.
    Nanos timeout = 500 * kNanosPerMilli;
    /// Bound on establishing one connection (never more than what is left of the call's bound).
    Nanos connectTimeout = 200 * kNanosPerMilli;
    /// Connections per server, shared by every calling thread. A call waits (within its bound)
    /// for a free one; hiredis contexts are not thread-safe, so each is used by one call at a
    /// time.
    int poolSize = 8;
    /// Reconnection backoff per server: doubles from `min` to `max`, with jitter. While backing
    /// off, calls to that server fail at once with StoreStatus::Transport.
    Nanos reconnectBackoffMin = 10 * kNanosPerMilli;
    Nanos reconnectBackoffMax = 500 * kNanosPerMilli;
    /// Entries of the local over-limit cache (0: off). A key Redis refused is refused locally,
    /// without a round trip, until its retry time: a flood from one key stops costing Redis a
    /// call per request. Bounded: a fixed table of this many 48-byte entries. It never admits
    /// (a request it does not refuse goes to Redis), so it never lets a key through early. Its
    /// answers differ from Redis' own in that: only a repeat of the refused cost is answered;
    /// `remaining` is the value at the refusal (a lower bound); fixed-window refusals it answers
    /// are not counted in Redis (the window stays over quota until it ends either way); a budget
    /// member's slot is not refreshed by them (it may expire meanwhile); refusals charged to a
    /// budget's fallback, and haproxy_rate refusals that count (count_refused: each one moves
    /// the counter, and so the next admission), are never cached; retry and reset times are
    /// exact while this store alone consumes from the key (other replicas can only make them
    /// later).
    std::size_t overLimitCacheEntries = 0;
    /// Caller time only: Redis expires keys on its own wall clock, which a virtual clock does not
    /// drive. Every key is kept at least this long after its last write, so that state survives a
    /// virtual clock running slower than wall time. Idle keys then linger up to this long.
    Nanos callerTimeMinKeyLifetime = 10 * 60 * kNanosPerSecond;
};

/// What a Redis store did, for benchmarks and reports. Monotonic counters.
struct RedisStoreCounters {
    std::int64_t commands = 0;         ///< scripts sent to Redis (retries included)
    std::int64_t cacheHits = 0;        ///< consumptions the over-limit cache answered locally
    std::int64_t connects = 0;         ///< connections established
    std::int64_t connectFailures = 0;  ///< connection attempts that failed (backoff bounds them)
    std::int64_t scriptLoads = 0;      ///< rounds of calls resent with the script's text (NOSCRIPT)
    std::int64_t redirects = 0;        ///< ASK answers, and MOVED answers that changed the slot map
    std::int64_t transportErrors = 0;  ///< calls that ended with StoreStatus::Transport
    std::int64_t refusals = 0;         ///< calls that ended with StoreStatus::Refused or Full
    std::int64_t failovers = 0;        ///< Sentinel: times the sentinels named a new master
};

/// The shared store: every decision is one Lua script (budget + consumption, atomic) on Redis,
/// standalone, Sentinel-monitored or Cluster, with the memory store's semantics decision for
/// decision.
///
/// Sentinel: the sentinels are asked for the master (SENTINEL get-master-addr-by-name), whose
/// ROLE is checked on every connection. When it fails (a transport error, a timeout, READONLY,
/// another ROLE) they are asked again, at most every 10 to 100 ms (reconnectBackoffMin doubling,
/// capped), and a master they name anew takes the calls; a call that reached no server, or one a
/// demoted master refused with READONLY, is sent to the new master within its bound. A thread
/// asks them once a second besides, so that a switch that leaves the old master up is followed
/// within a second. While the master cannot be had, calls fail with StoreStatus::Transport
/// (on_store_error decides). The credentials are the master's; sentinels are asked without AUTH.
///
/// Errors: StoreStatus::Transport when the server cannot be reached or does not answer within
/// the call's bound (the error says when the request may nevertheless have been applied), and
/// while the store backs off reconnecting; StoreStatus::Full when the server is out of memory
/// (OOM); StoreStatus::Refused when a reachable server says no otherwise (READONLY, NOREPLICAS,
/// MISCONF, a script or command error) or the request is outside
/// what the scripts compute exactly. MOVED, ASK, NOSCRIPT and TRYAGAIN-class answers (TRYAGAIN,
/// CLUSTERDOWN, BUSY, LOADING, MASTERDOWN) are handled within the bound. During a Cluster slot
/// migration a budgeted decision (three keys) whose keys are split between the two nodes gets
/// TRYAGAIN until the migration of those keys completes, as any multi-key command does.
/// Thread-safe.
class RedisStore : public Store {
public:
    virtual RedisStoreCounters counters() const = 0;
};

/// A Redis store, or nullptr with the reason in *error (when `error` is not null) when the
/// options are unusable (a URL outside redis_url.h's grammar, a namespace with braces, a pool
/// of zero). An unreachable server is not an error here:
/// calls then answer StoreStatus::Transport and the store reconnects with backoff.
/// The result is a RedisStore (dynamic_cast for counters()).
std::unique_ptr<Store> makeRedisStore(const RedisStoreOptions& options, std::string* error);

}  // namespace ratelab
