// Reports (app/sim/report/report.cpp): the JSON layout report.h describes, determinism (same
// scenario, policy and seed give the same bytes apart from `timing`), summary metrics, the
// series CSV and the validation record.

#include <QtTest>

#include <openssl/evp.h>
#include <nlohmann/json.hpp>

#include "ratelab/policy_file.h"
#include "sim/report/report.h"
#include "sim/run/scenario_runner.h"
#include "fixtures/sim_fixture.h"

using namespace ratelab;
using namespace ratelab::sim;
using namespace ratelab::simtest;

namespace {

const std::string kScenario = std::string(RATELAB_SOURCE_DIR) + "/scenarios/header-rotation.json";

struct Run {
    Report report;
    std::string json;
    std::string csv;
};

Run runHeaderRotation(std::optional<std::uint64_t> seed, Timing timing) {
    ScenarioLoadResult loaded = loadScenarioFile(kScenario);
    if (!loaded.ok()) qFatal("scenario does not load");
    PolicySet policies = policyFile("resources/policies/default.json");
    RunnerOptions options;
    options.seed = seed;
    ScenarioRunner runner(*loaded.scenario, policies, options);
    runner.runToEnd();
    Run r;
    r.report = buildReport(runner, timing);
    r.json = reportJson(r.report);
    r.csv = seriesCsv(runner.classNames(), runner.samples());
    return r;
}

std::string withoutTiming(const std::string& json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(json);
    j.erase("timing");
    return j.dump(2);
}

}  // namespace

class TestReport : public QObject {
    Q_OBJECT

private slots:
    void sameSeedSameBytes();
    void otherSeedOtherRun();
    void layoutIsTheDocumentedOne();
    void summaryMetrics_data();
    void summaryMetrics();
    void seriesCsv();
    void validationRecord();
    void policyChangesKeepThePolicyName();
};

// Two runs with one seed: identical reports but for `timing`, identical series.
void TestReport::sameSeedSameBytes() {
    Run a = runHeaderRotation(std::nullopt, Timing{0.25, 100000});
    Run b = runHeaderRotation(std::nullopt, Timing{0.5, 50000});
    QVERIFY(a.json != b.json);                               // the timing differs...
    QCOMPARE(withoutTiming(a.json), withoutTiming(b.json));  // ...and nothing else
    QCOMPARE(a.csv, b.csv);
    Run c = runHeaderRotation(std::nullopt, Timing{0.25, 100000});
    QCOMPARE(a.json, c.json);
}

void TestReport::otherSeedOtherRun() {
    Run a = runHeaderRotation(std::nullopt, Timing{});
    Run b = runHeaderRotation(std::uint64_t(8), Timing{});
    QCOMPARE(a.report.seed, std::uint64_t(7));
    QCOMPARE(b.report.seed, std::uint64_t(8));
    QVERIFY(a.csv != b.csv);
    QVERIFY(a.report.totals.classes[0].offered != b.report.totals.classes[0].offered);
}

