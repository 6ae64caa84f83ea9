// The workbench's models and small pieces: the per-actor table, the bounded log, the chart
// series, batch merging, live-tunable edits, the editor's text fields and slider scales.

#include <QtTest>

#include <cmath>

#include "gui/session/actor_table_model.h"
#include "gui/session/event_log_model.h"
#include "gui/policy/policy_text_fields.h"
#include "gui/session/run_series.h"
#include "gui/session/sim_batch.h"

using namespace ratelab;
using namespace ratelab::gui;

namespace {

sim::Sample sample(Nanos start, Nanos end, std::int64_t allowed, std::int64_t throttled) {
    sim::Sample s;
    s.start = start;
    s.end = end;
    sim::ClassCounters c;
    c.offered = allowed + throttled;
    c.allowed = allowed;
    c.throttled = throttled;
    c.failedOpen = 3;
    s.classes = {c};
    s.keyspace.buckets = 42;
    s.keyspace.maxBuckets = 1000;
    s.storeErrors = 3;
    s.engineNanosPerDecision = 250;
    return s;
}

RunShape oneClass(Nanos duration) {
    RunShape shape;
    shape.classNames = {"attacker"};
    shape.duration = duration;
    shape.sampleInterval = 100 * kNanosPerMilli;
    return shape;
}

}  // namespace

class TestGuiModels : public QObject {
    Q_OBJECT

private slots:
    void actorTableShowsTotals();
    void logKeepsTheNewestThousand();
    void seriesAreRatesPerSecond();
    void storeFullAndLocalDecisionsAreChartedAndBanded();
    void seriesStayBounded();
    void compareModeSeriesTakeBFromItsOwnSamples();
    void batchesMerge();
    void comparedBatchesMerge();
    void textFields_data();
    void textFields();
    void sliderScales();
};

void TestGuiModels::actorTableShowsTotals() {
    ActorTableModel model;
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    sim::ActorRow row{"flood", "attacker", 1, {}};
    row.counters.offered = 1000;
    row.counters.allowed = 250;
    row.counters.throttled = 750;
    model.setRows({row});
    QCOMPARE(reset.count(), 1);
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.columnCount(), int(ActorTableModel::ColumnCount));
    QCOMPARE(model.data(model.index(0, ActorTableModel::Actor)).toString(), QString("flood"));
    QCOMPARE(model.data(model.index(0, ActorTableModel::Throttled), Qt::UserRole).toLongLong(),
             750);
    QCOMPARE(model.data(model.index(0, ActorTableModel::AllowedPercent), Qt::UserRole).toDouble(),
             25.0);
    row.counters.allowed = 300;
    model.setRows({row});  // same actors: an update, not a reset
    QCOMPARE(reset.count(), 1);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(model.data(model.index(0, ActorTableModel::Allowed), Qt::UserRole).toLongLong(), 300);
}

void TestGuiModels::logKeepsTheNewestThousand() {
    EventLogModel model;
    std::vector<sim::LogEntry> batch(300);
    for (int round = 0; round < 5; ++round) {
        for (std::size_t i = 0; i < batch.size(); ++i) {
            batch[i].at = static_cast<Nanos>(round * 300 + static_cast<int>(i)) * kNanosPerMilli;
            batch[i].keyHash = "0123456789abcdef";
            batch[i].policy = "api";
        }
        model.append(batch);
    }
    QCOMPARE(model.rowCount(), EventLogModel::kMaxRows);
    QCOMPARE(model.total(), std::int64_t(1500));
    // Oldest kept: entry 500 (at 0.500 s); newest: entry 1499.
    QCOMPARE(model.data(model.index(0, EventLogModel::Time)).toString(), QString("0.500"));
    QCOMPARE(model.data(model.index(999, EventLogModel::Time)).toString(), QString("1.499"));
    std::vector<sim::LogEntry> huge(2500);
    huge.back().at = 9 * kNanosPerSecond;
    huge.back().error = "connection refused";
    model.append(huge);
    QCOMPARE(model.rowCount(), EventLogModel::kMaxRows);
    QCOMPARE(model.data(model.index(999, EventLogModel::Detail)).toString(),
             QString("connection refused"));
}

