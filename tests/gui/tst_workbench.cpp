// The workbench window end to end (app/gui/window/main_window.cpp, workbench.cpp): a run draws on
// every chart, the capacity slider retunes the running engine, pause and step through the
// buttons, and the first launch with the shipped defaults.

#include <QComboBox>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QTableView>
#include <QtTest>

#include "fixtures/gui_fixture.h"
#include "fixtures/window_fixture.h"
#include "gui/plot/charts_panel.h"
#include "gui/plot/time_plot.h"
#include "gui/policy/policy_editor.h"
#include "gui/policy/policy_text_fields.h"
#include "gui/scenario/scenario_panel.h"
#include "gui/scenario/timeline_widget.h"
#include "gui/session/workbench.h"
#include "gui/window/launch_options.h"
#include "gui/window/main_window.h"
#include "gui/window/resource_locator.h"
#include "gui/window/run_controls.h"

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

}  // namespace

class TestWorkbench : public QObject {
    Q_OBJECT

private slots:
    void init();
    void runDrawsOnEveryChartWithinASecond();
    void capacitySliderRetunesTheRunningEngine();
    void pauseAndStepButtons();
    void keyingEditBeforeTheRunStartsAppliesToIt();
    void firstLaunchOpensTheShippedDefaults();

private:
    QTemporaryDir dir_;
    QString policy_;
    QString scenario_;
};

void TestWorkbench::init() {
    QVERIFY(dir_.isValid());
    policy_ = writeFile(dir_, "window.json", policyJson("fixed_window", 10, 1.0, 1000));
    scenario_ = writeFile(
        dir_, "flood.json",
        attackScenarioJson(
            "flood", 100, 300,
            R"([ { "kind": "store_outage", "failure": "transport", "from_s": 100, "to_s": 120 } ])"));
}

// One second of virtual time at 1x (on a manual clock) after pressing Run: every line of every
// chart has points, and the traffic chart shows the attacker's 90 throttled per second.
void TestWorkbench::runDrawsOnEveryChartWithinASecond() {
    ManualClock clock;
    Bench b(clock.clock());
    QVERIFY(b.workbench.openPolicy(policy_));
    QVERIFY(b.workbench.openScenario(scenario_));
    b.window.runControls()->selectSpeed(1);
    auto* run = b.window.findChild<QPushButton*>("runButton");
    QVERIFY(run);
    QTest::mouseClick(run, Qt::LeftButton);
    QVERIFY(waitForFrames(b.workbench.session(),
                          [&] { return b.workbench.session().state() == RunState::Running; }));
    clock.advance(kSecond);
    QVERIFY(waitForFrames(b.workbench.session(), [&] { return b.workbench.series().size() >= 1; }));
    QVERIFY(b.ui.errors.isEmpty());

    const RunSeries& series = b.workbench.series();
    ChartsPanel* charts = b.window.charts();
    for (std::size_t i = 0; i < series.specs().size(); ++i) {
        TimePlot* plot = charts->plot(series.specs()[i].chart);
        QVERIFY2(plot->pointCount(charts->lineOf(i)) >= 1,
                 qPrintable(series.specs()[i].name + " has no point"));
    }
    QCOMPARE(series.ys(seriesIndex(series, "attacker throttled"))[0], 90.0);
    QCOMPARE(series.ys(seriesIndex(series, "attacker allowed"))[0], 10.0);
    QCOMPARE(series.ys(seriesIndex(series, "live buckets"))[0] >= 1, true);
    QVERIFY(series.ys(seriesIndex(series, "ns per decision"))[0] > 0);
    QCOMPARE(b.window.scenarioPanel()->timeline()->now(), kSecond);
    QVERIFY(b.workbench.actors().rowCount() == 2);
}

// 100 requests per second against a one-second window of 10. While the run plays (1000x real
// time), the capacity slider moves to about 40: the attacker's throttled rate goes from 90 per
// second to 100 - C, where C is the capacity the slider set.
void TestWorkbench::capacitySliderRetunesTheRunningEngine() {
    Bench b;
    QVERIFY(b.workbench.openPolicy(policy_));
    QVERIFY(b.workbench.openScenario(scenario_));
    b.window.runControls()->selectSpeed(1000);
    b.workbench.run();
    QVERIFY(waitForFrames(b.workbench.session(), [&] { return b.workbench.series().size() >= 1; }));
    QVERIFY(b.workbench.session().state() == RunState::Running);

    QSlider* slider = b.window.policyEditor()->capacitySlider();
    auto* spin = b.window.policyEditor()->findChild<QSpinBox*>("capacitySpin");
    QVERIFY(spin);
    QCOMPARE(spin->value(), 10);
    slider->setValue(kCapacityScale.positionOf(40));
    const int capacity = spin->value();
    QCOMPARE(capacity, static_cast<int>(std::lround(kCapacityScale.valueAt(slider->value()))));
    QVERIFY(capacity >= 38 && capacity <= 42);
    QCOMPARE(b.workbench.document().policies().policies[0].capacity, std::int64_t(capacity));

    QVERIFY(waitForFrames(b.workbench.session(),
                          [&] { return b.workbench.session().state() == RunState::Finished; }));
    const RunSeries& series = b.workbench.series();
    const auto throttled = series.ys(seriesIndex(series, "attacker throttled"));
    const auto xs = series.xs();
    QCOMPARE(throttled.size(), std::size_t(300));
    QCOMPARE(throttled.front(), 90.0);
    QCOMPARE(throttled.back(), 100.0 - capacity);
    // Before the move every second throttles 90; after it, 100 - C; at most one second in
    // between mixes the two (the move lands inside it), and 90 never comes back. The outage
    // (100 s to 120 s) fails open: nothing is throttled there and everything passes.
    const auto failedOpen = series.ys(seriesIndex(series, "failed open"));
    int mixed = 0;
    bool moved = false;
    for (std::size_t i = 0; i < throttled.size(); ++i) {
        if (xs[i] > 100 && xs[i] <= 120) {
            QCOMPARE(throttled[i], 0.0);
            QVERIFY(failedOpen[i] >= 100.0);  // the attacker's 100 and the users' requests
            continue;
        }
        QCOMPARE(failedOpen[i], 0.0);
        if (throttled[i] == 90.0) {
            QVERIFY2(!moved, qPrintable(QStringLiteral("90 throttled again at %1 s").arg(xs[i])));
        } else {
            moved = true;
            if (throttled[i] != 100.0 - capacity) ++mixed;
        }
    }
    QVERIFY(moved);
    QVERIFY(mixed <= 1);
    QVERIFY(b.ui.errors.isEmpty());
}

