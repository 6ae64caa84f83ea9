// Compare mode in the workbench (app/gui/session/workbench_compare.cpp, compare_*.cpp, the worker's
// two lanes): A and B drawn per class with B dashed, the actor table's A, B and delta columns
// against two separate runs, the flips tab, live tuning of B with A fixed, leaving the mode,
// and a bad B file.

#include <QAction>
#include <QLabel>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QtTest>

#include "fixtures/gui_fixture.h"
#include "fixtures/window_fixture.h"
#include "gui/compare/compare_actor_model.h"
#include "gui/compare/compare_flips_model.h"
#include "gui/plot/charts_panel.h"
#include "gui/plot/time_plot.h"
#include "gui/policy/policy_editor.h"
#include "gui/policy/policy_text_fields.h"
#include "gui/session/workbench.h"
#include "gui/window/launch_options.h"
#include "gui/window/main_window.h"
#include "gui/window/run_controls.h"
#include "ratelab/policy_file.h"
#include "sim/run/scenario_runner.h"

using namespace ratelab;
using namespace ratelab::gui;
using namespace ratelab::guitest;

namespace {

constexpr Nanos kSecond = kNanosPerSecond;

struct Bench : WindowBench {
    explicit Bench(gui::WallClock clock = steadyNanos) : WindowBench(std::move(clock)) {
        window.resize(1280, 800);
        window.show();
    }
};

// A finished single-lane run of `scenarioPath` under `policyPath`, as `ratelab-cli run` does it.
std::vector<sim::ActorRow> separateRun(const QString& scenarioPath, const QString& policyPath,
                                       std::vector<std::vector<sim::InstanceCounters>>* instances) {
    sim::ScenarioLoadResult scenario = sim::loadScenarioFile(scenarioPath.toStdString());
    PolicyLoadResult policies = loadPolicyFile(policyPath.toStdString());
    if (!scenario.ok() || !policies.ok()) qFatal("fixture files do not load");
    sim::ScenarioRunner runner(*scenario.scenario, *policies.policies);
    runner.runToEnd();
    if (instances) {
        for (std::size_t a = 0; a < runner.scenario().actors.size(); ++a) {
            const auto span = runner.instances(a);
            instances->emplace_back(span.begin(), span.end());
        }
    }
    return runner.actorRows();
}

}  // namespace

class TestCompare : public QObject {
    Q_OBJECT

private slots:
    void init();
    void drawsTwoSeriesPerClassWithBDashed();
    void deltaColumnsEqualTwoSeparateRuns();
    void liveTuningMovesBWhileAStaysFixed();
    void comparesEditsWithThePolicyAsLoaded();
    void leavingRestoresOneLaneAndTheToggleFollows();
    void badCompareFileShowsALocatedError();
    void redisStoreChoiceRunsBothLanesOnMemory();

private:
    QTemporaryDir dir_;
    QString policyA_;   // a one-second window of 10
    QString policyB_;   // of 40
    QString strict_;    // of 1: legitimate users become collateral
    QString scenario_;  // 100 requests a second from one attacker, 20 users at 0.5/s, 300 s
    QString short_;     // the same over 30 s
};

void TestCompare::init() {
    QVERIFY(dir_.isValid());
    policyA_ = writeFile(dir_, "window.json", policyJson("fixed_window", 10, 1.0, 1000));
    policyB_ = writeFile(dir_, "b40.json", policyJson("fixed_window", 40, 1.0, 1000));
    strict_ = writeFile(dir_, "strict.json", policyJson("fixed_window", 1, 1.0, 1000));
    scenario_ = writeFile(dir_, "flood.json", attackScenarioJson("flood", 100, 300));
    short_ = writeFile(dir_, "short.json", attackScenarioJson("short", 100, 30));
}

