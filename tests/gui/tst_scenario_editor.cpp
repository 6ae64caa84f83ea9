// The scenario editor (app/gui/scenario/scenario_editor.cpp, workbench_scenario.cpp): edits typed into
// its cells change the workbench's scenario, the timeline and the traffic of the restarted
// run; an edit the loader refuses is refused with the message `ratelab-cli run` prints for such
// a file; the saved scenario loads back field by field and `ratelab-cli run` reports on it what
// the workbench's run showed; rows are added, duplicated and removed; an edited scenario is not
// replaced unasked; a replayed access log has nothing to edit.

#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableWidget>
#include <QToolButton>
#include <QtTest>

#include <nlohmann/json.hpp>

#include "fixtures/cli_fixture.h"
#include "fixtures/gui_fixture.h"
#include "gui/window/main_window.h"
#include "gui/scenario/scenario_editor.h"
#include "gui/scenario/scenario_panel.h"
#include "sim/report/counters.h"
#include "sim/report/report.h"
#include "sim/scenario/scenario_writer.h"
#include "sim/run/scenario_runner.h"
#include "gui/scenario/timeline_widget.h"
#include "fixtures/window_fixture.h"
#include "gui/session/workbench.h"

using namespace ratelab;
using namespace ratelab::gui;
using namespace ratelab::guitest;
using Table = ScenarioEditor::Table;

namespace {

constexpr Nanos kSecond = kNanosPerSecond;

struct Bench : WindowBench {
    Bench() {
        window.resize(1280, 800);
        window.show();
    }

