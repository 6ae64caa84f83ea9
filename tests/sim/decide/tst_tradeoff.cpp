// Reading a sweep as a decision (app/sim/decide/tradeoff.cpp) and tuning to a tolerance on a log
// (app/sim/decide/log_tuning.cpp): the frontier, the pick and its tie-breaks, cells whose policy
// does not validate, a pick that meets every expectation when run alone, and a tolerance that holds
// when the log is replayed with the numbers it chose.

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

#include <nlohmann/json.hpp>

#include "fixtures/clients_log.h"
#include "fixtures/recorded_log.h"
#include "fixtures/sim_fixture.h"
#include "ratelab/number_text.h"
#include "sim/decide/log_tuning.h"
#include "sim/decide/sweep.h"
#include "sim/decide/tradeoff.h"
#include "sim/log/recorded_traffic.h"
#include "sim/report/report.h"
#include "sim/run/scenario_runner.h"

using namespace ratelab;
using namespace ratelab::sim;
using namespace ratelab::simtest;

namespace {

SweepAxis axis(const char* text) {
    std::string error;
    std::optional<SweepAxis> a = parseSweepAxis(text, error);
    if (!a) qFatal("%s: %s", text, error.c_str());
    return *a;
}

std::vector<SweepCell> cellsOf(const std::vector<std::vector<double>>& values,
                               const std::vector<bool>& pass) {
    std::vector<SweepCell> cells;
    for (std::size_t i = 0; i < values.size(); ++i) {
        SweepCell c;
        c.values = values[i];
        c.pass = pass[i];
        cells.push_back(c);
    }
    return cells;
}

PolicySet peerPolicy(Algorithm algorithm) {
    Policy p = tokenBucket("api", 10, 1.0);
    p.algorithm = algorithm;
    p.key.source = KeySource::Peer;
    p.windowMs = 60'000;
    return policySet({p});
}

}  // namespace

class TestTradeoff : public QObject {
    Q_OBJECT

private slots:
    void frontier();
    void pickAndTies();
    void invalidCellsAreNotRun();
    void recommendedCellHoldsAlone();
    void moreFields_data();
    void moreFields();
    void toleranceHolds_data();
    void toleranceHolds();
    void toleranceRefusals();
    void aStreamedLogThatChangesIsRefused();
    void axisAround_data();
    void axisAround();
    void cancelledCellsReturnNothing();
};

// (legit throttled, attacker admitted): c0 (0, 9), c1 (0.1, 5), c2 (0.1, 7) dominated by c1,
// c3 (0.3, 5) dominated by c1, c4 (0.5, 0), c5 invalid even though it would dominate.
void TestTradeoff::frontier() {
    std::vector<SweepCell> cells =
        cellsOf({{1}, {2}, {3}, {4}, {5}, {6}}, {true, true, true, true, true, false});
    cells[5].invalid = "budget slot_ttl_ms ...";
    const std::vector<TradeoffPoint> points{{0, 9}, {0.1, 5}, {0.1, 7}, {0.3, 5}, {0.5, 0}, {0, 0}};
    QCOMPARE(paretoFrontier(cells, points), (std::vector<std::size_t>{0, 1, 4}));
}

// Among passing cells: least legitimate throttling, then least attacker traffic, then the
// smallest numbers, first axis first.
void TestTradeoff::pickAndTies() {
    const std::vector<SweepCell> cells =
        cellsOf({{8, 2}, {4, 5}, {4, 3}, {2, 9}, {16, 1}}, {true, true, true, false, true});
    std::vector<TradeoffPoint> points{{0.01, 3}, {0.01, 2}, {0.01, 2}, {0, 0}, {0.02, 0}};
    QCOMPARE(recommendCell(cells, points), std::optional<std::size_t>(2));  // 4,3 < 4,5
    points[0] = {0.005, 30};
    QCOMPARE(recommendCell(cells, points), std::optional<std::size_t>(0));
    const std::vector<SweepCell> failing = cellsOf({{1}, {2}}, {false, false});
    QCOMPARE(recommendCell(failing, {{0, 0}, {0, 0}}), std::optional<std::size_t>());
}

