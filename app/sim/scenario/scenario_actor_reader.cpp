// A scenario file's actors: arrival, request, identity, response and peer (the rest of the
// file: scenario_file.cpp).

#include <strings.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "ratelab/number_text.h"
#include "sim/scenario/scenario_limits.h"
#include "sim/scenario/scenario_names.h"
#include "sim/scenario/scenario_reader.h"

namespace ratelab::sim::scenario_reader {

namespace {

using scenario_limits::kMaxArrivalTotal;
using scenario_limits::kMaxInstances;
using scenario_limits::kMaxSeconds;
using scenario_limits::kMaxSessionSize;
using scenario_limits::kMaxValues;
constexpr double kMaxRate = 1e9;  // requests per second, per instance
constexpr std::size_t kMaxHeaders = 12;
constexpr std::size_t kMaxAttributes = 8;
constexpr int kMinStatus = 100;  // the HTTP statuses a response model may answer
constexpr int kMaxStatus = 599;

std::optional<Cidr> readCidr(Reader& reader, ObjectReader& object, std::string_view key) {
    std::string text;
    if (!object.readString(key, text)) return std::nullopt;
    std::optional<Cidr> cidr = Cidr::parse(text, /*strict=*/true);
    if (!cidr) {
        reader.error(*object.get(key),
                     "\"" + text + "\" is not a network in CIDR notation with no host bits set");
    }
    return cidr;
}

std::optional<IpAddress> readAddress(Reader& reader, ObjectReader& object, std::string_view key) {
    std::string text;
    if (!object.readString(key, text)) return std::nullopt;
    std::optional<IpAddress> address = IpAddress::parse(text);
    if (!address) reader.error(*object.get(key), "\"" + text + "\" is not an IP address");
    return address;
}

std::vector<std::pair<std::string, std::string>> readStringMap(Reader& reader, const Value& map) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const json::Member& member : map.members()) {
        if (member.key.empty()) {
            reader.errorAt(member.keyPosition, member.value->pointer(), "a name must not be empty");
            continue;
        }
        if (!reader.expect(*member.value, {Value::Type::String}, "a string")) continue;
        out.emplace_back(member.key, member.value->asString());
    }
    return out;
}

}  // namespace

void ScenarioParser::readActor(const Value& v, Scenario& s) {
    if (!reader_.expect(v, {Value::Type::Object}, "an object")) return;
    Actor a;
    ObjectReader o(reader_, v,
                   {"name", "class", "count", "arrival", "request", "identity", "response",
                    "start_s", "stop_s"});
    if (o.require("name") && o.readString("name", a.name, false)) {
        if (!actorNames_.insert(a.name).second) {
            reader_.error(*o.get("name"), "another actor is named \"" + a.name + "\"");
        }
    }
    if (o.readString("class", a.className, false)) {
        if (a.className.find_first_of(".,\" ") != std::string::npos) {
            reader_.error(*o.get("class"),
                          "a class name must not contain '.', ',', '\"' or spaces");
        }
    }
    o.readInt("count", a.count, 1, kMaxInstances);
    readSeconds(o, "start_s", a.start, 0, false);
    Nanos stop = 0;
    if (readSeconds(o, "stop_s", stop, 0, true)) {
        a.stop = stop;
        if (stop <= a.start) reader_.error(*o.get("stop_s"), "stop_s must be after start_s");
    }
    if (o.require("arrival")) {
        if (const Value* arrival = o.readObject("arrival")) readArrival(*arrival, a.arrival);
    }
    if (const Value* request = o.readObject("request")) readRequest(*request, a);
    if (const Value* identity = o.readObject("identity")) readIdentity(*identity, a);
    if (const Value* response = o.readObject("response")) readResponse(*response, a.response);
    s.actors.push_back(std::move(a));
}