    ScenarioEditor* editor() { return window.scenarioEditor(); }
    // The scenario panel's button shows the editor's dock.
    void showEditor() {
        QTest::mouseClick(window.findChild<QToolButton*>("editScenarioButton"), Qt::LeftButton);
    }
    QLineEdit* text(Table table, int row, std::string_view path) {
        auto* cell = qobject_cast<QLineEdit*>(editor()->cell(table, row, path));
        if (!cell) qFatal("no text cell %s in row %d", std::string(path).c_str(), row);
        return cell;
    }
    QComboBox* choice(Table table, int row, std::string_view path) {
        auto* cell = qobject_cast<QComboBox*>(editor()->cell(table, row, path));
        if (!cell) qFatal("no choice cell %s in row %d", std::string(path).c_str(), row);
        return cell;
    }
    SimulationSession& session() { return workbench.session(); }
    bool ready() {
        return waitForFrames(session(), [&] { return session().state() == RunState::Ready; });
    }
    // Plays the run to its end as fast as possible.
    bool runToEnd() {
        workbench.setSpeed(0);
        workbench.run();
        return waitForFrames(session(), [&] { return session().state() == RunState::Finished; });
    }
    const sim::ActorRow& actor(const std::string& name) {
        for (const sim::ActorRow& r : workbench.actors().rows()) {
            if (r.name == name) return r;
        }
        qFatal("no actor %s", name.c_str());
    }
};

// Types into a cell as a user does, then presses Return: the cell commits.
void type(QLineEdit* cell, const QString& text) {
    cell->selectAll();
    QTest::keyClicks(cell, text);
    QTest::keyClick(cell, Qt::Key_Return);
}

// Twenty users and a flood at 20 requests per second for 30 s, the store out from 10 s to 15 s,
// run with window.json from the same folder.
QByteArray floodScenario() {
    QByteArray text = attackScenarioJson(
        "flood", 20, 30,
        R"([ { "kind": "store_outage", "failure": "transport", "from_s": 10, "to_s": 15 } ])");
    text.replace("\"sample_ms\": 1000,", "\"sample_ms\": 1000,\n  \"policy\": \"window.json\",");
    return text;
}

// The message of the first error ratelab-cli prints on stderr ("F:L:C: error: MESSAGE (at P)").
QString firstCliError(const QString& err) {
    for (const QString& line : err.split('\n')) {
        const qsizetype at = line.indexOf(": error: ");
        if (at < 0) continue;
        QString message = line.mid(at + 9);
        const qsizetype pointer = message.lastIndexOf(" (at /");
        return pointer < 0 ? message : message.left(pointer);
    }
    return {};
}

void compareActors(const sim::Actor& a, const sim::Actor& b) {
    QCOMPARE(a.name, b.name);
    QCOMPARE(a.className, b.className);
    QCOMPARE(a.count, b.count);
    QCOMPARE(a.arrival.kind, b.arrival.kind);
    QCOMPARE(a.arrival.ratePerSecond, b.arrival.ratePerSecond);
    QCOMPARE(a.arrival.burstSize, b.arrival.burstSize);
    QCOMPARE(a.arrival.burstEvery, b.arrival.burstEvery);
    QCOMPARE(a.arrival.burstSpacing, b.arrival.burstSpacing);
    QCOMPARE(a.arrival.burstPhase, b.arrival.burstPhase);
    QCOMPARE(a.arrival.fromPerSecond, b.arrival.fromPerSecond);
    QCOMPARE(a.arrival.toPerSecond, b.arrival.toPerSecond);
    QCOMPARE(a.arrival.rampOver, b.arrival.rampOver);
    QCOMPARE(a.method, b.method);
    QCOMPARE(a.path, b.path);
    QCOMPARE(a.headers, b.headers);
    QCOMPARE(a.cost, b.cost);
    QCOMPARE(a.identity.peer.kind, b.identity.peer.kind);
    QVERIFY(a.identity.peer.address == b.identity.peer.address);
    QVERIFY(a.identity.peer.cidr == b.identity.peer.cidr);
    QCOMPARE(a.identity.peer.prefixLength, b.identity.peer.prefixLength);
    QCOMPARE(a.identity.authorization, b.identity.authorization);
    QCOMPARE(a.identity.principal, b.identity.principal);
    QCOMPARE(a.identity.forwarded.kind, b.identity.forwarded.kind);
    QVERIFY(a.identity.forwarded.proxy == b.identity.forwarded.proxy);
    QCOMPARE(a.identity.forwarded.header, b.identity.forwarded.header);
    QCOMPARE(a.identity.attributes, b.identity.attributes);
    QCOMPARE(a.response.kind, b.response.kind);
    QCOMPARE(a.response.successRate, b.response.successRate);
    QCOMPARE(a.response.failureStatus, b.response.failureStatus);
    QCOMPARE(a.response.statuses, b.response.statuses);
    QCOMPARE(a.start, b.start);
    QCOMPARE(a.stop, b.stop);
}

void compareEvents(const sim::ScenarioEvent& a, const sim::ScenarioEvent& b) {
    QCOMPARE(a.kind, b.kind);
    QCOMPARE(a.from, b.from);
    QCOMPARE(a.to, b.to);
    QCOMPARE(a.replica, b.replica);
    QCOMPARE(a.failure, b.failure);
    QCOMPARE(a.latency, b.latency);
    QCOMPARE(a.change.policy, b.change.policy);
    QCOMPARE(a.change.capacity, b.change.capacity);
    QCOMPARE(a.change.refillPerSecond, b.change.refillPerSecond);
    QCOMPARE(a.change.windowMs, b.change.windowMs);
    QCOMPARE(a.change.cost, b.change.cost);
    QCOMPARE(a.change.mode, b.change.mode);
}

// Report JSON with its one run-dependent part, the wall-clock timing, left out.
std::string withoutTiming(const std::string& report) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(report);
    j.erase("timing");
    return j.dump();
}

}  // namespace

class TestScenarioEditor : public QObject {
    Q_OBJECT

private slots:
    void init();
    void editsChangeTheScenarioTheTimelineAndTheRun();
    void refusedWithTheLoadersMessage_data();
    void refusedWithTheLoadersMessage();
    void savedScenarioRunsTheSameInTheCli();
    void rowsAreAddedDuplicatedAndRemoved();
    void sessionArrivalsInCells();
    void anEditedScenarioIsNotReplacedUnasked();
    void aReplayedLogHasNothingToEdit();
    void scaleCrowdsMultipliesTheCrowds();

private:
    QTemporaryDir dir_;
    QString scenario_;
};

void TestScenarioEditor::init() {
    QVERIFY(dir_.isValid());
    writeFile(dir_, "window.json", policyJson("fixed_window", 10, 1.0, 1000));
    scenario_ = writeFile(dir_, "flood.json", floodScenario());
}

