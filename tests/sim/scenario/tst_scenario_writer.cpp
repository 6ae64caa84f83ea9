// The scenario writer (sim/scenario/scenario_writer.h) against the reader: every shipped scenario,
// and one that uses every arrival, peer, forwarding and event kind, writes a file that loads into a
// scenario which writes the same bytes and runs to the same report; an edit (what the
// workbench's scenario editor does) survives the round trip, and a value out of range is
// written, so that reloadScenario() refuses it where the loader would.

#include <QtTest>

#include <QDir>
#include <QTemporaryDir>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "fixtures/file_fixture.h"
#include "fixtures/sim_fixture.h"
#include "sim/report/report.h"
#include "sim/run/scenario_runner.h"
#include "sim/scenario/scenario_writer.h"

using namespace ratelab;
using namespace ratelab::sim;
using namespace ratelab::simtest;
using ratelab::testing::writeFile;

namespace {

const std::string kRoot = RATELAB_SOURCE_DIR;

Scenario load(const std::string& path) {
    ScenarioLoadResult r = loadScenarioFile(path);
    if (!r.ok()) {
        qFatal("%s", formatDiagnostics(r.diagnostics).c_str());
    }
    return std::move(*r.scenario);
}

// The report of the scenario's first 35 s or first 300,000 requests, whichever ends first (the
// largest shipped scenarios send 10^7 requests, address-minting 100,000 a second; the first
// seconds run every actor, and 35 s cover every shipped event, which all start by 20 s).
std::string reportOf(Scenario s, const PolicySet& p) {
    s.duration = std::min(s.duration, 35 * kNanosPerSecond);
    ScenarioRunner runner(s, p);
    runner.advance(s.duration, 300'000);
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(reportJson(buildReport(runner, {})));
    j.erase("timing");
    return j.dump();
}

// Every kind the format has, in one scenario (short, so that it also runs quickly).
const char* const kEverything = R"({
  "name": "everything", "title": "Every kind", "description": "Each arrival, peer and event.",
  "seed": 99, "duration_s": 4, "sample_ms": 500, "replicas": 2, "shared_store": false,
  "max_buckets": 5000, "policy": "../resources/policies/default.json",
  "actors": [
    { "name": "steady", "class": "legit", "count": 3, "start_s": 0.5, "stop_s": 3.5,
      "arrival": { "kind": "constant", "rate_per_s": 2.5 },
      "request": { "method": "post", "path": "/api/x", "headers": { "x-account": "u{instance}" },
                   "cost": 2 },
      "identity": { "peer": { "kind": "ipv4_pool", "cidr": "198.51.100.0/24" },
                    "authorization": "fixed", "attributes": { "plan": "free" } },
      "response": { "success_rate": 0.75, "failure_status": 403 } },
    { "name": "random", "class": "legit", "count": 2,
      "arrival": { "kind": "poisson", "rate_per_s": 1.25 },
      "identity": { "peer": { "kind": "nat", "address": "192.0.2.7" }, "principal": "fixed" },
      "response": { "statuses": { "200": 0.5, "401": 0.25, "422": 0.25 } } },
    { "name": "pages", "class": "legit", "count": 2,
      "arrival": { "kind": "burst", "size": 6, "every_s": 2, "spacing_ms": 20, "phase_s": 0.25 },
      "identity": { "peer": { "kind": "ipv6", "address": "2001:db8::7" } } },
    { "name": "climb", "class": "attacker",
      "arrival": { "kind": "ramp", "from_per_s": 10, "to_per_s": 100, "over_s": 2 },
      "identity": { "peer": { "kind": "ipv6_rotate", "prefix": "2001:db8:1:2::/64" },
                    "authorization": "rotate" } },
    { "name": "hop", "class": "attacker",
      "arrival": { "kind": "constant", "rate_per_s": 20 },
      "identity": { "peer": { "kind": "ipv6_prefix_rotate", "cidr": "2001:db8::/48",
                              "prefix_len": 56 } } },
    { "name": "minter", "class": "attacker",
      "arrival": { "kind": "constant", "rate_per_s": 30 },
      "identity": { "peer": { "kind": "ipv4_rotate", "cidr": "100.64.0.0/10" } } },
    { "name": "liar", "class": "attacker",
      "arrival": { "kind": "constant", "rate_per_s": 5 },
      "identity": { "peer": { "kind": "ipv4", "address": "203.0.113.9" },
                    "forwarded_for": "spoof_random", "forwarded_header": "x-real-ip" } },
    { "name": "proxied", "class": "legit",
      "arrival": { "kind": "constant", "rate_per_s": 1 },
      "identity": { "peer": { "kind": "ipv4", "address": "198.51.100.77" },
                    "forwarded_for": "spoof_via_proxy", "proxy": "10.0.0.1" } },
    { "name": "ghost", "class": "legit", "arrival": { "kind": "constant", "rate_per_s": 1 },
      "identity": { "peer": "none" } }
  ],
  "events": [
    { "kind": "store_outage", "failure": "timeout", "from_s": 1, "to_s": 1.5, "replica": 1 },
    { "kind": "store_outage", "failure": "refusal", "from_s": 2, "to_s": 2.25 },
    { "kind": "store_latency", "latency_ms": 40, "from_s": 3, "to_s": 3.5 },
    { "kind": "policy_change", "at_s": 2.5, "policy": "api",
      "set": { "capacity": 5, "refill_per_second": 0.5, "cost": 1, "mode": "shadow" } }
  ],
  "expect": [ { "metric": "legit.throttled_fraction", "max": 0.5 },
              { "metric": "attacker.allowed", "min": 1, "max": 100000 } ]
})";

}  // namespace

