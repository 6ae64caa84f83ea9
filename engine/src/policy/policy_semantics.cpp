// Semantic checks across fields and policies. Checks of single values (CIDRs, Redis URLs, path
// patterns) are made while reading (policy_reader.cpp).

#include <cmath>
#include <map>

#include "algorithms/algorithms.h"
#include "policy/policy_fields.h"
#include "policy/policy_file_internal.h"
#include "policy/policy_names.h"

namespace ratelab::policy {

namespace {

constexpr double kMaxDurationNs = static_cast<double>(kMaxDuration);

std::string durationText(double ns) {
    double ms = ns / 1e6;
    std::string out = numberText(std::round(ms * 1000) / 1000) + " ms";
    if (ms >= 2 * 86'400'000.0) out += " (" + numberText(std::round(ms / 86'400'000.0)) + " days)";
    return out;
}

// The numbers one limit runs with: the policy's own, or a tier's over them.
struct LimitNumbers {
    std::string where;  // pointer of the policy or of the tier's limit object
    std::string label;  // "" or "tier \"free\": "
    std::int64_t capacity;
    double refill;
    std::int64_t windowMs;
    Limit limit;
};

std::vector<LimitNumbers> limitsOf(const Policy& p, const std::string& at) {
    std::vector<LimitNumbers> out;
    out.push_back({at, "", p.capacity, p.refillPerSecond, p.windowMs, compileLimit(p)});
    if (!p.tiers) return out;
    for (const Tier& tier : p.tiers->tiers) {
        const Tier resolved = resolvedTier(p, tier);
        out.push_back({at + "/tiers/limits/" + tier.name, "tier " + quoted(tier.name) + ": ",
                       resolved.capacity, resolved.refillPerSecond, resolved.windowMs,
                       compileLimit(p, &tier)});
    }
    return out;
}

void checkCost(const Policy& p, const LimitNumbers& n, CheckContext& context) {
    // The leaky bucket passes burst + 1; HAProxy's counter read before counting passes X + 1.
    const bool leaky = p.algorithm == Algorithm::LeakyBucket;
    const bool readFirst = p.algorithm == Algorithm::HaproxyRate && !p.countRefused;
    const std::int64_t most = leaky || readFirst ? n.capacity + 1 : n.capacity;
    if (p.cost <= most) return;
    std::string message = n.label + "cost " + std::to_string(p.cost) + " is more than " +
                          (leaky       ? "burst + 1 = "
                           : readFirst ? "capacity + 1 = "
                                       : "capacity ") +
                          std::to_string(most) +
                          ": such a request can never pass (the engine refuses it at once); "
                          "lower cost or raise capacity";
    context.error(CheckLevel::Semantics, n.where + (n.label.empty() ? "/cost" : "/capacity"),
                  std::move(message));
}

// HAProxy's periods are times, at most 2^31 - 1 ms; the counter's state holds counts below
// kHaproxyMaxCount (haproxy_rate.h), so a capacity must stay under it to ever refuse.
void checkHaproxyRate(const LimitNumbers& n, CheckContext& context) {
    if (n.windowMs > algorithms::kHaproxyMaxPeriodMs) {
        context.error(CheckLevel::Semantics, n.where + "/window_ms",
                      n.label + "window_ms " + std::to_string(n.windowMs) +
                          " is beyond HAProxy's longest period, 2147483647 ms (24.8 days)");
    }
    if (n.capacity >= algorithms::kHaproxyMaxCount) {
        context.error(CheckLevel::Semantics, n.where + "/capacity",
                      n.label + "capacity " + std::to_string(n.capacity) +
                          " is beyond what haproxy_rate counts in one period; use at most " +
                          std::to_string(algorithms::kHaproxyMaxCount - 1));
    }
}

void checkDurations(const Policy& p, const LimitNumbers& n, CheckContext& context) {
    std::string capacityAt = n.where + "/capacity";
    std::string refillAt = n.where + "/refill_per_second";
    // Windows up to 366 days are read (a calendar-aligned fixed window's bound); the others
    // keep the engine's 90 days.
    if (n.limit.align != WindowAlign::Calendar && n.limit.window > kMaxDuration) {
        context.error(CheckLevel::Semantics, n.where + "/window_ms",
                      n.label + "window_ms " + durationText(static_cast<double>(n.limit.window)) +
                          " is beyond the engine's 90-day limit on durations; only a "
                          "fixed_window aligned on the calendar (\"align\": \"calendar\") may be "
                          "longer, up to 366 days");
        return;
    }
    if (isRateAlgorithm(p.algorithm)) {
        double interval = static_cast<double>(n.limit.emissionInterval);
        if (interval > kMaxDurationNs) {
            context.error(CheckLevel::Semantics, refillAt,
                          n.label + "refill_per_second " + numberText(n.refill) +
                              " means one token every " + durationText(interval) +
                              ", beyond the engine's 90-day limit on durations; raise it to at "
                              "least 1.2861e-07 (one per 90 days)");
            return;
        }
        const double refill = static_cast<double>(algorithms::freshAfter(n.limit));
        if (refill > kMaxDurationNs) {
            context.error(CheckLevel::Semantics, capacityAt,
                          n.label + "refilling " + std::to_string(n.capacity) + " tokens at " +
                              numberText(n.refill) + " per second takes " + durationText(refill) +
                              ", beyond the engine's 90-day limit on durations (the Redis "
                              "scripts rely on it); lower capacity or raise refill_per_second");
        }
        return;
    }
    if (p.algorithm == Algorithm::HaproxyRate) {
        checkHaproxyRate(n, context);
        return;
    }
    const bool calendar = n.limit.align == WindowAlign::Calendar;
    if (calendar && n.limit.calendarUnit != CalendarUnit::None && !n.label.empty() &&
        n.windowMs != p.windowMs) {
        context.error(CheckLevel::Semantics, n.where + "/window_ms",
                      n.label + "window_ms has no meaning with calendar_unit \"" +
                          std::string(nameOf(kCalendarUnits, p.calendarUnit)) +
                          "\": the tier's windows are the policy's; set it to null");
        return;
    }
    if (p.algorithm == Algorithm::SlidingWindow) {
        const double twoWindows = static_cast<double>(algorithms::freshAfter(n.limit));
        if (twoWindows > kMaxDurationNs) {
            context.error(CheckLevel::Semantics, n.where + "/window_ms",
                          n.label + "sliding_window keeps the previous window too, so 2 x " +
                              "window_ms = " + durationText(twoWindows) +
                              " must stay within the engine's 90-day limit; use at most "
                              "3888000000 ms");
        }
    }
}

void checkBudget(const Policy& p, const std::vector<LimitNumbers>& limits, const std::string& at,
                 CheckContext& context) {
    if (!budgetApplies(p)) return;
    double need = 0;
    const LimitNumbers* longest = nullptr;
    for (const LimitNumbers& n : limits) {
        const double t = static_cast<double>(algorithms::freshAfter(n.limit));
        if (t > need) {
            need = t;
            longest = &n;
        }
    }
    // Unwritten (0), the lifetime follows the refill: only a value the file wrote can be short.
    if (p.budget.slotTtl == 0) return;
    if (!longest || static_cast<double>(p.budget.slotTtl) >= need) return;
    auto needMs = static_cast<long long>(std::ceil(need / 1e6));
    context.error(CheckLevel::Semantics, at + "/budget/slot_ttl_ms",
                  "budget slot_ttl_ms " + std::to_string(p.budget.slotTtl / kNanosPerMilli) +
                      " is shorter than the " + longest->label + "bucket's time to refill, " +
                      durationText(need) +
                      ": a credential whose slot expired would come back to a full bucket "
                      "before its old one refilled; set slot_ttl_ms to at least " +
                      std::to_string(needMs));
}

// on_store_error "local" runs perReplicaLimit() on this process's memory store during an
// outage; its durations must stay within the engine's 90 days like the shared limit's.
void checkLocalLimit(const Policy& p, const LimitNumbers& n, int replicas, CheckContext& context) {
    if (p.onStoreError != StoreErrorRule::Local || replicas <= 1) return;
    const Limit local = perReplicaLimit(n.limit, replicas);
    const double longest = std::max(static_cast<double>(algorithms::freshAfter(local)),
                                    static_cast<double>(local.emissionInterval));
    if (!isRateAlgorithm(p.algorithm) || longest <= kMaxDurationNs) return;
    context.error(CheckLevel::Semantics, n.where + "/on_store_error",
                  n.label + "on_store_error \"local\" holds 1/" + std::to_string(replicas) +
                      " of the limit during an outage (store.replicas " + std::to_string(replicas) +
                      "), which refills in " + durationText(longest) +
                      ", beyond the engine's 90-day limit on durations; lower store.replicas or "
                      "raise refill_per_second");
}

// Each level of an address budget encloses the one before it: prefixes strictly shorter, so
// that the chain runs innermost first (a level not shorter than the key's own prefix has no
// effect, which the lint says).
void checkAddressBudgets(const Policy& p, const std::string& at, CheckContext& context) {
    for (const char* field : {"ipv6_prefixes", "ipv4_prefixes"}) {
        const std::vector<AddressBudget>& levels = std::string_view(field) == "ipv6_prefixes"
                                                       ? p.budget.ipv6Prefixes
                                                       : p.budget.ipv4Prefixes;
        for (std::size_t i = 1; i < levels.size(); ++i) {
            if (levels[i].prefix < levels[i - 1].prefix) continue;
            context.error(CheckLevel::Semantics,
                          at + "/budget/" + field + "/" + std::to_string(i) + "/prefix",
                          "address budget prefix /" + std::to_string(levels[i].prefix) +
                              " is not shorter than the level before it (/" +
                              std::to_string(levels[i - 1].prefix) +
                              "): list the levels longest prefix first, each enclosing the one "
                              "before");
            break;
        }
    }
}

// Charging by outcome gives charges back (Store::settle), which needs a state that holds each
// charge as an amount: a token bucket's or GCRA's debt, a fixed window's count. A sliding log
// holds admission times, a sliding window weighs two windows' counts, a leaky bucket follows
// nginx's millisecond excess: a refund has no faithful meaning there, so it is refused rather
// than approximated.
void checkCharge(const Policy& p, const std::string& at, CheckContext& context) {
    const ChargeConfig& c = p.charge;
    if (c.penalty > 0 && c.penaltyStatuses.empty()) {
        context.error(CheckLevel::Semantics, at + "/penalty",
                      "penalty " + std::to_string(c.penalty) +
                          " needs penalty_statuses: the response statuses it is charged for");
    }
    if (!chargesByOutcome(p)) return;
    if (p.algorithm == Algorithm::TokenBucket || p.algorithm == Algorithm::Gcra ||
        p.algorithm == Algorithm::FixedWindow) {
        return;
    }
    const bool rule = c.rule != ChargeRule::Always;
    const std::string what = rule ? "charge " + quoted(nameOf(kChargeRules, c.rule)) : "a penalty";
    context.error(CheckLevel::Semantics, at + (rule ? "/charge" : "/penalty"),
                  what +
                      " needs an algorithm that holds each charge as an amount it can give "
                      "back or add to (token_bucket, gcra or fixed_window); " +
                      std::string(algorithmName(p.algorithm)) +
                      " keeps admission times or weighted counts, where a refund has no exact "
                      "meaning");
}

void checkTiers(const Policy& p, const std::string& at, CheckContext& context) {
    if (!p.tiers || p.tiers->defaultTier.empty()) return;
    std::string names;
    for (const Tier& tier : p.tiers->tiers) {
        if (tier.name == p.tiers->defaultTier) return;
        if (!names.empty()) names += ", ";
        names += quoted(tier.name);
    }
    context.error(CheckLevel::Semantics, at + "/tiers/default",
                  "default tier " + quoted(p.tiers->defaultTier) + " is not one of the tiers " +
                      names + "; requests without the attribute would have no limit");
}

}  // namespace

void checkSemantics(const PolicySet& set, CheckContext& context) {
    std::map<std::string, std::size_t> names;
    for (std::size_t i = 0; i < set.policies.size(); ++i) {
        const Policy& p = set.policies[i];
        std::string at = policyPointer(i);
        if (!context.clean(at)) continue;

        auto [first, inserted] = names.emplace(p.name, i);
        if (!inserted) {
            context.error(CheckLevel::Semantics, at + "/name",
                          "duplicate policy name " + quoted(p.name) + " (also " +
                              policyPointer(first->second) +
                              "): the name keys stored state and response headers; give each "
                              "policy its own");
        }
        std::vector<LimitNumbers> limits = limitsOf(p, at);
        for (const LimitNumbers& n : limits) {
            checkCost(p, n, context);
            checkDurations(p, n, context);
        }
        if (context.clean(at)) {
            for (const LimitNumbers& n : limits)
                checkLocalLimit(p, n, set.store.replicas, context);
        }
        if (context.clean(at)) checkBudget(p, limits, at, context);  // needs sane durations
        checkTiers(p, at, context);
        checkAddressBudgets(p, at, context);
        checkCharge(p, at, context);
    }
}

}  // namespace ratelab::policy