// The default policy keeps budget slots 60 s; a refill of 0.1/s takes 200 s to refill a
// bucket of 20, which the semantic checks refuse: such cells are reported, not run.
void TestTradeoff::invalidCellsAreNotRun() {
    const Scenario s = shippedScenario("header-rotation");
    const PolicySet p = policyFile("resources/policies/default.json");
    const std::vector<SweepAxis> axes{axis("refill=0.1:0.5:0.4")};
    const SweepResult r = runSweep(s, p, axes);
    QVERIFY(r.error.empty());
    QCOMPARE(r.cells.size(), std::size_t(2));
    QVERIFY2(r.cells[0].invalid.find("slot_ttl_ms") != std::string::npos,
             r.cells[0].invalid.c_str());
    QCOMPARE(r.cells[0].pass, false);
    QCOMPARE(r.cells[0].totals.requests, std::int64_t(0));
    QVERIFY(r.cells[1].invalid.empty());
    QVERIFY(r.cells[1].totals.requests > 0);
    const TradeoffMap map = readTradeoff(s, axes, r);
    QCOMPARE(map.frontier, std::vector<std::size_t>{1});
    const std::string csv = sweepCsv(s, axes, r);
    QVERIFY(csv.find("slot_ttl_ms") != std::string::npos);
}

// replicas-shared sends page loads of 12 at once: capacity 4 and 8 throttle them, 12 and 16
// do not. The pick is the smallest passing numbers with no legitimate throttling, and it
// meets every expectation when run on its own.
void TestTradeoff::recommendedCellHoldsAlone() {
    const Scenario s = shippedScenario("replicas-shared");
    PolicyLoadResult loaded = loadPolicyFile(s.policyPath);
    QVERIFY(loaded.ok());
    const std::vector<SweepAxis> axes{axis("capacity=4:16:4"), axis("refill=1.25:5:3.75")};
    SweepOptions options;
    options.threads = 2;
    const TradeoffMap map = readTradeoff(s, axes, runSweep(s, *loaded.policies, axes, options));
    QCOMPARE(map.result.cells.size(), std::size_t(8));
    QVERIFY(map.recommended.has_value());
    const SweepCell& pick = map.result.cells[*map.recommended];
    QVERIFY(pick.pass);
    QCOMPARE(pick.values[0], 12.0);
    for (std::size_t i = 0; i < map.result.cells.size(); ++i) {
        if (!map.result.cells[i].pass) continue;
        QVERIFY(map.points[*map.recommended].legitThrottled <= map.points[i].legitThrottled);
    }
    QVERIFY(std::find(map.frontier.begin(), map.frontier.end(), *map.recommended) !=
            map.frontier.end());

    std::string error;
    std::optional<PolicySet> alone = applySweepValues(*loaded.policies, axes, pick.values, error);
    QVERIFY(alone);
    ScenarioRunner runner(s, *alone);
    runner.runToEnd();
    const Report report = buildReport(runner, Timing{});
    QVERIFY(report.pass());
    QCOMPARE(runner.totals().classes, pick.totals.classes);

    const nlohmann::json j = nlohmann::json::parse(tradeoffJson(s, *loaded.policies, map));
    QCOMPARE(j["cells"].size(), std::size_t(8));
    QCOMPARE(j["recommended"]["cell"].get<std::size_t>(), *map.recommended);
    QVERIFY(j["recommended"]["text"].get<std::string>().starts_with("capacity=12 refill="));
    QVERIFY(!recommendationText(s, map).empty());
}

void TestTradeoff::moreFields_data() {
    QTest::addColumn<QString>("axis");
    QTest::addColumn<QString>("field");
    QTest::addColumn<double>("value");
    QTest::newRow("per_peer") << "per_peer=64:64:1"
                              << "per_peer" << 64.0;
    QTest::newRow("ipv6 prefix") << "ipv6_prefix=48:48:1"
                                 << "ipv6_prefix" << 48.0;
    QTest::newRow("ipv4 prefix") << "ipv4_prefix=24:24:1"
                                 << "ipv4_prefix" << 24.0;
    QTest::newRow("cost") << "cost=2:2:1"
                          << "cost" << 2.0;
}

void TestTradeoff::moreFields() {
    QFETCH(QString, axis);
    QFETCH(QString, field);
    QFETCH(double, value);
    const PolicySet p = policyFile("resources/policies/default.json");
    std::string error;
    std::optional<PolicySet> set =
        applySweepValues(p, {::axis(axis.toUtf8().constData())}, {value}, error);
    QVERIFY2(set, error.c_str());
    QCOMPARE(sweepFieldValue(set->policies[0], field.toStdString()), std::optional<double>(value));
    QVERIFY(!applySweepValues(p, {::axis("ipv4_prefix=33:33:1")}, {33}, error));
    QVERIFY2(error.find("from 1 to 32") != std::string::npos, error.c_str());
}