// 100 ms samples: 7 allowed in a sample is 70 per second.
void TestGuiModels::seriesAreRatesPerSecond() {
    RunSeries series;
    series.reset(oneClass(10 * kNanosPerSecond));
    QCOMPARE(series.specs().size(), std::size_t(2 + 8));
    QSignalSpy appended(&series, &RunSeries::appended);
    series.append({sample(0, 100 * kNanosPerMilli, 7, 93),
                   sample(100 * kNanosPerMilli, 200 * kNanosPerMilli, 5, 0)});
    QCOMPARE(appended.count(), 1);
    QCOMPARE(series.size(), std::size_t(2));
    QCOMPARE(series.xs()[0], 0.1);
    QCOMPARE(series.ys(0)[0], 70.0);   // attacker allowed
    QCOMPARE(series.ys(1)[0], 930.0);  // attacker throttled
    QCOMPARE(series.ys(0)[1], 50.0);
    QCOMPARE(series.ys(2)[0], 42.0);   // live buckets
    QCOMPARE(series.ys(4)[0], 30.0);   // store errors per second
    QCOMPARE(series.ys(5)[0], 30.0);   // failed open per second
    QCOMPARE(series.ys(9)[0], 250.0);  // ns per decision
    QCOMPARE(series.storeCap(), 1000.0);
    QCOMPARE(series.durationSeconds(), 10.0);
}

// Decided-locally and store-full counts become rates, and the samples where the store refused
// as full become spans (adjacent samples merged) that the charts shade.
void TestGuiModels::storeFullAndLocalDecisionsAreChartedAndBanded() {
    RunSeries series;
    series.reset(oneClass(10 * kNanosPerSecond));
    std::vector<sim::Sample> samples;
    for (int i = 0; i < 6; ++i) {
        sim::Sample s = sample(i * kNanosPerSecond, (i + 1) * kNanosPerSecond, 1, 0);
        s.classes[0].decidedLocally = i == 0 ? 4 : 0;
        s.classes[0].storeFull = (i == 1 || i == 2 || i == 4) ? 2 : 0;
        samples.push_back(s);
    }
    series.append(samples);
    QCOMPARE(series.specs()[7].role, SeriesRole::DecidedLocallyPerSecond);
    QCOMPARE(series.specs()[8].role, SeriesRole::StoreFullPerSecond);
    QCOMPARE(series.ys(7)[0], 4.0);
    QCOMPARE(series.ys(8)[1], 2.0);
    QCOMPARE(series.ys(8)[3], 0.0);
    const std::vector<TimeSpan>& spans = series.storeFullSpans();
    QCOMPARE(spans.size(), std::size_t(2));
    QCOMPARE(spans[0].from, 1.0);
    QCOMPARE(spans[0].to, 3.0);
    QCOMPARE(spans[1].from, 4.0);
    QCOMPARE(spans[1].to, 5.0);
    series.reset(oneClass(10 * kNanosPerSecond));
    QVERIFY(series.storeFullSpans().empty());
}

void TestGuiModels::seriesStayBounded() {
    RunSeries series;
    const std::size_t n = RunSeries::kMaxSamples + 5000;
    series.reset(oneClass(static_cast<Nanos>(n) * kNanosPerMilli));
    std::vector<sim::Sample> batch;
    for (std::size_t i = 0; i < n; ++i) {
        batch.push_back(sample(static_cast<Nanos>(i) * kNanosPerMilli,
                               static_cast<Nanos>(i + 1) * kNanosPerMilli, 1, 0));
        if (batch.size() == 10'000) {
            series.append(batch);
            batch.clear();
        }
    }
    series.append(batch);
    QVERIFY(series.size() <= RunSeries::kMaxSamples);
    QVERIFY(series.size() >= RunSeries::kMaxSamples * 7 / 8);
    QCOMPARE(series.xs().back(), static_cast<double>(n) / 1000.0);  // the newest are kept
    QCOMPARE(series.ys(0).size(), series.size());
}

