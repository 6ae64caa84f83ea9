// Schema level of a policy file: JSON tree -> PolicySet (its "store" and "trusted_proxies"
// objects: policy_store_reader.cpp). Mirrors resources/schema/policy.schema.json rule for rule
// (tests/engine/policy/tst_policy_schema.cpp checks that both give the same verdict on every corpus
// file).

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>
#include <vector>

#include "policy/policy_fields.h"
#include "policy/policy_file_internal.h"
#include "policy/policy_names.h"
#include "policy/policy_paths.h"
#include "policy/policy_reader_internal.h"

namespace ratelab::policy {

namespace {

using namespace reader;

constexpr std::int64_t kMaxDurationMs = kMaxDuration / kNanosPerMilli;
// The schema's bound on window_ms: a calendar-aligned fixed window's (semantics holds the others
// to kMaxDurationMs).
constexpr std::int64_t kMaxWindowMs = kMaxAlignedWindow / kNanosPerMilli;
constexpr std::int64_t kMaxUint32 = 4'294'967'295;
// The schema's bound on expire_ms: HAProxy's longest time (2^31 - 1 ms).
constexpr std::int64_t kMaxHaproxyExpireMs = 2'147'483'647;
constexpr double kMaxRate = 1e9;

bool checkName(Diagnostics& sink, const json::Value& v, std::string_view what) {
    if (isValidName(v.asString())) return true;
    sink.error(CheckLevel::Schema, v,
               std::string(what) + " " + quoted(v.asString()) +
                   " must be 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or "
                   "digit");
    return false;
}

bool checkToken(Diagnostics& sink, const json::Value& v, std::string_view what) {
    if (isValidToken(v.asString())) return true;
    sink.error(CheckLevel::Schema, v,
               std::string(what) + " " + quoted(v.asString()) +
                   " must be an HTTP token: 1 to 256 letters, digits or !#$%&'*+.^_`|~-");
    return false;
}

bool checkPath(Diagnostics& sink, const json::Value& v, std::string_view what) {
    const std::string& path = v.asString();
    std::string problem;
    if (path.empty() || path.front() != '/') {
        problem = " must start with \"/\"";
    } else if (path.size() > kMaxRouteBytes) {
        problem = " is longer than " + std::to_string(kMaxRouteBytes) + " characters";
    } else if (!std::all_of(path.begin(), path.end(), isRouteChar)) {
        problem = " must be printable ASCII without spaces (percent-encode other characters)";
    }
    if (problem.empty()) return true;
    sink.error(CheckLevel::Schema, v, std::string(what) + " " + quoted(path) + problem);
    return false;
}

// ---- one policy --------------------------------------------------------------------------

void readMatch(Diagnostics& sink, const json::Value& object, RouteMatch& match) {
    Fields f(sink, object, {"path_prefix", "path_pattern", "methods"});
    const json::Value* prefix = f.get("path_prefix");
    const json::Value* pattern = f.get("path_pattern");
    bool prefixOk = true;
    bool patternGiven = false;
    if (pattern && !pattern->isNull()) {
        if (sink.reader().expect(*pattern, {Type::String, Type::Null}, "a string or null") &&
            checkPath(sink, *pattern, "path_pattern")) {
            match.pathPattern = pattern->asString();
            std::string why;
            if (!checkPathPattern(match.pathPattern, &why)) {
                sink.error(CheckLevel::Semantics, *pattern,
                           "path_pattern " + quoted(match.pathPattern) + ": " + why);
            }
        }
        patternGiven = pattern->isString();
    }
    if (prefix && !prefix->isNull()) {
        prefixOk = sink.reader().expect(*prefix, {Type::String, Type::Null}, "a string or null") &&
                   checkPath(sink, *prefix, "path_prefix");
        if (prefixOk && patternGiven) {
            sink.error(CheckLevel::Schema, *prefix,
                       "give path_prefix or path_pattern, not both; set path_prefix to null");
        } else if (prefixOk) {
            match.pathPrefix = prefix->asString();
        }
    } else if (prefix && !patternGiven) {
        sink.error(CheckLevel::Schema, *prefix,
                   "path_prefix may be null only when path_pattern is given");
    }
    if (const json::Value* methods = f.array("methods")) {
        std::vector<const json::Value*> valid;
        for (const json::Value* item : itemsOf(sink, *methods, Type::String, "a string")) {
            const std::string& m = item->asString();
            bool ok = !m.empty() && m.size() <= 32 &&
                      std::all_of(m.begin(), m.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
            if (!ok) {
                sink.error(
                    CheckLevel::Schema, *item,
                    "method " + quoted(m) + " must be 1 to 32 upper-case letters, such as \"GET\"");
                continue;
            }
            valid.push_back(item);
        }
        if (uniqueItems(sink, valid, "method")) {
            for (const json::Value* item : valid)
                match.methods.push_back(item->asString());
        }
    }
}

bool parseKeyPart(const std::string& text, KeyPart& part) {
    static constexpr std::pair<std::string_view, KeyPart::Kind> kPlain[] = {
        {"route", KeyPart::Kind::Route},
        {"method", KeyPart::Kind::Method},
        {"peer", KeyPart::Kind::Peer},
        {"principal", KeyPart::Kind::Principal},
    };
    for (const auto& [name, kind] : kPlain) {
        if (text == name) {
            part = KeyPart{kind, {}};
            return true;
        }
    }
    std::string_view view = text;
    for (auto [prefix, kind] :
         {std::pair{std::string_view("header:"), KeyPart::Kind::Header},
          std::pair{std::string_view("attribute:"), KeyPart::Kind::Attribute}}) {
        if (view.substr(0, prefix.size()) == prefix && isValidToken(view.substr(prefix.size()))) {
            part = KeyPart{kind, std::string(view.substr(prefix.size()))};
            return true;
        }
    }
    return false;
}

void readKey(Diagnostics& sink, const json::Value& object, KeyConfig& key) {
    Fields f(sink, object,
             {"source", "header", "parts", "ipv4_prefix", "ipv6_prefix", "unverified_authorization",
              "when_missing"});
    bool sourceOk = !f.has("source") || f.choice("source", key.source, kKeySources);
    f.whole("ipv4_prefix", key.ipv4Prefix, 1, 32);
    f.whole("ipv6_prefix", key.ipv6Prefix, 1, 128);
    f.choice("unverified_authorization", key.unverifiedAuthorization, kUnverifiedAuthorization);
    const bool whenMissingOk = f.choice("when_missing", key.whenMissing, kWhenMissing);

    const json::Value* header = f.get("header");
    bool headerGiven = false;
    if (header && !header->isNull()) {
        if (sink.reader().expect(*header, {Type::String, Type::Null}, "a string or null") &&
            checkToken(sink, *header, "header")) {
            key.header = header->asString();
        }
        headerGiven = header->isString();
    }
    std::vector<const json::Value*> partValues;
    if (const json::Value* parts = f.array("parts")) {
        std::vector<const json::Value*> valid;
        for (const json::Value* item : itemsOf(sink, *parts, Type::String, "a string")) {
            KeyPart part;
            if (item->asString().size() > 266 || !parseKeyPart(item->asString(), part)) {
                sink.error(CheckLevel::Schema, *item,
                           "key part " + quoted(item->asString()) +
                               " is not one of \"route\", \"method\", \"peer\", \"principal\", "
                               "\"header:<name>\", \"attribute:<name>\"");
                continue;
            }
            valid.push_back(item);
            key.parts.push_back(part);
        }
        uniqueItems(sink, valid, "key part");
        partValues = valid;
    }
    if (!sourceOk) return;
    if (whenMissingOk && key.whenMissing != WhenMissing::Refuse &&
        (key.source == KeySource::Default || key.source == KeySource::Peer)) {
        sink.error(CheckLevel::Schema, *f.get("when_missing"),
                   "when_missing is only used with source \"header\", \"principal\" or "
                   "\"composite\" (source \"" +
                       std::string(nameOf(kKeySources, key.source)) +
                       "\" always has a key or refuses); remove it or set it to \"refuse\"");
    }
    if (key.source == KeySource::Header && !headerGiven) {
        sink.error(CheckLevel::Schema, header ? *header : object,
                   "source \"header\" needs \"header\": the name of the header to key on");
    } else if (key.source != KeySource::Header && headerGiven) {
        sink.error(CheckLevel::Schema, *header,
                   "\"header\" is only used with source \"header\"; set it to null");
    }
    const json::Value* parts = f.get("parts");
    bool hasParts = parts && parts->isArray() && !parts->items().empty();
    if (key.source == KeySource::Composite && !hasParts) {
        sink.error(CheckLevel::Schema, parts ? *parts : object,
                   "source \"composite\" needs at least one part in \"parts\"");
    } else if (key.source != KeySource::Composite && hasParts) {
        sink.error(CheckLevel::Schema, *parts,
                   "\"parts\" is only used with source \"composite\"; make it []");
    }
}

// An address budget's levels: [{"prefix": 48, "cap": 1024}, ...], at most
// kMaxAddressBudgetLevels, each prefix within the family's bits.
void readAddressBudgets(Diagnostics& sink, const json::Value& array, int bits,
                        std::vector<AddressBudget>& out) {
    out.clear();
    if (array.items().size() > kMaxAddressBudgetLevels) {
        sink.error(CheckLevel::Schema, array,
                   "at most " + std::to_string(kMaxAddressBudgetLevels) +
                       " address budget levels, longest prefix first");
    }
    for (const json::Value* item : itemsOf(sink, array, Type::Object, "an object")) {
        AddressBudget level;
        Fields f(sink, *item, {"prefix", "cap"});
        const bool hasPrefix = f.require("prefix");  // both asked, so both absences are told
        const bool hasCap = f.require("cap");
        f.whole("prefix", level.prefix, 1, bits);
        std::int64_t cap = level.cap;
        if (f.whole("cap", cap, 1, kMaxUint32)) level.cap = static_cast<std::uint32_t>(cap);
        if (hasPrefix && hasCap) out.push_back(level);
    }
}

// Reads a policy's budget. Returns whether it wrote its own IPv6 and IPv4 address levels.
std::pair<bool, bool> readBudget(Diagnostics& sink, const json::Value& object,
                                 BudgetConfig& budget) {
    Fields f(sink, object,
             {"enabled", "per_peer", "global", "slot_ttl_ms", "ipv6_prefixes", "ipv4_prefixes"});
    f.boolean("enabled", budget.enabled);
    std::int64_t value = budget.perPeer;
    if (f.whole("per_peer", value, 1, kMaxUint32))
        budget.perPeer = static_cast<std::uint32_t>(value);
    value = budget.global;
    if (f.whole("global", value, 1, kMaxUint32)) budget.global = static_cast<std::uint32_t>(value);
    value = budget.slotTtl / kNanosPerMilli;
    if (f.isNull("slot_ttl_ms")) {
        budget.slotTtl = 0;  // follows the refill, as when unwritten
    } else if (f.whole("slot_ttl_ms", value, 1, kMaxDurationMs)) {
        budget.slotTtl = value * kNanosPerMilli;
    }
    if (const json::Value* v6 = f.array("ipv6_prefixes"))
        readAddressBudgets(sink, *v6, 128, budget.ipv6Prefixes);
    if (const json::Value* v4 = f.array("ipv4_prefixes"))
        readAddressBudgets(sink, *v4, 32, budget.ipv4Prefixes);
    return {f.has("ipv6_prefixes"), f.has("ipv4_prefixes")};
}

void readBypass(Diagnostics& sink, const json::Value& object, Bypass& bypass) {
    Fields f(sink, object, {"cidrs", "principals"});
    if (const json::Value* cidrs = f.array("cidrs")) readCidrs(sink, *cidrs, bypass.cidrs);
    if (const json::Value* principals = f.array("principals")) {
        for (const json::Value* item : itemsOf(sink, *principals, Type::String, "a string")) {
            if (stringItem(sink, *item, "a principal", 1024)) {
                bypass.principals.push_back(item->asString());
            }
        }
    }
}

void readTiers(Diagnostics& sink, const json::Value& object, TierConfig& tiers) {
    Fields f(sink, object, {"attribute", "default", "limits"});
    f.require("attribute");
    f.require("default");
    f.require("limits");
    if (const json::Value* attribute = f.get("attribute")) {
        if (sink.reader().expect(*attribute, {Type::String}, "a string") &&
            checkToken(sink, *attribute, "attribute")) {
            tiers.attribute = attribute->asString();
        }
    }
    if (const json::Value* name = f.get("default")) {
        if (sink.reader().expect(*name, {Type::String}, "a string") &&
            checkName(sink, *name, "default tier")) {
            tiers.defaultTier = name->asString();
        }
    }
    const json::Value* limits = f.object("limits");
    if (!limits) return;
    if (limits->members().empty()) {
        sink.error(CheckLevel::Schema, *limits, "\"limits\" needs at least one tier");
    }
    for (const json::Member& member : limits->members()) {
        Tier tier;
        tier.name = member.key;
        if (!isValidName(member.key)) {
            sink.report(Diagnostic::Severity::Error, CheckLevel::Schema,
                        {member.keyPosition.line, member.keyPosition.column},
                        member.value->pointer(),
                        "tier name " + quoted(member.key) +
                            " must be 1 to 64 letters, digits, '_', '.' or '-', starting with a "
                            "letter or digit");
        }
        const json::Value& value = *member.value;
        if (sink.reader().expect(value, {Type::Object}, "an object")) {
            Fields t(sink, value, {"capacity", "refill_per_second", "window_ms"});
            t.require("capacity");
            t.whole("capacity", tier.capacity, 1, kMaxCount);
            if (!t.isNull("refill_per_second")) {
                t.number("refill_per_second", tier.refillPerSecond, 0, kMaxRate, true);
            }
            if (!t.isNull("window_ms")) t.whole("window_ms", tier.windowMs, 1, kMaxWindowMs);
        }
        tiers.tiers.push_back(std::move(tier));
    }
}

// A list of HTTP statuses (failure_statuses, penalty_statuses): integers 100..599, each once,
// at least one when `nonEmpty`.
void readStatuses(Diagnostics& sink, const json::Value& array, std::string_view field,
                  bool nonEmpty, std::vector<int>& out) {
    if (nonEmpty && array.items().empty()) {
        sink.error(CheckLevel::Schema, array,
                   "\"" + std::string(field) + "\" needs at least one HTTP status");
    }
    std::vector<int> statuses;
    for (const auto& item : array.items()) {
        std::int64_t status = 0;
        if (!readWhole(sink, *item, "an HTTP status", status, 100, 599)) continue;
        if (std::find(statuses.begin(), statuses.end(), status) != statuses.end()) {
            sink.error(CheckLevel::Schema, *item,
                       "status " + std::to_string(status) + " is listed twice in \"" +
                           std::string(field) + "\"");
            continue;
        }
        statuses.push_back(static_cast<int>(status));
    }
    out = std::move(statuses);
}

void readCharge(Fields& f, ChargeConfig& charge) {
    f.choice("charge", charge.rule, kChargeRules);
    if (const json::Value* list = f.array("failure_statuses"))
        readStatuses(f.sink(), *list, "failure_statuses", true, charge.failureStatuses);
    f.whole("penalty", charge.penalty, 0, kMaxCount);
    if (const json::Value* list = f.array("penalty_statuses"))
        readStatuses(f.sink(), *list, "penalty_statuses", false, charge.penaltyStatuses);
}

// The schema's rules on align and calendar_unit, once both and the algorithm are read.
void readAlignment(Fields& f, const Policy& p, bool alignOk, bool unitOk) {
    Diagnostics& sink = f.sink();
    if (alignOk && p.align == WindowAlign::Calendar && p.algorithm != Algorithm::FixedWindow) {
        sink.error(CheckLevel::Schema, *f.get("align"),
                   "align \"calendar\" is only used by fixed_window; remove it or set it to "
                   "\"first_request\"");
    }
    if (!unitOk) return;
    if (p.algorithm != Algorithm::FixedWindow || p.align != WindowAlign::Calendar) {
        sink.error(CheckLevel::Schema, *f.get("calendar_unit"),
                   "calendar_unit needs algorithm \"fixed_window\" with \"align\": \"calendar\"");
    } else if (f.has("window_ms")) {
        sink.error(CheckLevel::Schema, *f.get("window_ms"),
                   "window_ms and calendar_unit exclude each other: a calendar " +
                       std::string(nameOf(kCalendarUnits, p.calendarUnit)) +
                       " has its own length; remove window_ms");
    }
}

void readPolicy(Diagnostics& sink, const json::Value& object, Policy& p) {
    Fields f(sink, object,
             {"name", "match", "algorithm", "capacity", "refill_per_second", "window_ms", "align",
              "calendar_unit", "delay", "nodelay", "count_refused", "expire_ms", "cost", "key",
              "budget", "on_store_error", "store_timeout_ms", "mode", "headers", "bypass", "tiers",
              "charge", "failure_statuses", "penalty", "penalty_statuses"});
    if (f.require("name")) {
        const json::Value* name = f.get("name");
        if (sink.reader().expect(*name, {Type::String}, "a string") &&
            checkName(sink, *name, "policy name")) {
            p.name = name->asString();
        }
    }
    if (const json::Value* match = f.object("match")) readMatch(sink, *match, p.match);
    bool algorithmOk = !f.has("algorithm") || f.choice("algorithm", p.algorithm, kAlgorithms);
    bool capacityOk = f.whole("capacity", p.capacity, 0, kMaxCount);
    f.number("refill_per_second", p.refillPerSecond, 0, kMaxRate, true);
    std::int64_t windowMs = p.windowMs;
    if (f.whole("window_ms", windowMs, 1, kMaxWindowMs)) p.windowMs = windowMs;
    const bool alignOk = f.choice("align", p.align, kWindowAligns);
    const bool unitOk = f.choice("calendar_unit", p.calendarUnit, kCalendarUnits);
    bool delayOk = f.whole("delay", p.delay, 0, kMaxCount);
    bool nodelayOk = f.boolean("nodelay", p.nodelay);
    const bool countRefusedOk = f.boolean("count_refused", p.countRefused);
    const bool expireOk = f.whole("expire_ms", p.expireMs, 0, kMaxHaproxyExpireMs);
    f.whole("cost", p.cost, 1, kMaxCount);
    if (const json::Value* key = f.object("key")) readKey(sink, *key, p.key);
    std::pair<bool, bool> wroteLevels{false, false};
    if (const json::Value* budget = f.object("budget"))
        wroteLevels = readBudget(sink, *budget, p.budget);
    // A default the file never wrote must not warn: address levels the key's own prefix makes
    // moot (the default /48 for keys aggregated to /48) drop out of the defaults.
    auto moot = [](std::vector<AddressBudget>& levels, int keyPrefix) {
        std::erase_if(levels, [&](const AddressBudget& l) { return l.prefix >= keyPrefix; });
    };
    if (!wroteLevels.first) moot(p.budget.ipv6Prefixes, p.key.ipv6Prefix);
    if (!wroteLevels.second) moot(p.budget.ipv4Prefixes, p.key.ipv4Prefix);
    f.choice("on_store_error", p.onStoreError, kStoreErrorRules);
    std::int64_t timeoutMs = p.storeTimeout / kNanosPerMilli;
    if (f.whole("store_timeout_ms", timeoutMs, 1, 60'000))
        p.storeTimeout = timeoutMs * kNanosPerMilli;
    f.choice("mode", p.mode, kModes);
    f.choice("headers", p.headers, kHeaderStyles);
    readCharge(f, p.charge);
    if (const json::Value* bypass = f.object("bypass")) readBypass(sink, *bypass, p.bypass);
    if (const json::Value* tiers = f.get("tiers"); tiers && !tiers->isNull()) {
        if (sink.reader().expect(*tiers, {Type::Object, Type::Null}, "an object or null")) {
            p.tiers.emplace();
            readTiers(sink, *tiers, *p.tiers);
        }
    }

    if (!algorithmOk) return;
    readAlignment(f, p, alignOk, unitOk);
    if (p.algorithm != Algorithm::HaproxyRate) {
        if (countRefusedOk && f.has("count_refused") && !p.countRefused) {
            sink.error(CheckLevel::Schema, *f.get("count_refused"),
                       "count_refused is only used by haproxy_rate; remove it or set it to true");
        }
        if (expireOk && f.has("expire_ms") && p.expireMs != 0) {
            sink.error(CheckLevel::Schema, *f.get("expire_ms"),
                       "expire_ms is only used by haproxy_rate; remove it or set it to 0");
        }
    }
    if (p.algorithm == Algorithm::LeakyBucket) {
        if (delayOk && nodelayOk && p.nodelay && p.delay >= 1) {
            sink.error(CheckLevel::Schema, *f.get("delay"),
                       "nodelay and delay exclude each other, as in nginx: keep one");
        }
        return;
    }
    std::string algorithm(algorithmName(p.algorithm));
    if (capacityOk && p.capacity < 1 && p.algorithm != Algorithm::HaproxyRate) {
        sink.error(
            CheckLevel::Schema, *f.get("capacity"),
            "capacity must be at least 1 for " + algorithm +
                " (0 is only a leaky_bucket burst or a haproxy_rate threshold)");
    }
    if (delayOk && f.has("delay") && p.delay != 0) {
        sink.error(CheckLevel::Schema, *f.get("delay"),
                   "delay is only used by leaky_bucket; remove it or set it to 0");
    }
    if (nodelayOk && f.has("nodelay") && p.nodelay) {
        sink.error(CheckLevel::Schema, *f.get("nodelay"),
                   "nodelay is only used by leaky_bucket; remove it or set it to false");
    }
}

// ---- the validation record ---------------------------------------------------------------

void readExpectation(Diagnostics& sink, const json::Value& object, ValidationExpectation& e) {
    Fields f(sink, object, {"metric", "min", "max", "actual", "pass"});
    f.require("metric");
    f.require("actual");
    f.require("pass");
    f.string("metric", e.metric, 1, 256);
    f.numberOrNull("min", e.min);
    f.numberOrNull("max", e.max);
    if (const json::Value* actual = f.get("actual")) {
        if (sink.reader().expect(*actual, {Type::Double}, "a number"))
            e.actual = actual->asDouble();
    }
    f.boolean("pass", e.pass);
}

void readRun(Diagnostics& sink, const json::Value& object, ValidationRun& run) {
    Fields f(sink, object, {"scenario", "seed", "requests", "pass", "expectations"});
    for (std::string_view key : {"scenario", "seed", "requests", "pass", "expectations"}) {
        f.require(key);
    }
    f.string("scenario", run.scenario, 1, 1024);
    f.wholeUnsigned("seed", run.seed);
    f.whole("requests", run.requests, 0, INT64_MAX);
    f.boolean("pass", run.pass);
    if (const json::Value* list = f.array("expectations")) {
        for (const json::Value* item : itemsOf(sink, *list, Type::Object, "an object")) {
            ValidationExpectation e;
            readExpectation(sink, *item, e);
            run.expectations.push_back(std::move(e));
        }
    }
}

void readValidation(Diagnostics& sink, const json::Value& object, ValidationRecord& record) {
    Fields f(sink, object, {"generator", "runs"});
    f.require("generator");
    f.require("runs");
    f.string("generator", record.generator, 0, 256);
    if (const json::Value* runs = f.array("runs")) {
        for (const json::Value* item : itemsOf(sink, *runs, Type::Object, "an object")) {
            ValidationRun run;
            readRun(sink, *item, run);
            record.runs.push_back(std::move(run));
        }
    }
}

}  // namespace

namespace reader {

// An array whose items are checked one by one; returns the items that have the wanted type.
std::vector<const json::Value*> itemsOf(Diagnostics& sink, const json::Value& array, Type type,
                                        std::string_view what) {
    std::vector<const json::Value*> out;
    for (const auto& item : array.items()) {
        if (sink.reader().expect(*item, {type}, what)) out.push_back(item.get());
    }
    return out;
}

// A string item of minLength..maxLength code points.
bool stringItem(Diagnostics& sink, const json::Value& item, std::string_view what,
                std::size_t maxLength) {
    if (item.asString().empty()) {
        sink.error(CheckLevel::Schema, item, std::string(what) + " must not be empty");
        return false;
    }
    if (codePoints(item.asString()) > maxLength) {
        sink.error(
            CheckLevel::Schema, item,
            std::string(what) + " is longer than " + std::to_string(maxLength) + " characters");
        return false;
    }
    return true;
}

// Reports the second of two equal strings in an array (JSON Schema uniqueItems).
bool uniqueItems(Diagnostics& sink, const std::vector<const json::Value*>& items,
                 std::string_view what) {
    bool ok = true;
    for (std::size_t i = 0; i < items.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            if (items[i]->asString() == items[j]->asString()) {
                sink.error(CheckLevel::Schema, *items[i],
                           "duplicate " + std::string(what) + " " + quoted(items[i]->asString()));
                ok = false;
                break;
            }
        }
    }
    return ok;
}

}  // namespace reader

void readPolicySet(Diagnostics& sink, const json::Value& root, PolicySet& out) {
    using namespace reader;
    if (!sink.reader().expect(root, {Type::Object}, "an object")) return;
    Fields f(sink, root,
             {"version", "routing", "store", "trusted_proxies", "policies", "validation"});
    if (f.require("version")) {
        const json::Value& version = *f.get("version");
        std::int64_t number = 0;
        bool whole = version.isNumber() && version.type() != Type::Unsigned &&
                     std::floor(version.asDouble()) == version.asDouble();
        if (whole) number = static_cast<std::int64_t>(std::clamp(version.asDouble(), -1e9, 1e9));
        if (!whole || number != 1) {
            sink.error(CheckLevel::Schema, version,
                       whole ? "unsupported version " + std::to_string(number) +
                                   ": this ratelab reads version 1"
                             : std::string("version must be 1"));
        }
    }
    f.choice("routing", out.routing, kRoutings);
    if (const json::Value* store = f.object("store")) readStore(sink, *store, out.store);
    if (const json::Value* proxies = f.object("trusted_proxies")) {
        readTrustedProxies(sink, *proxies, out.trustedProxies);
    }
    if (f.require("policies")) {
        if (const json::Value* policies = f.array("policies")) {
            if (policies->items().empty()) {
                sink.error(CheckLevel::Schema, *policies,
                           "\"policies\" is empty; a policy file needs at least one policy");
            }
            for (const auto& item : policies->items()) {
                Policy& p = out.policies.emplace_back();
                if (sink.reader().expect(*item, {Type::Object}, "an object")) {
                    readPolicy(sink, *item, p);
                }
            }
        }
    }
    if (const json::Value* validation = f.get("validation"); validation && !validation->isNull()) {
        if (sink.reader().expect(*validation, {Type::Object, Type::Null}, "an object or null")) {
            out.validation.emplace();
            readValidation(sink, *validation, *out.validation);
        }
    }
}

}  // namespace ratelab::policy