// `--compare b40.json` beside window.json, one second at 1x on a manual clock: each class has
// an A line and a B line for allowed and for throttled, B's dashed and A's solid, the legend
// naming the lane and the banner naming the files; the attacker's 100 requests a second
// are throttled 90 under A (10 per window) and 60 under B (40).
void TestCompare::drawsTwoSeriesPerClassWithBDashed() {
    ManualClock clock;
    Bench b(clock.clock());
    LaunchOptions options;
    options.scenario = scenario_;
    options.policy = policyA_;
    options.compare = policyB_;
    QVERIFY(applyLaunchOptions(options, b.workbench, *b.window.runControls()));
    QVERIFY(b.workbench.isComparing());
    QCOMPARE(QFileInfo(b.workbench.document().path()).fileName(), QString("b40.json"));
    b.window.runControls()->selectSpeed(1);
    b.workbench.run();
    SimulationSession& session = b.workbench.session();
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Running; }));
    clock.advance(kSecond);
    QVERIFY(waitForFrames(session, [&] { return b.workbench.series().size() >= 1; }));
    QVERIFY(b.ui.errors.isEmpty());

    const RunSeries& series = b.workbench.series();
    ChartsPanel* charts = b.window.charts();
    TimePlot* traffic = charts->plot(ChartKind::Traffic);
    for (const QString cls : {"legit", "attacker"}) {
        for (const QString outcome : {"allowed", "throttled"}) {
            for (const auto& [lane, style] :
                 {std::pair{QString("A"), Qt::SolidLine}, std::pair{QString("B"), Qt::DashLine}}) {
                const QString name = QString("%1 %2 (%3)").arg(cls, outcome, lane);
                const std::size_t i = seriesIndex(series, name);
                QCOMPARE(series.specs()[i].chart, ChartKind::Traffic);
                const int line = charts->lineOf(i);
                QCOMPARE(traffic->lineName(line), name);
                QCOMPARE(traffic->lineStyle(line), style);
                QVERIFY2(traffic->pointCount(line) >= 1, qPrintable(name + " has no point"));
            }
        }
    }
    QCOMPARE(series.ys(seriesIndex(series, "attacker throttled (A)"))[0], 90.0);
    QCOMPARE(series.ys(seriesIndex(series, "attacker throttled (B)"))[0], 60.0);
    QCOMPARE(series.ys(seriesIndex(series, "attacker allowed (A)"))[0], 10.0);
    QCOMPARE(series.ys(seriesIndex(series, "attacker allowed (B)"))[0], 40.0);
    QVERIFY(series.ys(seriesIndex(series, "live buckets (B)"))[0] >= 1);
    QVERIFY(traffic->title().contains("A solid, B dashed"));
    auto* banner = b.window.findChild<QLabel*>("compareBannerText");
    QVERIFY(banner && banner->isVisible());
    QVERIFY(banner->text().contains("A: window.json"));
    QVERIFY(banner->text().contains("B: b40.json"));
    auto* actors = b.window.findChild<QTableView*>("actorTable");
    QCOMPARE(actors->model(), static_cast<QAbstractItemModel*>(&b.workbench.comparedActors()));
    auto* tabs = b.window.findChild<QTabWidget*>("resultTabs");
    QVERIFY(tabs->indexOf(b.window.findChild<QTableView*>("flipsTable")->parentWidget()) >= 0);
}

