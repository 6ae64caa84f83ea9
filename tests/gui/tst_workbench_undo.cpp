// Edit > Undo and Redo in the workbench (app/gui/policy/policy_document.cpp's undo stack): edits undo
// and redo, in the editor and in the running engine; a slider drag is one step, a trade-off map
// cell too; back to the saved state is unmodified; an undone edit of a policy off screen comes
// on screen; opening a file clears the steps.

#include <QComboBox>

#include "fixtures/desktop_bench.h"
#include "gui/policy/policy_text_fields.h"
#include "gui/tradeoff/tradeoff_map.h"
#include "gui/tradeoff/tradeoff_panel.h"

using namespace ratelab;
using namespace ratelab::gui;
using namespace ratelab::guitest;

namespace {

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

class TestWorkbenchUndo : public QObject {
    Q_OBJECT

private slots:
    void init();
    void undoAndRedoACapacityEdit();
    void undoRetunesTheRunningEngine();
    void aSliderDragUndoesInOneStep();
    void undoBackToTheSavedStateIsUnmodified();
    void undoShowsThePolicyItChanges();
    void loadingAFileClearsTheSteps();
    void aTradeoffCellIsOneStep();

private:
    QTemporaryDir dir_;
    QString policy_;
    QString scenario_;
};

void TestWorkbenchUndo::init() {
    QVERIFY(dir_.isValid());
    policy_ = writeFile(dir_, "window.json", policyJson("fixed_window", 10, 1.0, 1000));
    scenario_ = writeFile(dir_, "flood.json", attackScenarioJson("flood", 100, 30));
}

// Capacity typed into its spin box (10 -> 25), then Edit > Undo and Redo: the editor and the
// document follow, and the menu names the step.
void TestWorkbenchUndo::undoAndRedoACapacityEdit() {
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
void TestWorkbenchUndo::undoRetunesTheRunningEngine() {
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
void TestWorkbenchUndo::aSliderDragUndoesInOneStep() {
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
void TestWorkbenchUndo::undoBackToTheSavedStateIsUnmodified() {
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
void TestWorkbenchUndo::undoShowsThePolicyItChanges() {
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
void TestWorkbenchUndo::loadingAFileClearsTheSteps() {
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
void TestWorkbenchUndo::aTradeoffCellIsOneStep() {
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

QTEST_MAIN(TestWorkbenchUndo)
#include "tst_workbench_undo.moc"
