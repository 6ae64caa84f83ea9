// What a desktop user expects of the workbench window (app/gui/policy_document.cpp's undo
// stack, recent_files.cpp, window_layout.cpp, help_menu.cpp, locale_text.cpp): edits undo and
// redo, in the editor and in the running engine, a slider drag in one step, and back to the
// saved state is unmodified; the recent files and the window's layout survive a restart on the
// same settings file; Help tells the version and opens the docs; numbers show in the user's
// locale while the files keep their dots.

#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLocale>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QStyle>
#include <QStyleOptionSlider>
#include <QtTest>

#include <clocale>
#include <string>

#include "gui_fixture.h"
#include "help_menu.h"
#include "main_window.h"
#include "policy_editor.h"
#include "policy_text_fields.h"
#include "tradeoff_map.h"
#include "tradeoff_panel.h"
#include "tradeoff_run.h"
#include "window_fixture.h"
#include "workbench.h"

using namespace ratelab;
using namespace ratelab::gui;
using namespace ratelab::guitest;

namespace {

struct Bench : WindowBench {
    explicit Bench(QSettings* settings = nullptr, gui::WallClock clock = steadyNanos)
        : WindowBench(std::move(clock), settings) {}

    PolicyEditor* editor() { return window.policyEditor(); }
    QSpinBox* capacity() { return editor()->findChild<QSpinBox*>("capacitySpin"); }
    QDoubleSpinBox* refill() { return editor()->findChild<QDoubleSpinBox*>("refillSpin"); }
    const Policy& policy() { return workbench.document().policies().policies.front(); }
    QAction* action(const char* name) {
        QAction* a = window.findChild<QAction*>(name);
        if (!a) qFatal("no action %s", name);
        return a;
    }
    QString undoText() { return action("undoAction")->text().remove('&'); }
    QString redoText() { return action("redoAction")->text().remove('&'); }
    /// Opens through File > Open ... as the user does: the dialog answers `path`.
    void openThroughMenu(const char* actionName, const QString& path) {
        ui.openAnswer = path;
        action(actionName)->trigger();
    }
};

/// Types `text` into a spin box over what it holds, then Enter, as a user does.
void typeInto(QAbstractSpinBox* box, const QString& text) {
    QTest::keyClick(box, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(box, text);
    QTest::keyClick(box, Qt::Key_Return);
}

/// The centre of a slider's handle, where a drag starts (the style's own geometry).
QPoint handleCentre(QSlider* slider) {
    QStyleOptionSlider option;
    option.initFrom(slider);
    option.orientation = slider->orientation();
    option.minimum = slider->minimum();
    option.maximum = slider->maximum();
    option.sliderPosition = slider->sliderPosition();
    option.sliderValue = slider->value();
    option.singleStep = slider->singleStep();
    option.pageStep = slider->pageStep();
    option.upsideDown = slider->invertedAppearance();
    option.tickPosition = slider->tickPosition();
    option.subControls = QStyle::SC_SliderGroove | QStyle::SC_SliderHandle;
    return slider->style()
        ->subControlRect(QStyle::CC_Slider, &option, QStyle::SC_SliderHandle, slider)
        .center();
}

/// The running engine's count of the flood actor's throttled requests (the actor table).
qlonglong floodThrottled(Workbench& workbench) {
    ActorTableModel& actors = workbench.actors();
    for (int r = 0; r < actors.rowCount(); ++r) {
        if (actors.data(actors.index(r, ActorTableModel::Actor)).toString() == "flood")
            return actors.data(actors.index(r, ActorTableModel::Throttled), Qt::UserRole)
                .toLongLong();
    }
    return -1;
}

/// One Step of the run: one sample (a second of virtual time) further.
bool stepOnce(Workbench& workbench) {
    SimulationSession& session = workbench.session();
    const std::size_t before = workbench.series().size();
    workbench.step();
    return waitForFrames(session, [&] { return workbench.series().size() == before + 1; });
}

}  // namespace

class TestWorkbenchDesktop : public QObject {
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void undoAndRedoACapacityEdit();
    void undoRetunesTheRunningEngine();
    void aSliderDragUndoesInOneStep();
    void undoBackToTheSavedStateIsUnmodified();
    void undoShowsThePolicyItChanges();
    void loadingAFileClearsTheSteps();
    void aTradeoffCellIsOneStep();
    void recentFilesAndLayoutSurviveARestart();
    void aRecentFileThatIsGoneIsDropped();
    void recentListsKeepTheEightNewest();
    void recentLogsKeepTheirFormat();
    void helpShowsTheVersionAndOpensTheDocs();
    void germanLocaleShowsCommasWhileFilesKeepDots();

private:
    QTemporaryDir dir_;
    QString policy_;
    QString scenario_;
};

void TestWorkbenchDesktop::init() {
    QVERIFY(dir_.isValid());
    policy_ = writeFile(dir_, "window.json", policyJson("fixed_window", 10, 1.0, 1000));
    scenario_ = writeFile(dir_, "flood.json", attackScenarioJson("flood", 100, 30));
}

void TestWorkbenchDesktop::cleanup() {
    QLocale::setDefault(QLocale::c());
}

// Capacity typed into its spin box (10 -> 25), then Edit > Undo and Redo: the editor and the
// document follow, and the menu names the step.
void TestWorkbenchDesktop::undoAndRedoACapacityEdit() {
    Bench b;
    QVERIFY(b.workbench.openPolicy(policy_));
    QVERIFY(!b.action("undoAction")->isEnabled());
    typeInto(b.capacity(), "25");
    QCOMPARE(b.policy().capacity, std::int64_t(25));
    QVERIFY(b.workbench.document().isModified());
    // "2" then "25" as typed: one step.
    QCOMPARE(b.workbench.document().undoStack().count(), 1);
    QCOMPARE(b.undoText(), QString("Undo capacity change"));

    b.action("undoAction")->trigger();
    QCOMPARE(b.capacity()->value(), 10);
    QCOMPARE(b.policy().capacity, std::int64_t(10));
    QVERIFY(!b.workbench.document().isModified());
    QCOMPARE(b.redoText(), QString("Redo capacity change"));

    b.action("redoAction")->trigger();
    QCOMPARE(b.capacity()->value(), 25);
    QCOMPARE(b.policy().capacity, std::int64_t(25));
    QVERIFY(b.workbench.document().isModified());

    // A second number typed is a step of its own: undo goes back to 25, not 10.
    typeInto(b.capacity(), "40");
    QCOMPARE(b.workbench.document().undoStack().count(), 2);
    b.action("undoAction")->trigger();
    QCOMPARE(b.capacity()->value(), 25);
    QCOMPARE(b.policy().capacity, std::int64_t(25));
    QVERIFY(b.ui.errors.isEmpty());
}

// 100 requests a second against a one-second window: the attacker is throttled 90 a second at
// capacity 10 and 60 at capacity 40. Stepping second by second, the edit, its undo and its
// redo each reach the running engine before the next second.
void TestWorkbenchDesktop::undoRetunesTheRunningEngine() {
    ManualClock clock;
    Bench b(nullptr, clock.clock());
    QVERIFY(b.workbench.openPolicy(policy_));
    QVERIFY(b.workbench.openScenario(scenario_));
    QVERIFY(stepOnce(b.workbench));
    QCOMPARE(floodThrottled(b.workbench), 90);

    typeInto(b.capacity(), "40");
    QVERIFY(stepOnce(b.workbench));
    QCOMPARE(floodThrottled(b.workbench), 90 + 60);

    b.action("undoAction")->trigger();
    QCOMPARE(b.capacity()->value(), 10);
    QVERIFY(stepOnce(b.workbench));
    QCOMPARE(floodThrottled(b.workbench), 90 + 60 + 90);

    b.action("redoAction")->trigger();
    QCOMPARE(b.capacity()->value(), 40);
    QVERIFY(stepOnce(b.workbench));
    QCOMPARE(floodThrottled(b.workbench), 90 + 60 + 90 + 60);
    QVERIFY(b.ui.errors.isEmpty());
}

// The capacity slider dragged with the mouse through several positions: each move reached
// the document, and a single undo brings back the number from before the drag.
void TestWorkbenchDesktop::aSliderDragUndoesInOneStep() {
    Bench b;
    b.window.resize(760, 560);
    b.window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&b.window));
    QVERIFY(b.workbench.openPolicy(policy_));
    QSlider* slider = b.editor()->capacitySlider();
    QSignalSpy edits(&b.workbench.document(), &PolicyDocument::policyEdited);

    const QPoint start = handleCentre(slider);
    QTest::mousePress(slider, Qt::LeftButton, {}, start);
    QVERIFY(slider->isSliderDown());
    for (int dx : {6, 12, 18, 24})
        QTest::mouseMove(slider, start + QPoint(dx, 0));
    QTest::mouseRelease(slider, Qt::LeftButton, {}, start + QPoint(24, 0));
    QVERIFY(!slider->isSliderDown());

    const std::int64_t dragged = b.policy().capacity;
    QVERIFY2(edits.count() >= 3, qPrintable(QString::number(edits.count())));
    QVERIFY2(dragged > 10, qPrintable(QString::number(dragged)));
    QCOMPARE(b.capacity()->value(), static_cast<int>(dragged));
    QCOMPARE(b.workbench.document().undoStack().count(), 1);
    QCOMPARE(b.undoText(), QString("Undo capacity change"));

    b.action("undoAction")->trigger();
    QCOMPARE(b.policy().capacity, std::int64_t(10));
    QCOMPARE(b.capacity()->value(), 10);
    QCOMPARE(slider->value(), kCapacityScale.positionOf(10));
    QVERIFY(!b.workbench.document().isModified());
    QVERIFY(!b.action("undoAction")->isEnabled());

    // A second drag is a second step, even of the same field.
    QTest::mousePress(slider, Qt::LeftButton, {}, handleCentre(slider));
    QTest::mouseMove(slider, handleCentre(slider) + QPoint(10, 0));
    QTest::mouseRelease(slider, Qt::LeftButton, {}, handleCentre(slider));
    const std::int64_t first = b.policy().capacity;
    QVERIFY(first > 10);
    QTest::mousePress(slider, Qt::LeftButton, {}, handleCentre(slider));
    QTest::mouseMove(slider, handleCentre(slider) + QPoint(10, 0));
    QTest::mouseRelease(slider, Qt::LeftButton, {}, handleCentre(slider));
    QVERIFY(b.policy().capacity > first);
    b.action("undoAction")->trigger();
    QCOMPARE(b.policy().capacity, first);
}