// Run to the end at full speed with strict.json as B: the table's A and B columns equal the
// actor rows of two separate runs, field for field, and the delta is B - A. The attacker sends
// 3,000 requests in 30 s: 2,700 throttled under A, 2,970 under B. The flips tab lists first the
// very legitimate users the two separate runs show throttled under B and never under A.
void TestCompare::deltaColumnsEqualTwoSeparateRuns() {
    Bench b;
    QVERIFY(b.workbench.openPolicy(policyA_));
    QVERIFY(b.workbench.openScenario(short_));
    QVERIFY(b.workbench.compareAgainst(strict_));
    b.window.runControls()->selectSpeed(0);
    b.workbench.run();
    SimulationSession& session = b.workbench.session();
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Finished; }));
    QVERIFY(b.ui.errors.isEmpty());

    std::vector<std::vector<sim::InstanceCounters>> instancesA;
    std::vector<std::vector<sim::InstanceCounters>> instancesB;
    const std::vector<sim::ActorRow> rowsA = separateRun(short_, policyA_, &instancesA);
    const std::vector<sim::ActorRow> rowsB = separateRun(short_, strict_, &instancesB);
    const CompareActorModel& model = b.workbench.comparedActors();
    QVERIFY(model.comparison());
    QCOMPARE(model.comparison()->a.requests, session.requests());
    QCOMPARE(model.rowCount(), 2);
    auto cell = [&](int row, std::size_t outcome, CompareActorModel::Side side) {
        return model
            .data(model.index(row, CompareActorModel::columnOf(outcome, side)), Qt::UserRole)
            .toLongLong();
    };
    for (int row = 0; row < 2; ++row) {
        const auto r = static_cast<std::size_t>(row);
        QCOMPARE(model.data(model.index(row, CompareActorModel::Actor)).toString(),
                 QString::fromStdString(rowsA[r].name));
        for (std::size_t o = 0; o < sim::kOutcomeCount; ++o) {
            const auto member = sim::kOutcomeFields[o].member;
            QCOMPARE(cell(row, o, CompareActorModel::A), rowsA[r].counters.*member);
            QCOMPARE(cell(row, o, CompareActorModel::B), rowsB[r].counters.*member);
            QCOMPARE(cell(row, o, CompareActorModel::Delta),
                     rowsB[r].counters.*member - rowsA[r].counters.*member);
        }
    }
    QCOMPARE(rowsA[1].counters.offered, std::int64_t(3000));
    QCOMPARE(cell(1, sim::kThrottledOutcome, CompareActorModel::A), 2700);
    QCOMPARE(cell(1, sim::kThrottledOutcome, CompareActorModel::B), 2970);
    QCOMPARE(cell(1, sim::kThrottledOutcome, CompareActorModel::Delta), 270);
    QCOMPARE(model
                 .data(model.index(1, CompareActorModel::columnOf(sim::kThrottledOutcome,
                                                                  CompareActorModel::Delta)))
                 .toString(),
             QLocale().positiveSign() + QLocale().toString(270));

    // Collateral: the users (actor 0) throttled under B and never under A in the separate runs.
    int collateral = 0;
    for (std::size_t i = 0; i < instancesA[0].size(); ++i)
        collateral += instancesB[0][i].throttled > 0 && instancesA[0][i].throttled == 0;
    QVERIFY(collateral > 0);
    QCOMPARE(b.workbench.flips().rows().size(), std::size_t(collateral) + 2);
    const auto& flips = b.workbench.flips().rows();
    for (int i = 0; i < collateral; ++i) {
        QCOMPARE(flips[std::size_t(i)].kind, CompareFlipsModel::RowKind::Collateral);
        QCOMPARE(flips[std::size_t(i)].className, std::string("legit"));
        QCOMPARE(flips[std::size_t(i)].throttledA, std::int64_t(0));
        QVERIFY(flips[std::size_t(i)].throttledB > 0);
        if (i > 0)
            QVERIFY(flips[std::size_t(i)].throttledB <= flips[std::size_t(i - 1)].throttledB);
    }
    // Then the actors, the most flips first: the attacker's 270 allowed-to-throttled.
    QCOMPARE(flips[std::size_t(collateral)].kind, CompareFlipsModel::RowKind::Actor);
    QCOMPARE(flips[std::size_t(collateral)].name, std::string("flood"));
    QCOMPARE(flips[std::size_t(collateral)].allowedToThrottled, std::int64_t(270));
    QCOMPARE(flips[std::size_t(collateral)].throttledToAllowed, std::int64_t(0));
    auto* summary = b.window.findChild<QLabel*>("flipsSummary");
    QVERIFY(summary->text().contains(
        QString("attacker: %1 allowed under A and throttled under B, 0 the reverse")
            .arg(QLocale().toString(270))));
    QVERIFY(summary->text().contains(QString("%1 instances collateral").arg(collateral)));
}

