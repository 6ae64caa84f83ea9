// The workbench's trade-off map and Suggest (app/gui/tradeoff/tradeoff_run.cpp, tradeoff_panel.cpp,
// tradeoff_map.cpp, suggest_message.cpp): a 3 x 3 map completes on worker threads and reads
// exactly as `ratelab-cli tune` reads the same grid (passing cells, frontier, pick); clicking a
// cell writes its numbers into the editor; Cancel stops the cells in flight; Suggest fills the
// editor with tune's pick; a bad range is refused with a message that names it; and the
// executable's --tradeoff opens the map, starts it and takes its screenshot once it is complete.

#include <QDoubleSpinBox>
#include <QImage>
#include <QJsonArray>
#include <QLineEdit>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QtTest>

#include "fixtures/cli_fixture.h"
#include "fixtures/gui_fixture.h"
#include "gui/window/main_window.h"
#include "gui/policy/policy_editor.h"
#include "gui/tradeoff/tradeoff_map.h"
#include "gui/tradeoff/tradeoff_panel.h"
#include "fixtures/window_fixture.h"
#include "gui/session/workbench.h"

using namespace ratelab;
using namespace ratelab::gui;
using namespace ratelab::guitest;

namespace {

// 20 s: twenty users at 0.5/s each from their own addresses, one client at 50/s from one
// address. Expectations that some cells of the grid below meet and others do not.
QByteArray mapScenario(int seconds = 20, int attackerPerSecond = 50) {
    return QStringLiteral(R"({
  "name": "map-flood",
  "seed": 4,
  "duration_s": %1,
  "actors": [
    { "name": "users", "class": "legit", "count": 20,
      "arrival": { "kind": "poisson", "rate_per_s": 0.5 },
      "identity": { "peer": { "kind": "ipv4_pool", "cidr": "198.51.100.0/24" } } },
    { "name": "flood", "class": "attacker", "count": 1,
      "arrival": { "kind": "constant", "rate_per_s": %2 },
      "identity": { "peer": { "kind": "ipv4", "address": "203.0.113.7" } } }
  ],
  "expect": [ { "metric": "attacker.allowed_per_s", "max": 2 },
              { "metric": "legit.throttled_fraction", "max": 0.02 } ]
}
)")
        .arg(seconds)
        .arg(attackerPerSecond)
        .toUtf8();
}

const QStringList kAxes{"capacity=1:5:2", "refill=0.5:2.5:1"};

sim::SweepAxis axis(const QString& text) {
    std::string error;
    std::optional<sim::SweepAxis> a = sim::parseSweepAxis(text.toStdString(), error);
    if (!a) qFatal("%s", error.c_str());
    return *a;
}

struct Bench : WindowBench {
    Bench() {
        window.resize(1400, 900);
        window.show();
        window.showTradeoff();
    }
    TradeoffPanel& panel() { return *window.tradeoffPanel(); }
    bool open(const QTemporaryDir& dir, const QByteArray& scenario = mapScenario()) {
        return workbench.openPolicy(
                   writeFile(dir, "p.json", policyJson("token_bucket", 20, 5.0))) &&
               workbench.openScenario(writeFile(dir, "s.json", scenario));
    }
    bool mapToEnd() {
        QSignalSpy finished(&panel().run(), &TradeoffRun::finished);
        return finished.wait(60000);
    }
    const Policy& policy() { return workbench.document().policies().policies.front(); }
};

// `ratelab-cli tune` over the same scenario, policy and grid, as JSON.
QJsonObject tune(const QTemporaryDir& dir) {
    const QString out = dir.filePath("tune.json");
    const testing::CliRun r =
        testing::runCli({"tune", dir.filePath("s.json"), "--policy", dir.filePath("p.json"),
                         "--vary", kAxes[0], "--vary", kAxes[1], "--json", out, "--quiet"});
    if (r.exitCode != 0) qFatal("tune exited %d: %s", r.exitCode, qPrintable(r.err));
    QFile f(out);
    if (!f.open(QIODevice::ReadOnly)) qFatal("no %s", qPrintable(out));
    return QJsonDocument::fromJson(f.readAll()).object();
}

}  // namespace

