#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ratelab/ip_address.h"
#include "ratelab/limit.h"
#include "ratelab/validation_record.h"

namespace ratelab {

/// Where a policy's bucket key comes from.
enum class KeySource : std::uint8_t {
    Default,    ///< principal, then Authorization (budgeted), then peer, else 412
    Peer,       ///< the client address only (prefix rules apply)
    Header,     ///< a named header such as an API key (hashed)
    Principal,  ///< the verified principal only; no principal gives 412
    Composite,  ///< several parts joined, e.g. route + account (hashed)
};

/// What to do with an Authorization header nothing has verified (the limiter runs before
/// authentication, so that is every Authorization header it sees).
enum class UnverifiedAuthorization : std::uint8_t {
    Budget,  ///< key on it, inside the peer's bucket budget (the default)
    Ignore,  ///< key on the peer alone
};

/// What a header, principal or composite key does when the named header, the principal or an
/// attribute is absent or empty (`key.when_missing`).
enum class WhenMissing : std::uint8_t {
    Refuse,  ///< 412 identity_unavailable (the default)
    Skip,    ///< the policy does not apply to the request (nginx does not count an empty key)
    Peer,    ///< key by the client address, as the default chain would (Kong's fallback)
    Shared,  ///< one bucket for every such request (Traefik's empty source)
};

enum class StoreErrorRule : std::uint8_t {
    FailOpenOnTransport,  ///< transport errors pass (and are reported); store refusals get 503
    Deny,                 ///< every store error gets 503
    /// Transport errors are decided on the process's own memory store, with the policy's numbers
    /// divided by StoreConfig::replicas (perReplicaLimit); store refusals get 503.
    Local,
};

enum class PolicyMode : std::uint8_t {
    Enforce,
    Shadow,  ///< decide, count and report, never refuse
};

enum class HeaderStyle : std::uint8_t {
    Ietf,    ///< RateLimit-Policy: "api";q=100;w=60 / RateLimit: "api";r=99;t=60
    Draft7,  ///< RateLimit-Policy: 100;w=60 / RateLimit: limit=100, remaining=99, reset=60
    Legacy,  ///< X-RateLimit-Limit / -Remaining / -Reset
    None,    ///< no quota headers; Retry-After is still sent on 429
};

/// Which requests stay charged once their response is known (Limiter::settle). Every request is
/// charged when it is decided, whatever the rule; settling gives back what the rule does not
/// count.
enum class ChargeRule : std::uint8_t {
    Always,     ///< every admitted request stays charged (the default)
    Failures,   ///< only requests answered with a status in failure_statuses stay charged
    Successes,  ///< only requests answered with a status outside failure_statuses stay charged
};

/// A policy's `charge`, `failure_statuses`, `penalty` and `penalty_statuses`.
struct ChargeConfig {
    ChargeRule rule = ChargeRule::Always;
    std::vector<int> failureStatuses{401, 403};  ///< 100..599 each, no duplicates, non-empty
    /// Units charged on top of the request's cost when its status is in penaltyStatuses; a
    /// penalty empties the bucket at most, it never puts it in debt. >= 0.
    std::int64_t penalty = 0;
    std::vector<int> penaltyStatuses;  ///< required, non-empty, when penalty > 0
    friend bool operator==(const ChargeConfig&, const ChargeConfig&) = default;
};

/// One part of a composite key. Values other than route and method are hashed into the key.
struct KeyPart {
    enum class Kind : std::uint8_t { Route, Method, Peer, Principal, Header, Attribute };
    Kind kind = Kind::Route;
    std::string name;  ///< the header or attribute name for Header / Attribute
    friend bool operator==(const KeyPart&, const KeyPart&) = default;
};

struct KeyConfig {
    KeySource source = KeySource::Default;
    std::string header;          ///< KeySource::Header: the header's name
    std::vector<KeyPart> parts;  ///< KeySource::Composite: the parts, in order
    int ipv4Prefix = 32;         ///< addresses are aggregated to this prefix, 1..32
    int ipv6Prefix = 64;         ///< and this one, 1..128
    UnverifiedAuthorization unverifiedAuthorization = UnverifiedAuthorization::Budget;
    /// Header, principal and composite sources: a request without the key's part. Other
    /// sources: Refuse (a peer key without an address is refused whatever this says).
    WhenMissing whenMissing = WhenMissing::Refuse;
    friend bool operator==(const KeyConfig&, const KeyConfig&) = default;
};

/// One level of an address budget: the networks of this prefix length hold at most `cap` live
/// buckets of the addresses (and credentials) inside them; over the cap, a new one is charged to
/// the network's own bucket.
struct AddressBudget {
    int prefix = 48;  ///< in the family's bits, shorter than the key's own prefix
    std::uint32_t cap = 1024;
    friend bool operator==(const AddressBudget&, const AddressBudget&) = default;
};

/// Most address-budget levels per family.
inline constexpr std::size_t kMaxAddressBudgetLevels = 3;

/// The slot lifetime of a budget that names none (BudgetConfig::slotTtl 0), before the time to
/// refill raises it.
inline constexpr Nanos kDefaultSlotTtl = 60 * kNanosPerSecond;

struct BudgetConfig {
    bool enabled = true;
    std::uint32_t perPeer = 128;  ///< Authorization keys one peer scope may hold
    std::uint32_t global = 8192;  ///< Authorization keys the peerless scope may hold
    /// How long a budget slot outlives its key's last use. 0, the default: kDefaultSlotTtl, or
    /// the bucket's time to refill when that is longer (the stores never let a slot expire
    /// before its bucket is full again). A value written in the file must be at least the time
    /// to refill (validation says so).
    Nanos slotTtl = 0;
    /// Address budgets, longest prefix first (at most kMaxAddressBudgetLevels per family): a
    /// client minting IPv6 /64s from a /48 it routes fills the /48's cap, then the /32's, and
    /// not the store. IPv4 addresses cost an attacker real addresses, so none by default.
    std::vector<AddressBudget> ipv6Prefixes{{48, 1024}, {32, 65536}};
    std::vector<AddressBudget> ipv4Prefixes;
    friend bool operator==(const BudgetConfig&, const BudgetConfig&) = default;
};

struct RouteMatch {
    /// Matches when the path starts with this prefix on a segment boundary ("/api" matches
    /// "/api" and "/api/items", not "/apix"). "/" matches every path.
    std::string pathPrefix = "/";
    /// Alternatively a pattern: "*" matches one path segment, "**" any number of them.
    /// Empty when the prefix is used.
    std::string pathPattern;
    std::vector<std::string> methods;  ///< upper case; empty matches every method