// "What if the attacker doubles its rate, or the outage lasts longer?", typed into the cells.
// The flood's constant 20 per second for 30 s offers exactly 600 requests, 100 of them in the
// five seconds of outage, where the policy fails open; at 40 per second with the outage from
// 10 s to 25 s it offers 1,200, of which 600 fail open. The users' traffic, seeded by their own
// name, does not change.
void TestScenarioEditor::editsChangeTheScenarioTheTimelineAndTheRun() {
    Bench b;
    QVERIFY(b.workbench.openScenario(scenario_));
    QVERIFY(b.runToEnd());
    QCOMPARE(b.actor("flood").counters.offered, std::int64_t(600));
    QCOMPARE(b.actor("flood").counters.failedOpen, std::int64_t(100));
    const std::int64_t usersOffered = b.actor("users").counters.offered;

    // The editor's dock opens from the scenario panel's button.
    auto* dock = b.window.findChild<QDockWidget*>("scenarioEditorDock");
    QVERIFY(dock && dock->isHidden());
    b.showEditor();
    QVERIFY(dock->isVisible());
    QCOMPARE(b.text(Table::Actors, 1, "arrival/rate_per_s")->text(), QString("20"));

    QSignalSpy restarted(&b.session(), &SimulationSession::runLoaded);
    type(b.text(Table::Actors, 1, "arrival/rate_per_s"), "40");
    QCOMPARE(b.workbench.scenario().actors[1].arrival.ratePerSecond, 40.0);
    QVERIFY(b.workbench.isScenarioModified());
    QVERIFY(b.window.windowTitle().contains("flood (edited)"));
    QCOMPARE(b.window.findChild<QLabel*>("scenarioTitle")->text(),
             QString("A single address floods the API (edited)"));
    QVERIFY(restarted.wait(10000));
    QVERIFY(b.ready());
    QCOMPARE(b.session().now(), Nanos(0));

    type(b.text(Table::Events, 0, "to_s"), "25");
    const sim::ScenarioEvent& outage = b.workbench.scenario().events.at(0);
    QCOMPARE(outage.from, 10 * kSecond);
    QCOMPARE(outage.to, 25 * kSecond);
    if (restarted.count() < 2) QVERIFY(restarted.wait(10000));
    const auto& drawn = b.window.scenarioPanel()->timeline()->events();
    QCOMPARE(drawn.size(), std::size_t(1));
    QCOMPARE(drawn[0].from, 10 * kSecond);
    QCOMPARE(drawn[0].to, 25 * kSecond);
    QVERIFY(b.editor()->message().isEmpty());

    QVERIFY(b.runToEnd());
    QCOMPARE(b.actor("flood").counters.offered, std::int64_t(1200));
    QCOMPARE(b.actor("flood").counters.failedOpen, std::int64_t(600));
    QCOMPARE(b.actor("users").counters.offered, usersOffered);
    QVERIFY(b.ui.errors.isEmpty());
}

void TestScenarioEditor::refusedWithTheLoadersMessage_data() {
    QTest::addColumn<int>("table");
    QTest::addColumn<int>("row");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("typed");
    QTest::addColumn<QByteArray>("written");  // the same value written into the file by hand
    QTest::addColumn<QByteArray>("writtenAs");
    QTest::addColumn<QString>("fixed");  // a value the loader takes
    const int actors = static_cast<int>(Table::Actors);
    const int events = static_cast<int>(Table::Events);
    QTest::newRow("negative rate")
        << actors << 1 << "arrival/rate_per_s"
        << "-5" << QByteArray("\"kind\": \"constant\", \"rate_per_s\": 20")
        << QByteArray("\"kind\": \"constant\", \"rate_per_s\": -5") << "30";
    QTest::newRow("to before from")
        << events << 0 << "to_s"
        << "5" << QByteArray("\"to_s\": 15") << QByteArray("\"to_s\": 5") << "20";
    QTest::newRow("no instances") << actors << 0 << "count"
                                  << "0" << QByteArray("\"count\": 20")
                                  << QByteArray("\"count\": 0") << "21";
    QTest::newRow("start before the run")
        << actors << 1 << "start_s"
        << "-2" << QByteArray("\"class\": \"attacker\", \"count\": 1,")
        << QByteArray(
               "\"class\": \"attacker\", \"count\": 1, "
               "\"start_s\": -2,")
        << "1";
    QTest::newRow("not a network")
        << actors << 0 << "identity/peer/cidr"
        << "198.51.100.1/24" << QByteArray("\"cidr\": \"198.51.100.0/24\"")
        << QByteArray("\"cidr\": \"198.51.100.1/24\"") << "198.51.100.0/25";
}