class TestScenarioJson : public QObject {
    Q_OBJECT

private slots:
    void shippedRoundTrip_data();
    void shippedRoundTrip();
    void editsSurvive();
    void outOfRangeValuesReachTheLoader_data();
    void outOfRangeValuesReachTheLoader();

private:
    QTemporaryDir dir_;
};

void TestScenarioJson::shippedRoundTrip_data() {
    QTest::addColumn<QString>("path");
    QDir dir(QString::fromStdString(kRoot + "/scenarios"));
    for (const QString& f : dir.entryList({"*.json"}, QDir::Files, QDir::Name))
        QTest::newRow(qPrintable(f)) << dir.filePath(f);
    const QString everything = dir_.filePath("scenarios/everything.json");
    QDir().mkpath(dir_.filePath("scenarios"));
    writeFile(everything, kEverything);
    std::filesystem::create_directories(dir_.filePath("resources/policies").toStdString());
    std::filesystem::copy_file(kRoot + "/resources/policies/default.json",
                               dir_.filePath("resources/policies/default.json").toStdString(),
                               std::filesystem::copy_options::overwrite_existing);
    QTest::newRow("every kind") << everything;
}

// The saved file loads into a scenario that saves to the same bytes and gives the same report.
void TestScenarioJson::shippedRoundTrip() {
    QFETCH(QString, path);
    Scenario original = load(path.toStdString());
    // Written elsewhere, so the policy is named by its resolved path.
    original.policy = original.policyPath;
    const std::string saved =
        QDir(dir_.path()).filePath("saved/" + QFileInfo(path).fileName()).toStdString();
    std::filesystem::create_directories(std::filesystem::path(saved).parent_path());
    const std::string text = scenarioJson(original);
    writeFile(QString::fromStdString(saved), text);
    const Scenario back = load(saved);
    QCOMPARE(scenarioJson(back), text);
    QCOMPARE(std::filesystem::canonical(back.policyPath),
             std::filesystem::canonical(original.policyPath));
    QCOMPARE(back.actors.size(), original.actors.size());
    QCOMPARE(back.events.size(), original.events.size());
    QCOMPARE(back.expectations.size(), original.expectations.size());
    const PolicySet policies = [&] {
        PolicyLoadResult r = loadPolicyFile(original.policyPath);
        if (!r.ok()) qFatal("policy does not load");
        return *r.policies;
    }();
    QCOMPARE(reportOf(back, policies), reportOf(original, policies));
}

// What the scenario editor does: the attacker doubles its rate and the outage lasts a minute.
void TestScenarioJson::editsSurvive() {
    Scenario s = load(kRoot + "/scenarios/store-outage.json");
    s.policy = s.policyPath;
    for (Actor& a : s.actors) {
        if (a.className == "attacker") a.arrival.ratePerSecond *= 2;
    }
    ScenarioEvent& outage = s.events.at(0);
    outage.to = outage.from + 60 * kNanosPerSecond;
    const std::string saved = dir_.filePath("edited.json").toStdString();
    writeFile(QString::fromStdString(saved), scenarioJson(s));
    const Scenario back = load(saved);
    for (std::size_t i = 0; i < s.actors.size(); ++i)
        QCOMPARE(back.actors[i].arrival.ratePerSecond, s.actors[i].arrival.ratePerSecond);
    QCOMPARE(back.events[0].to - back.events[0].from, 60 * kNanosPerSecond);
    const PolicySet policies = policyFile("resources/policies/default.json");
    QCOMPARE(reportOf(back, policies), reportOf(s, policies));
}

void TestScenarioJson::outOfRangeValuesReachTheLoader_data() {
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("pointer");
    QTest::addColumn<QString>("message");
    QTest::newRow("start") << "start"
                           << "/actors/1/start_s"
                           << "start_s must be at least 0 and at most 2592000, found -2";
    QTest::newRow("cost") << "cost"
                          << "/actors/1/request/cost"
                          << "cost must be between 1 and 1099511627776, found -1";
    QTest::newRow("replica") << "replica"
                             << "/events/0/replica"
                             << "replica must be between 0 and 63, found -2";
    QTest::newRow("max_buckets") << "max_buckets"
                                 << "/max_buckets"
                                 << "max_buckets must be between 1 and 1099511627776, found -3";
    QTest::newRow("to before from") << "to"
                                    << "/events/0/to_s"
                                    << "to_s must be after from_s";
}

// The writer leaves out only defaults: a negative start, cost, replica or bucket cap (which a
// file cannot hold) is written, and reloadScenario() refuses it with the loader's message at the
// loader's pointer, rather than a scenario that silently lost the value.
void TestScenarioJson::outOfRangeValuesReachTheLoader() {
    QFETCH(QString, field);
    QFETCH(QString, pointer);
    QFETCH(QString, message);
    Scenario s = load(kRoot + "/scenarios/store-outage.json");
    QCOMPARE(reloadScenario(s).ok(), true);
    if (field == "start") s.actors.at(1).start = -2 * kNanosPerSecond;
    if (field == "cost") s.actors.at(1).cost = -1;
    if (field == "replica") s.events.at(0).replica = -2;
    if (field == "max_buckets") s.maxBuckets = -3;
    if (field == "to") s.events.at(0).to = s.events.at(0).from - kNanosPerSecond;
    const ScenarioLoadResult back = reloadScenario(s);
    QVERIFY(!back.ok());
    QCOMPARE(back.diagnostics.size(), std::size_t(1));
    QCOMPARE(QString::fromStdString(back.diagnostics[0].pointer), pointer);
    QCOMPARE(QString::fromStdString(back.diagnostics[0].message), message);
    QCOMPARE(back.diagnostics[0].file, s.file);
}

QTEST_APPLESS_MAIN(TestScenarioJson)
#include "tst_scenario_writer.moc"