    bool matches(std::string_view method, std::string_view path) const;
    friend bool operator==(const RouteMatch&, const RouteMatch&) = default;
};

struct Bypass {
    std::vector<Cidr> cidrs;              ///< peers skipped entirely (after proxy resolution)
    std::vector<std::string> principals;  ///< verified principals skipped entirely
    friend bool operator==(const Bypass&, const Bypass&) = default;
};

/// Plan tiers: the limit is chosen by a verified request attribute (e.g. plan=premium).
struct Tier {
    std::string name;
    std::int64_t capacity = 0;
    double refillPerSecond = 0;  ///< 0: inherit the policy's
    std::int64_t windowMs = 0;   ///< 0: inherit the policy's
    friend bool operator==(const Tier&, const Tier&) = default;
};

struct TierConfig {
    std::string attribute;    ///< the verified attribute naming the tier, e.g. "plan"
    std::string defaultTier;  ///< used when the attribute is absent or names no tier
    std::vector<Tier> tiers;
    friend bool operator==(const TierConfig&, const TierConfig&) = default;
};

/// One rate-limit policy, as written in a policy file. The user's numbers (refill per second,
/// window in ms) are kept as written so a saved file is byte-stable; what the engine runs is
/// compiled from them by compileLimits(), once, where it is needed.
struct Policy {
    std::string name;
    RouteMatch match;
    Algorithm algorithm = Algorithm::TokenBucket;
    std::int64_t capacity = 20;
    double refillPerSecond = 1.0;
    std::int64_t windowMs = 60'000;
    /// fixed_window: windows from each key's first request, or on the calendar (Limit::align);
    /// with a calendar unit (months, years) windowMs is unused.
    WindowAlign align = WindowAlign::FirstRequest;
    CalendarUnit calendarUnit = CalendarUnit::None;
    std::int64_t delay = 0;  ///< leaky bucket: nginx delay=N
    bool nodelay = false;    ///< leaky bucket: nginx nodelay
    bool countRefused = true;  ///< haproxy_rate: refused requests count too (Limit::countRefused)
    std::int64_t expireMs = 0;  ///< haproxy_rate: an entry unused this long starts over; 0 never
    std::int64_t cost = 1;
    KeyConfig key;
    BudgetConfig budget;
    StoreErrorRule onStoreError = StoreErrorRule::FailOpenOnTransport;
    Nanos storeTimeout = 500 * kNanosPerMilli;
    PolicyMode mode = PolicyMode::Enforce;
    HeaderStyle headers = HeaderStyle::Ietf;
    Bypass bypass;
    std::optional<TierConfig> tiers;
    ChargeConfig charge;