// Compare mode: per class an A and a B twin for allowed and throttled, and for the live
// buckets; B's values come from B's samples of the same intervals. Without compare mode, B's
// samples are ignored and the names carry no lane.
void TestGuiModels::compareModeSeriesTakeBFromItsOwnSamples() {
    RunSeries series;
    RunShape shape = oneClass(kNanosPerSecond);
    shape.laneLabels = {"a.json", "b.json"};
    series.reset(shape);
    QVERIFY(series.comparing());
    QStringList names;
    for (const SeriesSpec& spec : series.specs())
        names << spec.name;
    QCOMPARE(names.mid(0, 6),
             (QStringList{"attacker allowed (A)", "attacker throttled (A)", "attacker allowed (B)",
                          "attacker throttled (B)", "live buckets (A)", "live buckets (B)"}));
    QCOMPARE(series.specs()[2].lane, 1);
    QCOMPARE(series.specs()[6].lane, 0);  // budget slots: A's only
    QVERIFY(!names.contains("store errors (B)"));
    sim::Sample b = sample(0, 100 * kNanosPerMilli, 4, 6);
    b.keyspace.buckets = 7;
    series.append({sample(0, 100 * kNanosPerMilli, 9, 1)}, {b});
    QCOMPARE(series.ys(0)[0], 90.0);  // 9 allowed in 0.1 s under A
    QCOMPARE(series.ys(1)[0], 10.0);
    QCOMPARE(series.ys(2)[0], 40.0);  // 4 under B
    QCOMPARE(series.ys(3)[0], 60.0);
    QCOMPARE(series.ys(4)[0], 42.0);
    QCOMPARE(series.ys(5)[0], 7.0);
    // B's samples missing: a gap (NaN, which decimation skips), never a made-up zero.
    series.append({sample(100 * kNanosPerMilli, 200 * kNanosPerMilli, 1, 0)}, {});
    QVERIFY(std::isnan(series.ys(2)[1]));
    QCOMPARE(series.ys(0)[1], 10.0);

    series.reset(oneClass(kNanosPerSecond));
    QVERIFY(!series.comparing());
    QCOMPARE(series.specs()[0].name, QString("attacker allowed"));
    series.append({sample(0, 100 * kNanosPerMilli, 9, 1)}, {b});
    QCOMPARE(series.ys(0)[0], 90.0);
}

void TestGuiModels::batchesMerge() {
    SimBatch a;
    a.generation = 3;
    a.fresh = true;
    a.samples = {sample(0, 1, 1, 0)};
    a.log.resize(3);
    SimBatch b;
    b.generation = 3;
    b.samples = {sample(1, 2, 2, 0), sample(2, 3, 3, 0)};
    b.log.resize(4);
    b.now = 3;
    b.requests = 6;
    b.state = RunState::Paused;
    a.absorb(std::move(b), 5);
    QVERIFY(a.fresh);  // the merged frame still announces the new run
    QCOMPARE(a.samples.size(), std::size_t(3));
    QCOMPARE(a.samples[2].end, Nanos(3));
    QCOMPARE(a.log.size(), std::size_t(5));  // the newest five
    QCOMPARE(a.now, Nanos(3));
    QCOMPARE(a.state, RunState::Paused);
    SimBatch c;
    c.generation = 4;
    c.fresh = true;
    a.absorb(std::move(c), 5);
    QCOMPARE(a.generation, std::uint64_t(4));
    QVERIFY(a.samples.empty());
}

