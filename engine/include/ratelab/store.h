#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "ratelab/ip_address.h"
#include "ratelab/limit.h"

namespace ratelab {

/// Caps how many distinct buckets one scope may create (the identity work's "bucket budget").
/// A key already in the scope, or admitted while the scope has room, is charged itself; once
/// the scope holds `cap` live keys, new keys are charged to `fallbackKey` instead: collapsed
/// onto the caller's own address bucket, never refused.
///
/// Budgets chain through `next`, innermost first, for keys that belong to nested networks: the
/// scope of a level holds every bucket charged below it, its own fallback included. An address
/// bucket "ip:2001:db8:1:2::/64" counts against "net:2001:db8:1::/48" (fallback the /48's
/// bucket) and "net:2001:db8::/32" (fallback the /32's bucket). The store charges the innermost
/// of the key and the levels' fallbacks that every scope above it still admits (a live member,
/// or a scope with room) and takes a slot for it in each of those scopes; the outermost fallback
/// is always admitted. So a network holds at most its outermost cap of buckets, plus one.
struct BucketBudget {
    std::string_view scope;        ///< "peer:198.51.100.7", "net:2001:db8:1::/48", "global"
    std::string_view fallbackKey;  ///< "ip:198.51.100.7", "ip:2001:db8:1::/48" or "overflow"
    std::uint32_t cap = 0;         ///< live keys the scope may hold, >= 1
    /// A slot expires this long after its key was last used. The store uses
    /// max(slotTtl, the bucket's own time to refill), so a slot always outlives its bucket.
    /// Slot times are kept in whole milliseconds in every store. Every level of a chain has
    /// the same.
    Nanos slotTtl = 60 * kNanosPerSecond;
    const BucketBudget* next = nullptr;  ///< the enclosing level; null for the outermost
    /// The network `fallbackKey` names ("ip:2001:db8:1::/48" is /48; a peer's "ip:<address>"
    /// the peer's own prefix), where a full store places that bucket among the networks it is
    /// shared between (KeyPlace); 0 for a fallback that is no network ("overflow").
    std::uint8_t fallbackPrefix = 0;
};

/// How long every store keeps a slot of `budget` after its key's last use, in the whole
/// milliseconds slot times are kept in: slotTtl, or the time the bucket takes to become fresh
/// again (`bucketFreshAfter`) when that is longer.
inline std::int64_t slotLifetimeMillis(const BucketBudget& budget, Nanos bucketFreshAfter) {
    return ceilMillis(budget.slotTtl > bucketFreshAfter ? budget.slotTtl : bucketFreshAfter);
}

/// Longest chain of budgets one request may carry: a peer's credential budget and three
/// enclosing networks.
inline constexpr std::size_t kMaxBudgetLevels = 4;

/// Where a key sits among the networks a full store is shared between (the fair-share rule,
/// docs/RELIABILITY.md): the client address the key was derived from and how much of it the key
/// names. A key not derived from an address has none.
struct KeyPlace {
    IpAddress address;        ///< as keyed: an IPv4 address for IPv4 and NAT64 clients
    std::uint8_t prefix = 0;  ///< the key's network is address/prefix, in the family's own bits
    /// The key is not the network's own bucket but one of many made with it (a credential
    /// budgeted on the address, a composite key with the address in it): the network
    /// address/prefix is then one more aggregate the key counts against.
    bool withinPeer = false;
};

/// One atomic consumption. Views must stay valid for the call only.
struct ConsumeRequest {
    /// Identifies the limit (a policy, or a policy's tier). Buckets of different ids never meet,
    /// even when their keys are equal. Stable for the life of the store.
    std::uint32_t limitId = 0;
    std::string_view limitName;  ///< "api" or "api/premium": part of shared-store key names
    const Limit* limit = nullptr;
    /// Every key of one decision (bucket, budget scopes, fallbacks) lives in this partition, so
    /// one lock (memory) or one Redis Cluster slot covers the whole step. For address-derived
    /// keys the outermost address bucket of the chain: "ip:<addr>" without address budgets,
    /// "ip:2001:db8::/32" when IPv6 /64s count against their /48 and /32; "global" for the
    /// peerless budget; the key itself otherwise.
    std::string_view partition;
    std::string_view key;  ///< bucket key, e.g. "auth:<sha256>"; never a raw credential
    /// The innermost budget level; null: no budget applies. At most kMaxBudgetLevels levels.
    const BucketBudget* budget = nullptr;
    /// >= 1; or 0, a check that charges nothing (Envoy's rate limit service asks with a hits
    /// addend of 0), for the fixed and sliding windows, the token bucket and GCRA only.
    std::int64_t cost = 1;
    Nanos now = 0;          ///< caller time; a Redis store may use server time instead
    Nanos timeout = 0;      ///< bound on the whole call; 0 means the store's default
    /// Where the key sits among the networks a full store is shared between; null: the key
    /// was not derived from an address.
    const KeyPlace* place = nullptr;
};

/// How a store call ended. Only Ok carries a decision.
enum class StoreStatus : std::uint8_t {
    Ok,
    /// The store could not be reached: connection refused or dropped, or the timeout elapsed.
    /// No caller caused it; the policy's `on_store_error` rule decides.
    Transport,
    /// A reachable store refused: out of memory, read-only, script error. An attacker can
    /// provoke these, so they are refused under every policy.
    Refused,
    /// A reachable store had no room for the bucket this request needs: the memory store's cap
    /// reached with nothing idle to evict, or Redis out of memory. Refused under every policy,
    /// like Refused, and reported apart so that an operator sees the keyspace is the cause.
    Full,
};

/// ConsumeResult::chargedLevel of a charge to the bucket of a network over its fair share.
inline constexpr std::uint8_t kChargedAggregate = 255;

/// "ok", "transport", "refused", "full".
std::string_view storeStatusName(StoreStatus status);

struct ConsumeResult {
    StoreStatus status = StoreStatus::Ok;
    Decision decision;
    bool chargedFallback = false;  ///< another key than the request's was charged
    /// Which key was charged: 0 the request's key, k the fallback of the k-th budget level
    /// (1: request.budget's own), kChargedAggregate the bucket of a network over its share of a
    /// full store ("ip:" and request.place's address at chargedPrefix, its own partition).
    /// chargedFallback == (chargedLevel > 0).
    std::uint8_t chargedLevel = 0;
    std::uint8_t chargedPrefix = 0;  ///< with kChargedAggregate: the network's prefix length
    /// Which state of the charged bucket the charge went into, for settle(); meaningful when the
    /// decision admitted the request and the limit settles (Limit::settles). Token bucket and
    /// GCRA: when the bucket last started owing (it has not been full since); fixed window: the
    /// window's end. 0 otherwise.
    std::int64_t stamp = 0;
    std::string error;  ///< what went wrong when status != Ok; empty otherwise
};

/// An outcome applied to the bucket a consumption charged (Limiter::settle). Views must stay
/// valid for the call only.
struct SettleRequest {
    std::uint32_t limitId = 0;     ///< as the consumption's
    std::string_view limitName;    ///< as the consumption's
    const Limit* limit = nullptr;  ///< the limit it was consumed under; Limit::settles is set
    std::string_view partition;    ///< as the consumption's
    /// The bucket that was charged: the consumption's key, or the fallback key of the budget
    /// level it charged (ConsumeResult::chargedLevel).
    std::string_view key;
    /// Units to charge more (> 0, a penalty) or to give back (< 0, a refund), != 0. A refund never
    /// raises the bucket above its capacity (or a window's count below 0); a penalty never takes
    /// a token bucket below empty.
    std::int64_t cost = 0;
    std::int64_t stamp = 0;  ///< ConsumeResult::stamp of the consumption being settled
    Nanos now = 0;           ///< caller time; a Redis store may use server time instead
    Nanos timeout = 0;       ///< bound on the whole call; 0 means the store's default
};

/// How a settle ended. `applied` only with StoreStatus::Ok.
struct SettleResult {
    StoreStatus status = StoreStatus::Ok;
    /// The bucket still held the charge and was adjusted. False when it did not: evicted (or
    /// expired) and made again, full again since the charge (a token bucket forgets what it
    /// owed once full), a window that has ended, or a limit whose numbers changed.
    bool applied = false;
    std::string error;  ///< what went wrong when status != Ok; empty otherwise
};

/// Keyspace figures for reports and charts.
struct KeyspaceStats {
    std::int64_t buckets = 0;      ///< live buckets
    std::int64_t budgetSlots = 0;  ///< live budget slots, over every scope
    std::int64_t scopes = 0;       ///< budget scopes holding at least one slot
    /// Memory the store holds for them, as the store itself measures it: the memory store's
    /// tables and indexes, Redis' used_memory_dataset (the whole database). 0 when unknown.
    std::int64_t bytes = 0;
    std::int64_t maxBuckets = 0;   ///< the hard cap, 0 when the store has none
};

/// Where bucket state lives. Implementations: the in-memory store (memory_store.h) and the
/// Redis store (redis_store.h). Thread-safe: every method may be called from many threads.
class Store {
public:
    virtual ~Store() = default;