    friend bool operator==(const Policy&, const Policy&) = default;
};

struct StoreConfig {
    enum class Kind : std::uint8_t { Memory, Redis };
    Kind kind = Kind::Memory;
    std::int64_t maxBuckets = 1'000'000;  ///< memory store hard cap
    std::vector<std::string> urls;        ///< redis: one URL, or several cluster seed nodes
    std::string keyNamespace = "ratelab";
    /// Processes sharing the store. A policy with on_store_error "local" holds 1/replicas of its
    /// numbers on its own while the shared store is unreachable, so that together the replicas
    /// admit about what the shared limit admits.
    int replicas = 1;
    /// redis AUTH: where the password is, never the password. At most one of passwordEnv
    /// (an environment variable's name) and passwordFile (an absolute path); username (a
    /// Redis 6 ACL user) needs one of them. makeStore reads the secret.
    std::string username;
    std::string passwordEnv;
    std::string passwordFile;
    friend bool operator==(const StoreConfig&, const StoreConfig&) = default;
};

struct TrustedProxies {
    std::vector<Cidr> cidrs;                 ///< direct peers whose forwarded header is read
    std::string header = "x-forwarded-for";  ///< x-forwarded-for, forwarded or x-real-ip
    friend bool operator==(const TrustedProxies&, const TrustedProxies&) = default;
};

/// A whole policy file: the store, the trusted proxies and the policies, in match order.
/// Which of the policies whose route matches a request charge it (a policy set's `routing`).
enum class Routing : std::uint8_t {
    All,  ///< every matching policy, in order (the default)
    /// Only those whose route is the most specific among the matching ones
    /// (routeSpecificity()); equally specific routes all charge.
    MostSpecific,
};

struct PolicySet {
    int version = 1;
    Routing routing = Routing::All;
    StoreConfig store;
    TrustedProxies trustedProxies;
    std::vector<Policy> policies;
    std::optional<ValidationRecord> validation;

    friend bool operator==(const PolicySet&, const PolicySet&) = default;
};

/// How specific a route is, for Routing::MostSpecific: the greater, the more specific. An exact
/// path (a pattern without wildcards) before a pattern with wildcards (more literal segments
/// first) before a prefix (longer first); "/" is the least specific of all. Methods do not count.
std::uint64_t routeSpecificity(const RouteMatch& match);

/// A tier's numbers as the engine runs them: the tier's own, and the policy's where the tier
/// has 0 (inherit). Thread-safe.
Tier resolvedTier(const Policy& policy, const Tier& tier);

/// The limit of the policy's own numbers, or of one of its tiers (resolved): the only place the
/// user's numbers become the engine's. Refill R per second becomes round(1e9 / R) ns per token,
/// window_ms becomes ns, nodelay becomes kNoDelay. Defined for any numbers: validation compiles
/// before it checks. Thread-safe.
Limit compileLimit(const Policy& policy, const Tier* tier = nullptr);

/// Whether a response can change what a decision of `policy` charged: a charge rule other than
/// "always", or a penalty. Only then does Limiter::settle() touch the store. Thread-safe.
bool chargesByOutcome(const Policy& policy);

/// What settling a request charged `cost` with response `status` adds to its bucket: -cost (a
/// refund) when the rule does not count that status, plus the penalty when the status is in
/// penaltyStatuses; 0 when nothing changes. Thread-safe.
std::int64_t settleCost(const ChargeConfig& charge, int status, std::int64_t cost);

/// The limits the engine selects from for a policy: one per tier in tier order, or the policy's
/// own when it has no tiers. A PolicyResult's `tier` indexes them. Thread-safe.
std::vector<Limit> compileLimits(const Policy& policy);

}  // namespace ratelab