// Saved at 25: editing on is modified, undoing back to 25 is not, and undoing past it is again.
void TestWorkbenchDesktop::undoBackToTheSavedStateIsUnmodified() {
    Bench b;
    QVERIFY(b.workbench.openPolicy(
        writeFile(dir_, "bucket.json", policyJson("token_bucket", 10, 1.0))));
    typeInto(b.capacity(), "25");
    QVERIFY(b.workbench.savePolicy());
    QVERIFY(!b.workbench.document().isModified());
    QCOMPARE(b.undoText(), QString("Undo capacity change"));  // saving keeps the steps

    typeInto(b.refill(), "3");
    QVERIFY(b.workbench.document().isModified());
    QCOMPARE(b.undoText(), QString("Undo refill change"));
    QSignalSpy modified(&b.workbench.document(), &PolicyDocument::modifiedChanged);
    b.action("undoAction")->trigger();
    QCOMPARE(b.policy().refillPerSecond, 1.0);
    QVERIFY(!b.workbench.document().isModified());
    QCOMPARE(modified.count(), 1);
    QCOMPARE(modified.at(0).at(0).toBool(), false);
    QVERIFY(!b.window.isWindowModified());

    b.action("undoAction")->trigger();
    QCOMPARE(b.policy().capacity, std::int64_t(10));
    QVERIFY(b.workbench.document().isModified());
    QVERIFY(b.window.isWindowModified());
    b.action("redoAction")->trigger();
    QCOMPARE(b.policy().capacity, std::int64_t(25));
    QVERIFY(!b.workbench.document().isModified());
}