    /// Applies the budget (when given) and consumes `cost` from the chosen bucket at `now`, as
    /// one atomic step. A refused consumption writes nothing where the algorithm allows it.
    /// REQUIRES: request.limit != nullptr, request.cost >= 1 (or 0: see ConsumeRequest::cost).
    virtual ConsumeResult consume(const ConsumeRequest& request) = 0;

    /// Consumes each request in order, each one atomically (not all of them together): results[i]
    /// answers requests[i]. A store that talks to a server pipelines them; the default calls
    /// consume() in turn. REQUIRES: results.size() >= requests.size().
    virtual void consumeBatch(std::span<const ConsumeRequest> requests,
                              std::span<ConsumeResult> results);

    /// Applies `request.cost` to the bucket a consumption charged, in one atomic step, if that
    /// bucket still holds the charge: the same numbers, and the same state as
    /// ConsumeResult::stamp named (SettleResult::applied). Otherwise changes nothing; it never
    /// creates a bucket and never touches budget scopes. The default, for stores that cannot
    /// settle, refuses (StoreStatus::Refused).
    /// REQUIRES: request.limit != nullptr with Limit::settles, request.cost != 0.
    virtual SettleResult settle(const SettleRequest& request);

    /// Settles each request in order, each one atomically: results[i] answers requests[i]. The
    /// default calls settle() in turn. REQUIRES: results.size() >= requests.size().
    virtual void settleBatch(std::span<const SettleRequest> requests,
                             std::span<SettleResult> results);

