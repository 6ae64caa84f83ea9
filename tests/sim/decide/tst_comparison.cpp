// A/B comparison (app/sim/decide/comparison.cpp) and the runner's lanes it rests on: a policy
// against itself flips nothing; against another, each lane equals a separate run, and the flips in
// each direction net to the difference in allowed requests; collateral and fairness figures;
// replayed logs; the flips file.

#include <QtTest>

#include <nlohmann/json.hpp>

#include "fixtures/recorded_log.h"
#include "fixtures/sim_fixture.h"
#include "sim/decide/comparison.h"
#include "sim/log/recorded_traffic.h"
#include "sim/report/report.h"
#include "sim/run/scenario_runner.h"

using namespace ratelab;
using namespace ratelab::sim;
using namespace ratelab::simtest;

namespace {

RunTotals runAlone(const Scenario& s, const PolicySet& p) {
    ScenarioRunner runner(s, p);
    runner.runToEnd();
    return runner.totals();
}

Comparison compare(const Scenario& s, const PolicySet& a, const PolicySet& b, std::size_t top = 10,
                   FlipSink* sink = nullptr) {
    RunnerOptions options;
    options.flips = sink;
    ScenarioRunner runner(s, std::vector<PolicySet>{a, b}, options);
    runner.runToEnd();
    return buildComparison(runner, top, Timing{});
}

// Outcomes that left `outcome` minus those that arrived there, over every flip.
std::int64_t netOut(const OutcomeFlips& f, std::size_t outcome) {
    std::int64_t n = 0;
    for (std::size_t x = 0; x < kOutcomeCount; ++x) {
        if (x == outcome) continue;
        n += f.transitions[outcome][x] - f.transitions[x][outcome];
    }
    return n;
}

struct Collected final : FlipSink {
    std::vector<FlipRecord> flips;
    std::vector<std::string> keys;
    void onFlip(const FlipRecord& f) override {
        flips.push_back(f);
        keys.emplace_back(f.key);
    }
};

const char* const kLog =
    "198.51.100.1 - - [10/Oct/2023:13:55:36 +0000] \"GET /a HTTP/1.1\" 200 1\n"
    "198.51.100.1 - - [10/Oct/2023:13:55:36 +0000] \"GET /a HTTP/1.1\" 200 1\n"
    "198.51.100.1 - - [10/Oct/2023:13:55:36 +0000] \"GET /a HTTP/1.1\" 200 1\n"
    "198.51.100.1 - - [10/Oct/2023:13:55:37 +0000] \"GET /a HTTP/1.1\" 200 1\n"
    "198.51.100.2 - - [10/Oct/2023:13:55:37 +0000] \"GET /a HTTP/1.1\" 200 1\n"
    "198.51.100.2 - - [10/Oct/2023:13:55:37 +0000] \"GET /a HTTP/1.1\" 200 1\n"
    "198.51.100.3 - - [10/Oct/2023:13:55:38 +0000] \"GET /a HTTP/1.1\" 200 1\n";

}  // namespace

class TestComparison : public QObject {
    Q_OBJECT

private slots:
    void againstItselfNothingFlips_data();
    void againstItselfNothingFlips();
    void lanesEqualSeparateRuns_data();
    void lanesEqualSeparateRuns();
    void collateralBehindANat();
    void spreadAndFairness();
    void replayedLog();
    void flipsFile();
    void jsonIsDeterministic();
};

void TestComparison::againstItselfNothingFlips_data() {
    QTest::addColumn<QString>("scenario");
    QTest::newRow("header-rotation") << "header-rotation";
    QTest::newRow("store-outage") << "store-outage";
    QTest::newRow("replicas-local") << "replicas-local";
}

void TestComparison::againstItselfNothingFlips() {
    QFETCH(QString, scenario);
    const Scenario s = shippedScenario(scenario.toUtf8().constData());
    PolicyLoadResult loaded = loadPolicyFile(s.policyPath);
    QVERIFY(loaded.ok());
    const PolicySet p = *loaded.policies;
    const Comparison c = compare(s, p, p);
    const RunTotals alone = runAlone(s, p);
    QVERIFY(c.a.requests > 1000);
    for (std::size_t i = 0; i < c.classNames.size(); ++i) {
        QCOMPARE(c.a.classes[i], alone.classes[i]);
        QCOMPARE(c.b.classes[i], alone.classes[i]);
        QCOMPARE(c.classFlips[i].total(), std::int64_t(0));
        QCOMPARE(c.collateralPerClass[i], std::int64_t(0));
        QCOMPARE(c.a.spread[i], c.b.spread[i]);
    }
    QCOMPARE(c.a.maxBuckets, alone.maxBuckets);
    QVERIFY(c.collateral.empty());
    QCOMPARE(c.passB(), std::all_of(c.expectationsA.begin(), c.expectationsA.end(),
                                    [](const ExpectationResult& e) { return e.pass; }));
}