// The edit is refused on its cell with the loader's message, nothing changes and the run is not
// restarted; `ratelab-cli run` says the very same of a file holding that value.
void TestScenarioEditor::refusedWithTheLoadersMessage() {
    QFETCH(int, table);
    QFETCH(int, row);
    QFETCH(QString, path);
    QFETCH(QString, typed);
    QFETCH(QByteArray, written);
    QFETCH(QByteArray, writtenAs);
    QByteArray text = floodScenario();
    QVERIFY(text.contains(written));
    const QString bad = writeFile(dir_, "bad.json", text.replace(written, writtenAs));
    const testing::CliRun cli = testing::runCli({"run", bad, "--quiet"});
    QCOMPARE(cli.exitCode, 2);
    const QString expected = firstCliError(cli.err);
    QVERIFY2(!expected.isEmpty(), qPrintable(cli.err));

    Bench b;
    QVERIFY(b.workbench.openScenario(scenario_));
    QVERIFY(b.ready());
    const std::string before = sim::scenarioJson(b.workbench.scenario());
    QSignalSpy restarted(&b.session(), &SimulationSession::runLoaded);
    QLineEdit* cell = b.text(static_cast<Table>(table), row, path.toStdString());
    type(cell, typed);

    QVERIFY(cell->property("refused").toBool());
    QCOMPARE(cell->toolTip(), expected);
    QCOMPARE(cell->text(), typed);  // kept as typed, for the user to fix
    QVERIFY2(b.editor()->message().contains(expected), qPrintable(b.editor()->message()));
    QCOMPARE(sim::scenarioJson(b.workbench.scenario()), before);
    QVERIFY(!b.workbench.isScenarioModified());
    QVERIFY(!b.window.windowTitle().contains("(edited)"));
    QCOMPARE(restarted.count(), 0);

    // Fixed, it applies, and the mark goes.
    QFETCH(QString, fixed);
    type(cell, fixed);
    QVERIFY2(!cell->property("refused").toBool(), qPrintable(cell->toolTip()));
    QVERIFY(b.editor()->message().isEmpty());
    QVERIFY(b.workbench.isScenarioModified());
    QCOMPARE(cell->text(), fixed);
    QVERIFY(restarted.wait(10000));
}

// Saved (File > Save scenario as...) into another folder: the file names the policy from
// there, loads into the edited scenario field by field, and ratelab-cli run on it reports per
// actor exactly what the workbench's run showed, and the whole report of a run of the edited
// scenario with the same policies and seed.
void TestScenarioEditor::savedScenarioRunsTheSameInTheCli() {
    Bench b;
    QVERIFY(b.workbench.openScenario(scenario_));
    QVERIFY(b.ready());
    type(b.text(Table::Actors, 1, "arrival/rate_per_s"), "40");
    type(b.text(Table::Events, 0, "to_s"), "25");
    type(b.text(Table::Actors, 0, "identity/attributes"), "plan=free; account=user{instance}");
    QVERIFY2(b.editor()->message().isEmpty(), qPrintable(b.editor()->message()));
    const sim::Scenario edited = b.workbench.scenario();
    QCOMPARE(edited.actors[0].identity.attributes.size(), std::size_t(2));

    QVERIFY(QDir(dir_.path()).mkpath("saved"));
    const QString saved = dir_.filePath("saved/edited.json");
    b.ui.saveAnswer = saved;
    QAction* save = nullptr;
    for (QAction* a : b.window.findChildren<QAction*>()) {
        if (a->text() == "Save sce&nario as...") save = a;
    }
    QVERIFY(save);
    save->trigger();
    QVERIFY(b.ui.errors.isEmpty());
    QVERIFY(!b.workbench.isScenarioModified());
    QCOMPARE(b.workbench.scenarioPath(), saved);
    QVERIFY(!b.window.windowTitle().contains("(edited)"));

    sim::ScenarioLoadResult loaded = sim::loadScenarioFile(saved.toStdString());
    QVERIFY(loaded.ok());
    const sim::Scenario& back = *loaded.scenario;
    QCOMPARE(back.policy, std::string("../window.json"));
    QCOMPARE(QFileInfo(QString::fromStdString(back.policyPath)).canonicalFilePath(),
             QFileInfo(QString::fromStdString(edited.policyPath)).canonicalFilePath());
    QCOMPARE(back.name, edited.name);
    QCOMPARE(back.title, edited.title);
    QCOMPARE(back.description, edited.description);
    QCOMPARE(back.seed, edited.seed);
    QCOMPARE(back.duration, edited.duration);
    QCOMPARE(back.sampleInterval, edited.sampleInterval);
    QCOMPARE(back.replicas, edited.replicas);
    QCOMPARE(back.sharedStore, edited.sharedStore);
    QCOMPARE(back.maxBuckets, edited.maxBuckets);
    QCOMPARE(back.actors.size(), edited.actors.size());
    for (std::size_t i = 0; i < back.actors.size(); ++i) {
        compareActors(back.actors[i], edited.actors[i]);
        if (QTest::currentTestFailed()) return;
    }
    QCOMPARE(back.events.size(), edited.events.size());
    for (std::size_t i = 0; i < back.events.size(); ++i) {
        compareEvents(back.events[i], edited.events[i]);
        if (QTest::currentTestFailed()) return;
    }
    QCOMPARE(back.expectations.size(), edited.expectations.size());
    for (std::size_t i = 0; i < back.expectations.size(); ++i) {
        QCOMPARE(back.expectations[i].metric, edited.expectations[i].metric);
        QCOMPARE(back.expectations[i].min, edited.expectations[i].min);
        QCOMPARE(back.expectations[i].max, edited.expectations[i].max);
    }

    QVERIFY(b.runToEnd());
    const testing::CliRun cli = testing::runCli({"run", saved, "--json", "-", "--quiet"});
    QVERIFY2(cli.exitCode == 0, qPrintable(cli.err));
    const std::string report = cli.out.toStdString();
    const nlohmann::json j = nlohmann::json::parse(report);
    QCOMPARE(j["requests"].get<std::int64_t>(), b.session().requests());
    const auto& rows = b.workbench.actors().rows();
    QCOMPARE(j["actors"].size(), rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const nlohmann::json& a = j["actors"][i];
        QCOMPARE(a["name"].get<std::string>(), rows[i].name);
        for (const sim::CounterField& f : sim::kCounterFields) {
            QCOMPARE(a[std::string(f.name)].get<std::int64_t>(), rows[i].counters.*f.member);
        }
    }
    QCOMPARE(b.actor("flood").counters.offered, std::int64_t(1200));

    sim::RunnerOptions options;
    options.measureWallTime = false;  // as `run` does
    sim::ScenarioRunner runner(edited, b.workbench.document().policies(), options);
    runner.advance(runner.duration(), INT64_MAX);
    QVERIFY(runner.finished());
    QCOMPARE(withoutTiming(report), withoutTiming(sim::reportJson(sim::buildReport(runner, {}))));
}

