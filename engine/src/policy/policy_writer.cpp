// The canonical text of a policy set. nlohmann's ordered_json keeps the field order as written
// here and prints every double so that it reads back to the same value.

#include <nlohmann/json.hpp>

#include "policy/policy_names.h"
#include "ratelab/policy_file.h"

namespace ratelab {

namespace {

using Json = nlohmann::ordered_json;

Json strings(const std::vector<std::string>& values) {
    Json out = Json::array();
    for (const std::string& v : values)
        out.push_back(v);
    return out;
}

Json cidrs(const std::vector<Cidr>& values) {
    Json out = Json::array();
    for (const Cidr& c : values)
        out.push_back(c.toString());
    return out;
}

Json nullable(const std::string& value) {
    return value.empty() ? Json(nullptr) : Json(value);
}

Json nullable(const std::optional<double>& value) {
    return value ? Json(*value) : Json(nullptr);
}

Json addressBudgets(const std::vector<AddressBudget>& levels) {
    Json out = Json::array();
    for (const AddressBudget& level : levels) {
        Json l = Json::object();
        l["prefix"] = level.prefix;
        l["cap"] = level.cap;
        out.push_back(std::move(l));
    }
    return out;
}

Json tiersJson(const TierConfig& tiers) {
    Json limits = Json::object();
    for (const Tier& tier : tiers.tiers) {
        Json t = Json::object();
        t["capacity"] = tier.capacity;
        t["refill_per_second"] =
            tier.refillPerSecond > 0 ? Json(tier.refillPerSecond) : Json(nullptr);
        t["window_ms"] = tier.windowMs > 0 ? Json(tier.windowMs) : Json(nullptr);
        limits[tier.name] = std::move(t);
    }
    Json out = Json::object();
    out["attribute"] = tiers.attribute;
    out["default"] = tiers.defaultTier;
    out["limits"] = std::move(limits);
    return out;
}

Json policyJson(const Policy& p) {
    using policy::nameOf;
    Json match = Json::object();
    bool pattern = !p.match.pathPattern.empty();
    match["path_prefix"] = pattern ? Json(nullptr) : Json(p.match.pathPrefix);
    match["path_pattern"] = pattern ? Json(p.match.pathPattern) : Json(nullptr);
    match["methods"] = strings(p.match.methods);

    Json parts = Json::array();
    for (const KeyPart& part : p.key.parts)
        parts.push_back(policy::keyPartText(part));
    Json key = Json::object();
    key["source"] = nameOf(policy::kKeySources, p.key.source);
    key["header"] = nullable(p.key.header);
    key["parts"] = std::move(parts);
    key["ipv4_prefix"] = p.key.ipv4Prefix;
    key["ipv6_prefix"] = p.key.ipv6Prefix;
    key["unverified_authorization"] =
        nameOf(policy::kUnverifiedAuthorization, p.key.unverifiedAuthorization);
    // Written only where it is not the default, so that other files keep their bytes.
    if (p.key.whenMissing != WhenMissing::Refuse)
        key["when_missing"] = nameOf(policy::kWhenMissing, p.key.whenMissing);

    Json budget = Json::object();
    budget["enabled"] = p.budget.enabled;
    budget["per_peer"] = p.budget.perPeer;
    budget["global"] = p.budget.global;
    // null: the lifetime follows the refill (BudgetConfig::slotTtl 0).
    budget["slot_ttl_ms"] =
        p.budget.slotTtl > 0 ? Json(p.budget.slotTtl / kNanosPerMilli) : Json(nullptr);
    budget["ipv6_prefixes"] = addressBudgets(p.budget.ipv6Prefixes);
    budget["ipv4_prefixes"] = addressBudgets(p.budget.ipv4Prefixes);

    Json bypass = Json::object();
    bypass["cidrs"] = cidrs(p.bypass.cidrs);
    bypass["principals"] = strings(p.bypass.principals);

    Json out = Json::object();
    out["name"] = p.name;
    out["match"] = std::move(match);
    out["algorithm"] = algorithmName(p.algorithm);
    out["capacity"] = p.capacity;
    out["refill_per_second"] = p.refillPerSecond;
    // A calendar month or year has its own length: no window_ms then (the reader refuses both).
    if (p.align != WindowAlign::Calendar || p.calendarUnit == CalendarUnit::None)
        out["window_ms"] = p.windowMs;
    // Written only where they differ from the defaults, so that other files keep their bytes.
    if (p.align != WindowAlign::FirstRequest) out["align"] = nameOf(policy::kWindowAligns, p.align);
    if (p.align == WindowAlign::Calendar && p.calendarUnit != CalendarUnit::None)
        out["calendar_unit"] = nameOf(policy::kCalendarUnits, p.calendarUnit);
    out["delay"] = p.delay;
    out["nodelay"] = p.nodelay;
    if (p.algorithm == Algorithm::HaproxyRate) {
        out["count_refused"] = p.countRefused;
        out["expire_ms"] = p.expireMs;
    }
    out["cost"] = p.cost;
    out["key"] = std::move(key);
    out["budget"] = std::move(budget);
    out["on_store_error"] = nameOf(policy::kStoreErrorRules, p.onStoreError);
    out["store_timeout_ms"] = p.storeTimeout / kNanosPerMilli;
    out["mode"] = nameOf(policy::kModes, p.mode);
    out["headers"] = nameOf(policy::kHeaderStyles, p.headers);
    out["bypass"] = std::move(bypass);
    out["tiers"] = p.tiers ? tiersJson(*p.tiers) : Json(nullptr);
    out["charge"] = nameOf(policy::kChargeRules, p.charge.rule);
    out["failure_statuses"] = p.charge.failureStatuses;
    out["penalty"] = p.charge.penalty;
    out["penalty_statuses"] = p.charge.penaltyStatuses;
    return out;
}

Json validationJson(const ValidationRecord& record) {
    Json runs = Json::array();
    for (const ValidationRun& run : record.runs) {
        Json expectations = Json::array();
        for (const ValidationExpectation& e : run.expectations) {
            Json x = Json::object();
            x["metric"] = e.metric;
            x["min"] = nullable(e.min);
            x["max"] = nullable(e.max);
            x["actual"] = e.actual;
            x["pass"] = e.pass;
            expectations.push_back(std::move(x));
        }
        Json r = Json::object();
        r["scenario"] = run.scenario;
        r["seed"] = run.seed;
        r["requests"] = run.requests;
        r["pass"] = run.pass;
        r["expectations"] = std::move(expectations);
        runs.push_back(std::move(r));
    }
    Json out = Json::object();
    out["generator"] = record.generator;
    out["runs"] = std::move(runs);
    return out;
}

}  // namespace

std::string savePolicyText(const PolicySet& set) {
    Json store = Json::object();
    store["kind"] = policy::nameOf(policy::kStoreKinds, set.store.kind);
    store["max_buckets"] = set.store.maxBuckets;
    store["urls"] = strings(set.store.urls);
    store["namespace"] = set.store.keyNamespace;
    store["replicas"] = set.store.replicas;
    // Where the AUTH password is, as the file said; the password itself is never in a PolicySet.
    if (!set.store.username.empty()) store["username"] = set.store.username;
    if (!set.store.passwordEnv.empty()) store["password_env"] = set.store.passwordEnv;
    if (!set.store.passwordFile.empty()) store["password_file"] = set.store.passwordFile;

    Json proxies = Json::object();
    proxies["cidrs"] = cidrs(set.trustedProxies.cidrs);
    proxies["header"] = set.trustedProxies.header;

    Json policies = Json::array();
    for (const Policy& p : set.policies)
        policies.push_back(policyJson(p));

    Json root = Json::object();
    root["version"] = set.version;
    root["store"] = std::move(store);
    root["trusted_proxies"] = std::move(proxies);
    // Written only where it is not the default, so that other files keep their bytes;
    // beside the policies it routes.
    if (set.routing != Routing::All)
        root["routing"] = policy::nameOf(policy::kRoutings, set.routing);
    root["policies"] = std::move(policies);
    root["validation"] = set.validation ? validationJson(*set.validation) : Json(nullptr);
    // Never throws: bytes that are not UTF-8 (only possible in a set built in code) become
    // U+FFFD, which validatePolicySet then shows in its messages.
    return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace ratelab