void TestComparison::lanesEqualSeparateRuns_data() {
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<QString>("policyA");
    QTest::addColumn<QString>("policyB");
    QTest::newRow("nat-crowd: crowd budget vs default") << "nat-crowd"
                                                        << "scenarios/policies/nat-budget.json"
                                                        << "resources/policies/default.json";
    QTest::newRow("header-rotation: default vs login") << "header-rotation"
                                                       << "resources/policies/default.json"
                                                       << "resources/policies/login.json";
    QTest::newRow("store-outage: default vs token-bucket-100")
        << "store-outage"
        << "resources/policies/default.json"
        << "scenarios/policies/token-bucket-100.json";
}

// Each lane decides exactly what a separate run would; per class and per actor, the flips out
// of "allowed" minus those into it equal allowed under A minus allowed under B.
void TestComparison::lanesEqualSeparateRuns() {
    QFETCH(QString, scenario);
    QFETCH(QString, policyA);
    QFETCH(QString, policyB);
    const Scenario s = shippedScenario(scenario.toUtf8().constData());
    const PolicySet a = policyFile(policyA.toStdString());
    const PolicySet b = policyFile(policyB.toStdString());
    const Comparison c = compare(s, a, b);
    const RunTotals aloneA = runAlone(s, a);
    const RunTotals aloneB = runAlone(s, b);
    std::int64_t flipped = 0;
    for (std::size_t i = 0; i < c.classNames.size(); ++i) {
        QCOMPARE(c.a.classes[i], aloneA.classes[i]);
        QCOMPARE(c.b.classes[i], aloneB.classes[i]);
        QCOMPARE(c.a.spread[i], aloneA.spread[i]);
        QCOMPARE(c.b.spread[i], aloneB.spread[i]);
        const OutcomeFlips& f = c.classFlips[i];
        QCOMPARE(netOut(f, kAllowedOutcome), c.a.classes[i].allowed - c.b.classes[i].allowed);
        QCOMPARE(netOut(f, kThrottledOutcome), c.a.classes[i].throttled - c.b.classes[i].throttled);
        flipped += f.total();
    }
    QVERIFY2(flipped > 0, "the two policies should decide some requests differently");
    for (const ComparedActor& actor : c.actors) {
        QCOMPARE(netOut(actor.flips, kAllowedOutcome), actor.a.allowed - actor.b.allowed);
    }
    QCOMPARE(c.a.maxBuckets, aloneA.maxBuckets);
    QCOMPARE(c.b.maxBuckets, aloneB.maxBuckets);
}

// 2000 users behind one address with their own tokens: with a budget of 4096 credentials per
// address each keeps its own bucket; with the default 128, 1872 of them are collapsed onto the
// address bucket and throttled there: collateral of B that A never throttled.
void TestComparison::collateralBehindANat() {
    const Scenario s = shippedScenario("nat-crowd");
    const PolicySet crowd = policyFile("scenarios/policies/nat-budget.json");
    const PolicySet fallback = policyFile("resources/policies/default.json");
    const Comparison c = compare(s, crowd, fallback, 5);
    QCOMPARE(c.classNames, std::vector<std::string>{"legit"});
    const ClassSpread& a = c.a.spread[0];
    const ClassSpread& b = c.b.spread[0];
    QVERIFY(a.instances > 1990);  // Poisson at 0.05/s over 120 s: almost every user sends
    QCOMPARE(b.instances, a.instances);
    QCOMPARE(a.throttledInstances, std::int64_t(0));
    QCOMPARE(a.peakInstancesPerBucket, std::int64_t(1));  // one bucket per token
    // The address bucket is shared by every collapsed user that sends within a second.
    QVERIFY2(b.peakInstancesPerBucket > 50, qPrintable(QString::number(b.peakInstancesPerBucket)));
    QVERIFY(b.throttledInstances > 1000);
    QCOMPARE(c.collateralPerClass[0], b.throttledInstances);
    QCOMPARE(c.relievedPerClass[0], std::int64_t(0));
    QCOMPARE(c.collateral.size(), std::size_t(5));
    for (std::size_t i = 1; i < c.collateral.size(); ++i)
        QVERIFY(c.collateral[i - 1].b.throttled >= c.collateral[i].b.throttled);
    QCOMPARE(c.collateral[0].a.throttled, std::int64_t(0));
    QVERIFY(c.collateral[0].name.starts_with("office#"));
    QVERIFY(a.fairness > b.fairness);
    QCOMPARE(c.passB(), false);  // legit.throttled_fraction <= 0.01 fails under the default
    QCOMPARE(c.expectationsA[0].pass, true);
}