// On a log written here, the limits chosen for a share leave at least that share of clients
// never throttled when the log is replayed with them.
void TestTradeoff::toleranceHolds_data() {
    QTest::addColumn<int>("algorithm");
    QTest::addColumn<double>("keep");
    QTest::newRow("token bucket, 99%") << static_cast<int>(Algorithm::TokenBucket) << 0.99;
    QTest::newRow("token bucket, 90%") << static_cast<int>(Algorithm::TokenBucket) << 0.90;
    QTest::newRow("gcra, 99%") << static_cast<int>(Algorithm::Gcra) << 0.99;
    QTest::newRow("fixed window, 99%") << static_cast<int>(Algorithm::FixedWindow) << 0.99;
    QTest::newRow("sliding log, 95%") << static_cast<int>(Algorithm::SlidingLog) << 0.95;
}

void TestTradeoff::toleranceHolds() {
    QFETCH(int, algorithm);
    QFETCH(double, keep);
    auto traffic = recordedLog(clientsLog(), LogFormat::Csv, "clients.csv");
    QVERIFY(traffic);
    QCOMPARE(traffic->clients.size(), std::size_t(200));
    const Scenario replay = makeReplayScenario(traffic, kNanosPerSecond);
    const PolicySet policies = peerPolicy(static_cast<Algorithm>(algorithm));
    std::string error;
    MemoryReplays replays(replay);
    std::optional<ToleranceTuning> t = tuneToTolerance(replays, policies, "", keep, 10, error);
    QVERIFY2(t, error.c_str());
    QCOMPARE(t->clients, std::int64_t(200));
    QVERIFY(t->capacity >= 1);
    QVERIFY(t->throttledClients <= t->predictedThrottled);
    // At most the share allowed: 1% of 200 is 2 clients, 10% is 20.
    const auto allowed = static_cast<std::int64_t>(std::floor((1 - keep) * 200 + 1e-9));
    QVERIFY2(t->throttledClients <= allowed,
             qPrintable(
                 QStringLiteral("%1 throttled, %2 allowed").arg(t->throttledClients).arg(allowed)));
    QVERIFY(t->keptShare() >= keep);
    // At 99% the two scrapers are the only ones that may be throttled.
    for (const ThrottledClient& c : t->throttled)
        QVERIFY2(c.client == "10.0.0.199" || c.client == "10.0.0.200" || keep < 0.99,
                 c.client.c_str());
    // The replay reported is the tuned policy's own: a fresh run gives the same.
    ScenarioRunner again(replay, t->tuned);
    again.runToEnd();
    QCOMPARE(again.totals().classes, t->report.totals.classes);
    QVERIFY(!toleranceText(*t).empty());
    const nlohmann::json j = nlohmann::json::parse(toleranceJson(*t));
    QCOMPARE(j["throttled_clients"].get<std::int64_t>(), t->throttledClients);
}

void TestTradeoff::toleranceRefusals() {
    auto traffic = recordedLog(clientsLog(), LogFormat::Csv, "clients.csv");
    QVERIFY(traffic);
    MemoryReplays replays(makeReplayScenario(traffic, kNanosPerSecond));
    std::string error;
    QVERIFY(!tuneToTolerance(replays, peerPolicy(Algorithm::LeakyBucket), "", 0.99, 10, error));
    QVERIFY2(error.find("leaky_bucket") != std::string::npos, error.c_str());
    QVERIFY(
        !tuneToTolerance(replays, peerPolicy(Algorithm::TokenBucket), "login", 0.99, 10, error));
    QVERIFY2(error.find("\"login\"") != std::string::npos, error.c_str());
    QVERIFY(!tuneToTolerance(replays, peerPolicy(Algorithm::TokenBucket), "", 1.5, 10, error));
    MemoryReplays scenario(shippedScenario("page-load"));
    QVERIFY(!tuneToTolerance(scenario, peerPolicy(Algorithm::TokenBucket), "", 0.99, 10, error));
    QVERIFY2(error.find("needs a replayed access log") != std::string::npos, error.c_str());
}