// Compare with the policy as loaded, then move the capacity slider to about 40 while the run
// plays at 1000x: B's attacker goes from 90 throttled a second to 100 - C, A's stays at 90 in
// every second of the run.
void TestCompare::liveTuningMovesBWhileAStaysFixed() {
    Bench b;
    QVERIFY(b.workbench.openPolicy(policyA_));
    QVERIFY(b.workbench.openScenario(scenario_));
    QVERIFY(b.workbench.compareWithLoaded());
    b.window.runControls()->selectSpeed(1000);
    b.workbench.run();
    SimulationSession& session = b.workbench.session();
    QVERIFY(waitForFrames(session, [&] { return b.workbench.series().size() >= 1; }));
    QVERIFY(session.state() == RunState::Running);
    QSlider* slider = b.window.policyEditor()->capacitySlider();
    slider->setValue(kCapacityScale.positionOf(40));
    const int capacity = b.window.policyEditor()->findChild<QSpinBox*>("capacitySpin")->value();
    QVERIFY(capacity >= 38 && capacity <= 42);
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Finished; }));
    QVERIFY(b.ui.errors.isEmpty());

    const RunSeries& series = b.workbench.series();
    const auto a = series.ys(seriesIndex(series, "attacker throttled (A)"));
    const auto bs = series.ys(seriesIndex(series, "attacker throttled (B)"));
    QCOMPARE(a.size(), std::size_t(300));
    QCOMPARE(bs.size(), std::size_t(300));
    for (double v : a)
        QCOMPARE(v, 90.0);
    QCOMPARE(bs.front(), 90.0);
    QCOMPARE(bs.back(), 100.0 - capacity);
    QCOMPARE(b.workbench.document().policies().policies[0].capacity, std::int64_t(capacity));
}

// An edit before entering the mode: A is the file as loaded (10), B the edited 40; one step
// shows 90 and 60 throttled.
void TestCompare::comparesEditsWithThePolicyAsLoaded() {
    Bench b;
    QVERIFY(b.workbench.openPolicy(policyA_));
    QVERIFY(b.workbench.openScenario(scenario_));
    Policy edited = b.workbench.document().policies().policies[0];
    edited.capacity = 40;
    b.workbench.document().setPolicy(0, edited);
    QVERIFY(b.workbench.compareWithLoaded());
    QCOMPARE(b.workbench.referenceLabel(), QString("window.json as loaded"));
    SimulationSession& session = b.workbench.session();
    b.workbench.step();
    QVERIFY(waitForFrames(session, [&] { return session.now() == kSecond; }));
    const RunSeries& series = b.workbench.series();
    QCOMPARE(series.ys(seriesIndex(series, "attacker throttled (A)"))[0], 90.0);
    QCOMPARE(series.ys(seriesIndex(series, "attacker throttled (B)"))[0], 60.0);
    // The plain table shows the editor's policy: B.
    QCOMPARE(b.workbench.actors().rows()[1].counters.throttled, std::int64_t(60));
    QVERIFY(b.workbench.document().isModified());
}

// The toolbar's toggle enters compare mode with the policy as loaded and leaves it; the series,
// the table and the tabs are those of one policy again.
void TestCompare::leavingRestoresOneLaneAndTheToggleFollows() {
    Bench b;
    QVERIFY(b.workbench.openPolicy(policyA_));
    QVERIFY(b.workbench.openScenario(scenario_));
    auto* toggle = b.window.findChild<QAction*>("compareToggle");
    QVERIFY(toggle && !toggle->isChecked());
    auto* tabs = b.window.findChild<QTabWidget*>("resultTabs");
    // The tabs a user sees (a replayed log's Clients tab stays hidden for a scenario).
    auto shown = [tabs] {
        int n = 0;
        for (int i = 0; i < tabs->count(); ++i)
            n += tabs->isTabVisible(i) ? 1 : 0;
        return n;
    };
    QCOMPARE(shown(), 2);
    // In no tab, the flips page is not drawn at all (it used to cover the actor table's corner).
    QWidget* flipsPage = b.window.findChild<QTableView*>("flipsTable")->parentWidget();
    QVERIFY(b.window.isVisible() && !flipsPage->isVisible());
    QSignalSpy loaded(&b.workbench.session(), &SimulationSession::runLoaded);
    toggle->trigger();
    QVERIFY(b.workbench.isComparing());
    QVERIFY(toggle->isChecked());
    QCOMPARE(shown(), 3);
    QVERIFY(loaded.wait(10000));
    QVERIFY(b.workbench.series().comparing());

    b.window.findChild<QAction*>("leaveCompareAction")->trigger();
    QVERIFY(!b.workbench.isComparing());
    QVERIFY(!toggle->isChecked());
    QCOMPARE(shown(), 2);
    QVERIFY(!flipsPage->isVisible());
    QCOMPARE(b.window.findChild<QTableView*>("actorTable")->model(),
             static_cast<QAbstractItemModel*>(&b.workbench.actors()));
    QVERIFY(
        waitForFrames(b.workbench.session(), [&] { return !b.workbench.series().comparing(); }));
    seriesIndex(b.workbench.series(), "attacker throttled");
    QVERIFY(!b.window.findChild<QWidget*>("compareBanner")->isVisible());
    QVERIFY(b.ui.errors.isEmpty());
}