// Two policies: an edit of the second, undone and redone while the first is on screen, brings
// the second on screen with its number; a step over both leaves the picker where it is.
void TestWorkbenchDesktop::undoShowsThePolicyItChanges() {
    QByteArray two = policyJson("token_bucket", 10, 1.0);
    two.replace("  ]\n}", R"(    ,{
      "name": "login",
      "match": { "path_prefix": "/login" },
      "algorithm": "token_bucket",
      "capacity": 5,
      "refill_per_second": 0.5,
      "key": { "source": "peer" }
    }
  ]
})");
    Bench b;
    QVERIFY(b.workbench.openPolicy(writeFile(dir_, "two.json", two)));
    auto* picker = b.editor()->findChild<QComboBox*>("policyPicker");
    QVERIFY(picker);
    QCOMPARE(picker->count(), 2);
    const auto& policies = b.workbench.document().policies().policies;
    picker->setCurrentIndex(1);
    QCOMPARE(b.capacity()->value(), 5);
    typeInto(b.capacity(), "8");
    QCOMPARE(policies[1].capacity, std::int64_t(8));
    picker->setCurrentIndex(0);
    QCOMPARE(b.capacity()->value(), 10);

    b.action("undoAction")->trigger();
    QCOMPARE(policies[1].capacity, std::int64_t(5));
    QCOMPARE(picker->currentIndex(), 1);
    QCOMPARE(b.capacity()->value(), 5);
    picker->setCurrentIndex(0);
    b.action("redoAction")->trigger();
    QCOMPARE(picker->currentIndex(), 1);
    QCOMPARE(b.capacity()->value(), 8);

    picker->setCurrentIndex(0);
    std::vector<Policy> both = policies;
    both[0].capacity = 30;
    both[1].capacity = 3;
    b.workbench.document().setPolicies(both, "both");
    QCOMPARE(b.capacity()->value(), 30);
    b.action("undoAction")->trigger();
    QCOMPARE(picker->currentIndex(), 0);
    QCOMPARE(b.capacity()->value(), 10);
    QCOMPARE(policies[1].capacity, std::int64_t(8));
}