void TestReport::layoutIsTheDocumentedOne() {
    Run r = runHeaderRotation(std::nullopt, Timing{0.5, 54000});
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(r.json);
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it)
        keys.push_back(it.key());
    QCOMPARE(keys,
             (std::vector<std::string>{"scenario", "policy", "policy_sha256", "seed", "requests",
                                       "virtual_duration_s", "classes", "keyspace", "store",
                                       "expectations", "pass", "actors", "timing"}));
    QCOMPARE(j["scenario"], "header-rotation");
    QCOMPARE(j["policy"], "api");
    QCOMPARE(j["seed"], 7);
    QCOMPARE(j["virtual_duration_s"], 120.0);
    QCOMPARE(j["policy_sha256"].get<std::string>().size(), std::size_t(64));
    const auto& legit = j["classes"]["legit"];
    std::vector<std::string> classKeys;
    for (auto it = legit.begin(); it != legit.end(); ++it)
        classKeys.push_back(it.key());
    QCOMPARE(classKeys, (std::vector<std::string>{
                            "offered", "allowed", "throttled", "refused", "failed_open",
                            "failed_closed", "decided_locally", "store_full", "allowed_per_s",
                            "allowed_fraction", "throttled_fraction", "outcomes", "instances",
                            "throttled_instances", "fairness_jain", "max_instances_per_bucket"}));
    // The attacker class is not measured for bucket sharing.
    QVERIFY(!j["classes"]["attacker"].contains("max_instances_per_bucket"));
    QVERIFY(j["classes"]["attacker"].contains("fairness_jain"));
    // Every outcome of the engine's list, by its name, in the list's order.
    std::vector<std::string> outcomeKeys;
    for (auto it = legit["outcomes"].begin(); it != legit["outcomes"].end(); ++it)
        outcomeKeys.push_back(it.key());
    QCOMPARE(outcomeKeys.size(), kPolicyOutcomeCount);
    for (std::size_t o = 0; o < kPolicyOutcomeCount; ++o)
        QCOMPARE(outcomeKeys[o], std::string(policyOutcomeName(static_cast<PolicyOutcome>(o))));
    QCOMPARE(legit["outcomes"]["passed"].get<std::int64_t>(), legit["allowed"].get<std::int64_t>());
    const std::int64_t offered = legit["offered"];
    QCOMPARE(offered,
             legit["allowed"].get<std::int64_t>() + legit["throttled"].get<std::int64_t>() +
                 legit["refused"].get<std::int64_t>() + legit["failed_closed"].get<std::int64_t>());
    QCOMPARE(j["requests"].get<std::int64_t>(),
             offered + j["classes"]["attacker"]["offered"].get<std::int64_t>());
    QVERIFY(j["keyspace"].contains("max_buckets"));
    QVERIFY(j["keyspace"].contains("final_buckets"));
    QVERIFY(j["keyspace"].contains("max_bytes"));
    QCOMPARE(j["store"]["errors"], 0);
    QCOMPARE(j["expectations"].size(), std::size_t(3));
    QCOMPARE(j["expectations"][0]["metric"], "attacker.allowed_per_s");
    QCOMPARE(j["expectations"][0]["max"], 8.0);
    QCOMPARE(j["expectations"][0]["pass"], true);
    QCOMPARE(j["actors"][1]["name"], "rotator");
    QCOMPARE(j["actors"][1]["class"], "attacker");
    QCOMPARE(j["timing"]["wall_s"], 0.5);
    QCOMPARE(j["timing"]["requests_per_s"], 54000.0);
    // Raw credentials never reach a report.
    QVERIFY(r.json.find("Bearer") == std::string::npos);
}

void TestReport::summaryMetrics_data() {
    QTest::addColumn<QString>("metric");
    QTest::addColumn<double>("value");  // NaN: unknown
    // 3 of 4 legit requests allowed, 1 throttled; 10 attacker requests, 2 allowed, 8 throttled;
    // over 10 s sampled each second, the busiest attacker second allowed 2.
    QTest::newRow("counter") << "legit.offered" << 4.0;
    QTest::newRow("allowed fraction") << "legit.allowed_fraction" << 0.75;
    QTest::newRow("throttled fraction") << "attacker.throttled_fraction" << 0.8;
    QTest::newRow("allowed per second") << "attacker.allowed_per_s" << 0.2;
    QTest::newRow("peak") << "attacker.peak_allowed_per_s" << 2.0;
    QTest::newRow("keyspace") << "keyspace.max_buckets" << 7.0;
    QTest::newRow("bytes") << "keyspace.max_bytes" << 512.0;
    QTest::newRow("errors") << "store.errors" << 3.0;
    QTest::newRow("requests") << "requests" << 14.0;
    QTest::newRow("unknown class") << "nobody.offered" << qQNaN();
    QTest::newRow("unknown counter") << "legit.speed" << qQNaN();
}

