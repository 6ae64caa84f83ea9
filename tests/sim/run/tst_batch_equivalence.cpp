// The batched runner (Limiter::checkBatch over consecutive requests) against the one-by-one
// runner (RunnerOptions::batchSize = 1): the same report, series, decision stream and log, for
// every shipped scenario, for shared-store replicas, policy changes, faults and a replay, and
// when the run is advanced in uneven slices as the workbench does. tst_report_goldens pins the
// same runs to hashes taken before batching existed.

#include <QtTest>

#include <QDir>
#include <QTemporaryDir>
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <random>

#include "sim/log/recorded_traffic.h"
#include "sim/report/report.h"
#include "sim/run/scenario_runner.h"
#include "fixtures/sim_fixture.h"

using namespace ratelab;
using namespace ratelab::sim;
using namespace ratelab::simtest;

namespace {

const std::string kRoot = RATELAB_SOURCE_DIR;

class DecisionText final : public DecisionSink {
public:
    std::string text;
    void onDecision(const DecisionRecord& d) override { appendDecisionLine(d, text); }
};

// Everything a run produces that a reader or the workbench sees, as text.
struct RunText {
    std::string report;
    std::string series;
    std::string decisions;
    std::string log;
    std::int64_t requests = 0;
};

std::string logText(const std::vector<LogEntry>& entries) {
    std::string out;
    for (const LogEntry& e : entries) {
        out += std::to_string(e.at) + " " + e.actor + " " + e.policy + " " +
               std::string(policyOutcomeName(e.outcome)) + " " + e.keyHash + " " +
               std::to_string(e.retryAfter) + " " + e.error + "\n";
    }
    return out;
}

// `slice`: 0 runs to the end at once; otherwise advance() by that much virtual time and at most
// `maxRequests` requests per call, as the workbench's worker does.
RunText run(const Scenario& scenario, const PolicySet& policies, std::size_t batchSize,
            Nanos slice = 0, std::int64_t maxRequests = INT64_MAX) {
    DecisionText decisions;
    RunnerOptions options;
    options.batchSize = batchSize;
    options.decisions = &decisions;
    options.logCapacity = 20'000;  // the newest entries of runs that log more
    options.measureWallTime = false;
    ScenarioRunner runner(scenario, policies, options);
    std::string log;
    if (slice == 0) {
        runner.runToEnd();
    } else {
        while (!runner.finished()) {
            runner.advance(runner.now() + slice, maxRequests);
            log += logText(runner.takeLog());
        }
    }
    log += logText(runner.takeLog());
    RunText t;
    t.report = reportJson(buildReport(runner, Timing{}));
    t.series = seriesCsv(runner.classNames(), runner.samples());
    t.decisions = std::move(decisions.text);
    t.log = std::move(log);
    t.requests = runner.totals().requests;
    return t;
}

// `sameLog`: false when the runs drained their logs at different moments (the ring keeps the
// newest entries, so what survives depends on when it was read).
void compareRuns(const RunText& one, const RunText& batched, bool sameLog = true) {
    QCOMPARE(batched.requests, one.requests);
    QCOMPARE(batched.report, one.report);
    QCOMPARE(batched.series, one.series);
    QVERIFY(batched.decisions == one.decisions);  // megabytes: no diff printed
    if (sameLog) QVERIFY(batched.log == one.log);
}

PolicySet policyOf(const Scenario& s) {
    return policyFile(QDir(QString::fromStdString(kRoot))
                          .relativeFilePath(QString::fromStdString(s.policyPath))
                          .toStdString());
}

}  // namespace

class TestBatchEquivalence : public QObject {
    Q_OBJECT

private slots:
    void shippedScenario_data();
    void shippedScenario();
    void sharedReplicasPolicyChangesAndFaults();
    void replay();
    void unevenSlices();
};

void TestBatchEquivalence::shippedScenario_data() {
    QTest::addColumn<QString>("name");
    QDir dir(QString::fromStdString(kRoot + "/scenarios"));
    for (const QString& f : dir.entryList({"*.json"}, QDir::Files, QDir::Name))
        QTest::newRow(qPrintable(f.chopped(5))) << f.chopped(5);
}

void TestBatchEquivalence::shippedScenario() {
    QFETCH(QString, name);
    ScenarioLoadResult loaded =
        loadScenarioFile(kRoot + "/scenarios/" + name.toStdString() + ".json");
    QVERIFY(loaded.ok());
    // The minting scenario's 10^7 requests are compared over its first 10 s (10^6 decisions,
    // its /32's cap reached and the /32's bucket charged after): three whole runs would hold
    // three copies of 10^7 decision lines.
    if (name == "address-minting")
        loaded.scenario->duration = std::min(loaded.scenario->duration, 10 * kNanosPerSecond);
    // The fair-share scenarios' store is full after 1 s: their first 3 s (3 x 10^5 decisions)
    // hold the filling, the charges to the minter's networks and the users taking buckets.
    if (name.startsWith("minting-"))
        loaded.scenario->duration = std::min(loaded.scenario->duration, 3 * kNanosPerSecond);
    const PolicySet policies = policyOf(*loaded.scenario);
    const RunText one = run(*loaded.scenario, policies, 1);
    QVERIFY(one.requests > 0);
    compareRuns(one, run(*loaded.scenario, policies, 0));
    compareRuns(one, run(*loaded.scenario, policies, 7));
}

