// Lint warnings: numbers and settings that validate but are known to bite. Each rule is stated
// where it is checked, and each message says what to do.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "policy/policy_fields.h"
#include "policy/policy_file_internal.h"
#include "policy/policy_names.h"
#include "policy/policy_paths.h"

namespace ratelab::policy {

namespace {

// Requests of one page load (HTML, scripts, styles, images) arriving together.
constexpr std::int64_t kPageLoad = 6;
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
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.6g", x);
    return buffer;
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
// leaky bucket passes burst + 1), so a page load of six parallel requests is throttled.
void lintBurst(const Policy& p, const Numbers& n, CheckContext& context) {
    bool leaky = p.algorithm == Algorithm::LeakyBucket;
    std::int64_t atOnce = (leaky ? n.capacity + 1 : n.capacity) / p.cost;
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

// Rule: the route (prefix or pattern), lower-cased, contains login, signin, auth, token or
// password, and transport errors fail open.
void lintFailOpenLogin(const Policy& p, const std::string& at, CheckContext& context) {
    if (p.onStoreError != StoreErrorRule::FailOpenOnTransport) return;
    std::string route = lower(routeText(p.match));
    for (std::string_view word : {"login", "signin", "auth", "token", "password"}) {
        if (route.find(word) == std::string::npos) continue;
        context.warning(at + "/on_store_error",
                        "policy " + quoted(p.name) + " guards a login-like route (" +
                            quoted(routeText(p.match)) +
                            ") but lets requests through when the store is unreachable: an "
                            "attacker who can slow or break the store gets unlimited guesses; "
                            "set on_store_error to \"deny\"");
        return;
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
        lintNatBudget(p, at, context);
        lintDelay(p, at, context);
        lintPrefix(p, at, context);
        lintUnbudgetedKey(p, at, context);
        if (previous) lintChanged(p, at, *previous, context);
    }
}

}  // namespace ratelab::policy