void TestTradeoff::axisAround_data() {
    QTest::addColumn<QString>("field");
    QTest::addColumn<double>("value");
    QTest::addColumn<QString>("range");
    QTest::newRow("capacity 20") << "capacity" << 20.0 << "4:40:4";
    QTest::newRow("capacity 3") << "capacity" << 3.0 << "1:10:1";
    QTest::newRow("refill 2.5") << "refill" << 2.5 << "0.5:5:0.5";
    QTest::newRow("refill 0.3") << "refill" << 0.3 << "0.06:0.6:0.06";
    QTest::newRow("window 60000") << "window_ms" << 60000.0 << "12000:120000:12000";
    QTest::newRow("delay 0") << "delay" << 0.0 << "0:9:1";
    QTest::newRow("ipv4 32") << "ipv4_prefix" << 32.0 << "28:32:1";
    QTest::newRow("ipv6 64") << "ipv6_prefix" << 64.0 << "48:80:4";
    QTest::newRow("ipv6 128") << "ipv6_prefix" << 128.0 << "112:128:4";
}

// The range proposed around a policy's number: parsed back by the sweep's own parser, it holds
// the number itself.
void TestTradeoff::axisAround() {
    QFETCH(QString, field);
    QFETCH(double, value);
    QFETCH(QString, range);
    Policy p = tokenBucket("api", 10, 1.0);
    p.algorithm = field == "window_ms" ? Algorithm::FixedWindow
                  : field == "delay"   ? Algorithm::LeakyBucket
                                       : Algorithm::TokenBucket;
    if (field == "capacity") p.capacity = static_cast<std::int64_t>(value);
    if (field == "refill") p.refillPerSecond = value;
    if (field == "window_ms") p.windowMs = static_cast<std::int64_t>(value);
    if (field == "delay") p.delay = static_cast<std::int64_t>(value);
    if (field == "ipv4_prefix") p.key.ipv4Prefix = static_cast<int>(value);
    if (field == "ipv6_prefix") p.key.ipv6Prefix = static_cast<int>(value);
    const SweepAxis a = sim::axisAround(p, field.toStdString());
    const QString text = QString::fromStdString(numberText(a.from) + ":" + numberText(a.to) + ":" +
                                                numberText(a.step));
    QCOMPARE(text, range);
    const std::vector<double> values = axis(qPrintable(field + "=" + range)).values();
    QVERIFY(std::any_of(values.begin(), values.end(),
                        [&](double v) { return std::abs(v - value) < 1e-9; }));
}

// runSweepCell reads the cancel flag between slices of kSweepCancelSlice requests: set, the cell
// returns no result; clear, the same cell runs to its end; a sweep cancelled before its first
// cell has none.
void TestTradeoff::cancelledCellsReturnNothing() {
    const Scenario s = shippedScenario("replicas-shared");
    PolicyLoadResult loaded = loadPolicyFile(s.policyPath);
    QVERIFY(loaded.ok());
    const std::vector<SweepAxis> axes{axis("capacity=4:4:1")};
    std::atomic<bool> cancel{true};
    QVERIFY(!runSweepCell(s, *loaded.policies, axes, {4.0}, &cancel).has_value());
    cancel = false;
    const std::optional<SweepCell> cell = runSweepCell(s, *loaded.policies, axes, {4.0}, &cancel);
    QVERIFY(cell.has_value());
    QVERIFY(cell->totals.requests > 0);
    SweepOptions options;
    options.cancel = &cancel;
    cancel = true;
    QCOMPARE(runSweep(s, *loaded.policies, axes, options).cells.size(), std::size_t(0));
}

// A streamed log is read once per replay: one that grows between the two is refused, not
// tuned on a mixture of the two versions.
void TestTradeoff::aStreamedLogThatChangesIsRefused() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("clients.csv").toStdString();
    std::ofstream(path, std::ios::binary) << clientsLog();
    ReplayInput input;
    input.files = {path};
    input.format = LogFormatOptions{LogFormat::Csv, {}, {}};
    LogReading reading;
    StreamedReplays replays(input, reading);
    std::string error;
    const PolicySet policies = peerPolicy(Algorithm::TokenBucket);
    for (int pass = 0; pass < 2; ++pass) {
        std::optional<Scenario> replay = replays.open(error);
        QVERIFY2(replay, error.c_str());
        ScenarioRunner runner(std::move(*replay), policies);
        runner.runToEnd();
        if (pass == 0) {
            QVERIFY2(replays.finished(runner, error), error.c_str());
            QCOMPARE(reading.clients, std::int64_t(200));
            std::ofstream(path, std::ios::binary | std::ios::app) << "1700000600000,10.0.0.1\n";
        } else {
            QVERIFY(!replays.finished(runner, error));
        }
    }
    QVERIFY2(error.find("the log changed while it was tuned") != std::string::npos, error.c_str());
    QVERIFY(reading.error);
    QCOMPARE(reading.error->file, path);
}

QTEST_APPLESS_MAIN(TestTradeoff)
#include "tst_tradeoff.moc"