// Four replicas on one shared store are decided in batches by one limiter; a retune and a
// store outage land in the middle of the run; a rotator, a NAT crowd and a spoofer mix budgets,
// fallbacks and refusals.
void TestBatchEquivalence::sharedReplicasPolicyChangesAndFaults() {
    const Scenario s = scenarioFrom(R"({ "name": "mix", "seed": 9, "duration_s": 30,
      "replicas": 4, "shared_store": true, "sample_ms": 500, "actors": [
      { "name": "browsers", "count": 40, "arrival": {"kind":"poisson","rate_per_s":3},
        "identity": { "peer": {"kind":"ipv4_pool","cidr":"198.51.100.0/24"}, "authorization": "fixed" } },
      { "name": "rotator", "class": "attacker", "arrival": {"kind":"constant","rate_per_s":300},
        "identity": { "peer": {"kind":"ipv4","address":"203.0.113.7"}, "authorization": "rotate" } },
      { "name": "office", "count": 60, "arrival": {"kind":"poisson","rate_per_s":0.5},
        "identity": { "peer": {"kind":"nat","address":"192.0.2.44"}, "authorization": "fixed" } },
      { "name": "v6", "class": "attacker", "arrival": {"kind":"burst","size":20,"every_s":0.7,"spacing_ms":1},
        "identity": { "peer": {"kind":"ipv6_rotate","prefix":"2001:db8:1:2::/64"} } } ],
      "events": [
        { "kind": "policy_change", "at_s": 10.25, "set": { "capacity": 6, "refill_per_second": 1.5 } },
        { "kind": "store_outage", "failure": "transport", "from_s": 14, "to_s": 16 },
        { "kind": "store_outage", "failure": "refusal", "from_s": 20, "to_s": 21.5 } ] })");
    Policy p = tokenBucket("api", 10, 3.0);
    p.budget.perPeer = 8;
    const PolicySet policies = policySet({p});
    const RunText one = run(s, policies, 1);
    QVERIFY(one.requests > 10'000);
    QVERIFY(one.log.size() > 1000);
    compareRuns(one, run(s, policies, 0));
    compareRuns(one, run(s, policies, 13));
}

// A replay: recorded clients, lines at the same second, IPv4 and IPv6.
void TestBatchEquivalence::replay() {
    std::string log;
    std::mt19937_64 rng(3);
    char line[256];
    for (int i = 0; i < 20'000; ++i) {
        const int client = static_cast<int>(rng() % 300);
        const int t = 36'000 + i / 40;
        const std::string address = client % 4 == 0 ? "2001:db8:" + std::to_string(client) + "::1"
                                                    : "198.51." + std::to_string(client / 200) +
                                                          "." + std::to_string(client % 200 + 1);
        std::snprintf(line, sizeof line,
                      "%s - - [10/Oct/2000:%02d:%02d:%02d +0000] \"GET /api/items HTTP/1.1\" 200 "
                      "12 \"-\" \"bench/1.0\"\n",
                      address.c_str(), t / 3600, t / 60 % 60, t % 60);
        log += line;
    }
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("test.log").toStdString();
    {
        std::FILE* f = std::fopen(path.c_str(), "wb");
        QVERIFY(f != nullptr);
        QCOMPARE(std::fwrite(log.data(), 1, log.size(), f), log.size());
        std::fclose(f);
    }
    ReplayInput input;
    input.files = {path};
    input.format = LogFormatOptions{LogFormat::Combined, {}, {}};
    LogReading reading;
    std::shared_ptr<const RecordedTraffic> traffic = loadAccessLog(input, reading);
    QVERIFY(traffic != nullptr);
    const Scenario s = makeReplayScenario(traffic, kNanosPerSecond);
    const PolicySet policies = policySet({tokenBucket("api", 5, 0.5)});
    const RunText one = run(s, policies, 1);
    QCOMPARE(one.requests, std::int64_t(20'000));
    compareRuns(one, run(s, policies, 0));
}

// The workbench advances in slices of virtual time with a bound on the requests per call.
void TestBatchEquivalence::unevenSlices() {
    ScenarioLoadResult loaded = loadScenarioFile(kRoot + "/scenarios/header-rotation.json");
    QVERIFY(loaded.ok());
    const PolicySet policies = policyOf(*loaded.scenario);
    const RunText one = run(*loaded.scenario, policies, 1);
    const RunText oneSliced = run(*loaded.scenario, policies, 1, 37 * kNanosPerMilli, 101);
    const RunText sliced = run(*loaded.scenario, policies, 0, 37 * kNanosPerMilli, 101);
    compareRuns(one, oneSliced, false);
    compareRuns(oneSliced, sliced);
    QVERIFY(sliced.log.size() > 10'000);
    compareRuns(one, run(*loaded.scenario, policies, 64, 3 * kNanosPerSecond, 5000), false);
}

QTEST_APPLESS_MAIN(TestBatchEquivalence)
#include "tst_batch_equivalence.moc"