void ScenarioParser::readArrival(const Value& v, Arrival& a) {
    // Every key an arrival may have; each kind allows some of them (kKeys below).
    static constexpr std::string_view kAll[] = {
        "kind",       "rate_per_s", "size",   "every_s",     "spacing_ms",           "phase_s",
        "from_per_s", "to_per_s",   "over_s", "sessions",    "requests_per_session", "session_s",
        "idle_s",     "requests",   "gap_s",  "resolution_s"};
    ObjectReader o(reader_, v,
                   {"kind", "rate_per_s", "size", "every_s", "spacing_ms", "phase_s", "from_per_s",
                    "to_per_s", "over_s", "sessions", "requests_per_session", "session_s", "idle_s",
                    "requests", "gap_s", "resolution_s"});
    if (!o.require("kind")) return;
    if (!o.readEnum("kind", a.kind, scenario_names::kArrivalKinds)) return;
    const std::string kind(scenario_names::nameOf(scenario_names::kArrivalKinds, a.kind));
    // Reports keys of other kinds and requires `required`; `optional` keys are allowed too.
    auto only = [&](std::initializer_list<std::string_view> required,
                    std::initializer_list<std::string_view> optional) {
        for (std::string_view key : kAll) {
            if (key == "kind") continue;
            if (std::find(required.begin(), required.end(), key) != required.end()) continue;
            if (std::find(optional.begin(), optional.end(), key) != optional.end()) continue;
            if (const Value* x = o.get(key)) {
                reader_.error(
                    *x, std::string(key) + " does not apply to arrival kind \"" + kind + "\"");
            }
        }
        for (std::string_view key : required)
            o.require(key);
    };
    switch (a.kind) {
        case Arrival::Kind::Constant:
        case Arrival::Kind::Poisson:
            only({"rate_per_s"}, {});
            o.readNumber("rate_per_s", a.ratePerSecond, 0, kMaxRate, true);
            break;
        case Arrival::Kind::Burst: {
            only({"size", "every_s"}, {"spacing_ms", "phase_s"});
            o.readInt("size", a.burstSize, 1, kMaxSessionSize);
            readSeconds(o, "every_s", a.burstEvery, 0, true);
            std::int64_t spacingMs = 0;
            if (o.readInt("spacing_ms", spacingMs, 0, 3'600'000)) {
                a.burstSpacing = spacingMs * kNanosPerMilli;
                if (a.burstSpacing * (a.burstSize - 1) >= a.burstEvery && o.get("every_s")) {
                    reader_.error(*o.get("spacing_ms"),
                                  "a burst of size × spacing_ms must fit within every_s");
                }
            }
            Nanos phase = 0;
            if (readSeconds(o, "phase_s", phase, 0, false)) {
                if (phase >= a.burstEvery && o.get("every_s")) {
                    reader_.error(*o.get("phase_s"), "phase_s must be less than every_s");
                }
                a.burstPhase = phase;
            }
            break;
        }
        case Arrival::Kind::Ramp:
            only({"from_per_s", "to_per_s"}, {"over_s"});
            o.readNumber("from_per_s", a.fromPerSecond, 0, kMaxRate);
            o.readNumber("to_per_s", a.toPerSecond, 0, kMaxRate);
            readSeconds(o, "over_s", a.rampOver, 0, true);
            if (a.fromPerSecond == 0 && a.toPerSecond == 0 && o.get("to_per_s")) {
                reader_.error(*o.get("to_per_s"), "a ramp from 0 to 0 sends nothing");
            }
            break;
        case Arrival::Kind::Session: {
            only({"requests_per_session", "session_s"}, {"sessions", "idle_s", "resolution_s"});
            readSeconds(o, "resolution_s", a.resolution, 0, true);
            readDistribution(o, "requests_per_session", a.sessionSize, 1, kMaxSessionSize);
            if (readDistribution(o, "session_s", a.sessionSpan, 0, kMaxSeconds, false) &&
                a.sessionSpan.values.size() != 1 &&
                a.sessionSpan.values.size() != a.sessionSize.values.size() &&
                !a.sessionSize.values.empty()) {
                reader_.error(*o.get("session_s"),
                              "session_s holds one value or one per requests_per_session value (" +
                                  std::to_string(a.sessionSize.values.size()) + "), found " +
                                  std::to_string(a.sessionSpan.values.size()));
            }
            Distribution d;
            if (readDistribution(o, "idle_s", d, 0, kMaxSeconds)) a.idle = d;
            if (readDistribution(o, "sessions", d, 1, kMaxArrivalTotal)) {
                a.total = d;
                if (!o.has("idle_s")) {
                    reader_.error(*o.get("sessions"),
                                  "sessions needs idle_s: the time between one session and the "
                                  "next");
                }
            }
            // Unbounded sessions that take no time would never let the clock move.
            if (!a.total && a.idle && a.idle->mean() == 0 && a.sessionSpan.mean() == 0 &&
                o.has("session_s")) {
                reader_.error(*o.get("idle_s"),
                              "idle_s and session_s are all 0 and no sessions bound them: an "
                              "instance would send without end at one instant");
            }
            break;
        }
        case Arrival::Kind::Empirical: {
            only({"gap_s"}, {"requests", "resolution_s"});
            readSeconds(o, "resolution_s", a.resolution, 0, true);
            readDistribution(o, "gap_s", a.gaps, 0, kMaxSeconds);
            Distribution d;
            if (readDistribution(o, "requests", d, 1, kMaxArrivalTotal)) a.total = d;
            if (!a.total && o.has("gap_s") && !a.gaps.values.empty() && a.gaps.mean() == 0) {
                reader_.error(*o.get("gap_s"),
                              "gap_s is all 0 and no requests bound it: an instance would send "
                              "without end at one instant");
            }
            break;
        }
    }
}