class TestTradeoffMap : public QObject {
    Q_OBJECT

private slots:
    void mapReadsAsTune();
    void clickingACellLoadsItsNumbers();
    void cancelStopsTheCells();
    void suggestFillsTunesPick();
    void badRangesAreRefused_data();
    void badRangesAreRefused();
    void launchOpensTheMapAndShootsItComplete();
    void launchRefusesABadAxis();
};

// Capacity 1, 3, 5 across and refill 0.5, 1.5, 2.5 up: nine runs. Refill 2.5 admits more than
// 2 attacker requests a second; capacity 1, and capacity 3 at refill 0.5, throttle more than 2 %
// of the users. Of the three cells left, capacity 5 at refill 1.5 throttles no one (1.7
// attacker requests a second): tune's pick.
void TestTradeoffMap::mapReadsAsTune() {
    QTemporaryDir dir;
    Bench b;
    QVERIFY(b.open(dir));
    b.panel().setAxes({axis(kAxes[0]), axis(kAxes[1])});
    QSignalSpy cells(&b.panel().run(), &TradeoffRun::cellFinished);
    QVERIFY(b.panel().startMap());
    QVERIFY(b.mapToEnd());
    QCOMPARE(cells.count(), 9);
    QCOMPARE(b.panel().progressBar()->value(), 9);
    QCOMPARE(b.panel().progressBar()->maximum(), 9);
    const sim::TradeoffMap* map = b.panel().run().decision();
    QVERIFY(map);

    const QJsonObject cli = tune(dir);
    const QJsonArray cliCells = cli["cells"].toArray();
    QCOMPARE(cliCells.size(), 9);
    QStringList passing;
    for (qsizetype i = 0; i < cliCells.size(); ++i) {
        const QJsonObject c = cliCells[i].toObject();
        const sim::SweepCell& mine = map->result.cells[static_cast<std::size_t>(i)];
        QCOMPARE(mine.values[0], c["values"].toArray()[0].toDouble());
        QCOMPARE(mine.values[1], c["values"].toArray()[1].toDouble());
        QCOMPARE(mine.pass, c["pass"].toBool());
        QVERIFY(std::abs(map->points[static_cast<std::size_t>(i)].legitThrottled -
                         c["legit_throttled_fraction"].toDouble()) < 1e-6);
        QVERIFY(std::abs(map->points[static_cast<std::size_t>(i)].attackerAdmitted -
                         c["attacker_allowed_per_s"].toDouble()) < 1e-6);
        if (mine.pass)
            passing << QString::fromStdString(sim::cellValuesText(map->axes, mine.values));
    }
    QCOMPARE(passing, QStringList({"capacity=3 refill=1.5", "capacity=5 refill=0.5",
                                   "capacity=5 refill=1.5"}));
    QJsonArray frontier;
    for (std::size_t i : map->frontier)
        frontier.append(static_cast<qint64>(i));
    QCOMPARE(frontier, cli["frontier"].toArray());
    QVERIFY(map->recommended.has_value());
    QCOMPARE(static_cast<qint64>(*map->recommended),
             cli["recommended"].toObject()["cell"].toInteger());
    QCOMPARE(cli["recommended"].toObject()["text"].toString(), QString("capacity=5 refill=1.5"));
    QVERIFY(b.ui.errors.isEmpty());
}

