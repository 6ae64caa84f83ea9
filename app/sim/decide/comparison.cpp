#include "sim/decide/comparison.h"

#include <algorithm>
#include <cinttypes>
#include <cstdlib>

#include "ratelab/number_text.h"
#include "sim/log/record_stream.h"
#include "sim/log/recorded_traffic.h"  // replayInfo()
#include "sim/log/replay_source.h"
#include "sim/report/report_json.h"

namespace ratelab::sim {

namespace {

std::string policyNames(const PolicySet& set) {
    std::string names;
    for (const Policy& p : set.policies) {
        if (!names.empty()) names += "+";
        names += p.name;
    }
    return names;
}

std::string instanceName(const Actor& actor, std::int64_t instance) {
    if (actor.recorded) {
        if (std::string name = actor.recorded->clientName(instance); !name.empty()) return name;
    }
    return actor.name + "#" + std::to_string(instance);
}

ClassCounters difference(const ClassCounters& a, const ClassCounters& b) {
    ClassCounters d;
    for (const CounterField& f : kCounterFields)
        d.*f.member = b.*f.member - a.*f.member;
    return d;
}

report_json::Json flipsJson(const OutcomeFlips& flips) {
    report_json::Json j = report_json::Json::object();
    // The two a tuning decision turns on come first and always; any other transition (a
    // store-error rule that differs, say) only when it happened.
    j[flipName(kAllowedOutcome, kThrottledOutcome)] =
        flips.transitions[kAllowedOutcome][kThrottledOutcome];
    j[flipName(kThrottledOutcome, kAllowedOutcome)] =
        flips.transitions[kThrottledOutcome][kAllowedOutcome];
    for (std::size_t a = 0; a < kOutcomeCount; ++a) {
        for (std::size_t b = 0; b < kOutcomeCount; ++b) {
            const bool main = (a == kAllowedOutcome && b == kThrottledOutcome) ||
                              (a == kThrottledOutcome && b == kAllowedOutcome);
            if (a != b && !main && flips.transitions[a][b] != 0)
                j[flipName(a, b)] = flips.transitions[a][b];
        }
    }
    return j;
}

report_json::Json instanceJson(const InstanceCounters& c) {
    return report_json::Json{
        {"offered", c.offered}, {"allowed", c.allowed}, {"throttled", c.throttled}};
}

report_json::Json changeJson(const InstanceChange& c, bool replay) {
    report_json::Json j;
    j[replay ? "client" : "name"] = c.name;
    j["class"] = c.className;
    j["a"] = instanceJson(c.a);
    j["b"] = instanceJson(c.b);
    return j;
}

std::string number(std::int64_t n) {
    return std::to_string(n);
}

std::string signedNumber(std::int64_t n) {
    return n > 0 ? "+" + std::to_string(n) : std::to_string(n);
}

}  // namespace

std::string flipName(std::size_t from, std::size_t to) {
    return std::string(kOutcomeFields[from].name) + "_to_" + std::string(kOutcomeFields[to].name);
}

bool Comparison::passB() const {
    return std::all_of(expectationsB.begin(), expectationsB.end(),
                       [](const ExpectationResult& e) { return e.pass; });
}

std::int64_t Comparison::collateralTotal() const {
    std::int64_t n = 0;
    for (std::int64_t c : collateralPerClass)
        n += c;
    return n;
}

Comparison buildComparison(const ScenarioRunner& runner, std::size_t top, Timing timing) {
    Comparison c;
    const Scenario& s = runner.scenario();
    c.scenario = s.name;
    c.seed = runner.seed();
    c.duration = runner.duration();
    c.sampleInterval = runner.sampleInterval();
    c.policyA = policyNames(runner.initialPolicies(0));
    c.policyB = policyNames(runner.initialPolicies(1));
    c.policySha256A = policySha256(runner.initialPolicies(0));
    c.policySha256B = policySha256(runner.initialPolicies(1));
    c.classNames = runner.classNames();
    c.a = runner.totals(0);
    c.b = runner.totals(1);
    c.classFlips.assign(c.classNames.size(), OutcomeFlips{});
    c.collateralPerClass.assign(c.classNames.size(), 0);
    c.relievedPerClass.assign(c.classNames.size(), 0);
    c.expectationsA = evaluateExpectations(runner, c.a);
    c.expectationsB = evaluateExpectations(runner, c.b);
    c.timing = timing;

    const std::vector<ActorRow> rowsA = runner.actorRows(0);
    const std::vector<ActorRow> rowsB = runner.actorRows(1);
    const std::vector<OutcomeFlips>& flips = runner.flips(1);
    std::vector<InstanceChange> collateral;
    std::vector<InstanceChange> clients;
    for (std::size_t a = 0; a < s.actors.size(); ++a) {
        const Actor& actor = s.actors[a];
        const std::size_t cls = static_cast<std::size_t>(
            std::find(c.classNames.begin(), c.classNames.end(), actor.className) -
            c.classNames.begin());
        c.actors.push_back(ComparedActor{actor.name, actor.className, actor.count,
                                         rowsA[a].counters, rowsB[a].counters, flips[a]});
        c.classFlips[cls] += flips[a];
        const std::span<const InstanceCounters> ia = runner.instances(a, 0);
        const std::span<const InstanceCounters> ib = runner.instances(a, 1);
        const bool legitimate = isLegitimateClass(actor.className);
        for (std::size_t i = 0; i < ia.size(); ++i) {
            const auto instance = static_cast<std::int64_t>(i);
            auto change = [&] {
                return InstanceChange{static_cast<int>(a), instance, instanceName(actor, instance),
                                      actor.className,     ia[i],    ib[i]};
            };
            if (actor.recorded && !(ia[i] == ib[i])) {
                ++c.clientsChanged;
                clients.push_back(change());
            }
            if (!legitimate) continue;
            if (ib[i].throttled > 0 && ia[i].throttled == 0) {
                ++c.collateralPerClass[cls];
                collateral.push_back(change());
            } else if (ia[i].throttled > 0 && ib[i].throttled == 0) {
                ++c.relievedPerClass[cls];
            }
        }
    }
    const auto limit = [top](std::vector<InstanceChange>& list, auto later) {
        const std::size_t n = std::min(top, list.size());
        std::partial_sort(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(n), list.end(),
                          later);
        list.resize(n);
    };
    limit(collateral, [](const InstanceChange& x, const InstanceChange& y) {
        if (x.b.throttled != y.b.throttled) return x.b.throttled > y.b.throttled;
        if (x.actor != y.actor) return x.actor < y.actor;
        return x.instance < y.instance;
    });
    limit(clients, [](const InstanceChange& x, const InstanceChange& y) {
        const std::int64_t dx = std::llabs(x.b.throttled - x.a.throttled);
        const std::int64_t dy = std::llabs(y.b.throttled - y.a.throttled);
        if (dx != dy) return dx > dy;
        return x.name < y.name;
    });
    c.collateral = std::move(collateral);
    c.clients = std::move(clients);
    return c;
}

Comparison buildReplayComparison(const ScenarioRunner& runner, std::size_t top, Timing timing,
                                 const LogReading& reading) {
    Comparison c = buildComparison(runner, top, timing);
    c.replay = replayInfo(reading);
    for (ComparedActor& a : c.actors)
        a.instances = reading.clients;
    return c;
}

std::string comparisonJson(const Comparison& c) {
    using report_json::Json;
    Json j;
    j["scenario"] = c.scenario;
    j["seed"] = c.seed;
    j["requests"] = c.a.requests;
    j["virtual_duration_s"] = report_json::rounded(static_cast<double>(c.duration) / 1e9);
    j["a"] = Json{{"policy", c.policyA}, {"policy_sha256", c.policySha256A}};
    j["b"] = Json{{"policy", c.policyB}, {"policy_sha256", c.policySha256B}};
    Json classes = Json::object();
    for (std::size_t i = 0; i < c.classNames.size(); ++i) {
        const std::string& name = c.classNames[i];
        Json k;
        k["a"] = report_json::classCounters(c.a.classes[i], c.duration, &c.a.spread[i], name);
        k["b"] = report_json::classCounters(c.b.classes[i], c.duration, &c.b.spread[i], name);
        k["delta"] = report_json::counters(difference(c.a.classes[i], c.b.classes[i]));
        k["flips"] = flipsJson(c.classFlips[i]);
        if (isLegitimateClass(name)) {
            k["collateral_instances"] = c.collateralPerClass[i];
            k["relieved_instances"] = c.relievedPerClass[i];
        }
        classes[name] = std::move(k);
    }
    j["classes"] = std::move(classes);
    Json actors = Json::array();
    for (const ComparedActor& a : c.actors) {
        Json x;
        x["name"] = a.name;
        x["class"] = a.className;
        x["instances"] = a.instances;
        x["a"] = report_json::counters(a.a);
        x["b"] = report_json::counters(a.b);
        x["delta"] = report_json::counters(difference(a.a, a.b));
        x["flips"] = flipsJson(a.flips);
        actors.push_back(std::move(x));
    }
    j["actors"] = std::move(actors);
    if (c.replay) {
        Json clients = Json::array();
        for (const InstanceChange& change : c.clients)
            clients.push_back(changeJson(change, true));
        j["clients"] = Json{{"changed", c.clientsChanged}, {"top", std::move(clients)}};
    }
    Json top = Json::array();
    for (const InstanceChange& change : c.collateral)
        top.push_back(changeJson(change, c.replay.has_value()));
    j["collateral"] = Json{{"instances", c.collateralTotal()}, {"top", std::move(top)}};
    j["expectations"] = Json{{"a", report_json::expectations(c.expectationsA)},
                             {"b", report_json::expectations(c.expectationsB)}};
    j["pass"] = c.passB();
    if (c.replay) j["replay"] = report_json::replay(*c.replay);
    j["timing"] = report_json::timing(c.timing);
    return j.dump(2) + "\n";
}

std::string comparisonText(const Comparison& c) {
    std::string out;
    char line[320];
    std::snprintf(line, sizeof line,
                  "%s: %" PRId64 " requests (seed %" PRIu64 "), A = %s, B = %s, same requests\n",
                  c.scenario.c_str(), c.a.requests, c.seed, c.policyA.c_str(), c.policyB.c_str());
    out += line;
    std::snprintf(line, sizeof line, "  %-14s %-14s %12s %12s %12s\n", "class", "outcome", "A", "B",
                  "B - A");
    out += line;
    for (std::size_t i = 0; i < c.classNames.size(); ++i) {
        for (const CounterField& f : kCounterFields) {
            const std::int64_t a = c.a.classes[i].*f.member;
            const std::int64_t b = c.b.classes[i].*f.member;
            if (f.name != "offered" && a == 0 && b == 0) continue;
            std::snprintf(line, sizeof line, "  %-14s %-14s %12" PRId64 " %12" PRId64 " %12s\n",
                          c.classNames[i].c_str(), std::string(f.name).c_str(), a, b,
                          signedNumber(b - a).c_str());
            out += line;
        }
    }
    for (std::size_t i = 0; i < c.classNames.size(); ++i) {
        const OutcomeFlips& f = c.classFlips[i];
        std::snprintf(line, sizeof line,
                      "  %s flips: %" PRId64 " allowed under A and throttled under B, %" PRId64
                      " the reverse",
                      c.classNames[i].c_str(), f.transitions[kAllowedOutcome][kThrottledOutcome],
                      f.transitions[kThrottledOutcome][kAllowedOutcome]);
        out += line;
        const std::int64_t other = f.total() - f.transitions[kAllowedOutcome][kThrottledOutcome] -
                                   f.transitions[kThrottledOutcome][kAllowedOutcome];
        if (other > 0) out += ", " + number(other) + " other changes";
        out += "\n";
    }
    for (std::size_t i = 0; i < c.classNames.size(); ++i) {
        if (!isLegitimateClass(c.classNames[i])) continue;
        std::snprintf(
            line, sizeof line,
            "  %s: %" PRId64 " of %" PRId64 " instances throttled at least once under A, %" PRId64
            " under B; fairness (Jain) %s -> %s\n",
            c.classNames[i].c_str(), c.a.spread[i].throttledInstances, c.a.spread[i].instances,
            c.b.spread[i].throttledInstances, fixedText(c.a.spread[i].fairness, 3).c_str(),
            fixedText(c.b.spread[i].fairness, 3).c_str());
        out += line;
    }
    const std::int64_t collateral = c.collateralTotal();
    if (collateral == 0) {
        out += "  collateral: no legitimate instance is throttled under B that was not under A\n";
    } else {
        out += "  collateral: " + number(collateral) +
               " legitimate instances throttled under B, never under A; most affected:\n";
        for (const InstanceChange& x : c.collateral) {
            std::snprintf(line, sizeof line,
                          "    %-32s %-10s throttled %" PRId64 " of %" PRId64 " under B\n",
                          x.name.c_str(), x.className.c_str(), x.b.throttled, x.b.offered);
            out += line;
        }
    }
    if (c.replay && !c.clients.empty()) {
        out += "  clients whose outcome changed: " + number(c.clientsChanged) + "; largest:\n";
        for (const InstanceChange& x : c.clients) {
            std::snprintf(line, sizeof line,
                          "    %-32s throttled %" PRId64 " -> %" PRId64 " of %" PRId64 "\n",
                          x.name.c_str(), x.a.throttled, x.b.throttled, x.b.offered);
            out += line;
        }
    }
    auto met = [](const std::vector<ExpectationResult>& list) {
        return std::count_if(list.begin(), list.end(),
                             [](const ExpectationResult& e) { return e.pass; });
    };
    for (std::size_t i = 0; i < c.expectationsB.size(); ++i) {
        const ExpectationResult& a = c.expectationsA[i];
        const ExpectationResult& b = c.expectationsB[i];
        std::snprintf(line, sizeof line, "  %s %s: A %s (%s), B %s (%s)\n",
                      b.pass ? "PASS" : "FAIL", b.expectation.metric.c_str(),
                      numberText(a.actual, 6).c_str(), a.pass ? "pass" : "fail",
                      numberText(b.actual, 6).c_str(), b.pass ? "pass" : "fail");
        out += line;
    }
    std::snprintf(line, sizeof line, "B meets %td of %zu expectations (A %td); %s s wall\n",
                  met(c.expectationsB), c.expectationsB.size(), met(c.expectationsA),
                  fixedText(c.timing.wallSeconds, 3).c_str());
    out += line;
    return out;
}

FlipCsvWriter::FlipCsvWriter(std::FILE* out, const Scenario& scenario, const LogReading* reading)
    : csv_(out, "seq,ts_ms,actor,key,a,b"), scenario_(scenario), reading_(reading) {}

void FlipCsvWriter::onFlip(const FlipRecord& f) {
    csv_.number(f.seq);
    csv_.number(recordMillis(reading_, f.at));
    csv_.text(f.client.empty()
                  ? std::string_view(scenario_.actors[static_cast<std::size_t>(f.actor)].name)
                  : f.client);
    csv_.text(f.key);
    csv_.plain(kOutcomeFields[f.outcomeA].name);
    csv_.plain(kOutcomeFields[f.outcomeB].name);
    csv_.endRow();
}

bool FlipCsvWriter::finish() {
    return csv_.finish();
}

}  // namespace ratelab::sim