// A distribution: one number, or an array of at most kMaxValues items, each a number in
// [min, max] or, when `weighted`, a [number, probability] pair.
bool ScenarioParser::readDistribution(ObjectReader& o, std::string_view key, Distribution& out,
                                      double min, double max, bool weighted) {
    const Value* v = o.get(key);
    if (!v) return false;
    if (!reader_.expect(*v, {Value::Type::Double, Value::Type::Array}, "a number or an array"))
        return false;
    std::vector<const Value*> items;
    if (v->isArray()) {
        for (const auto& item : v->items())
            items.push_back(item.get());
        if (items.empty() || items.size() > kMaxValues) {
            reader_.error(*v, std::string(key) + " holds 1 to " + std::to_string(kMaxValues) +
                                  " values, found " + std::to_string(items.size()));
            return false;
        }
    } else {
        items.push_back(v);
    }
    Distribution d;
    bool ok = true;
    bool anyProbability = false;
    double explicitSum = 0;
    std::size_t plain = 0;
    for (const Value* item : items) {
        const Value* number = item;
        double probability = 0;
        if (weighted && item->isArray()) {
            const auto& pair = item->items();
            if (pair.size() != 2 || !pair[0]->isNumber() || !pair[1]->isNumber()) {
                reader_.error(*item, "expected [value, probability]");
                ok = false;
                continue;
            }
            number = pair[0].get();
            probability = pair[1]->asDouble();
            if (!(probability > 0 && probability <= 1)) {
                reader_.error(*pair[1], "a probability is above 0 and at most 1");
                ok = false;
                continue;
            }
            anyProbability = true;
            explicitSum += probability;
        } else if (!reader_.expect(*item, {Value::Type::Double},
                                   weighted ? "a number or [value, probability]" : "a number")) {
            ok = false;
            continue;
        } else {
            ++plain;
        }
        const double x = number->asDouble();
        if (!(x >= min && x <= max)) {
            reader_.error(*number, std::string(key) + " values must be at least " +
                                       numberText(min) + " and at most " + numberText(max) +
                                       ", found " + numberText(x));
            ok = false;
            continue;
        }
        d.values.push_back(x);
        d.probabilities.push_back(probability);
    }
    if (!ok) return false;
    // Explicit probabilities leave some to the plain values, or are all there is.
    const bool full = std::fabs(explicitSum - 1) <= 1e-9;
    if (anyProbability && (plain > 0 ? explicitSum >= 1 - 1e-9 : !full)) {
        reader_.error(*v, plain > 0 ? "the probabilities add up to " + numberText(explicitSum, 6) +
                                          ", leaving nothing to the values without one"
                                    : "the probabilities add up to " + numberText(explicitSum, 6) +
                                          ", not 1");
        return false;
    }
    if (!anyProbability) d.probabilities.clear();
    out = std::move(d);
    return true;
}