void TestTradeoffMap::clickingACellLoadsItsNumbers() {
    QTemporaryDir dir;
    Bench b;
    QVERIFY(b.open(dir));
    b.panel().setAxes({axis(kAxes[0]), axis(kAxes[1])});
    QVERIFY(b.panel().startMap());
    QVERIFY(b.mapToEnd());
    TradeoffMapView* view = b.panel().mapView();
    // Grid order, the last axis fastest: cell 5 is capacity 3 (the second column) and refill
    // 2.5 (the top row).
    QCOMPARE(view->cellAt(view->cellCentre(5)), std::optional<std::size_t>(5));
    const QString tip = view->toolTipFor(5);
    QVERIFY2(tip.startsWith("capacity=3 refill=2.5\n"), qPrintable(tip));
    QVERIFY2(tip.contains("fails 1 of 2 expectations"), qPrintable(tip));
    QTest::mouseClick(view, Qt::LeftButton, {}, view->cellCentre(5));
    QCOMPARE(b.policy().capacity, std::int64_t(3));
    QCOMPARE(b.policy().refillPerSecond, 2.5);
    PolicyEditor* editor = b.window.policyEditor();
    QCOMPARE(editor->findChild<QSpinBox*>("capacitySpin")->value(), 3);
    QCOMPARE(editor->findChild<QDoubleSpinBox*>("refillSpin")->value(), 2.5);
    QVERIFY(b.workbench.document().isModified());
    // Cell 0 is capacity 1, refill 0.5: the bottom-left square.
    QTest::mouseClick(view, Qt::LeftButton, {}, view->cellCentre(0));
    QCOMPARE(b.policy().capacity, std::int64_t(1));
    QCOMPARE(b.policy().refillPerSecond, 0.5);
    QVERIFY(view->cellCentre(0).x() < view->cellCentre(3).x());
    QVERIFY(view->cellCentre(0).y() > view->cellCentre(1).y());
}

// 60 s with a client at 20,000/s: 1.2 million requests a cell, long enough that Cancel comes
// while the first cells run. The cells in flight stop within a slice; no more start.
void TestTradeoffMap::cancelStopsTheCells() {
    QTemporaryDir dir;
    Bench b;
    QVERIFY(b.open(dir, mapScenario(60, 20000)));
    b.panel().setAxes({axis("capacity=10:50:10"), axis("refill=1:5:1")});
    TradeoffRun& run = b.panel().run();
    QSignalSpy cancelled(&run, &TradeoffRun::cancelled);
    QSignalSpy finished(&run, &TradeoffRun::finished);
    QVERIFY(b.panel().startMap());
    QCOMPARE(run.cellCount(), std::size_t(25));
    QVERIFY(run.state() == TradeoffRun::State::Running);
    QTest::mouseClick(b.panel().findChild<QPushButton*>("tradeoffCancel"), Qt::LeftButton);
    QCOMPARE(cancelled.count(), 1);
    QVERIFY(run.state() == TradeoffRun::State::Cancelled);
    QTRY_VERIFY_WITH_TIMEOUT(!run.busy(), 10000);
    QCoreApplication::processEvents();
    QVERIFY(run.cellsDone() < 25);
    QCOMPARE(finished.count(), 0);
    QVERIFY(run.decision() == nullptr);
    QVERIFY2(b.panel().message().startsWith("Cancelled after"), qPrintable(b.panel().message()));
}

void TestTradeoffMap::suggestFillsTunesPick() {
    QTemporaryDir dir;
    Bench b;
    QVERIFY(b.open(dir));
    b.panel().setAxes({axis(kAxes[0]), axis(kAxes[1])});
    QSignalSpy started(&b.panel().run(), &TradeoffRun::started);
    b.panel().suggest();  // no map yet: it runs one, then picks
    QVERIFY(b.mapToEnd());
    QCOMPARE(b.policy().capacity, std::int64_t(5));
    QCOMPARE(b.policy().refillPerSecond, 1.5);
    QCOMPARE(b.window.policyEditor()->findChild<QSpinBox*>("capacitySpin")->value(), 5);
    const QString why = b.panel().message();
    QVERIFY2(why.startsWith("capacity=5 refill=1.5: of the 9 cells, 3 meet every expectation of "
                            "map-flood"),
             qPrintable(why));
    QVERIFY2(why.contains("this one throttles the fewest legitimate requests (0%) and admits "
                          "1.7 attacker requests/s"),
             qPrintable(why));
    QVERIFY2(why.contains("PASS attacker.allowed_per_s = 1.7 (max 2)"), qPrintable(why));
    QVERIFY2(why.contains("PASS legit.throttled_fraction = 0 (max 0.02)"), qPrintable(why));
    QCOMPARE(started.count(), 1);
    // The map on show is of these inputs (the editor differs in the swept fields only): a
    // second Suggest picks from it without running it again.
    QTest::mouseClick(b.panel().mapView(), Qt::LeftButton, {}, b.panel().mapView()->cellCentre(0));
    QCOMPARE(b.policy().capacity, std::int64_t(1));
    b.panel().suggest();
    QCOMPARE(started.count(), 1);
    QCOMPARE(b.policy().capacity, std::int64_t(5));
    QCOMPARE(b.policy().refillPerSecond, 1.5);
    QVERIFY(b.ui.errors.isEmpty());
}