// B's samples accumulate like A's; the newest comparison wins, and a batch without one keeps
// the one before.
void TestGuiModels::comparedBatchesMerge() {
    SimBatch a;
    a.generation = 1;
    a.samples = {sample(0, 1, 1, 0)};
    a.samplesB = {sample(0, 1, 0, 1)};
    a.comparison = std::make_shared<const sim::Comparison>();
    SimBatch b;
    b.generation = 1;
    b.samples = {sample(1, 2, 1, 0)};
    b.samplesB = {sample(1, 2, 0, 1)};
    auto newest = std::make_shared<sim::Comparison>();
    newest->scenario = "newest";
    b.comparison = newest;
    a.absorb(std::move(b), 10);
    QCOMPARE(a.samplesB.size(), std::size_t(2));
    QCOMPARE(a.samplesB[1].end, Nanos(2));
    QCOMPARE(a.comparison->scenario, std::string("newest"));
    SimBatch c;
    c.generation = 1;
    a.absorb(std::move(c), 10);
    QVERIFY(a.comparison);
    QCOMPARE(a.comparison->scenario, std::string("newest"));
}

void TestGuiModels::textFields_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<QString>("canonical");
    QTest::newRow("cidrs") << "cidr"
                           << " 10.0.0.0/8,2001:db8::/32 " << true << "10.0.0.0/8, 2001:db8::/32";
    QTest::newRow("cidr host bits") << "cidr"
                                    << "10.0.0.1/8" << false << "";
    QTest::newRow("cidr empty") << "cidr"
                                << "" << true << "";
    QTest::newRow("address budget") << "levels"
                                    << " 48 1024,/32   65536" << true << "/48 1024, /32 65536";
    QTest::newRow("address budget, no cap") << "levels"
                                            << "/48" << false << "";
    QTest::newRow("address budget, prefix too long") << "levels"
                                                     << "/129 5" << false << "";
    QTest::newRow("parts") << "parts"
                           << "route header:x-account, attribute:plan" << true
                           << "route, header:x-account, attribute:plan";
    QTest::newRow("part without name") << "parts"
                                       << "header:" << false << "";
    QTest::newRow("unknown part") << "parts"
                                  << "route, cookie" << false << "";
    QTest::newRow("methods") << "list"
                             << "GET,  POST" << true << "GET, POST";
}

void TestGuiModels::textFields() {
    QFETCH(QString, kind);
    QFETCH(QString, text);
    QFETCH(bool, ok);
    QFETCH(QString, canonical);
    QString error;
    if (kind == "cidr") {
        auto v = parseCidrList(text, error);
        QCOMPARE(v.has_value(), ok);
        if (ok) QCOMPARE(cidrListText(*v), canonical);
        if (!ok) QVERIFY(!error.isEmpty());
    } else if (kind == "levels") {
        auto v = parseAddressBudgets(text, 128, error);
        QCOMPARE(v.has_value(), ok);
        if (ok) QCOMPARE(addressBudgetsText(*v), canonical);
        if (!ok) QVERIFY(error.contains("/48 1024"));
    } else if (kind == "parts") {
        auto v = parseKeyParts(text, error);
        QCOMPARE(v.has_value(), ok);
        if (ok) QCOMPARE(keyPartsText(*v), canonical);
        if (!ok) QVERIFY(error.contains("key part"));
    } else {
        QCOMPARE(joinList(splitList(text)), canonical);
    }
}

void TestGuiModels::sliderScales() {
    QCOMPARE(kCapacityScale.valueAt(0), 1.0);
    QCOMPARE(kCapacityScale.valueAt(LogScale::kSteps), 10000.0);
    QCOMPARE(kCapacityScale.positionOf(100), LogScale::kSteps / 2);
    QCOMPARE(kRefillScale.positionOf(1.0), LogScale::kSteps / 3);
    for (int p = 0; p <= LogScale::kSteps; p += 37)
        QCOMPARE(kCapacityScale.positionOf(kCapacityScale.valueAt(p)), p);
    QCOMPARE(kCapacityScale.positionOf(0.5), 0);
    QCOMPARE(kCapacityScale.positionOf(1e9), LogScale::kSteps);
}

QTEST_MAIN(TestGuiModels)
#include "tst_gui_models.moc"