void ScenarioParser::readRequest(const Value& v, Actor& a) {
    ObjectReader o(reader_, v, {"method", "path", "headers", "cost"});
    if (o.readString("method", a.method, false)) {
        for (char& c : a.method)
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    if (o.readString("path", a.path, false) && a.path.front() != '/') {
        reader_.error(*o.get("path"), "a path starts with '/'");
    }
    if (const Value* headers = o.readObject("headers")) {
        a.headers = readStringMap(reader_, *headers);
        checkTemplates(*headers, a.headers, kMaxHeaders, "headers");
        for (const auto& [name, value] : a.headers) {
            if (name.size() == 13 && strcasecmp(name.c_str(), "authorization") == 0) {
                reader_.error(*headers->find(name),
                              "set Authorization through identity.authorization, not headers");
            }
        }
    }
    o.readInt("cost", a.cost, 1, std::int64_t(1) << 40);
}

void ScenarioParser::readIdentity(const Value& v, Actor& a) {
    Identity& id = a.identity;
    ObjectReader o(reader_, v,
                   {"peer", "authorization", "principal", "forwarded_for", "proxy",
                    "forwarded_header", "attributes"});
    if (const Value* peer = o.get("peer")) {
        if (peer->isString() && peer->asString() == "none") {
            id.peer.kind = PeerSpec::Kind::None;
        } else if (reader_.expect(*peer, {Value::Type::Object}, "an object or \"none\"")) {
            readPeer(*peer, a);
        }
    }
    o.readEnum("authorization", id.authorization, scenario_names::kAuthorizationModes);
    o.readEnum("principal", id.principal, scenario_names::kPrincipalModes);
    o.readEnum("forwarded_for", id.forwarded.kind, scenario_names::kForwardedKinds);
    if (id.forwarded.kind == ForwardedSpec::Kind::ViaProxy ||
        id.forwarded.kind == ForwardedSpec::Kind::SpoofViaProxy) {
        if (o.require("proxy")) {
            if (auto proxy = readAddress(reader_, o, "proxy")) id.forwarded.proxy = *proxy;
        }
        if (id.peer.kind == PeerSpec::Kind::None && o.get("forwarded_for")) {
            reader_.error(*o.get("forwarded_for"),
                          "a proxied actor needs a peer: the client address the proxy forwards");
        }
    } else if (const Value* proxy = o.get("proxy")) {
        reader_.error(*proxy,
                      "proxy applies only with forwarded_for \"via_proxy\" or \"spoof_via_proxy\"");
    }
    if (o.readString("forwarded_header", id.forwarded.header, false)) {
        std::string& h = id.forwarded.header;
        for (char& c : h)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (h != "x-forwarded-for" && h != "forwarded" && h != "x-real-ip") {
            reader_.error(*o.get("forwarded_header"),
                          "forwarded_header must be x-forwarded-for, forwarded or x-real-ip");
        }
    }
    if (const Value* attributes = o.readObject("attributes")) {
        id.attributes = readStringMap(reader_, *attributes);
        checkTemplates(*attributes, id.attributes, kMaxAttributes, "attributes");
    }
}

void ScenarioParser::readResponse(const Value& v, ResponseModel& r) {
    ObjectReader o(reader_, v, {"success_rate", "failure_status", "statuses"});
    const bool byRate = o.has("success_rate");
    if (byRate == o.has("statuses")) {
        reader_.error(v, byRate ? "a response takes success_rate or statuses, not both"
                                : "a response needs success_rate or statuses");
        return;
    }
    if (byRate) {
        r.kind = ResponseModel::Kind::SuccessRate;
        o.readNumber("success_rate", r.successRate, 0, 1);
        if (o.readInt("failure_status", r.failureStatus, kMinStatus, kMaxStatus) &&
            r.failureStatus == 200) {
            reader_.error(*o.get("failure_status"),
                          "failure_status must differ from 200, the status of a success");
        }
        return;
    }
    if (const Value* x = o.get("failure_status")) {
        reader_.error(*x, "failure_status applies only with success_rate");
    }
    const Value* statuses = o.readObject("statuses");
    if (!statuses) return;
    r.kind = ResponseModel::Kind::Statuses;
    if (statuses->members().empty()) {
        reader_.error(*statuses, "statuses names no status");
        return;
    }
    double sum = 0;
    for (const json::Member& member : statuses->members()) {
        const std::string& key = member.key;
        const bool digits = key.size() == 3 && std::all_of(key.begin(), key.end(), [](char c) {
                                return c >= '0' && c <= '9';
                            });
        const int status = digits ? std::stoi(key) : 0;
        if (status < kMinStatus || status > kMaxStatus) {
            reader_.errorAt(member.keyPosition, member.value->pointer(),
                            "\"" + key + "\" is not an HTTP status (100 to 599)");
            continue;
        }
        const Value& p = *member.value;
        if (!reader_.expect(p, {Value::Type::Double}, "a number")) continue;
        const double probability = p.asDouble();
        if (!(probability > 0 && probability <= 1)) {
            reader_.error(p, "a probability is above 0 and at most 1");
            continue;
        }
        sum += probability;
        r.statuses.emplace_back(status, probability);
    }
    if (r.statuses.size() == statuses->members().size() && std::fabs(sum - 1) > 1e-9) {
        reader_.error(*statuses, "the probabilities add up to " + numberText(sum, 6) + ", not 1");
    }
}

void ScenarioParser::readPeer(const Value& v, Actor& a) {
    PeerSpec& p = a.identity.peer;
    ObjectReader o(reader_, v, {"kind", "address", "cidr", "prefix", "prefix_len"});
    if (!o.require("kind")) return;
    if (!o.readEnum("kind", p.kind, scenario_names::kPeerKinds)) {
        return;
    }
    const std::string& kind = o.get("kind")->asString();
    // Reports keys of other kinds and requires `required`; `optional` keys are allowed too.
    auto only = [&](std::initializer_list<std::string_view> required,
                    std::initializer_list<std::string_view> optional = {}) {
        for (std::string_view key : {"address", "cidr", "prefix", "prefix_len"}) {
            if (std::find(required.begin(), required.end(), key) != required.end()) continue;
            if (std::find(optional.begin(), optional.end(), key) != optional.end()) continue;
            if (const Value* x = o.get(key)) {
                reader_.error(*x,
                              std::string(key) + " does not apply to peer kind \"" + kind + "\"");
            }
        }
        for (std::string_view key : required)
            o.require(key);
    };
    switch (p.kind) {
        case PeerSpec::Kind::None:
            only({});
            break;
        case PeerSpec::Kind::Ipv4:
        case PeerSpec::Kind::Nat:
        case PeerSpec::Kind::Ipv6: {
            only({"address"});
            std::optional<IpAddress> address = readAddress(reader_, o, "address");
            if (!address) break;
            bool wantV4 = p.kind != PeerSpec::Kind::Ipv6;
            if (address->isV4() != wantV4) {
                reader_.error(*o.get("address"), std::string("peer kind \"") + kind +
                                                     "\" needs an IPv" + (wantV4 ? "4" : "6") +
                                                     " address");
                break;
            }
            p.address = *address;
            break;
        }
        case PeerSpec::Kind::Ipv4Rotate: {
            only({"cidr"});
            std::optional<Cidr> cidr = readCidr(reader_, o, "cidr");
            if (!cidr) break;
            if (!cidr->network().isV4()) {
                reader_.error(*o.get("cidr"), "ipv4_rotate needs an IPv4 network");
                break;
            }
            p.cidr = *cidr;
            break;
        }
        case PeerSpec::Kind::Ipv4Pool: {
            only({"cidr"});
            std::optional<Cidr> cidr = readCidr(reader_, o, "cidr");
            if (!cidr) break;
            if (!cidr->network().isV4()) {
                reader_.error(*o.get("cidr"), "ipv4_pool needs an IPv4 network");
                break;
            }
            std::int64_t size = std::int64_t(1) << (32 - cidr->prefixLength());
            if (a.count > size) {
                reader_.error(*o.get("cidr"), "the pool holds " + std::to_string(size) +
                                                  " addresses, fewer "
                                                  "than the actor's " +
                                                  std::to_string(a.count) + " instances");
            }
            p.cidr = *cidr;
            break;
        }
        case PeerSpec::Kind::Ipv6Rotate: {
            only({"prefix"});
            std::optional<Cidr> cidr = readCidr(reader_, o, "prefix");
            if (!cidr) break;
            if (cidr->network().isV4() || cidr->prefixLength() > 120) {
                reader_.error(*o.get("prefix"),
                              "ipv6_rotate needs an IPv6 prefix of /120 or shorter");
                break;
            }
            p.cidr = *cidr;
            break;
        }
        case PeerSpec::Kind::Ipv6PrefixRotate: {
            only({"cidr"}, {"prefix_len"});
            std::optional<Cidr> cidr = readCidr(reader_, o, "cidr");
            o.readInt("prefix_len", p.prefixLength, 1, 128);
            if (!cidr) break;
            if (cidr->network().isV4()) {
                reader_.error(*o.get("cidr"), "ipv6_prefix_rotate needs an IPv6 network");
                break;
            }
            if (p.prefixLength <= cidr->prefixLength()) {
                reader_.error(o.get("prefix_len") ? *o.get("prefix_len") : *o.get("cidr"),
                              "prefix_len must be longer than the network's /" +
                                  std::to_string(cidr->prefixLength()));
                break;
            }
            p.cidr = *cidr;
            break;
        }
    }
}

}  // namespace ratelab::sim::scenario_reader