// Duplicate the flood and the attackers offer twice as much; remove it again. Add an event
// and turn it into a policy change: refused until the change sets a field, which the cells
// of the row then take together.
void TestScenarioEditor::rowsAreAddedDuplicatedAndRemoved() {
    Bench b;
    QVERIFY(b.workbench.openScenario(scenario_));
    QVERIFY(b.ready());
    b.showEditor();
    QTableWidget* actors = b.editor()->rows(Table::Actors);
    QCOMPARE(actors->rowCount(), 2);
    actors->selectRow(1);
    QTest::mouseClick(b.editor()->findChild<QPushButton*>("duplicateActor"), Qt::LeftButton);
    QCOMPARE(b.workbench.scenario().actors.size(), std::size_t(3));
    QCOMPARE(b.workbench.scenario().actors[2].name, std::string("flood 2"));
    QCOMPARE(actors->rowCount(), 3);
    QCOMPARE(b.text(Table::Actors, 2, "name")->text(), QString("flood 2"));
    QVERIFY(b.runToEnd());
    QCOMPARE(b.actor("flood").counters.offered, std::int64_t(600));
    QCOMPARE(b.actor("flood 2").counters.offered, std::int64_t(600));

    actors->selectRow(2);
    QTest::mouseClick(b.editor()->findChild<QPushButton*>("removeActor"), Qt::LeftButton);
    QCOMPARE(b.workbench.scenario().actors.size(), std::size_t(2));
    QCOMPARE(actors->rowCount(), 2);

    QTest::mouseClick(b.editor()->findChild<QPushButton*>("addEvent"), Qt::LeftButton);
    QCOMPARE(b.workbench.scenario().events.size(), std::size_t(2));
    const sim::ScenarioEvent added = b.workbench.scenario().events[1];
    QCOMPARE(added.kind, sim::ScenarioEvent::Kind::StoreOutage);
    QCOMPARE(added.from, 15 * kSecond);
    QCOMPARE(added.to, 18 * kSecond);
    QVERIFY(waitForFrames(
        b.session(), [&] { return b.window.scenarioPanel()->timeline()->events().size() == 2; }));

    QComboBox* kind = b.choice(Table::Events, 1, "kind");
    QLineEdit* capacity = b.text(Table::Events, 1, "set/capacity");
    QVERIFY(!capacity->isEnabled());
    kind->setCurrentIndex(kind->findText("policy_change"));
    QVERIFY(kind->property("refused").toBool());
    QCOMPARE(kind->toolTip(), QString("set names no field to change"));
    QCOMPARE(b.workbench.scenario().events[1].kind, sim::ScenarioEvent::Kind::StoreOutage);
    QVERIFY(capacity->isEnabled());  // what the policy change needs can be typed
    type(capacity, "50");
    QVERIFY(!kind->property("refused").toBool());
    const sim::ScenarioEvent& change = b.workbench.scenario().events[1];
    QCOMPARE(change.kind, sim::ScenarioEvent::Kind::PolicyChange);
    QCOMPARE(change.from, 15 * kSecond);
    QCOMPARE(change.change.capacity, std::optional<std::int64_t>(50));

    // The policies in use must have what a change names, as `run` checks.
    QLineEdit* policy = b.text(Table::Events, 1, "policy");
    type(policy, "nope");
    QCOMPARE(policy->toolTip(),
             QString("policy_change names policy \"nope\", which the policy file does not "
                     "define"));
    QVERIFY(b.workbench.scenario().events[1].change.policy.empty());

    b.editor()->rows(Table::Events)->selectRow(1);
    QTest::mouseClick(b.editor()->findChild<QPushButton*>("removeEvent"), Qt::LeftButton);
    QCOMPARE(b.workbench.scenario().events.size(), std::size_t(1));
    QVERIFY(b.ui.errors.isEmpty());
}