// Two legitimate actors from their own addresses: one at 10/s, one at 1/s, for 10 s, against a
// bucket of 5 refilled at 1/s. The fast one is allowed 14 of 100 (5 at once, then one per second
// over the 9.9 s between its first and last request) and throttled 86 times; the slow one is
// never throttled and allowed all 10. Jain's index of (14, 10): 24^2 / (2 * (196 + 100)).
void TestComparison::spreadAndFairness() {
    const Scenario s = scenarioFrom(R"({ "name": "spread", "seed": 1, "duration_s": 10,
      "actors": [
        { "name": "fast", "class": "legit", "arrival": { "kind": "constant", "rate_per_s": 10 },
          "identity": { "peer": { "kind": "ipv4", "address": "198.51.100.1" } } },
        { "name": "slow", "class": "legit", "arrival": { "kind": "constant", "rate_per_s": 1 },
          "identity": { "peer": { "kind": "ipv4", "address": "198.51.100.2" } } },
        { "name": "nat", "class": "office", "count": 4,
          "arrival": { "kind": "constant", "rate_per_s": 1 },
          "identity": { "peer": { "kind": "nat", "address": "192.0.2.1" } } } ] })");
    ScenarioRunner runner(s, policySet({tokenBucket("api", 5, 1.0)}));
    runner.runToEnd();
    const RunTotals t = runner.totals();
    QCOMPARE(runner.instances(0)[0], (InstanceCounters{100, 14, 86}));
    QCOMPARE(runner.instances(1)[0], (InstanceCounters{10, 10, 0}));
    QCOMPARE(t.spread[0].instances, std::int64_t(2));
    QCOMPARE(t.spread[0].throttledInstances, std::int64_t(1));
    QCOMPARE(t.spread[0].fairness, 576.0 / 592.0);
    QCOMPARE(t.spread[0].peakInstancesPerBucket, std::int64_t(1));
    // Four instances behind one address at 1/s each share its bucket (4/s against 1/s): each
    // of them sends once in every one-second sample, so four share the bucket at peak, and the
    // 5 + 9 requests it admits are shared unevenly: Jain's index of (10, 2, 1, 1) is
    // 14^2 / (4 * 106).
    QCOMPARE(t.spread[1].instances, std::int64_t(4));
    QCOMPARE(t.spread[1].peakInstancesPerBucket, std::int64_t(4));
    // The instance whose request falls just after each token comes back takes it every time:
    // office#0 is allowed all 10, the other three share the rest of the first burst (2, 1, 1).
    QCOMPARE(runner.instances(2)[0].allowed, std::int64_t(10));
    QCOMPARE(runner.instances(2)[1].allowed + runner.instances(2)[2].allowed +
                 runner.instances(2)[3].allowed,
             std::int64_t(4));
    QCOMPARE(t.spread[1].throttledInstances, std::int64_t(3));
    QCOMPARE(t.spread[1].fairness, 196.0 / 424.0);
    QCOMPARE(
        summaryMetric("legit.fairness_jain", runner.classNames(), t, s.duration, s.sampleInterval),
        std::optional<double>(std::round(576.0 / 592.0 * 1e6) / 1e6));
    QCOMPARE(summaryMetric("legit.throttled_instance_fraction", runner.classNames(), t, s.duration,
                           s.sampleInterval),
             std::optional<double>(0.5));
    QCOMPARE(summaryMetric("office.max_instances_per_bucket", runner.classNames(), t, s.duration,
                           s.sampleInterval),
             std::optional<double>(4));
}