// Opening a file replaces the values: nothing of the old file's edits is left to undo.
void TestWorkbenchDesktop::loadingAFileClearsTheSteps() {
    Bench b;
    QVERIFY(b.workbench.openPolicy(policy_));
    typeInto(b.capacity(), "25");
    b.ui.unsavedAnswer = UserInteraction::UnsavedChoice::Discard;
    const QString other = writeFile(dir_, "other.json", policyJson("token_bucket", 50, 5.0));
    QVERIFY(b.workbench.openPolicy(other));
    QCOMPARE(b.workbench.document().undoStack().count(), 0);
    QVERIFY(!b.action("undoAction")->isEnabled());
    QCOMPARE(b.undoText(), QString("Undo"));
    QVERIFY(!b.workbench.document().isModified());
    QCOMPARE(b.capacity()->value(), 50);
}

// A trade-off map over capacity 5, 10, 15 and refill 1, 2 (from capacity 20, refill 5):
// clicking a cell loads both its numbers in one step named for the map, each click a step of
// its own, and undo brings the editor's numbers back.
void TestWorkbenchDesktop::aTradeoffCellIsOneStep() {
    Bench b;
    b.window.resize(1400, 900);
    b.window.show();
    b.window.showTradeoff();
    QVERIFY(b.workbench.openPolicy(
        writeFile(dir_, "bucket.json", policyJson("token_bucket", 20, 5.0))));
    QVERIFY(b.workbench.openScenario(scenario_));
    std::vector<sim::SweepAxis> axes;
    for (const char* text : {"capacity=5:15:5", "refill=1:2:1"}) {
        std::string error;
        std::optional<sim::SweepAxis> axis = sim::parseSweepAxis(text, error);
        QVERIFY2(axis, error.c_str());
        axes.push_back(std::move(*axis));
    }
    TradeoffPanel& panel = *b.window.tradeoffPanel();
    panel.setAxes(axes);
    QSignalSpy finished(&panel.run(), &TradeoffRun::finished);
    QVERIFY(panel.startMap());
    QVERIFY(finished.wait(60000));
    QCOMPARE(panel.run().cellCount(), std::size_t(6));

    // Grid order, the last axis fastest: cell 2 is capacity 10 at refill 1, cell 5 is 15 at 2.
    TradeoffMapView* view = panel.mapView();
    QTest::mouseClick(view, Qt::LeftButton, {}, view->cellCentre(2));
    QCOMPARE(b.policy().capacity, std::int64_t(10));
    QCOMPARE(b.policy().refillPerSecond, 1.0);
    QCOMPARE(b.undoText(), QString("Undo trade-off cell"));
    QTest::mouseClick(view, Qt::LeftButton, {}, view->cellCentre(5));
    QCOMPARE(b.policy().capacity, std::int64_t(15));
    QCOMPARE(b.policy().refillPerSecond, 2.0);
    QCOMPARE(b.workbench.document().undoStack().count(), 2);

    b.action("undoAction")->trigger();
    QCOMPARE(b.policy().capacity, std::int64_t(10));
    QCOMPARE(b.capacity()->value(), 10);
    QCOMPARE(b.refill()->value(), 1.0);
    b.action("undoAction")->trigger();
    QCOMPARE(b.policy().capacity, std::int64_t(20));
    QCOMPARE(b.capacity()->value(), 20);
    QCOMPARE(b.refill()->value(), 5.0);
    QVERIFY(!b.workbench.document().isModified());
    QVERIFY(b.ui.errors.isEmpty());
}

