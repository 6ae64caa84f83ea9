#include "sim/report/report.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "identity/sha256.h"
#include "ratelab/number_text.h"
#include "ratelab/policy_file.h"
#include "sim/log/recorded_traffic.h"
#include "sim/report/report_json.h"

namespace ratelab::sim {

namespace {

// The CSV's columns grow only at the end, so that a reader of an older file finds its columns
// where they were: counters from this index on (decided_locally, store_full) come after the
// store's columns, and the text report shows them on a line of their own.
constexpr std::size_t kFirstLaterCounter = 6;

}  // namespace

// Reports carry six decimals: enough for any rate or fraction, and stable to read.
double report_json::rounded(double x) {
    return std::round(x * 1e6) / 1e6;
}

namespace {

using report_json::rounded;

double fraction(std::int64_t part, std::int64_t whole) {
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

double seconds(Nanos t) {
    return static_cast<double>(t) / 1e9;
}

std::string formatNumber(double x) {
    return x == std::floor(x) && std::fabs(x) < 1e15 ? fixedText(x, 0) : numberText(x, 6);
}

}  // namespace

bool Report::pass() const {
    for (const ExpectationResult& e : expectations) {
        if (!e.pass) return false;
    }
    return true;
}

std::string policySha256(const PolicySet& policies) {
    std::string hex(identity::kSha256HexLength, '0');
    if (!identity::sha256Hex(savePolicyText(policies), hex.data())) hex.clear();
    return hex;
}

namespace {

std::vector<ExpectationResult> evaluate(const std::vector<Expectation>& expectations,
                                        const std::vector<std::string>& classNames,
                                        const RunTotals& totals, Nanos duration,
                                        Nanos sampleInterval) {
    std::vector<ExpectationResult> results;
    for (const Expectation& e : expectations) {
        ExpectationResult result;
        result.expectation = e;
        std::optional<double> actual =
            summaryMetric(e.metric, classNames, totals, duration, sampleInterval);
        result.actual = actual.value_or(0);
        result.pass =
            actual.has_value() && (!e.min || *actual >= *e.min) && (!e.max || *actual <= *e.max);
        results.push_back(std::move(result));
    }
    return results;
}

}  // namespace

std::vector<ExpectationResult> evaluateExpectations(const Scenario& scenario,
                                                    const std::vector<std::string>& classNames,
                                                    const RunTotals& totals) {
    return evaluate(scenario.expectations, classNames, totals, scenario.duration,
                    scenario.sampleInterval);
}

std::vector<ExpectationResult> evaluateExpectations(const ScenarioRunner& runner,
                                                    const RunTotals& totals) {
    return evaluate(runner.scenario().expectations, runner.classNames(), totals, runner.duration(),
                    runner.sampleInterval());
}

Report buildReport(const ScenarioRunner& runner, Timing timing, std::size_t lane) {
    Report r;
    const Scenario& s = runner.scenario();
    r.scenario = s.name;
    // The policy as loaded: retunes and policy_change events during the run do not rename it.
    for (const Policy& p : runner.initialPolicies(lane).policies) {
        if (!r.policy.empty()) r.policy += "+";
        r.policy += p.name;
    }
    r.policySha256 = policySha256(runner.initialPolicies(lane));
    r.seed = runner.seed();
    r.classNames = runner.classNames();
    r.totals = runner.totals(lane);
    r.duration = runner.duration();
    r.actors = runner.actorRows(lane);
    r.expectations = evaluateExpectations(runner, r.totals);
    r.timing = timing;
    return r;
}

namespace report_json {

Json counters(const ClassCounters& c) {
    Json k = Json::object();
    for (const CounterField& f : kCounterFields)
        k[std::string(f.name)] = c.*f.member;
    return k;
}

Json classCounters(const ClassCounters& c, Nanos duration, const ClassSpread* spread,
                   std::string_view className) {
    Json k = counters(c);
    k["allowed_per_s"] =
        rounded(duration > 0 ? static_cast<double>(c.allowed) / seconds(duration) : 0.0);
    k["allowed_fraction"] = rounded(fraction(c.allowed, c.offered));
    k["throttled_fraction"] = rounded(fraction(c.throttled, c.offered));
    Json outcomes = Json::object();
    for (std::size_t o = 0; o < kPolicyOutcomeCount; ++o)
        outcomes[std::string(policyOutcomeName(static_cast<PolicyOutcome>(o)))] = c.outcomes[o];
    k["outcomes"] = std::move(outcomes);
    if (spread) {
        k["instances"] = spread->instances;
        k["throttled_instances"] = spread->throttledInstances;
        k["fairness_jain"] = rounded(spread->fairness);
        if (isLegitimateClass(className)) {
            k["max_instances_per_bucket"] = spread->peakInstancesPerBucket;
        }
    }
    return k;
}

Json expectations(const std::vector<ExpectationResult>& results) {
    Json list = Json::array();
    for (const ExpectationResult& e : results) {
        Json x;
        x["metric"] = e.expectation.metric;
        if (e.expectation.min) x["min"] = *e.expectation.min;
        if (e.expectation.max) x["max"] = *e.expectation.max;
        x["actual"] = e.actual;
        x["pass"] = e.pass;
        list.push_back(std::move(x));
    }
    return list;
}

Json replay(const ReplayInfo& r) {
    return Json{{"file", r.file},
                {"format", r.format},
                {"start_epoch_ms", r.startEpochMs},
                {"lines", r.lines},
                {"parsed", r.parsed},
                {"unparsed", r.unparsed},
                {"unparsed_lines", r.unparsedLines},
                {"clients", r.clients},
                {"host_names", r.hostNames},
                {"files", r.files},
                {"format_detected", r.detected},
                {"end_epoch_ms", r.endEpochMs},
                {"reorder_window_s", rounded(r.reorderWindowS)},
                {"damaged", r.damaged},
                {"out_of_window", r.outOfWindow},
                {"unparsed_at", r.unparsedAt},
                {"damaged_at", r.damagedAt},
                {"out_of_window_at", r.outOfWindowAt}};
}

Json timing(const Timing& t) {
    return Json{{"wall_s", rounded(t.wallSeconds)},
                {"requests_per_s", std::round(t.requestsPerSecond)}};
}

}  // namespace report_json

Report buildReplayReport(const ScenarioRunner& runner, Timing timing, const LogReading& reading) {
    Report r = buildReport(runner, timing);
    r.replay = replayInfo(reading);
    for (ActorRow& a : r.actors)
        a.instances = reading.clients;
    return r;
}

std::string reportJson(const Report& report) {
    using report_json::Json;
    Json j;
    j["scenario"] = report.scenario;
    j["policy"] = report.policy;
    j["policy_sha256"] = report.policySha256;
    j["seed"] = report.seed;
    j["requests"] = report.totals.requests;
    j["virtual_duration_s"] = rounded(seconds(report.duration));
    Json classes = Json::object();
    for (std::size_t i = 0; i < report.classNames.size(); ++i) {
        const ClassSpread* spread =
            i < report.totals.spread.size() ? &report.totals.spread[i] : nullptr;
        classes[report.classNames[i]] = report_json::classCounters(
            report.totals.classes[i], report.duration, spread, report.classNames[i]);
    }
    j["classes"] = std::move(classes);
    j["keyspace"] = Json{{"max_buckets", report.totals.maxBuckets},
                         {"final_buckets", report.totals.finalBuckets},
                         {"max_bytes", report.totals.maxBytes},
                         {"max_budget_slots", report.totals.maxBudgetSlots}};
    j["store"] = Json{{"errors", report.totals.storeErrors}};
    j["expectations"] = report_json::expectations(report.expectations);
    j["pass"] = report.pass();
    Json actors = Json::array();
    for (const ActorRow& a : report.actors) {
        Json x;
        x["name"] = a.name;
        x["class"] = a.className;
        x["instances"] = a.instances;
        x.update(report_json::counters(a.counters));
        actors.push_back(std::move(x));
    }
    j["actors"] = std::move(actors);
    if (report.replay) j["replay"] = report_json::replay(*report.replay);
    j["timing"] = report_json::timing(report.timing);
    return j.dump(2) + "\n";
}

std::string seriesCsv(const std::vector<std::string>& classNames,
                      const std::vector<Sample>& samples) {
    std::string out = "t_s";
    for (const std::string& c : classNames) {
        for (std::size_t n = 0; n < kFirstLaterCounter; ++n)
            out += "," + c + "." + std::string(kCounterFields[n].name);
    }
    out += ",keyspace.buckets,keyspace.budget_slots,keyspace.bytes,store.errors";
    for (const std::string& c : classNames) {
        for (std::size_t n = kFirstLaterCounter; n < std::size(kCounterFields); ++n)
            out += "," + c + "." + std::string(kCounterFields[n].name);
    }
    out += "\n";
    char buffer[64];
    for (const Sample& s : samples) {
        out += fixedText(seconds(s.end), 3);
        auto counters = [&](std::size_t from, std::size_t to) {
            for (const ClassCounters& c : s.classes) {
                for (std::size_t n = from; n < to; ++n) {
                    std::snprintf(buffer, sizeof buffer, ",%" PRId64, c.*kCounterFields[n].member);
                    out += buffer;
                }
            }
        };
        counters(0, kFirstLaterCounter);
        std::snprintf(buffer, sizeof buffer, ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64,
                      s.keyspace.buckets, s.keyspace.budgetSlots, s.keyspace.bytes, s.storeErrors);
        out += buffer;
        counters(kFirstLaterCounter, std::size(kCounterFields));
        out += "\n";
    }
    return out;
}

ValidationRun validationRun(const Report& report) {
    ValidationRun run;
    run.scenario = report.scenario;
    run.seed = report.seed;
    run.requests = report.totals.requests;
    run.pass = report.pass();
    for (const ExpectationResult& e : report.expectations) {
        ValidationExpectation v;
        v.metric = e.expectation.metric;
        v.min = e.expectation.min;
        v.max = e.expectation.max;
        v.actual = e.actual;
        v.pass = e.pass;
        run.expectations.push_back(std::move(v));
    }
    return run;
}

PolicySet withValidation(PolicySet policies, const Report& report, const std::string& generator) {
    ValidationRecord record = policies.validation.value_or(ValidationRecord{});
    record.generator = generator;
    ValidationRun run = validationRun(report);
    bool replaced = false;
    for (ValidationRun& existing : record.runs) {
        if (existing.scenario == run.scenario) {
            existing = run;
            replaced = true;
        }
    }
    if (!replaced) record.runs.push_back(std::move(run));
    policies.validation = std::move(record);
    return policies;
}

std::string reportText(const Report& report) {
    std::string out;
    char line[256];
    std::snprintf(
        line, sizeof line, "%s: %" PRId64 " requests over %s s (seed %" PRIu64 "), policy %s\n",
        report.scenario.c_str(), report.totals.requests,
        formatNumber(seconds(report.duration)).c_str(), report.seed, report.policy.c_str());
    out += line;
    // Each counter's column is as wide as its name, and at least 10.
    auto width = [](const CounterField& f) {
        return std::max<int>(10, static_cast<int>(f.name.size()));
    };
    std::snprintf(line, sizeof line, "  %-14s", "class");
    out += line;
    for (std::size_t n = 0; n < kFirstLaterCounter; ++n) {
        const CounterField& f = kCounterFields[n];
        std::snprintf(line, sizeof line, " %*s", width(f), std::string(f.name).c_str());
        out += line;
    }
    out += "   allowed/s\n";
    for (std::size_t i = 0; i < report.classNames.size(); ++i) {
        const ClassCounters& c = report.totals.classes[i];
        const double perSecond =
            report.duration > 0 ? static_cast<double>(c.allowed) / seconds(report.duration) : 0;
        std::snprintf(line, sizeof line, "  %-14s", report.classNames[i].c_str());
        out += line;
        for (std::size_t n = 0; n < kFirstLaterCounter; ++n) {
            std::snprintf(line, sizeof line, " %*" PRId64, width(kCounterFields[n]),
                          c.*kCounterFields[n].member);
            out += line;
        }
        std::snprintf(line, sizeof line, " %11s\n", fixedText(perSecond, 3).c_str());
        out += line;
        // Only when they happened: most runs have no outage of the shared store and no full one.
        if (c.decidedLocally > 0 || c.storeFull > 0) {
            std::snprintf(line, sizeof line,
                          "  %-14s decided locally %" PRId64 ", refused by a full store %" PRId64
                          "\n",
                          "", c.decidedLocally, c.storeFull);
            out += line;
        }
    }
    for (std::size_t i = 0; i < report.classNames.size() && i < report.totals.spread.size(); ++i) {
        const ClassSpread& s = report.totals.spread[i];
        std::snprintf(line, sizeof line,
                      "  %-14s %" PRId64 " of %" PRId64
                      " instances throttled at least once; "
                      "fairness (Jain) %s",
                      report.classNames[i].c_str(), s.throttledInstances, s.instances,
                      fixedText(s.fairness, 3).c_str());
        out += line;
        if (isLegitimateClass(report.classNames[i]) && s.peakInstancesPerBucket > 1) {
            std::snprintf(line, sizeof line, "; up to %" PRId64 " instances shared one bucket",
                          s.peakInstancesPerBucket);
            out += line;
        }
        out += "\n";
    }
    std::snprintf(line, sizeof line,
                  "  keyspace: max %" PRId64 " buckets, %" PRId64 " budget slots, %" PRId64
                  " bytes; store errors %" PRId64 "\n",
                  report.totals.maxBuckets, report.totals.maxBudgetSlots, report.totals.maxBytes,
                  report.totals.storeErrors);
    out += line;
    int met = 0;
    for (const ExpectationResult& e : report.expectations) {
        out += "  " + expectationText(e) + "\n";
        met += e.pass ? 1 : 0;
    }
    std::snprintf(line, sizeof line, "%d of %zu expectations met; %s s wall, %s requests/s\n", met,
                  report.expectations.size(), fixedText(report.timing.wallSeconds, 3).c_str(),
                  formatNumber(std::round(report.timing.requestsPerSecond)).c_str());
    out += line;
    return out;
}

std::string expectationText(const ExpectationResult& e) {
    std::string bounds;
    if (e.expectation.min) bounds += "min " + formatNumber(*e.expectation.min);
    if (e.expectation.max) {
        if (!bounds.empty()) bounds += ", ";
        bounds += "max " + formatNumber(*e.expectation.max);
    }
    return std::string(e.pass ? "PASS " : "FAIL ") + e.expectation.metric + " = " +
           formatNumber(e.actual) + " (" + bounds + ")";
}

}  // namespace ratelab::sim