// A log through a loose and a strict peer-keyed policy: clients are compared one by one.
void TestComparison::replayedLog() {
    auto traffic = recordedLog(kLog, LogFormat::Common, "access.log");
    QVERIFY(traffic);
    QCOMPARE(traffic->requests.size(), std::size_t(7));
    const Scenario s = makeReplayScenario(traffic, kNanosPerSecond);
    Policy loose = tokenBucket("api", 10, 1.0);
    Policy strict = tokenBucket("api", 2, 0.5);
    loose.key.source = strict.key.source = KeySource::Peer;
    Comparison c = compare(s, policySet({loose}), policySet({strict}));
    c.replay = replayInfo(traffic->reading);
    QCOMPARE(c.classNames, std::vector<std::string>{"log"});
    // 198.51.100.1 sends 3 at once and one a second later: the strict bucket of 2 admits 2,
    // and only half a token has come back by the fourth. 198.51.100.2's two and .3's one pass.
    QCOMPARE(c.b.classes[0].allowed, std::int64_t(5));
    QCOMPARE(c.b.classes[0].throttled, std::int64_t(2));
    QCOMPARE(c.a.classes[0].throttled, std::int64_t(0));
    QCOMPARE(c.classFlips[0].transitions[kAllowedOutcome][kThrottledOutcome], std::int64_t(2));
    QCOMPARE(c.clientsChanged, std::int64_t(1));
    QCOMPARE(c.clients.size(), std::size_t(1));
    QCOMPARE(c.clients[0].name, std::string("198.51.100.1"));
    QCOMPARE(c.clients[0].b, (InstanceCounters{4, 2, 2}));
    QCOMPARE(c.collateralPerClass[0], std::int64_t(1));
    QCOMPARE(c.collateral[0].name, std::string("198.51.100.1"));
    const nlohmann::json j = nlohmann::json::parse(comparisonJson(c));
    QCOMPARE(j["clients"]["top"][0]["client"], "198.51.100.1");
    QCOMPARE(j["classes"]["log"]["flips"]["allowed_to_throttled"], 2);
    QCOMPARE(j["replay"]["clients"], 3);
}

void TestComparison::flipsFile() {
    const Scenario s = shippedScenario("header-rotation");
    const PolicySet a = policyFile("resources/policies/default.json");
    const PolicySet b = policyFile("resources/policies/login.json");
    Collected sink;
    const Comparison c = compare(s, a, b, 10, &sink);
    std::int64_t total = 0;
    for (const OutcomeFlips& f : c.classFlips)
        total += f.total();
    QCOMPARE(static_cast<std::int64_t>(sink.flips.size()), total);
    QVERIFY(total > 0);
    for (std::size_t i = 0; i < sink.flips.size(); ++i) {
        QVERIFY(sink.flips[i].outcomeA != sink.flips[i].outcomeB);
        if (i > 0) QVERIFY(sink.flips[i].seq > sink.flips[i - 1].seq);
        QVERIFY(sink.keys[i].find("Bearer") == std::string::npos);
    }

    std::FILE* f = std::tmpfile();
    QVERIFY(f);
    FlipCsvWriter writer(f, s, 0);
    for (const FlipRecord& r : sink.flips)
        writer.onFlip(r);
    QVERIFY(writer.finish());
    std::rewind(f);
    std::string text;
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, f)) > 0;)
        text.append(buffer, n);
    std::fclose(f);
    QVERIFY(text.starts_with("seq,ts_ms,actor,key,a,b\n"));
    QCOMPARE(static_cast<std::int64_t>(std::count(text.begin(), text.end(), '\n')), total + 1);
    const std::string first = text.substr(24, text.find('\n', 24) - 24);
    QVERIFY2(first.ends_with(",allowed,throttled") || first.ends_with(",throttled,allowed"),
             first.c_str());
}

void TestComparison::jsonIsDeterministic() {
    const Scenario s = shippedScenario("header-rotation");
    const PolicySet a = policyFile("resources/policies/default.json");
    const PolicySet b = policyFile("resources/policies/login.json");
    const std::string one = comparisonJson(compare(s, a, b));
    const std::string two = comparisonJson(compare(s, a, b));
    QCOMPARE(one, two);
    const nlohmann::ordered_json j = nlohmann::ordered_json::parse(one);
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it)
        keys.push_back(it.key());
    QCOMPARE(keys, (std::vector<std::string>{"scenario", "seed", "requests", "virtual_duration_s",
                                             "a", "b", "classes", "actors", "collateral",
                                             "expectations", "pass", "timing"}));
    const auto& legit = j["classes"]["legit"];
    QCOMPARE(legit["delta"]["allowed"].get<std::int64_t>(),
             legit["b"]["allowed"].get<std::int64_t>() - legit["a"]["allowed"].get<std::int64_t>());
}

QTEST_APPLESS_MAIN(TestComparison)
#include "tst_comparison.moc"
