#include "sim/scenario/scenario_writer.h"

#include <nlohmann/json.hpp>

#include "sim/scenario/scenario_names.h"

namespace ratelab::sim {

namespace {

using Json = nlohmann::ordered_json;

double seconds(Nanos n) {
    return static_cast<double>(n) / 1e9;
}

// One value as a number, several as an array; a value with a probability of its own as
// [value, probability].
Json distributionJson(const Distribution& d) {
    if (d.values.size() == 1 && d.probabilities.empty()) return d.values.front();
    Json j = Json::array();
    for (std::size_t i = 0; i < d.values.size(); ++i) {
        if (!d.probabilities.empty() && d.probabilities[i] > 0) {
            j.push_back(Json::array({d.values[i], d.probabilities[i]}));
        } else {
            j.push_back(d.values[i]);
        }
    }
    return j;
}

Json arrivalJson(const Arrival& a) {
    Json j;
    j["kind"] = scenario_names::nameOf(scenario_names::kArrivalKinds, a.kind);
    switch (a.kind) {
        case Arrival::Kind::Constant:
        case Arrival::Kind::Poisson:
            j["rate_per_s"] = a.ratePerSecond;
            break;
        case Arrival::Kind::Burst:
            j["size"] = a.burstSize;
            j["every_s"] = seconds(a.burstEvery);
            if (a.burstSpacing != 0) j["spacing_ms"] = a.burstSpacing / kNanosPerMilli;
            if (a.burstPhase) j["phase_s"] = seconds(*a.burstPhase);
            break;
        case Arrival::Kind::Ramp:
            j["from_per_s"] = a.fromPerSecond;
            j["to_per_s"] = a.toPerSecond;
            if (a.rampOver != 0) j["over_s"] = seconds(a.rampOver);
            break;
        case Arrival::Kind::Session:
            if (a.total) j["sessions"] = distributionJson(*a.total);
            j["requests_per_session"] = distributionJson(a.sessionSize);
            j["session_s"] = distributionJson(a.sessionSpan);
            if (a.idle) j["idle_s"] = distributionJson(*a.idle);
            if (a.resolution != 0) j["resolution_s"] = seconds(a.resolution);
            break;
        case Arrival::Kind::Empirical:
            if (a.total) j["requests"] = distributionJson(*a.total);
            j["gap_s"] = distributionJson(a.gaps);
            if (a.resolution != 0) j["resolution_s"] = seconds(a.resolution);
            break;
    }
    return j;
}

Json peerJson(const PeerSpec& p) {
    if (p.kind == PeerSpec::Kind::None) return scenario_names::nameOf(scenario_names::kPeerKinds, p.kind);
    Json j;
    j["kind"] = scenario_names::nameOf(scenario_names::kPeerKinds, p.kind);
    switch (p.kind) {
        case PeerSpec::Kind::None:
            break;
        case PeerSpec::Kind::Ipv4:
        case PeerSpec::Kind::Nat:
        case PeerSpec::Kind::Ipv6:
            j["address"] = p.address.toString();
            break;
        case PeerSpec::Kind::Ipv4Pool:
        case PeerSpec::Kind::Ipv4Rotate:
            j["cidr"] = p.cidr.toString();
            break;
        case PeerSpec::Kind::Ipv6Rotate:
            j["prefix"] = p.cidr.toString();
            break;
        case PeerSpec::Kind::Ipv6PrefixRotate:
            j["cidr"] = p.cidr.toString();
            j["prefix_len"] = p.prefixLength;
            break;
    }
    return j;
}

Json stringMap(const std::vector<std::pair<std::string, std::string>>& map) {
    Json j = Json::object();
    for (const auto& [name, value] : map)
        j[name] = value;
    return j;
}

Json identityJson(const Identity& id) {
    Json j = Json::object();
    if (id.peer.kind != PeerSpec::Kind::None) j["peer"] = peerJson(id.peer);
    if (id.authorization != AuthorizationMode::None)
        j["authorization"] = scenario_names::nameOf(scenario_names::kAuthorizationModes, id.authorization);
    if (id.principal != PrincipalMode::None)
        j["principal"] = scenario_names::nameOf(scenario_names::kPrincipalModes, id.principal);
    if (id.forwarded.kind != ForwardedSpec::Kind::None)
        j["forwarded_for"] = scenario_names::nameOf(scenario_names::kForwardedKinds, id.forwarded.kind);
    if (id.forwarded.kind == ForwardedSpec::Kind::ViaProxy ||
        id.forwarded.kind == ForwardedSpec::Kind::SpoofViaProxy) {
        j["proxy"] = id.forwarded.proxy.toString();
    }
    if (id.forwarded.kind != ForwardedSpec::Kind::None &&
        id.forwarded.header != "x-forwarded-for") {
        j["forwarded_header"] = id.forwarded.header;
    }
    if (!id.attributes.empty()) j["attributes"] = stringMap(id.attributes);
    return j;
}

Json responseJson(const ResponseModel& r) {
    Json j = Json::object();
    switch (r.kind) {
        case ResponseModel::Kind::None:
            break;
        case ResponseModel::Kind::SuccessRate:
            j["success_rate"] = r.successRate;
            if (r.failureStatus != ResponseModel{}.failureStatus)
                j["failure_status"] = r.failureStatus;
            break;
        case ResponseModel::Kind::Statuses: {
            Json statuses = Json::object();
            for (const auto& [status, probability] : r.statuses)
                statuses[std::to_string(status)] = probability;
            j["statuses"] = std::move(statuses);
            break;
        }
    }
    return j;
}

Json actorJson(const Actor& a) {
    Json j;
    j["name"] = a.name;
    j["class"] = a.className;
    if (a.count != 1) j["count"] = a.count;
    if (a.start != 0) j["start_s"] = seconds(a.start);
    if (a.stop) j["stop_s"] = seconds(*a.stop);
    j["arrival"] = arrivalJson(a.arrival);
    Json request;
    request["method"] = a.method;
    request["path"] = a.path;
    if (!a.headers.empty()) request["headers"] = stringMap(a.headers);
    if (a.cost != 0) request["cost"] = a.cost;
    j["request"] = std::move(request);
    Json identity = identityJson(a.identity);
    if (!identity.empty()) j["identity"] = std::move(identity);
    if (a.response.kind != ResponseModel::Kind::None) j["response"] = responseJson(a.response);
    return j;
}

Json eventJson(const ScenarioEvent& e) {
    Json j;
    switch (e.kind) {
        case ScenarioEvent::Kind::StoreOutage:
        case ScenarioEvent::Kind::StoreLatency:
            j["kind"] = scenario_names::nameOf(scenario_names::kEventKinds, e.kind);
            j["from_s"] = seconds(e.from);
            j["to_s"] = seconds(e.to);
            if (e.replica != -1) j["replica"] = e.replica;
            if (e.kind == ScenarioEvent::Kind::StoreOutage) {
                j["failure"] = scenario_names::nameOf(scenario_names::kStoreFailures, e.failure);
            } else {
                j["latency_ms"] = e.latency / kNanosPerMilli;
            }
            break;
        case ScenarioEvent::Kind::PolicyChange: {
            j["kind"] = scenario_names::nameOf(scenario_names::kEventKinds, e.kind);
            j["at_s"] = seconds(e.from);
            if (!e.change.policy.empty()) j["policy"] = e.change.policy;
            Json set = Json::object();
            if (e.change.capacity) set["capacity"] = *e.change.capacity;
            if (e.change.refillPerSecond) set["refill_per_second"] = *e.change.refillPerSecond;
            if (e.change.windowMs) set["window_ms"] = *e.change.windowMs;
            if (e.change.cost) set["cost"] = *e.change.cost;
            if (e.change.mode) set["mode"] = scenario_names::nameOf(scenario_names::kPolicyModes, *e.change.mode);
            j["set"] = std::move(set);
            break;
        }
    }
    return j;
}

}  // namespace

std::string scenarioJson(const Scenario& s) {
    Json j;
    j["name"] = s.name;
    if (!s.title.empty()) j["title"] = s.title;
    if (!s.description.empty()) j["description"] = s.description;
    j["seed"] = s.seed;
    j["duration_s"] = seconds(s.duration);
    j["sample_ms"] = s.sampleInterval / kNanosPerMilli;
    if (s.replicas != 1) j["replicas"] = s.replicas;
    if (!s.sharedStore) j["shared_store"] = false;
    if (s.maxBuckets != 0) j["max_buckets"] = s.maxBuckets;
    if (!s.policy.empty()) j["policy"] = s.policy;
    Json actors = Json::array();
    for (const Actor& a : s.actors)
        actors.push_back(actorJson(a));
    j["actors"] = std::move(actors);
    if (!s.events.empty()) {
        Json events = Json::array();
        for (const ScenarioEvent& e : s.events)
            events.push_back(eventJson(e));
        j["events"] = std::move(events);
    }
    if (!s.expectations.empty()) {
        Json expect = Json::array();
        for (const Expectation& e : s.expectations) {
            Json x;
            x["metric"] = e.metric;
            if (e.min) x["min"] = *e.min;
            if (e.max) x["max"] = *e.max;
            expect.push_back(std::move(x));
        }
        j["expect"] = std::move(expect);
    }
    return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

ScenarioLoadResult reloadScenario(const Scenario& scenario) {
    return parseScenarioText(scenarioJson(scenario), scenario.file);
}

}  // namespace ratelab::sim