// An actor turned into sessions from the cells: the kind starts as the steady rate's requests
// one by one, and the session's fields are typed as the file writes them ("3; 8; 400=0.01").
// The flood, 10 requests in 1 s every 5 s for 30 s, sends six sessions: 60 requests, or 50 when
// the first starts late enough in its idle gap.
void TestScenarioEditor::sessionArrivalsInCells() {
    Bench b;
    QVERIFY(b.workbench.openScenario(scenario_));
    QVERIFY(b.ready());
    b.showEditor();
    QLineEdit* size = b.text(Table::Actors, 1, "arrival/requests_per_session");
    QVERIFY(!size->isEnabled());
    QComboBox* kind = b.choice(Table::Actors, 1, "arrival/kind");
    kind->setCurrentIndex(kind->findText("session"));
    const sim::Arrival& arrival = b.workbench.scenario().actors[1].arrival;
    QCOMPARE(arrival.kind, sim::Arrival::Kind::Session);
    QCOMPARE(arrival.sessionSize.values, std::vector<double>{1});
    QCOMPARE(arrival.idle->values, std::vector<double>{0.05});  // 20 per second, one by one
    QVERIFY(size->isEnabled());
    QVERIFY(!b.text(Table::Actors, 1, "arrival/rate_per_s")->isEnabled());
    QCOMPARE(b.text(Table::Actors, 1, "arrival/idle_s")->text(), QString("0.05"));

    type(size, "10");
    type(b.text(Table::Actors, 1, "arrival/session_s"), "1");
    type(b.text(Table::Actors, 1, "arrival/idle_s"), "4");
    QCOMPARE(b.workbench.scenario().actors[1].arrival.sessionSize.values,
             std::vector<double>{10});
    QVERIFY(b.editor()->message().isEmpty());
    // Spans pair with sizes: three spans for one size is the loader's refusal, in the cell.
    QLineEdit* spans = b.text(Table::Actors, 1, "arrival/session_s");
    type(spans, "1; 2; 3");
    QCOMPARE(spans->toolTip(), QString("session_s holds one value or one per "
                                       "requests_per_session value (1), found 3"));
    QCOMPARE(b.workbench.scenario().actors[1].arrival.sessionSpan.values,
             std::vector<double>{1});
    type(spans, "1");
    // A value of its own probability, as the file writes [value, probability].
    type(size, "10; 12; 40=0.01");
    QCOMPARE(size->text(), QString("10; 12; 40=0.01"));
    type(size, "10");
    QVERIFY(b.runToEnd());
    const std::int64_t offered = b.actor("flood").counters.offered;
    QVERIFY2(offered == 50 || offered == 60, qPrintable(QString::number(offered)));
    QVERIFY(b.ui.errors.isEmpty());
}