void TestReport::summaryMetrics() {
    QFETCH(QString, metric);
    QFETCH(double, value);
    RunTotals t;
    t.requests = 14;
    t.classes = {ClassCounters{4, 3, 1, 0, 0, 0}, ClassCounters{10, 2, 8, 0, 0, 0}};
    t.peakAllowed = {1, 2};
    t.maxBuckets = 7;
    t.maxBytes = 512;
    t.storeErrors = 3;
    std::optional<double> v = summaryMetric(metric.toStdString(), {"legit", "attacker"}, t,
                                            10 * kNanosPerSecond, kNanosPerSecond);
    if (qIsNaN(value)) {
        QVERIFY(!v);
    } else {
        QVERIFY(v);
        QCOMPARE(*v, value);
    }
}

void TestReport::seriesCsv() {
    Run r = runHeaderRotation(std::nullopt, Timing{});
    QStringList lines = QString::fromStdString(r.csv).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 121);  // the header and 120 one-second samples
    QCOMPARE(lines[0],
             QString("t_s,legit.offered,legit.allowed,legit.throttled,legit.refused,"
                     "legit.failed_open,legit.failed_closed,attacker.offered,attacker.allowed,"
                     "attacker.throttled,attacker.refused,attacker.failed_open,"
                     "attacker.failed_closed,keyspace.buckets,keyspace.budget_slots,"
                     "keyspace.bytes,store.errors,legit.decided_locally,legit.store_full,"
                     "attacker.decided_locally,attacker.store_full"));
    QVERIFY(lines[1].startsWith("1.000,"));
    QVERIFY(lines[120].startsWith("120.000,"));
    // The attacker sends 200 a second, every second.
    for (int i = 1; i <= 120; ++i)
        QCOMPARE(lines[i].split(',')[7], QString("200"));
}

// A run becomes the policy's validation record, which survives the policy file round trip,
// and the report's policy hash is the SHA-256 of the policy's canonical text.
void TestReport::validationRecord() {
    Run r = runHeaderRotation(std::nullopt, Timing{});
    ValidationRun v = validationRun(r.report);
    QCOMPARE(v.scenario, std::string("header-rotation"));
    QCOMPARE(v.seed, std::uint64_t(7));
    QCOMPARE(v.requests, r.report.totals.requests);
    QVERIFY(v.pass);
    QCOMPARE(v.expectations.size(), std::size_t(3));
    QCOMPARE(*v.expectations[0].max, 8.0);
    PolicySet policies = policyFile("resources/policies/default.json");
    policies.validation = ValidationRecord{"ratelab test", {v}};
    PolicyLoadResult back = parsePolicyText(savePolicyText(policies), "validated.json");
    QVERIFY(back.ok());
    QCOMPARE(back.policies->validation->runs.at(0), v);

    const std::string text = savePolicyText(policyFile("resources/policies/default.json"));
    unsigned char digest[32];
    unsigned int length = 0;
    EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
    QCOMPARE(QByteArray(reinterpret_cast<const char*>(digest), 32).toHex().toStdString(),
             r.report.policySha256);
}

// A report names and hashes the policy as loaded, whatever policy_change events or retunes
// did to it during the run.
void TestReport::policyChangesKeepThePolicyName() {
    const Scenario s = scenarioFrom(R"({ "name": "t", "duration_s": 4, "actors": [ { "name": "a",
        "arrival": {"kind":"constant","rate_per_s":10},
        "identity": { "peer": {"kind":"ipv4","address":"198.51.100.9"} } } ],
        "events": [ { "kind": "policy_change", "at_s": 2, "set": { "capacity": 3 } } ] })");
    const PolicySet loaded = policySet({tokenBucket("api", 50, 1.0)});
    ScenarioRunner runner(s, loaded);
    runner.runToEnd();
    QCOMPARE(runner.policies().policies[0].capacity, std::int64_t(3));
    const Report r = buildReport(runner, Timing{});
    QCOMPARE(r.policy, std::string("api"));
    QCOMPARE(r.policySha256, policySha256(loaded));
    QVERIFY(r.policySha256 != policySha256(runner.policies()));
}

QTEST_APPLESS_MAIN(TestReport)
#include "tst_report.moc"