// A window on a settings file of its own: two policies and a scenario opened through the File
// menu, the window moved and resized, the policy dock moved to the right and the splitter
// dragged. Closed, and a new window made on the same file: the lists hold the files newest
// first, and the layout is back.
void TestWorkbenchDesktop::recentFilesAndLayoutSurviveARestart() {
    const QString iniPath = dir_.filePath("ratelab.ini");
    const QString other = writeFile(dir_, "other.json", policyJson("token_bucket", 50, 5.0));
    QByteArray state;
    QList<int> splitSizes;
    QRect geometry;
    {
        QSettings settings(iniPath, QSettings::IniFormat);
        Bench b(&settings);
        QVERIFY(!b.window.restoredLayout());
        b.window.setGeometry(40, 30, 720, 520);
        b.window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&b.window));
        b.openThroughMenu("openPolicyAction", other);
        b.openThroughMenu("openPolicyAction", policy_);
        b.openThroughMenu("openScenarioAction", scenario_);
        QVERIFY(b.ui.errors.isEmpty());

        auto* dock = b.window.findChild<QDockWidget*>("policyDock");
        b.window.addDockWidget(Qt::RightDockWidgetArea, dock);
        b.window.resizeDocks({dock}, {260}, Qt::Horizontal);
        QSplitter* split = b.window.splitter();
        const int total = split->sizes()[0] + split->sizes()[1];
        split->setSizes({total - 150, 150});
        QCoreApplication::processEvents();
        state = b.window.saveState(1);
        splitSizes = split->sizes();
        geometry = b.window.geometry();
        QVERIFY(b.window.close());
    }
    QSettings settings(iniPath, QSettings::IniFormat);
    Bench b(&settings);
    QVERIFY(b.window.restoredLayout());
    const QStringList policies{QFileInfo(policy_).absoluteFilePath(),
                               QFileInfo(other).absoluteFilePath()};
    QCOMPARE(b.window.recentFiles().files(RecentFiles::Kind::Policy), policies);
    QCOMPARE(b.window.recentFiles().files(RecentFiles::Kind::Scenario),
             QStringList{QFileInfo(scenario_).absoluteFilePath()});
    QVERIFY(b.window.recentFiles().files(RecentFiles::Kind::AccessLog).isEmpty());
    QCOMPARE(b.window.recentFilesMenu()->shownFiles(RecentFiles::Kind::Policy), policies);

    b.window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&b.window));
    QCoreApplication::processEvents();
    QCOMPARE(b.window.geometry(), geometry);
    auto* dock = b.window.findChild<QDockWidget*>("policyDock");
    QCOMPARE(b.window.dockWidgetArea(dock), Qt::RightDockWidgetArea);
    QCOMPARE(b.window.splitter()->sizes(), splitSizes);
    QCOMPARE(b.window.saveState(1), state);

    // Picking a recent file opens it.
    QAction* entry = b.window.recentFilesMenu()->actionFor(RecentFiles::Kind::Policy,
                                                           QFileInfo(other).absoluteFilePath());
    QVERIFY(entry);
    entry->trigger();
    QCOMPARE(b.policy().capacity, std::int64_t(50));
    QCOMPARE(b.window.recentFiles().files(RecentFiles::Kind::Policy).front(),
             QFileInfo(other).absoluteFilePath());
    QVERIFY(b.ui.errors.isEmpty());
}