void TestTradeoffMap::badRangesAreRefused_data() {
    QTest::addColumn<QString>("capacityRange");
    QTest::addColumn<QString>("message");
    QTest::newRow("not numbers") << "4:x:4"
                                 << "trade-off range \"capacity=4:x:4\": expected FROM:TO:STEP "
                                    "numbers";
    QTest::newRow("backwards") << "40:4:4"
                               << "trade-off range \"capacity=40:4:4\": needs FROM <= TO and "
                                  "STEP > 0";
    QTest::newRow("no step") << "4:40"
                             << "expected FROM:TO:STEP numbers";
    QTest::newRow("capacity 0") << "0:4:2"
                                << "capacity must be a whole number from 1 to "
                                   "1000000000000000, found 0";
    QTest::newRow("too many cells") << "1:1000000:1"
                                    << "more than 10000 values";
}

void TestTradeoffMap::badRangesAreRefused() {
    QFETCH(QString, capacityRange);
    QFETCH(QString, message);
    QTemporaryDir dir;
    Bench b;
    QVERIFY(b.open(dir));
    b.panel().findChild<QLineEdit*>("tradeoffRange0")->setText(capacityRange);
    QSignalSpy started(&b.panel().run(), &TradeoffRun::started);
    QVERIFY(!b.panel().startMap());
    QCOMPARE(started.count(), 0);
    QCOMPARE(b.ui.errors.size(), 1);
    QCOMPARE(b.ui.errors[0].title, QString("Cannot map the trade-off"));
    QVERIFY2(b.ui.errors[0].text.contains(message), qPrintable(b.ui.errors[0].text));
    QCOMPARE(b.panel().message(), b.ui.errors[0].text);
}

// `ratelab --scenario S --policy P --tradeoff ... --screenshot OUT`, no --quit-after: the
// picture is taken once the nine cells are in, and the program exits 0.
void TestTradeoffMap::launchOpensTheMapAndShootsItComplete() {
    QTemporaryDir dir;
    const QString policy = writeFile(dir, "p.json", policyJson("token_bucket", 20, 5.0));
    const QString scenario = writeFile(dir, "s.json", mapScenario());
    const QString out = dir.filePath("map.png");
    QProcess app;
    app.start(RATELAB_GUI_EXE, {"--scenario", scenario, "--policy", policy, "--tradeoff", kAxes[0],
                                "--tradeoff", kAxes[1], "--screenshot", out, "--size", "1400x900"});
    QVERIFY(app.waitForFinished(60000));
    QVERIFY2(app.exitStatus() == QProcess::NormalExit && app.exitCode() == 0,
             app.readAllStandardError().constData());
    const QImage shot(out);
    QCOMPARE(shot.size(), QSize(1400, 900));
    // The frontier's dots and the pick's star: gold (255, 215, 0) appears only in the star.
    bool gold = false;
    for (int y = 0; y < shot.height() && !gold; ++y) {
        for (int x = 0; x < shot.width() && !gold; ++x)
            gold = shot.pixel(x, y) == qRgb(255, 215, 0);
    }
    QVERIFY(gold);
}

void TestTradeoffMap::launchRefusesABadAxis() {
    for (const QStringList& arguments :
         {QStringList{"--tradeoff", "capacity=4:x:4"}, QStringList{"--tradeoff", "burst=1:2:1"},
          QStringList{"--tradeoff", "capacity=1:2:1", "--tradeoff", "capacity=2:3:1"}}) {
        QProcess app;
        app.start(RATELAB_GUI_EXE, arguments);
        QVERIFY(app.waitForFinished(30000));
        QCOMPARE(app.exitCode(), 2);
        const QString err = QString::fromLocal8Bit(app.readAllStandardError());
        QVERIFY2(err.contains("--tradeoff"), qPrintable(err));
    }
}

QTEST_MAIN(TestTradeoffMap)
#include "tst_tradeoff_map.moc"