// Replacing an edited scenario asks first, like unsaved policy edits: Cancel keeps it, Save
// writes it where the user chooses, Discard drops it; closing the window asks too.
void TestScenarioEditor::anEditedScenarioIsNotReplacedUnasked() {
    const QString other = writeFile(dir_, "other.json", attackScenarioJson("other", 5, 10));
    Bench b;
    QVERIFY(b.workbench.openScenario(scenario_));
    type(b.text(Table::Actors, 1, "arrival/rate_per_s"), "40");
    QVERIFY(b.workbench.isScenarioModified());

    b.ui.unsavedAnswer = UserInteraction::UnsavedChoice::Cancel;
    QVERIFY(!b.workbench.openScenario(other));
    QCOMPARE(b.ui.unsavedQuestions, 1);
    QCOMPARE(b.workbench.scenario().actors[1].arrival.ratePerSecond, 40.0);
    QVERIFY(!b.window.close());
    QCOMPARE(b.ui.unsavedQuestions, 2);

    b.ui.unsavedAnswer = UserInteraction::UnsavedChoice::Save;
    b.ui.saveAnswer = dir_.filePath("kept.json");
    QVERIFY(b.workbench.openScenario(other));
    QCOMPARE(b.ui.unsavedQuestions, 3);
    QCOMPARE(b.workbench.scenario().name, std::string("other"));
    QVERIFY(!b.workbench.isScenarioModified());
    sim::ScenarioLoadResult kept = sim::loadScenarioFile(b.ui.saveAnswer.toStdString());
    QVERIFY(kept.ok());
    QCOMPARE(kept.scenario->actors[1].arrival.ratePerSecond, 40.0);

    type(b.text(Table::Run, 0, "duration_s"), "12");
    QCOMPARE(b.workbench.scenario().duration, 12 * kSecond);
    b.ui.unsavedAnswer = UserInteraction::UnsavedChoice::Discard;
    QVERIFY(b.workbench.openScenario(scenario_));
    QCOMPARE(b.ui.unsavedQuestions, 4);
    QCOMPARE(b.workbench.scenario().name, std::string("flood"));
    QCOMPARE(b.text(Table::Actors, 1, "arrival/rate_per_s")->text(), QString("20"));
    QVERIFY(b.window.close());  // nothing edited: no question
    QCOMPARE(b.ui.unsavedQuestions, 4);
    QVERIFY(b.ui.errors.isEmpty());
}

// A replayed access log has no actors or events of its own: the editor is disabled and says
// why, and there is no scenario file to save.
void TestScenarioEditor::aReplayedLogHasNothingToEdit() {
    QByteArray csv = "ts_ms,key\n";
    for (int i = 0; i < 200; ++i)
        csv += QByteArray::number(1'700'000'000'000LL + i * 10) + ",198.51.100.1\n";
    const QString log = writeFile(dir_, "access.csv", csv);
    Bench b;
    QVERIFY(b.workbench.openScenario(scenario_));
    QVERIFY(b.editor()->disabledReason().isEmpty());
    QSignalSpy opened(&b.workbench, &Workbench::accessLogOpened);
    QSignalSpy status(&b.workbench, &Workbench::statusMessage);
    b.workbench.openAccessLog(log);
    QVERIFY(opened.wait(30000));
    QCOMPARE(opened.at(0).at(1).toBool(), true);
    // The status bar says what was read, not "Reading ..." still.
    QCOMPARE(status.last().at(0).toString(),
             QString("Read access.csv: 200 requests, clients: 1. Press Run to replay them."));
    QVERIFY(!b.workbench.canEditScenario());
    QVERIFY2(b.editor()->disabledReason().contains("replayed access log has nothing to edit"),
             qPrintable(b.editor()->disabledReason()));
    QVERIFY(b.editor()->findChild<QLabel*>("scenarioEditorNote")->isVisibleTo(b.editor()));
    QCOMPARE(b.editor()->rows(Table::Actors)->rowCount(), 0);
    QCOMPARE(b.editor()->rows(Table::Events)->rowCount(), 0);
    QVERIFY(!b.editor()->cell(Table::Run, 0, "duration_s")->isEnabled());

    // Done, it says so and what the policy made of it: 100 a second against 10 a second.
    QVERIFY(b.runToEnd());
    QCOMPARE(status.last().at(0).toString(), QString("Replay done: 200 requests, 180 throttled."));

    QVERIFY(!b.workbench.saveScenario(dir_.filePath("never.json")));
    QCOMPARE(b.ui.errors.size(), 1);
    QCOMPARE(b.ui.errors[0].title, QString("Nothing to save"));
    QVERIFY(!QFile::exists(dir_.filePath("never.json")));
}