// A recent file deleted since: picking it says so, opens nothing, and drops it from the list
// (and from the settings file).
void TestWorkbenchDesktop::aRecentFileThatIsGoneIsDropped() {
    const QString iniPath = dir_.filePath("gone.ini");
    QSettings settings(iniPath, QSettings::IniFormat);
    Bench b(&settings);
    const QString gone = writeFile(dir_, "gone.json", policyJson("token_bucket", 50, 5.0));
    b.openThroughMenu("openPolicyAction", gone);
    b.openThroughMenu("openPolicyAction", policy_);
    QVERIFY(QFile::remove(gone));

    const QString absolute = QFileInfo(gone).absoluteFilePath();
    QAction* entry = b.window.recentFilesMenu()->actionFor(RecentFiles::Kind::Policy, absolute);
    QVERIFY(entry);
    entry->trigger();
    QCOMPARE(b.ui.errors.size(), 1);
    QVERIFY2(b.ui.errors[0].text.contains(absolute), qPrintable(b.ui.errors[0].text));
    QVERIFY(b.ui.errors[0].text.contains("no longer exists"));
    QCOMPARE(b.policy().capacity, std::int64_t(10));  // the editor keeps policy_
    QCOMPARE(b.window.recentFiles().files(RecentFiles::Kind::Policy),
             QStringList{QFileInfo(policy_).absoluteFilePath()});
    QCOMPARE(b.window.recentFilesMenu()->shownFiles(RecentFiles::Kind::Policy),
             QStringList{QFileInfo(policy_).absoluteFilePath()});
    QSettings reread(iniPath, QSettings::IniFormat);
    QCOMPARE(reread.value("recent/policies").toStringList(),
             QStringList{QFileInfo(policy_).absoluteFilePath()});
}

// Ten scenarios opened: the eight newest are kept, newest first; opening one again moves it to
// the front rather than listing it twice.
void TestWorkbenchDesktop::recentListsKeepTheEightNewest() {
    RecentFiles recent(nullptr);
    QStringList paths;
    for (int i = 0; i < 10; ++i) {
        paths << dir_.filePath(QStringLiteral("s%1.json").arg(i));
        recent.add(RecentFiles::Kind::Scenario, paths.back());
    }
    QStringList expected;
    for (int i = 9; i >= 2; --i)
        expected << paths[i];
    QCOMPARE(recent.files(RecentFiles::Kind::Scenario), expected);
    recent.add(RecentFiles::Kind::Scenario, paths[5]);
    expected.removeAll(paths[5]);
    expected.prepend(paths[5]);
    QCOMPARE(recent.files(RecentFiles::Kind::Scenario), expected);
    QCOMPARE(recent.files(RecentFiles::Kind::Scenario).size(), RecentFiles::kMaxRecent);
    recent.add(RecentFiles::Kind::Policy, ":/ratelab/resources/policies/default.json");
    QVERIFY(recent.files(RecentFiles::Kind::Policy).isEmpty());
}

// A recent access log keeps the format it was read in across a restart; read again as
// detected, or dropped from the list, it keeps none.
void TestWorkbenchDesktop::recentLogsKeepTheirFormat() {
    const QString iniPath = dir_.filePath("formats.ini");
    const QString edge = QFileInfo(dir_.filePath("edge.log")).absoluteFilePath();
    const QString plain = QFileInfo(dir_.filePath("plain.log")).absoluteFilePath();
    const LogFormatChoice nginx{"nginx",
                                "$remote_addr [$time_local] \"$request\" $status "
                                "$http_x_forwarded_for",
                                {}};
    const auto log = RecentFiles::Kind::AccessLog;
    {
        QSettings settings(iniPath, QSettings::IniFormat);
        RecentFiles recent(&settings);
        recent.add(log, edge, nginx);
        recent.add(log, plain);
    }
    QSettings settings(iniPath, QSettings::IniFormat);
    RecentFiles recent(&settings);
    QCOMPARE(recent.files(log), (QStringList{plain, edge}));
    QVERIFY(recent.logFormat(edge) == nginx);
    QVERIFY(recent.logFormat(plain) == LogFormatChoice{});

    recent.add(log, edge);
    QVERIFY(recent.logFormat(edge) == LogFormatChoice{});
    recent.add(log, edge, nginx);
    QVERIFY(recent.logFormat(edge) == nginx);
    recent.remove(log, edge);
    QVERIFY(recent.logFormat(edge) == LogFormatChoice{});
    QSettings reread(iniPath, QSettings::IniFormat);
    QVERIFY(reread.value("recent/accessLogFormats").toMap().isEmpty());
}

