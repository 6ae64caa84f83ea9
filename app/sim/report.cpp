#include "sim/report.h"

#include <openssl/evp.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "ratelab/number_text.h"
#include "ratelab/policy_file.h"
#include "sim/access_log.h"

namespace ratelab::sim {

namespace {

// The CSV's columns grow only at the end, so that a reader of an older file finds its columns
// where they were: counters from this index on come after the store's columns.
constexpr std::size_t kFirstLaterCounter = 6;

// Reports carry six decimals: enough for any rate or fraction, and stable to read.
double rounded(double x) {
    return std::round(x * 1e6) / 1e6;
}

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
    const std::string text = savePolicyText(policies);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
    static constexpr char kHex[] = "0123456789abcdef";
    std::string hex;
    for (unsigned int i = 0; i < length; ++i) {
        hex.push_back(kHex[digest[i] >> 4]);
        hex.push_back(kHex[digest[i] & 0xf]);
    }
    return hex;
}

Report buildReport(const ScenarioRunner& runner, Timing timing) {
    Report r;
    const Scenario& s = runner.scenario();
    r.scenario = s.name;
    // The policy as loaded: retunes and policy_change events during the run do not rename it.
    for (const Policy& p : runner.initialPolicies().policies) {
        if (!r.policy.empty()) r.policy += "+";
        r.policy += p.name;
    }
    r.policySha256 = policySha256(runner.initialPolicies());
    r.seed = runner.seed();
    r.classNames = runner.classNames();
    r.totals = runner.totals();
    r.duration = s.duration;
    r.actors = runner.actorRows();
    for (const Expectation& e : s.expectations) {
        ExpectationResult result;
        result.expectation = e;
        std::optional<double> actual =
            summaryMetric(e.metric, r.classNames, r.totals, s.duration, s.sampleInterval);
        result.actual = actual.value_or(0);
        result.pass =
            actual.has_value() && (!e.min || *actual >= *e.min) && (!e.max || *actual <= *e.max);
        r.expectations.push_back(std::move(result));
    }
    r.timing = timing;
    return r;
}

Report buildReplayReport(const ScenarioRunner& runner, Timing timing, const LogReading& reading) {
    Report r = buildReport(runner, timing);
    r.replay = replayInfo(reading);
    for (ActorRow& a : r.actors)
        a.instances = reading.clients;
    return r;
}

std::string reportJson(const Report& report) {
    using Json = nlohmann::ordered_json;
    Json j;
    j["scenario"] = report.scenario;
    j["policy"] = report.policy;
    j["policy_sha256"] = report.policySha256;
    j["seed"] = report.seed;
    j["requests"] = report.totals.requests;
    j["virtual_duration_s"] = rounded(seconds(report.duration));
    Json classes = Json::object();
    for (std::size_t i = 0; i < report.classNames.size(); ++i) {
        const ClassCounters& c = report.totals.classes[i];
        Json k;
        for (std::size_t n = 0; n < kClassCounterNames.size(); ++n)
            k[std::string(kClassCounterNames[n])] = classCounter(c, n);
        k["allowed_per_s"] = rounded(
            report.duration > 0 ? static_cast<double>(c.allowed) / seconds(report.duration) : 0.0);
        k["allowed_fraction"] = rounded(fraction(c.allowed, c.offered));
        k["throttled_fraction"] = rounded(fraction(c.throttled, c.offered));
        Json outcomes = Json::object();
        for (std::size_t o = 0; o < kPolicyOutcomeCount; ++o)
            outcomes[std::string(policyOutcomeName(static_cast<PolicyOutcome>(o)))] = c.outcomes[o];
        k["outcomes"] = std::move(outcomes);
        classes[report.classNames[i]] = std::move(k);
    }
    j["classes"] = std::move(classes);
    j["keyspace"] = Json{{"max_buckets", report.totals.maxBuckets},
                         {"final_buckets", report.totals.finalBuckets},
                         {"max_bytes", report.totals.maxBytes},
                         {"max_budget_slots", report.totals.maxBudgetSlots}};
    j["store"] = Json{{"errors", report.totals.storeErrors}};
    Json expectations = Json::array();
    for (const ExpectationResult& e : report.expectations) {
        Json x;
        x["metric"] = e.expectation.metric;
        if (e.expectation.min) x["min"] = *e.expectation.min;
        if (e.expectation.max) x["max"] = *e.expectation.max;
        x["actual"] = e.actual;
        x["pass"] = e.pass;
        expectations.push_back(std::move(x));
    }
    j["expectations"] = std::move(expectations);
    j["pass"] = report.pass();
    Json actors = Json::array();
    for (const ActorRow& a : report.actors) {
        Json x;
        x["name"] = a.name;
        x["class"] = a.className;
        x["instances"] = a.instances;
        for (std::size_t n = 0; n < kClassCounterNames.size(); ++n)
            x[std::string(kClassCounterNames[n])] = classCounter(a.counters, n);
        actors.push_back(std::move(x));
    }
    j["actors"] = std::move(actors);
    if (report.replay) {
        const ReplayInfo& r = *report.replay;
        j["replay"] = Json{{"file", r.file},
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
    j["timing"] = Json{{"wall_s", rounded(report.timing.wallSeconds)},
                       {"requests_per_s", std::round(report.timing.requestsPerSecond)}};
    return j.dump(2) + "\n";
}

std::string seriesCsv(const std::vector<std::string>& classNames,
                      const std::vector<Sample>& samples) {
    std::string out = "t_s";
    for (const std::string& c : classNames) {
        for (std::size_t n = 0; n < kFirstLaterCounter; ++n)
            out += "," + c + "." + std::string(kClassCounterNames[n]);
    }
    out += ",keyspace.buckets,keyspace.budget_slots,keyspace.bytes,store.errors";
    for (const std::string& c : classNames) {
        for (std::size_t n = kFirstLaterCounter; n < kClassCounterNames.size(); ++n)
            out += "," + c + "." + std::string(kClassCounterNames[n]);
    }
    out += "\n";
    char buffer[64];
    for (const Sample& s : samples) {
        out += fixedText(seconds(s.end), 3);
        auto counters = [&](std::size_t from, std::size_t to) {
            for (const ClassCounters& c : s.classes) {
                for (std::size_t n = from; n < to; ++n) {
                    std::snprintf(buffer, sizeof buffer, ",%" PRId64, classCounter(c, n));
                    out += buffer;
                }
            }
        };
        counters(0, kFirstLaterCounter);
        std::snprintf(buffer, sizeof buffer, ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64,
                      s.keyspace.buckets, s.keyspace.budgetSlots, s.keyspace.bytes, s.storeErrors);
        out += buffer;
        counters(kFirstLaterCounter, kClassCounterNames.size());
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

std::string reportText(const Report& report) {
    std::string out;
    char line[256];
    std::snprintf(
        line, sizeof line, "%s: %" PRId64 " requests over %s s (seed %" PRIu64 "), policy %s\n",
        report.scenario.c_str(), report.totals.requests,
        formatNumber(seconds(report.duration)).c_str(), report.seed, report.policy.c_str());
    out += line;
    std::snprintf(line, sizeof line, "  %-14s %12s %12s %12s %10s %12s %13s %11s\n", "class",
                  "offered", "allowed", "throttled", "refused", "failed_open", "failed_closed",
                  "allowed/s");
    out += line;
    for (std::size_t i = 0; i < report.classNames.size(); ++i) {
        const ClassCounters& c = report.totals.classes[i];
        const double perSecond =
            report.duration > 0 ? static_cast<double>(c.allowed) / seconds(report.duration) : 0;
        std::snprintf(line, sizeof line,
                      "  %-14s %12" PRId64 " %12" PRId64 " %12" PRId64 " %10" PRId64 " %12" PRId64
                      " %13" PRId64 " %11s\n",
                      report.classNames[i].c_str(), c.offered, c.allowed, c.throttled, c.refused,
                      c.failedOpen, c.failedClosed, fixedText(perSecond, 3).c_str());
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
    std::snprintf(line, sizeof line,
                  "  keyspace: max %" PRId64 " buckets, %" PRId64 " budget slots, %" PRId64
                  " bytes; store errors %" PRId64 "\n",
                  report.totals.maxBuckets, report.totals.maxBudgetSlots, report.totals.maxBytes,
                  report.totals.storeErrors);
    out += line;
    int met = 0;
    for (const ExpectationResult& e : report.expectations) {
        std::string bounds;
        if (e.expectation.min) bounds += "min " + formatNumber(*e.expectation.min);
        if (e.expectation.max) {
            if (!bounds.empty()) bounds += ", ";
            bounds += "max " + formatNumber(*e.expectation.max);
        }
        std::snprintf(line, sizeof line, "  %s %s = %s (%s)\n", e.pass ? "PASS" : "FAIL",
                      e.expectation.metric.c_str(), formatNumber(e.actual).c_str(), bounds.c_str());
        out += line;
        met += e.pass ? 1 : 0;
    }
    std::snprintf(line, sizeof line, "%d of %zu expectations met; %s s wall, %s requests/s\n",
                  met, report.expectations.size(), fixedText(report.timing.wallSeconds, 3).c_str(),
                  formatNumber(std::round(report.timing.requestsPerSecond)).c_str());
    out += line;
    return out;
}

}  // namespace ratelab::sim