// "What if ten times the readers came?": the shipped page-load scenario's crowd of readers scaled
// tenfold by the editor's field, through the rule `fit --scale` uses (sim::scaledCrowdCount); the
// single scraper stays single, the readers' address pool widened to hold them. The count cells
// show it, the restarted run sends about ten times
// the readers' requests and the scraper's exactly as before, and Undo and Redo step back and
// forth, the run following.
void TestScenarioEditor::scaleCrowdsMultipliesTheCrowds() {
    Bench b;
    QVERIFY(b.workbench.openScenario(QStringLiteral(RATELAB_SOURCE_DIR) +
                                     "/scenarios/page-load.json"));
    QVERIFY(b.runToEnd());
    const std::int64_t readers = b.actor("readers").counters.offered;
    const std::int64_t scraper = b.actor("scraper").counters.offered;
    QVERIFY(readers > 1000);
    const sim::Scenario original = b.workbench.scenario();
    QCOMPARE(original.actors.size(), std::size_t(2));
    QCOMPARE(original.actors[0].count, std::int64_t(200));
    QCOMPARE(original.actors[1].count, std::int64_t(1));

    b.showEditor();
    QSignalSpy restarted(&b.session(), &SimulationSession::runLoaded);
    auto* factor = b.window.findChild<QLineEdit*>("crowdFactor");
    auto* scale = b.window.findChild<QPushButton*>("scaleCrowds");
    QVERIFY(factor && scale);
    QTest::keyClicks(factor, "10");
    QTest::mouseClick(scale, Qt::LeftButton);
    QVERIFY2(b.editor()->message().isEmpty(), qPrintable(b.editor()->message()));
    for (std::size_t i = 0; i < original.actors.size(); ++i) {
        const sim::Actor& was = original.actors[i];
        const std::int64_t expected =
            sim::isScaledCrowd(was) ? sim::scaledCrowdCount(was.count, 10) : was.count;
        QCOMPARE(b.workbench.scenario().actors[i].count, expected);
        QCOMPARE(b.text(Table::Actors, static_cast<int>(i), "count")->text(),
                 QString::number(expected));
    }
    QCOMPARE(b.workbench.scenario().actors[0].count, std::int64_t(2000));
    QCOMPARE(b.workbench.scenario().actors[1].count, std::int64_t(1));
    // The readers' /24 holds 256 addresses: the pool is widened to the /21 that holds 2,000.
    QCOMPARE(b.workbench.scenario().actors[0].identity.peer.cidr.toString(),
             std::string("198.51.96.0/21"));
    QVERIFY(b.workbench.isScenarioModified());
    QVERIFY(restarted.wait(10000));
    QVERIFY(b.ready());
    QVERIFY(b.runToEnd());
    const std::int64_t scaledReaders = b.actor("readers").counters.offered;
    QVERIFY2(scaledReaders >= readers * 95 / 10 && scaledReaders <= readers * 105 / 10,
             qPrintable(QString("%1 readers' requests, %2 before").arg(scaledReaders).arg(readers)));
    QCOMPARE(b.actor("scraper").counters.offered, scraper);

    // Undo: the counts as opened, unmodified, and the run as it was; Redo: tenfold again.
    auto* undo = b.window.findChild<QToolButton*>("scenarioUndo");
    auto* redo = b.window.findChild<QToolButton*>("scenarioRedo");
    QVERIFY(undo && redo && undo->isEnabled());
    restarted.clear();
    QTest::mouseClick(undo, Qt::LeftButton);
    QCOMPARE(b.workbench.scenario().actors[0].count, std::int64_t(200));
    QCOMPARE(b.workbench.scenario().actors[0].identity.peer.cidr.toString(),
             std::string("198.51.100.0/24"));
    QCOMPARE(b.text(Table::Actors, 0, "count")->text(), QString("200"));
    QVERIFY(!b.workbench.isScenarioModified());
    QVERIFY(restarted.wait(10000));
    QVERIFY(b.ready());
    QVERIFY(b.runToEnd());
    QCOMPARE(b.actor("readers").counters.offered, readers);
    QTest::mouseClick(redo, Qt::LeftButton);
    QCOMPARE(b.workbench.scenario().actors[0].count, std::int64_t(2000));
    QVERIFY(b.workbench.isScenarioModified());

    // A factor that is no number is refused, the scenario unchanged.
    factor->clear();
    QTest::mouseClick(scale, Qt::LeftButton);
    QVERIFY(b.editor()->message().contains("factor"));
    QCOMPARE(b.workbench.scenario().actors[0].count, std::int64_t(2000));
    QVERIFY(b.ui.errors.isEmpty());
}

QTEST_MAIN(TestScenarioEditor)
#include "tst_scenario_editor.moc"