    /// Current keyspace figures: what the store holds now, kept as long as it keeps it (the
    /// memory store until it evicts, Redis until a key expires on the server's clock). May lag
    /// concurrent writers slightly.
    virtual KeyspaceStats keyspace() const = 0;

    /// The keyspace as of `now` on the store's clock (ConsumeRequest::now; a Redis store on
    /// server time reads its own): the buckets not yet fresh again at now (the algorithm's
    /// idleAt is later), the budget slots still live at now (last use + slotLifetimeMillis),
    /// the scopes holding one; `bytes` and `maxBuckets` as keyspace(). Every store counts one
    /// state alike however long it keeps it, so a scenario's figures agree across stores.
    /// Visits every key: for samples and reports, not per decision. The default, for stores
    /// that keep nothing past its freshness, is keyspace().
    virtual KeyspaceStats keyspaceAt(Nanos now) const;

    /// "memory" or "redis".
    virtual std::string_view kind() const = 0;

    /// Whether the store answers now (a readiness check), within the store's own timeout:
    /// status Ok; Transport when it cannot be reached or does not answer in time; Refused when
    /// it answers with an error (authentication refused, for one), with the reason in `error`.
    /// The default, for stores inside the process, is always Ok.
    virtual ConsumeResult probe();
};

}  // namespace ratelab
