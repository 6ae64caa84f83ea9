// Lint warnings: numbers and settings that validate but are known to bite. Each rule is stated
// where it is checked, and each message says what to do.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "algorithms/algorithms.h"
#include "policy/policy_fields.h"
#include "policy/policy_file_internal.h"
#include "policy/policy_names.h"
#include "policy/policy_paths.h"
#include "ratelab/number_text.h"

namespace ratelab::policy {

namespace {

// Requests of one page load (HTML, scripts, styles, images) arriving together.
constexpr std::int64_t kPageLoad = 6;
// New keys per second an attacker is assumed to mint when the lint weighs a policy against the
// memory store's cap: a fresh IPv6 /64 per request (one routed /48 holds 65,536 of them) at a
// modest request rate.
constexpr double kMintRate = 1000;
// The widest IPv6 network one attacker is assumed to route: what a hosting provider or tunnel
// broker hands a customer is a /48 at most, and a provider's whole allocation is a /32.
constexpr int kAttackerNetwork = 32;
// Users behind one NAT address (an office, a school, a carrier NAT's share) that the budget
// must hold before they collapse onto the address's bucket.
constexpr std::int64_t kNatCrowd = 32;

struct Numbers {
    std::string where;
    std::string label;
    std::int64_t capacity;
    double refill;
    Limit limit;
};

std::vector<Numbers> numbersOf(const Policy& p, const std::string& at) {
    std::vector<Numbers> out{{at, "", p.capacity, p.refillPerSecond, compileLimit(p)}};
    if (!p.tiers) return out;
    for (const Tier& tier : p.tiers->tiers) {
        const Tier resolved = resolvedTier(p, tier);
        out.push_back({at + "/tiers/limits/" + tier.name, "tier " + quoted(tier.name) + ": ",
                       resolved.capacity, resolved.refillPerSecond, compileLimit(p, &tier)});
    }
    return out;
}

// Six significant digits, for suggestions a user types.
std::string shortNumber(double x) {
    return numberText(x, 6);
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// tower_governor's per_second(n) means one token every n seconds, and is often carried over as
// a rate of n per second. Rule: a token bucket or GCRA whose refill_per_second is a whole number
// from 2 to 86400 (a period of up to a day) and above its capacity, i.e. whose whole burst
// refills in under a second (a burst that small next to the rate is seldom meant; leaky_bucket
// numbers come from nginx, whose rate is never a period, and are exempt).
void lintRateLooksLikePeriod(const Policy& p, const Numbers& n, CheckContext& context) {
    if (p.algorithm != Algorithm::TokenBucket && p.algorithm != Algorithm::Gcra) return;
    if (n.refill < 2 || n.refill > 86400 || std::floor(n.refill) != n.refill ||
        n.refill <= n.capacity) {
        return;
    }
    context.warning(n.where + "/refill_per_second",
                    n.label + "refill_per_second " + numberText(n.refill) + " with capacity " +
                        std::to_string(n.capacity) + " refills the whole burst in " +
                        numberText(std::round(1000.0 * n.capacity / n.refill)) +
                        " ms: if you meant one token every " + numberText(n.refill) +
                        " seconds (tower_governor's per_second(" + numberText(n.refill) +
                        ")), write refill_per_second " + shortNumber(1 / n.refill) +
                        "; if you meant " + numberText(n.refill) +
                        " per second, raise capacity to at least " + numberText(n.refill));
}

// Rule: at most one request of the policy's cost passes at once (burst capacity / cost <= 1; a
// leaky bucket passes burst + 1, HAProxy's counter read first X + 1), so a page load of six
// parallel requests is throttled.
void lintBurst(const Policy& p, const Numbers& n, CheckContext& context) {
    bool leaky = p.algorithm == Algorithm::LeakyBucket;
    const bool readFirst = p.algorithm == Algorithm::HaproxyRate && !p.countRefused;
    std::int64_t atOnce = (leaky || readFirst ? n.capacity + 1 : n.capacity) / p.cost;
    if (atOnce > 1) return;
    std::string what = leaky ? "burst " + std::to_string(n.capacity) +
                                   (n.capacity == 0 ? " (nginx's default)" : "")
                             : "capacity " + std::to_string(n.capacity);
    context.warning(n.where + "/capacity",
                    n.label + what + " lets only one request through at a time: a page load of " +
                        std::to_string(kPageLoad) + " parallel requests sees " +
                        std::to_string(kPageLoad - 1) +
                        " of them throttled (nginx counts in milliseconds, so even requests 1 ms "
                        "apart collide); raise " +
                        (leaky ? "capacity (the burst) to at least 5 with nodelay"
                               : "capacity to at least " + std::to_string(kPageLoad * p.cost)));
}

// The engine runs round(1e9 / R) ns per token, i.e. the rate 1e9 / round(1e9 / R). Rule: that
// differs from R by more than one part in a million.
void lintRounding(const Policy& p, const Numbers& n, CheckContext& context) {
    if (!isRateAlgorithm(p.algorithm)) return;
    if (p.algorithm == Algorithm::LeakyBucket) {
        // nginx's unit is a thousandth of a request per second (Limit::milliRate). Rule: R * 1000
        // is not a whole number (the engine, like nginx, drops the fraction).
        const double milli = n.refill * 1000;
        if (milli - std::floor(milli + 1e-6) <= 1e-6) return;
        const double applied = static_cast<double>(n.limit.milliRate) / 1000;
        context.warning(n.where + "/refill_per_second",
                        n.label + "refill_per_second " + numberText(n.refill) + " runs as " +
                            numberText(applied) +
                            " per second: the leaky bucket counts its rate in thousandths of a "
                            "request per second, as nginx does (rate=7r/m is 0.116), and drops "
                            "the rest; write " +
                            numberText(applied));
        return;
    }
    double applied = 1e9 / static_cast<double>(n.limit.emissionInterval);
    double error = (applied - n.refill) / n.refill;
    if (std::fabs(error) <= 1e-6) return;
    context.warning(n.where + "/refill_per_second",
                    n.label + "refill_per_second " + numberText(n.refill) +
                        " runs as one token every " + std::to_string(n.limit.emissionInterval) +
                        " ns, i.e. " + numberText(applied) + " per second (" +
                        (error > 0 ? "+" : "") + numberText(std::round(error * 1e6) / 1e4) +
                        "%): the engine counts whole nanoseconds per token; write a rate whose "
                        "1e9 / rate is a whole number, such as " +
                        numberText(applied));
}

void lintShadow(const Policy& p, const std::string& at, CheckContext& context) {
    if (p.mode != PolicyMode::Shadow) return;
    context.warning(at + "/mode", "policy " + quoted(p.name) +
                                      " is in shadow mode: it counts and reports but never "
                                      "refuses a request; set mode to \"enforce\" once its "
                                      "numbers are tuned");
}

// Whether the route (prefix or pattern), lower-cased, contains login, signin, auth, token or
// password: the routes where guesses are what a limit counts.
bool loginLike(const Policy& p) {
    const std::string route = lower(routeText(p.match));
    for (std::string_view word : {"login", "signin", "auth", "token", "password"}) {
        if (route.find(word) != std::string::npos) return true;
    }
    return false;
}

// Rule: a login-like route (loginLike) whose transport errors fail open.
void lintFailOpenLogin(const Policy& p, const std::string& at, CheckContext& context) {
    if (p.onStoreError != StoreErrorRule::FailOpenOnTransport || !loginLike(p)) return;
    context.warning(at + "/on_store_error",
                    "policy " + quoted(p.name) + " guards a login-like route (" +
                        quoted(routeText(p.match)) +
                        ") but lets requests through when the store is unreachable: an "
                        "attacker who can slow or break the store gets unlimited guesses; "
                        "set on_store_error to \"deny\"");
}

// Rules: charge "failures" on a route that is not login-like (loginLike) counts failures where
// a failure is no guess, so most traffic is given back; and charge fields that change nothing.
void lintCharge(const Policy& p, const std::string& at, CheckContext& context) {
    const ChargeConfig& c = p.charge;
    if (c.rule == ChargeRule::Failures && !loginLike(p)) {
        context.warning(at + "/charge",
                        "policy " + quoted(p.name) + " counts failures only, but its route (" +
                            quoted(routeText(p.match)) +
                            ") is not a login: every other answer is given back, so the limit "
                            "holds only clients that fail; use \"always\" unless failures are "
                            "what it guards against");
    }
    if (c.rule == ChargeRule::Always && c.failureStatuses != ChargeConfig{}.failureStatuses) {
        context.warning(at + "/failure_statuses",
                        "failure_statuses has no effect with charge \"always\": set charge to "
                        "\"failures\" or \"successes\", or remove it");
    }
    if (c.penalty == 0 && !c.penaltyStatuses.empty()) {
        context.warning(at + "/penalty_statuses",
                        "penalty_statuses has no effect without a penalty: set penalty to the "
                        "units those answers cost, or remove it");
    }
}

// Rule: an address budget level whose prefix is not shorter than the key's own (a /48 level for
// keys aggregated to /48) holds one key per network: it has no effect (the engine skips it).
void lintAddressLevels(const Policy& p, const std::string& at, CheckContext& context) {
    struct Family {
        const char* field;
        const char* keyField;
        const std::vector<AddressBudget>* levels;
        int keyPrefix;
    };
    for (const Family& f :
         {Family{"ipv6_prefixes", "ipv6_prefix", &p.budget.ipv6Prefixes, p.key.ipv6Prefix},
          Family{"ipv4_prefixes", "ipv4_prefix", &p.budget.ipv4Prefixes, p.key.ipv4Prefix}}) {
        for (std::size_t i = 0; i < f.levels->size(); ++i) {
            const int prefix = (*f.levels)[i].prefix;
            if (prefix < f.keyPrefix) continue;
            context.warning(at + "/budget/" + f.field + "/" + std::to_string(i) + "/prefix",
                            "address budget level /" + std::to_string(prefix) +
                                " is not shorter than key." + f.keyField + " " +
                                std::to_string(f.keyPrefix) +
                                ": each of its networks holds one key, so it has no effect; "
                                "remove it or use a shorter prefix");
        }
    }
}

// Rule (a memory store, whose cap is max_buckets): keys come from IPv6 addresses finer than the
// attacker's network (key.ipv6_prefix > /32), a minter's to mint. Once the store is full the
// fair-share rule holds a minter to its networks' share (docs/RELIABILITY.md), but until then
// every minted key gets a bucket of its own and passes up to `capacity` requests. With an
// address budget whose outermost level is that network or wider, one attacker holds at most
// its cap + 1 buckets: warn when that reaches max_buckets. Without one, an attacker minting
// kMintRate keys per second keeps rate x lifetime buckets alive (a bucket lives until it is
// full again, the limit's time to refill): warn when that reaches max_buckets. Keys that are
// no address (a principal, a header, a composite without the peer) have no address budget.
void lintStoreFill(const PolicySet& set, const Policy& p, const std::string& at,
                   CheckContext& context) {
    if (set.store.kind != StoreConfig::Kind::Memory) return;
    if (p.key.source == KeySource::Principal || p.key.source == KeySource::Header) return;
    if (p.key.ipv6Prefix <= kAttackerNetwork) return;
    if (p.key.source == KeySource::Composite &&
        std::none_of(p.key.parts.begin(), p.key.parts.end(),
                     [](const KeyPart& k) { return k.kind == KeyPart::Kind::Peer; })) {
        return;  // keyed on what the client writes, not on its address
    }
    const double maxBuckets = static_cast<double>(set.store.maxBuckets);
    double lifetime = 0;
    double capacity = 0;
    for (const Numbers& n : numbersOf(p, at)) {
        lifetime = std::max(lifetime, static_cast<double>(algorithms::freshAfter(n.limit)) / 1e9);
        capacity = std::max(capacity, static_cast<double>(n.capacity));
    }
    // What the minter passes before the store is full: a fresh bucket per key it minted.
    const std::string passed = "until the store is full every minted key passes up to " +
                               numberText(capacity) + " requests (" +
                               numberText(maxBuckets * capacity) +
                               " in all); once it is full, the fair-share rule charges the "
                               "attacker's new keys to its network's bucket and keeps room for "
                               "everyone else";
    const std::vector<AddressBudget> none;
    const std::vector<AddressBudget>& levels = p.budget.enabled ? p.budget.ipv6Prefixes : none;
    const std::string field = at + "/budget/ipv6_prefixes";
    if (!levels.empty() && levels.back().prefix <= kAttackerNetwork) {
        const double worst = static_cast<double>(levels.back().cap) + 1;
        if (worst < maxBuckets) return;
        context.warning(field + "/" + std::to_string(levels.size() - 1) + "/cap",
                        "one /" + std::to_string(levels.back().prefix) +
                            " (a provider's whole allocation) may hold " + numberText(worst) +
                            " buckets under this cap, as many as the store's max_buckets " +
                            numberText(maxBuckets) + ": one attacker minting addresses in it "
                            "fills the store, and " + passed +
                            "; lower the cap well below max_buckets, so that its network is "
                            "charged to one bucket first");
        return;
    }
    const double alive = kMintRate * lifetime;
    if (alive < maxBuckets) return;
    context.warning(
        levels.empty() ? field : field + "/" + std::to_string(levels.size() - 1) + "/prefix",
        "an attacker minting " + numberText(kMintRate) + " IPv6 /" +
            std::to_string(p.key.ipv6Prefix) +
            "s per second (one routed /48 holds 65536 /64s) fills the store's max_buckets " +
            numberText(maxBuckets) + " in " + numberText(std::ceil(maxBuckets / kMintRate)) +
            " s, each bucket living " + numberText(std::ceil(lifetime)) +
            " s (the limit's time to refill), and " + passed +
            "; count addresses against their networks with budget.ipv6_prefixes, up to a /" +
            std::to_string(kAttackerNetwork) +
            " (the default is [{\"prefix\": 48, \"cap\": 1024}, {\"prefix\": 32, \"cap\": "
            "65536}]), so that its network is charged to one bucket first, or raise max_buckets "
            "above " +
            numberText(std::ceil(alive)));
}

// on_store_error "local" (the process decides alone while the shared store is unreachable).
// Rules: on a memory store it never applies (the store is this process's memory and is always
// reached); on a shared store with store.replicas 1, each of several replicas would hold the
// whole limit during an outage; and a cost above the local capacity is refused by every replica
// for the whole outage.
void lintLocal(const PolicySet& set, const Policy& p, const std::string& at,
               CheckContext& context) {
    if (p.onStoreError != StoreErrorRule::Local) return;
    if (set.store.kind == StoreConfig::Kind::Memory) {
        context.warning(at + "/on_store_error",
                        "on_store_error \"local\" never applies to a memory store: it is this "
                        "process's own memory and is always reachable; it is meant for a shared "
                        "(redis) store");
        return;
    }
    if (set.store.replicas == 1) {
        context.warning("/store/replicas",
                        "policy " + quoted(p.name) +
                            " decides locally during an outage with store.replicas 1: each "
                            "process then holds the whole limit, so N processes admit N times "
                            "it; set store.replicas to the number of processes sharing the store");
    }
    for (const Numbers& n : numbersOf(p, at)) {
        const Limit local = perReplicaLimit(n.limit, set.store.replicas);
        const std::int64_t most = p.algorithm == Algorithm::LeakyBucket ? local.capacity + 1
                                  : p.algorithm == Algorithm::HaproxyRate
                                      ? algorithms::haproxyMostCost(local)
                                      : local.capacity;
        if (p.cost <= most) continue;
        context.warning(n.where + "/cost",
                        n.label + "cost " + std::to_string(p.cost) + " is more than the " +
                            std::to_string(most) + " one of " + std::to_string(set.store.replicas) +
                            " replicas holds during an outage: every such request is refused "
                            "until the shared store answers; lower cost or store.replicas");
    }
}

// Rule: where the engine budgets keys per peer scope (budgetApplies), callers over the cap are
// collapsed onto the scope's address bucket. With budget.per_peer / 2^(32 - ipv4_prefix) below
// kNatCrowd keys per IPv4 address, an office behind one NAT address collapses onto one shared
// bucket.
void lintNatBudget(const Policy& p, const std::string& at, CheckContext& context) {
    if (!budgetApplies(p)) return;
    double addresses = std::ldexp(1.0, 32 - p.key.ipv4Prefix);
    double perAddress = p.budget.perPeer / addresses;
    if (perAddress >= kNatCrowd) return;
    std::string scope =
        p.key.ipv4Prefix == 32
            ? "one address hold " + std::to_string(p.budget.perPeer) + " Authorization keys"
            : "one /" + std::to_string(p.key.ipv4Prefix) + " (" + numberText(addresses) +
                  " addresses) hold " + numberText(std::floor(perAddress * 100) / 100) +
                  " Authorization keys per address";
    context.warning(at + "/budget/per_peer",
                    "budget.per_peer " + std::to_string(p.budget.perPeer) + " lets " + scope +
                        ": an office or carrier NAT with more "
                        "users than that collapses onto one shared address bucket and its users "
                        "get throttled; allow at least " +
                        std::to_string(kNatCrowd) + " per address (per_peer " +
                        numberText(kNatCrowd * addresses) + "; the default is 128 for /32)");
}

void lintDelay(const Policy& p, const std::string& at, CheckContext& context) {
    if (p.algorithm != Algorithm::LeakyBucket || p.nodelay || p.delay == 0) return;
    if (p.delay < p.capacity) return;
    context.warning(at + "/delay", "delay " + std::to_string(p.delay) + " is not below burst " +
                                       std::to_string(p.capacity) +
                                       ": every request within the burst passes at once, as with "
                                       "nodelay; write \"nodelay\": true or lower delay");
}

void lintPrefix(const Policy& p, const std::string& at, CheckContext& context) {
    if (!p.match.pathPattern.empty() || p.match.pathPrefix.find('*') == std::string::npos) return;
    context.warning(at + "/match/path_prefix",
                    "path_prefix " + quoted(p.match.pathPrefix) +
                        " is matched literally, \"*\" included; use path_pattern for wildcards");
}

// Rule: a key the client writes (a header, or a composite with a header part) with the budget
// disabled: nothing bounds how many keys one address may create.
void lintUnbudgetedKey(const Policy& p, const std::string& at, CheckContext& context) {
    bool clientWritten = p.key.source == KeySource::Header ||
                         (p.key.source == KeySource::Composite &&
                          std::any_of(p.key.parts.begin(), p.key.parts.end(), [](const KeyPart& k) {
                              return k.kind == KeyPart::Kind::Header;
                          }));
    if (!clientWritten || p.budget.enabled) return;
    context.warning(at + "/budget/enabled",
                    "policy " + quoted(p.name) +
                        " keys on a header the client writes and its budget is off: a client "
                        "that rotates the value gets a fresh bucket per request; set "
                        "budget.enabled to true");
}

// A name whose window or algorithm changed keeps reading state stored under the old numbers.
void lintChanged(const Policy& p, const std::string& at, const PolicySet& previous,
                 CheckContext& context) {
    auto old = std::find_if(previous.policies.begin(), previous.policies.end(),
                            [&](const Policy& q) { return q.name == p.name; });
    if (old == previous.policies.end()) return;
    std::string rename = "; give the policy a new name (e.g. " + quoted(p.name + "-v2") +
                         ") so that it starts on fresh keys";
    if (old->algorithm != p.algorithm) {
        context.warning(
            at + "/algorithm",
            "algorithm changed from " + std::string(algorithmName(old->algorithm)) + " to " +
                std::string(algorithmName(p.algorithm)) + " under the same name " + quoted(p.name) +
                ": state stored by the old algorithm would be read by the new one" + rename);
        return;
    }
    if (isRateAlgorithm(p.algorithm)) return;
    if (old->windowMs != p.windowMs) {
        context.warning(at + "/window_ms",
                        "window_ms changed from " + std::to_string(old->windowMs) + " to " +
                            std::to_string(p.windowMs) + " under the same name " + quoted(p.name) +
                            ": counts stored for the old window would be read as counts of the "
                            "new one" +
                            rename);
    }
    if (!p.tiers || !old->tiers) return;
    for (const Tier& tier : p.tiers->tiers) {
        for (const Tier& before : old->tiers->tiers) {
            if (tier.name != before.name) continue;
            std::int64_t now = tier.windowMs > 0 ? tier.windowMs : p.windowMs;
            std::int64_t was = before.windowMs > 0 ? before.windowMs : old->windowMs;
            if (now != was && old->windowMs == p.windowMs) {
                context.warning(at + "/tiers/limits/" + tier.name + "/window_ms",
                                "tier " + quoted(tier.name) + ": window changed from " +
                                    std::to_string(was) + " to " + std::to_string(now) +
                                    " ms under the same policy name " + quoted(p.name) + rename);
            }
        }
    }
}

void lintTrustedProxies(const PolicySet& set, CheckContext& context) {
    for (std::size_t i = 0; i < set.trustedProxies.cidrs.size(); ++i) {
        const Cidr& cidr = set.trustedProxies.cidrs[i];
        if (cidr.prefixLength() != 0) continue;
        context.warning("/trusted_proxies/cidrs/" + std::to_string(i),
                        "trusting " + cidr.toString() + " lets every client write its own " +
                            set.trustedProxies.header +
                            " header and choose its bucket; list only your proxies' addresses");
    }
}

}  // namespace

void checkLints(const PolicySet& set, const PolicySet* previous, CheckContext& context) {
    lintTrustedProxies(set, context);
    checkLimitLints(set, context);
    for (std::size_t i = 0; i < set.policies.size(); ++i) {
        const Policy& p = set.policies[i];
        std::string at = policyPointer(i);
        for (const Numbers& n : numbersOf(p, at)) {
            lintRateLooksLikePeriod(p, n, context);
            lintBurst(p, n, context);
            lintRounding(p, n, context);
        }
        lintShadow(p, at, context);
        lintFailOpenLogin(p, at, context);
        lintCharge(p, at, context);
        lintLocal(set, p, at, context);
        lintStoreFill(set, p, at, context);
        lintAddressLevels(p, at, context);
        lintNatBudget(p, at, context);
        lintDelay(p, at, context);
        lintPrefix(p, at, context);
        lintUnbudgetedKey(p, at, context);
        if (previous) lintChanged(p, at, *previous, context);
    }
}

}  // namespace ratelab::policy