// `--compare bad.json` where bad.json has a capacity written as text on line 8: the error names
// bad.json:8 and its column, compare mode is not entered and A stays in the editor.
void TestCompare::badCompareFileShowsALocatedError() {
    const QString bad = writeFile(dir_, "bad.json", QByteArray(R"({
  "version": 1,
  "policies": [
    {
      "name": "api",
      "match": { "path_prefix": "/" },
      "algorithm": "fixed_window",
      "capacity": "forty",
      "window_ms": 1000,
      "key": { "source": "peer" }
    }
  ]
}
)"));
    Bench b;
    LaunchOptions options;
    options.scenario = scenario_;
    options.policy = policyA_;
    options.compare = bad;
    options.run = true;
    QVERIFY(!applyLaunchOptions(options, b.workbench, *b.window.runControls()));
    QCOMPARE(b.ui.errors.size(), 1);
    const QString text = b.ui.errors[0].text;
    QVERIFY2(QRegularExpression("bad\\.json:8:\\d+: error").match(text).hasMatch(),
             qPrintable(text));
    QVERIFY(!b.workbench.isComparing());
    QCOMPARE(QFileInfo(b.workbench.document().path()).fileName(), QString("window.json"));
    QVERIFY(!b.window.findChild<QAction*>("compareToggle")->isChecked());
    QVERIFY(waitForFrames(b.workbench.session(),
                          [&] { return b.workbench.session().state() == RunState::Ready; }));
    QVERIFY(!b.workbench.series().comparing());
}

// Lanes never share a store: with Redis chosen, compare mode runs both on memory and says so,
// without trying to reach the server.
void TestCompare::redisStoreChoiceRunsBothLanesOnMemory() {
    Bench b;
    QVERIFY(b.workbench.openPolicy(policyA_));
    QVERIFY(b.workbench.openScenario(scenario_));
    StoreChoice redis;
    redis.kind = StoreChoice::Kind::Redis;
    redis.redisUrl = "redis://127.0.0.1:1/0";  // nothing listens there
    QVERIFY(b.workbench.compareAgainst(policyB_));
    QSignalSpy status(&b.workbench, &Workbench::statusMessage);
    // Batches of the runs built before are dropped by generation: this is the Redis choice's.
    QSignalSpy loaded(&b.workbench.session(), &SimulationSession::runLoaded);
    b.workbench.setStoreChoice(redis);
    QVERIFY(loaded.wait(10000));
    QVERIFY(b.workbench.session().shape().comparing());
    QCOMPARE(b.workbench.session().shape().storeKind, std::string("memory"));
    QVERIFY(waitForFrames(b.workbench.session(),
                          [&] { return b.workbench.session().state() == RunState::Ready; }));
    bool said = false;
    for (const QList<QVariant>& s : status)
        said = said || s.at(0).toString().contains("memory stores");
    QVERIFY(said);
    QVERIFY(b.ui.errors.isEmpty());
}

QTEST_MAIN(TestCompare)
#include "tst_compare.moc"