// Pause stops the cursor; Step moves it exactly one sample interval, whatever the wall clock
// did meanwhile.
void TestWorkbench::pauseAndStepButtons() {
    ManualClock clock;
    Bench b(clock.clock());
    QVERIFY(b.workbench.openPolicy(policy_));
    QVERIFY(b.workbench.openScenario(scenario_));
    b.window.runControls()->selectSpeed(2);
    SimulationSession& session = b.workbench.session();
    QTest::mouseClick(b.window.findChild<QPushButton*>("runButton"), Qt::LeftButton);
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Running; }));
    clock.advance(2 * kSecond);  // 4 s of virtual time at 2x
    QVERIFY(waitForFrames(session, [&] { return session.now() == 4 * kSecond; }));
    QTest::mouseClick(b.window.findChild<QPushButton*>("pauseButton"), Qt::LeftButton);
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Paused; }));
    clock.advance(30 * kSecond);
    QTest::mouseClick(b.window.findChild<QPushButton*>("stepButton"), Qt::LeftButton);
    QVERIFY(waitForFrames(session, [&] { return session.now() != 4 * kSecond; }));
    QCOMPARE(session.now(), 5 * kSecond);
    QCOMPARE(b.window.scenarioPanel()->timeline()->now(), 5 * kSecond);
    QCOMPARE(b.workbench.series().size(), std::size_t(5));
    QCOMPARE(b.window.findChild<QPushButton*>("runButton")->text(), QString("Resume"));
}

// Keying on the principal instead of the peer cannot be retuned into running buckets; before
// the run has started, Step builds a new run that keys that way. The attacker has no verified
// principal, so each of its 100 requests in the first second is refused with 412.
void TestWorkbench::keyingEditBeforeTheRunStartsAppliesToIt() {
    Bench b;
    QVERIFY(b.workbench.openPolicy(policy_));
    QVERIFY(b.workbench.openScenario(scenario_));
    SimulationSession& session = b.workbench.session();
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Ready; }));
    QSignalSpy status(&b.workbench, &Workbench::statusMessage);
    auto* source = b.window.policyEditor()->findChild<QComboBox*>("keySourceBox");
    QVERIFY(source);
    source->setCurrentIndex(source->findData(static_cast<int>(KeySource::Principal)));
    QCOMPARE(b.workbench.document().policies().policies[0].key.source, KeySource::Principal);
    QVERIFY(status.count() >= 1);
    QVERIFY(status.last().at(0).toString().contains("Reset"));
    b.workbench.step();
    QVERIFY(waitForFrames(session, [&] { return session.now() == kSecond; }));
    const auto& rows = b.workbench.actors().rows();
    QCOMPARE(rows.size(), std::size_t(2));
    QCOMPARE(rows[1].name, std::string("flood"));
    QCOMPARE(rows[1].counters.offered, std::int64_t(100));
    QCOMPARE(rows[1].counters.refused, std::int64_t(100));
    QCOMPARE(rows[1].counters.allowed, std::int64_t(0));
}

// `ratelab` with no arguments: the shipped default scenario and policy, ready to run.
void TestWorkbench::firstLaunchOpensTheShippedDefaults() {
    const QString scenario = findDataFile(kDefaultScenario);
    const QString policy = findDataFile(kDefaultPolicy);
    QVERIFY2(!scenario.isEmpty(), "scenarios/header-rotation.json is not found");
    QVERIFY2(!policy.isEmpty(), "resources/policies/default.json is not found");
    Bench b;
    QVERIFY(applyLaunchOptions(LaunchOptions{}, b.workbench, *b.window.runControls()));
    QVERIFY(b.ui.errors.isEmpty());
    QVERIFY(b.workbench.hasScenario());
    QCOMPARE(b.workbench.scenario().name, std::string("header-rotation"));
    QCOMPARE(QFileInfo(b.workbench.document().path()).fileName(), QString("default.json"));
    QVERIFY(!b.workbench.document().isModified());
    QVERIFY(waitForFrames(b.workbench.session(),
                          [&] { return b.workbench.session().state() == RunState::Ready; }));
    QVERIFY(b.window.findChild<QPushButton*>("runButton")->isEnabled());
}

QTEST_MAIN(TestWorkbench)
#include "tst_workbench.moc"
