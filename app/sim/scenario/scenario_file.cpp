// Scenario files: JSON read through the engine's position-tracking reader, so every problem is
// reported at once as FILE:LINE:COLUMN with its JSON pointer, like policy files.
// The file, its events and expectations are read here; its actors in scenario_actor_reader.cpp.

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "json/json_document.h"
#include "json/json_reader.h"
#include "ratelab/number_text.h"
#include "sim/report/counters.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_limits.h"
#include "sim/scenario/scenario_names.h"
#include "sim/scenario/scenario_reader.h"

namespace ratelab::sim {

namespace scenario_reader {

namespace {

using scenario_limits::kMaxRequests;
using scenario_limits::kMaxSamples;
using scenario_limits::kMaxSeconds;
constexpr std::size_t kMaxTemplate = 200;

Nanos seconds(double s) {
    return static_cast<Nanos>(std::llround(s * 1e9));
}

}  // namespace

double expectedRequests(const Arrival& r, double seconds) {
    const bool session = r.kind == Arrival::Kind::Session;
    const double size = session ? r.sessionSize.mean() : 1;
    if (r.total) return r.total->mean() * size;
    if (session && !r.idle) return size;
    // Without a total, cycles of a session and the idle time after it until stop.
    const double cycle = session ? r.sessionSpan.mean() + r.idle->mean() : r.gaps.mean();
    return cycle > 0 ? (seconds / cycle + 1) * size : kMaxRequests;
}

// Reads an optional duration in seconds into `out`; false when absent or invalid.
bool readSeconds(ObjectReader& object, std::string_view key, Nanos& out, double min,
                 bool minExclusive) {
    double s = 0;
    if (!object.readNumber(key, s, min, kMaxSeconds, minExclusive)) return false;
    out = seconds(s);
    return true;
}

std::optional<Scenario> ScenarioParser::parse(const Value& root) {
    if (!reader_.expect(root, {Value::Type::Object}, "an object")) return std::nullopt;
    Scenario s;
    s.file = reader_.file();
    ObjectReader top(
        reader_, root,
        {"$schema", "name", "title", "description", "seed", "duration_s", "sample_ms", "replicas",
         "shared_store", "max_buckets", "policy", "actors", "events", "expect"});
    if (top.require("name")) top.readString("name", s.name, false);
    top.readString("title", s.title);
    top.readString("description", s.description);
    top.readUint("seed", s.seed);
    if (top.require("duration_s")) readSeconds(top, "duration_s", s.duration, 0, true);
    std::int64_t sampleMs = 1000;
    if (top.readInt("sample_ms", sampleMs, 1, 24 * 3600 * 1000)) {
        if (s.duration / (sampleMs * kNanosPerMilli) > kMaxSamples) {
            reader_.error(*top.get("sample_ms"),
                          "sample_ms is too small for duration_s: more than " +
                              std::to_string(kMaxSamples) + " samples");
        }
    }
    s.sampleInterval = sampleMs * kNanosPerMilli;
    top.readInt("replicas", s.replicas, 1, 64);
    top.readBool("shared_store", s.sharedStore);
    top.readInt("max_buckets", s.maxBuckets, 1, std::int64_t(1) << 40);
    if (top.readString("policy", s.policy, false)) {
        std::filesystem::path base = std::filesystem::path(s.file).parent_path();
        s.policyPath = (base / s.policy).lexically_normal().string();
        const json::Position at = top.get("policy")->position();
        s.policyLine = at.line;
        s.policyColumn = at.column;
    }
    if (top.require("actors")) {
        if (const Value* actors = top.readArray("actors")) {
            if (actors->items().empty()) reader_.error(*actors, "a scenario needs an actor");
            for (const auto& item : actors->items())
                readActor(*item, s);
            checkVolume(*actors, s);
        }
    }
    if (const Value* events = top.readArray("events")) {
        for (const auto& item : events->items())
            readEvent(*item, s);
    }
    if (const Value* expect = top.readArray("expect")) {
        for (const auto& item : expect->items())
            readExpectation(*item, s);
    }
    if (reader_.errorCount() > 0) return std::nullopt;
    return s;
}

void ScenarioParser::readEvent(const Value& v, Scenario& s) {
    if (!reader_.expect(v, {Value::Type::Object}, "an object")) return;
    ScenarioEvent e;
    e.line = v.position().line;
    e.column = v.position().column;
    ObjectReader o(
        reader_, v,
        {"kind", "from_s", "to_s", "at_s", "failure", "latency_ms", "replica", "policy", "set"});
    if (!o.require("kind")) return;
    if (!o.readEnum("kind", e.kind, scenario_names::kEventKinds)) {
        return;
    }
    auto forbid = [&](std::initializer_list<std::string_view> keys) {
        for (std::string_view key : keys) {
            if (const Value* x = o.get(key)) {
                reader_.error(*x, std::string(key) + " does not apply to a " +
                                      o.get("kind")->asString() + " event");
            }
        }
    };
    if (e.kind == ScenarioEvent::Kind::PolicyChange) {
        forbid({"from_s", "to_s", "failure", "latency_ms", "replica"});
        if (o.require("at_s")) readSeconds(o, "at_s", e.from, 0, false);
        o.readString("policy", e.change.policy, false);
        if (o.require("set")) {
            if (const Value* set = o.readObject("set")) readChange(*set, e.change);
        }
        s.events.push_back(std::move(e));
        return;
    }
    forbid({"at_s", "policy", "set"});
    if (o.require("from_s")) readSeconds(o, "from_s", e.from, 0, false);
    if (o.require("to_s") && readSeconds(o, "to_s", e.to, 0, true) && e.to <= e.from) {
        reader_.error(*o.get("to_s"), "to_s must be after from_s");
    }
    if (o.readInt("replica", e.replica, 0, 63) && e.replica >= s.replicas) {
        reader_.error(*o.get("replica"), "replica " + std::to_string(e.replica) +
                                             " does not exist: the scenario has " +
                                             std::to_string(s.replicas));
    }
    if (e.kind == ScenarioEvent::Kind::StoreOutage) {
        forbid({"latency_ms"});
        if (o.require("failure")) {
            o.readEnum("failure", e.failure, scenario_names::kStoreFailures);
        }
    } else {
        forbid({"failure"});
        std::int64_t ms = 0;
        if (o.require("latency_ms") && o.readInt("latency_ms", ms, 0, 3'600'000)) {
            e.latency = ms * kNanosPerMilli;
        }
    }
    s.events.push_back(std::move(e));
}

void ScenarioParser::readChange(const Value& v, PolicyChange& c) {
    ObjectReader o(reader_, v, {"capacity", "refill_per_second", "window_ms", "cost", "mode"});
    if (v.members().empty()) reader_.error(v, "set names no field to change");
    std::int64_t i = 0;
    double d = 0;
    if (o.readInt("capacity", i, 1, std::int64_t(1) << 40)) c.capacity = i;
    if (o.readNumber("refill_per_second", d, 0, 1e9, true)) c.refillPerSecond = d;
    if (o.readInt("window_ms", i, 1, kMaxDuration / kNanosPerMilli)) c.windowMs = i;
    if (o.readInt("cost", i, 1, std::int64_t(1) << 40)) c.cost = i;
    PolicyMode mode = PolicyMode::Enforce;
    if (o.readEnum("mode", mode, scenario_names::kPolicyModes)) {
        c.mode = mode;
    }
}

void ScenarioParser::readExpectation(const Value& v, Scenario& s) {
    if (!reader_.expect(v, {Value::Type::Object}, "an object")) return;
    Expectation e;
    ObjectReader o(reader_, v, {"metric", "min", "max"});
    if (o.require("metric") && o.readString("metric", e.metric, false)) {
        std::vector<std::string> names = metricNames(s.classNames());
        if (std::find(names.begin(), names.end(), e.metric) == names.end()) {
            std::vector<std::string_view> views(names.begin(), names.end());
            std::string message = "unknown metric \"" + e.metric + "\"";
            std::string_view near = json::closestKey(e.metric, views);
            if (!near.empty()) message += "; did you mean \"" + std::string(near) + "\"?";
            reader_.error(*o.get("metric"), message);
        }
    }
    double x = 0;
    if (o.readNumber("min", x, -1e300, 1e300)) e.min = x;
    if (o.readNumber("max", x, -1e300, 1e300)) e.max = x;
    if (!o.get("min") && !o.get("max")) reader_.error(v, "an expectation needs min or max");
    if (e.min && e.max && *e.min > *e.max) reader_.error(*o.get("min"), "min is above max");
    s.expectations.push_back(std::move(e));
}

// A typo in a rate must not become a run that never ends: refuse scenarios that would send
// more than kMaxRequests (about an hour and a half at the simulator's speed).
void ScenarioParser::checkVolume(const Value& actors, const Scenario& s) {
    if (reader_.errorCount() > 0) return;
    double total = 0;
    for (const Actor& a : s.actors) {
        const Nanos stop = std::min(s.duration, a.stop.value_or(s.duration));
        const double seconds = static_cast<double>(std::max<Nanos>(0, stop - a.start)) / 1e9;
        const double n = static_cast<double>(a.count);
        const Arrival& r = a.arrival;
        switch (r.kind) {
            case Arrival::Kind::Constant:
            case Arrival::Kind::Poisson:
                total += r.ratePerSecond * n * seconds;
                break;
            case Arrival::Kind::Burst:
                total += static_cast<double>(r.burstSize) * n *
                         (seconds / (static_cast<double>(r.burstEvery) / 1e9) + 1);
                break;
            case Arrival::Kind::Ramp:
                total += std::max(r.fromPerSecond, r.toPerSecond) * n * seconds;
                break;
            case Arrival::Kind::Session:
            case Arrival::Kind::Empirical:
                total += n * expectedRequests(r, seconds);
                break;
        }
    }
    if (total > kMaxRequests) {
        reader_.error(actors, "these actors would send about " + numberText(total, 3) +
                                  " requests; a scenario may send at most " +
                                  numberText(kMaxRequests, 1));
    }
}

// Bounds what one request carries: a few headers and attributes, and values with
// "{instance}" short enough to be written per request without allocating.
void ScenarioParser::checkTemplates(const Value& map,
                                    const std::vector<std::pair<std::string, std::string>>& v,
                                    std::size_t max, std::string_view what) {
    if (v.size() > max) {
        reader_.error(map,
                      "at most " + std::to_string(max) + " " + std::string(what) + " per actor");
    }
    for (const auto& [name, value] : v) {
        if (value.find("{instance}") != std::string::npos && value.size() > kMaxTemplate) {
            reader_.error(*map.find(name), "a value with {instance} may hold at most " +
                                               std::to_string(kMaxTemplate) + " characters");
        }
    }
}

}  // namespace scenario_reader

using scenario_reader::ScenarioParser;

ScenarioLoadResult parseScenarioText(std::string_view text, std::string_view fileName) {
    ScenarioLoadResult result;
    json::Document doc = json::parse(text, fileName);
    result.diagnostics = std::move(doc.diagnostics);
    if (!doc.root || hasErrors(result.diagnostics)) return result;
    ScenarioParser parser{std::string(fileName), result.diagnostics};
    result.scenario = parser.parse(*doc.root);
    return result;
}

ScenarioLoadResult loadScenarioFile(const std::string& path) {
    ScenarioLoadResult result;
    json::Document doc = json::parseFile(path);
    result.unreadable = doc.unreadable;
    result.diagnostics = std::move(doc.diagnostics);
    if (!doc.root || hasErrors(result.diagnostics)) return result;
    ScenarioParser parser{path, result.diagnostics};
    result.scenario = parser.parse(*doc.root);
    return result;
}

PolicyLoadResult loadScenarioPolicy(const Scenario& scenario, const PolicyCheckOptions& options) {
    PolicyLoadResult loaded = loadPolicyFile(scenario.policyPath, options);
    if (loaded.unreadable && !loaded.diagnostics.empty()) {
        Diagnostic& d = loaded.diagnostics.front();
        std::string named = "policy file \"" + scenario.policy + "\"";
        if (scenario.policyPath != scenario.policy) named += " (" + scenario.policyPath + ")";
        d.message = named + ": " + d.message;
        d.file = scenario.file;
        d.line = scenario.policyLine;
        d.column = scenario.policyColumn;
        d.pointer = "/policy";
    }
    return loaded;
}

}  // namespace ratelab::sim