// Help > About shows the version and where the README and docs/ are; Help > Documentation
// hands the docs folder to the desktop (recorded here, never launched).
void TestWorkbenchDesktop::helpShowsTheVersionAndOpensTheDocs() {
    QCoreApplication::setApplicationVersion("9.8.7");
    Bench b;
    b.action("aboutAction")->trigger();
    QCOMPARE(b.ui.information.size(), 1);
    QCOMPARE(b.ui.information[0].title, QString("About ratelab"));
    const QString text = b.ui.information[0].text;
    QVERIFY2(text.startsWith("ratelab 9.8.7\n"), qPrintable(text));
    // The test runs in the build tree: the source tree's README and docs/ are found.
    QVERIFY(QFileInfo(readmeFile()).isFile());
    QCOMPARE(QFileInfo(readmeFile()).fileName(), QString("README.md"));
    QVERIFY(QFileInfo(docsFolder() + "/ARCHITECTURE.md").isFile());
    QVERIFY2(text.contains(QDir::toNativeSeparators(readmeFile())), qPrintable(text));
    QVERIFY2(text.contains(QDir::toNativeSeparators(docsFolder())), qPrintable(text));

    b.action("documentationAction")->trigger();
    QCOMPARE(b.ui.openedUrls, QList<QUrl>{QUrl::fromLocalFile(docsFolder())});
    QVERIFY(b.ui.errors.isEmpty());
}

// Under German: the actor table groups thousands with a dot and writes decimals with a comma,
// the refill spin box takes "2,5", and the saved policy file still says 2.5. The C library's
// LC_NUMERIC is German too where that locale is installed, so printf would write commas.
void TestWorkbenchDesktop::germanLocaleShowsCommasWhileFilesKeepDots() {
    QLocale::setDefault(QLocale(QLocale::German, QLocale::Germany));
    const std::string cNumeric = std::setlocale(LC_NUMERIC, nullptr);
    const bool cGerman = std::setlocale(LC_NUMERIC, "de_DE.UTF-8") != nullptr;
    struct RestoreC {
        std::string name;
        ~RestoreC() { std::setlocale(LC_NUMERIC, name.c_str()); }
    } restore{cNumeric};

    Bench b;
    QVERIFY(b.workbench.openPolicy(
        writeFile(dir_, "bucket.json", policyJson("token_bucket", 10, 1.0))));
    QVERIFY(b.workbench.openScenario(scenario_));
    typeInto(b.refill(), "2,5");
    QCOMPARE(b.policy().refillPerSecond, 2.5);
    QCOMPARE(b.refill()->text(), QString("2,500 /s"));

    b.workbench.setSpeed(0);
    b.workbench.run();
    QVERIFY(waitForFrames(b.workbench.session(),
                          [&] { return b.workbench.session().state() == RunState::Finished; }));
    ActorTableModel& actors = b.workbench.actors();
    int flood = -1;
    for (int r = 0; r < actors.rowCount(); ++r) {
        if (actors.data(actors.index(r, ActorTableModel::Actor)).toString() == "flood") flood = r;
    }
    QVERIFY(flood >= 0);
    // 100 a second for 30 s.
    QCOMPARE(actors.data(actors.index(flood, ActorTableModel::Offered)).toString(),
             QString("3.000"));
    const double percent =
        actors.data(actors.index(flood, ActorTableModel::AllowedPercent), Qt::UserRole).toDouble();
    QVERIFY(percent > 1 && percent < 10);  // 10 + 2.5 a second of 3,000
    QString expected = QString::number(percent, 'f', 1);
    expected.replace('.', ',');
    QCOMPARE(actors.data(actors.index(flood, ActorTableModel::AllowedPercent)).toString(),
             expected);

    const QString saved = dir_.filePath("saved.json");
    QVERIFY(b.workbench.savePolicy(saved));
    QFile file(saved);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray text = file.readAll();
    QVERIFY2(text.contains("\"refill_per_second\": 2.5"), text.constData());
    QVERIFY(!text.contains("2,5"));
    if (!cGerman) qWarning("de_DE.UTF-8 is not installed: only Qt's locale was German");
    QVERIFY(b.ui.errors.isEmpty());
}

QTEST_MAIN(TestWorkbenchDesktop)
#include "tst_workbench_desktop.moc"
