// A replayed log in the workbench shows who: its clients (app/gui/session/client_table_model.h),
// busiest first with the key the policy charged them to, bounded to kTopClients rows and the
// others summed, sortable, in place of the one "log" actor row.

#include <QTabWidget>
#include <QHeaderView>
#include <QTableView>
#include <QtTest>

#include "fixtures/gui_fixture.h"
#include "fixtures/window_fixture.h"
#include "gui/plot/charts_panel.h"
#include "gui/plot/time_plot.h"
#include "gui/session/client_table_model.h"
#include "gui/session/event_style.h"
#include "gui/session/workbench.h"

using namespace ratelab;
using namespace ratelab::gui;
using namespace ratelab::guitest;

class TestReplayClients : public QObject {
    Q_OBJECT

private slots:
    void topClientsOrdersAndSumsTheRest_data();
    void topClientsOrdersAndSumsTheRest();
    void sortingKeepsTheOthersLast();
    void aReplayListsItsClients();
    void aReplayIsDrawnInTheLegitColours();
    void aClickedClientIsDrawnOverTheCharts();
    void aClickedClientUnderCompare();
    void aHighlightGrowsWithTheRun();

private:
    QTemporaryDir dir_;
};

namespace {

// Ten seconds of two busy clients, 203.0.113.7 at 150 lines a second and 198.51.100.1 at 50,
// and 250 clients of one line each in the first 10 s.
QByteArray twoBusyClientsLog() {
    QByteArray csv = "ts_ms,key\n";
    for (int i = 0; i < 2000; ++i) {
        csv += QByteArray::number(1'700'000'000'000LL + i * 5) + "," +
               (i % 4 == 0 ? "198.51.100.1" : "203.0.113.7") + "\n";
        if (i % 8 == 0 && i / 8 < 250)
            csv += QByteArray::number(1'700'000'000'000LL + i * 5 + 1) + ",10.0." +
                   QByteArray::number(i / 8 / 100) + "." + QByteArray::number(i / 8 % 100) + "\n";
    }
    return csv;
}

// Clicks the row of the client table showing `key`.
void clickClient(QTableView* view, const ClientTableModel& clients, const QString& key) {
    for (int r = 0; r < clients.rowCount(); ++r) {
        if (clients.data(clients.index(r, ClientTableModel::Key)).toString() != key) continue;
        view->scrollTo(clients.index(r, 0));
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {},
                          view->visualRect(clients.index(r, 0)).center());
        return;
    }
    QFAIL(qPrintable("no row for " + key));
}

// The y values of the traffic plot's highlight line i, one a sample.
QList<double> highlightValues(const MainWindow& window, std::size_t i) {
    TimePlot* traffic = window.charts()->plot(ChartKind::Traffic);
    const int line = window.charts()->highlightLineOf(i);
    QList<double> ys;
    if (line < 0 || !traffic->lineShown(line)) return ys;
    for (const QPointF& p : traffic->points(line))
        ys << p.y();
    return ys;
}

QList<double> repeated(double value, int n) {
    return QList<double>(n, value);
}

sim::ClientSeen seenAt(const char* key, double first, double last) {
    return sim::ClientSeen{key, static_cast<Nanos>(first * 1e9), static_cast<Nanos>(last * 1e9)};
}

}  // namespace

// Five clients, one of which never sent anything: the busiest by requests, ties by throttled,
// then by who came first; past `top`, one row sums the rest.
void TestReplayClients::topClientsOrdersAndSumsTheRest_data() {
    QTest::addColumn<int>("top");
    QTest::addColumn<QString>("keys");  // the rows' keys in order; "*N" the others row of N
    QTest::addColumn<qint64>("othersRequests");
    QTest::addColumn<qint64>("othersThrottled");
    QTest::newRow("all listed") << 10 << "c b a d" << qint64(-1) << qint64(-1);
    QTest::newRow("exactly all") << 4 << "c b a d" << qint64(-1) << qint64(-1);
    QTest::newRow("two, then the rest") << 2 << "c b *2" << qint64(5 + 1) << qint64(0 + 1);
    QTest::newRow("none by name") << 0 << "*4" << qint64(9 + 9 + 5 + 1) << qint64(3 + 3 + 0 + 1);
}

void TestReplayClients::topClientsOrdersAndSumsTheRest() {
    QFETCH(int, top);
    QFETCH(QString, keys);
    QFETCH(qint64, othersRequests);
    QFETCH(qint64, othersThrottled);
    const std::vector<sim::InstanceCounters> counters = {
        {5, 5, 0}, {9, 6, 3}, {9, 6, 3}, {0, 0, 0}, {1, 0, 1}};
    const std::vector<sim::ClientSeen> seen = {
        seenAt("a", 1, 2), seenAt("b", 0.5, 7), seenAt("c", 0.25, 3), {}, seenAt("d", 4, 4)};
    const std::vector<ClientRow> rows = topClients(counters, seen, static_cast<std::size_t>(top));
    QStringList got;
    for (const ClientRow& r : rows)
        got << (r.instance < 0 ? "*" + QString::number(r.clients) : QString::fromStdString(r.key));
    QCOMPARE(got.join(' '), keys);
    if (othersRequests < 0) return;
    const ClientRow& others = rows.back();
    QCOMPARE(others.requests, othersRequests);
    QCOMPARE(others.throttled, othersThrottled);
    // The earliest first and the latest last of the clients it sums.
    QCOMPARE(others.firstSeen, top == 0 ? Nanos(250'000'000) : Nanos(1'000'000'000));
    QCOMPARE(others.lastSeen, top == 0 ? Nanos(7'000'000'000) : Nanos(4'000'000'000));
    if (top == 2) QCOMPARE(rows[0].instance, std::int64_t(2));  // c, the third client
}

// The view's sort orders the clients by any column, both ways; the others row is not a client
// and stays last.
void TestReplayClients::sortingKeepsTheOthersLast() {
    const std::vector<sim::InstanceCounters> counters = {
        {5, 5, 0}, {9, 6, 3}, {2, 0, 2}, {1, 1, 0}};
    const std::vector<sim::ClientSeen> seen = {seenAt("ip:b", 1, 2), seenAt("ip:a", 3, 4),
                                               seenAt("ip:c", 0, 9), seenAt("ip:d", 5, 5)};
    ClientTableModel model;
    model.setRows(topClients(counters, seen, 3));
    auto column = [&](int c) {
        QStringList out;
        for (int r = 0; r < model.rowCount(); ++r)
            out << model.data(model.index(r, c)).toString();
        return out.join(' ');
    };
    QCOMPARE(column(ClientTableModel::Key), QString("ip:a ip:b ip:c 1 other clients"));
    model.sort(ClientTableModel::Throttled, Qt::DescendingOrder);
    QCOMPARE(column(ClientTableModel::Key), QString("ip:a ip:c ip:b 1 other clients"));
    model.sort(ClientTableModel::Key, Qt::DescendingOrder);
    QCOMPARE(column(ClientTableModel::Key), QString("ip:c ip:b ip:a 1 other clients"));
    model.sort(ClientTableModel::FirstSeen, Qt::AscendingOrder);
    QCOMPARE(column(ClientTableModel::Key), QString("ip:c ip:b ip:a 1 other clients"));
    QCOMPARE(column(ClientTableModel::FirstSeen), QString("0.000 1.000 3.000 5.000"));
    // New rows keep the order the view asked for.
    model.setRows(topClients(counters, seen, 4));
    QCOMPARE(column(ClientTableModel::Key), QString("ip:c ip:b ip:a ip:d"));
    QCOMPARE(model.data(model.index(0, ClientTableModel::Requests), Qt::UserRole).toLongLong(), 2);
}

// A log of two busy clients and 250 that send one line each, under a fixed window of 10 per
// second keyed by peer: the two busy ones first with what the window did to them, the 200th
// busiest last by name, the other 52 in one row; the Clients tab stands in for the Actors tab.
void TestReplayClients::aReplayListsItsClients() {
    QVERIFY(dir_.isValid());
    const QString policy =
        writeFile(dir_, "window.json", policyJson("fixed_window", 10, 1.0, 1000));
    QByteArray csv = "ts_ms,key\n";
    for (int i = 0; i < 2000; ++i) {
        csv += QByteArray::number(1'700'000'000'000LL + i * 5) + "," +
               (i % 4 == 0 ? "198.51.100.1" : "203.0.113.7") + "\n";
        if (i % 8 == 0 && i / 8 < 250)
            csv += QByteArray::number(1'700'000'000'000LL + i * 5 + 1) + ",10.0." +
                   QByteArray::number(i / 8 / 100) + "." + QByteArray::number(i / 8 % 100) + "\n";
    }
    const QString log = writeFile(dir_, "access.csv", csv);
    WindowBench b;
    auto* tabs = b.window.findChild<QTabWidget*>("resultTabs");
    auto* actorsView = b.window.findChild<QTableView*>("actorTable");
    auto* clientsView = b.window.findChild<QTableView*>("clientTable");
    QVERIFY(tabs && actorsView && clientsView);
    QVERIFY(!tabs->isTabVisible(tabs->indexOf(clientsView)));

    QVERIFY(b.workbench.openPolicy(policy));
    QSignalSpy opened(&b.workbench, &Workbench::accessLogOpened);
    b.workbench.openAccessLog(log);
    QVERIFY(opened.wait(30000));
    b.workbench.setSpeed(0);
    b.workbench.run();
    SimulationSession& session = b.workbench.session();
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Finished; }));
    QCOMPARE(session.requests(), std::int64_t(2250));

    const ClientTableModel& clients = b.workbench.clients();
    QVERIFY(clients.replaying());
    QVERIFY(tabs->isTabVisible(tabs->indexOf(clientsView)));
    QVERIFY(!tabs->isTabVisible(tabs->indexOf(actorsView)));
    QCOMPARE(tabs->currentWidget(), clientsView);
    QCOMPARE(clients.rowCount(), int(kTopClients) + 1);
    const std::vector<ClientRow>& rows = clients.rows();
    // 150 a second against a window of 10 for ten seconds; then 50 a second.
    QCOMPARE(rows[0].requests, std::int64_t(1500));
    QCOMPARE(rows[0].throttled, std::int64_t(1400));
    QCOMPARE(rows[0].firstSeen, 5 * kNanosPerMilli);
    QCOMPARE(rows[0].lastSeen, 9'995 * kNanosPerMilli);
    QCOMPARE(rows[1].requests, std::int64_t(500));
    QCOMPARE(rows[1].throttled, std::int64_t(400));
    QCOMPARE(rows[1].firstSeen, Nanos(0));
    QCOMPARE(rows[1].lastSeen, 9'980 * kNanosPerMilli);
    QCOMPARE(QString::fromStdString(rows[0].key), QString("ip:203.0.113.7"));
    QCOMPARE(QString::fromStdString(rows[1].key), QString("ip:198.51.100.1"));
    // The single-line clients in the order they came, the last 52 summed.
    QCOMPARE(rows[2].requests, std::int64_t(1));
    QCOMPARE(rows[2].firstSeen, Nanos(1'000'000));
    const ClientRow& others = rows.back();
    QCOMPARE(others.instance, std::int64_t(-1));
    QCOMPARE(others.clients, std::int64_t(52));
    QCOMPARE(others.requests, std::int64_t(52));
    QCOMPARE(others.throttled, std::int64_t(0));
    QCOMPARE(clients.data(clients.index(kTopClients, ClientTableModel::Key)).toString(),
             QString("52 other clients"));

    // Back to a scenario: the Actors tab returns.
    b.workbench.openScenario(writeFile(dir_, "flood.json", attackScenarioJson("flood", 100, 30)));
    QVERIFY(waitForFrames(session, [&] { return !b.workbench.clients().replaying(); }));
    QVERIFY(tabs->isTabVisible(tabs->indexOf(actorsView)));
    QCOMPARE(tabs->currentWidget(), actorsView);
    QCOMPARE(clients.rowCount(), 0);
}

// A replayed log's one class ("log", the palette's first blue before) draws its allowed and
// throttled requests as a scenario's legitimate class does, whatever its index; the attacker
// and other classes keep theirs.
void TestReplayClients::aReplayIsDrawnInTheLegitColours() {
    const QColor legit = classColor("legit", 0);
    QCOMPARE(legit, QColor(46, 139, 87));
    QCOMPARE(classColor("log", 0), legit);
    QCOMPARE(classColor("log", 3), legit);
    QCOMPARE(classColor("attacker", 1), QColor(200, 40, 40));
    QCOMPARE(classColor("free", 0), QColor(31, 119, 180));
}

// A click on a client draws its allowed and throttled requests per sample over the traffic
// chart's totals, from what the run counted. Under a fixed window of 10 a second keyed by peer,
// 203.0.113.7's 150 a second are 10 allowed and 140 throttled in each of the ten samples, and
// 198.51.100.1's 50 are 10 and 40: a click on the other moves the highlight, a click on it again
// clears it, and so does Escape.
void TestReplayClients::aClickedClientIsDrawnOverTheCharts() {
    QVERIFY(dir_.isValid());
    const QString policy =
        writeFile(dir_, "window.json", policyJson("fixed_window", 10, 1.0, 1000));
    const QString log = writeFile(dir_, "busy.csv", twoBusyClientsLog());
    WindowBench b;
    b.window.resize(1280, 800);
    b.window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&b.window));
    auto* clientsView = b.window.findChild<QTableView*>("clientTable");
    QVERIFY(b.workbench.openPolicy(policy));
    QSignalSpy opened(&b.workbench, &Workbench::accessLogOpened);
    b.workbench.openAccessLog(log);
    QVERIFY(opened.wait(30000));
    b.workbench.setSpeed(0);
    b.workbench.run();
    SimulationSession& session = b.workbench.session();
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Finished; }));
    const ClientTableModel& clients = b.workbench.clients();
    QCOMPARE(b.workbench.series().size(), std::size_t(10));
    TimePlot* traffic = b.window.charts()->plot(ChartKind::Traffic);

    clickClient(clientsView, clients, "ip:203.0.113.7");
    QCOMPARE(b.workbench.highlightedClient(), clients.rows()[0].instance);
    QVERIFY(waitForFrames(session, [&] { return highlightValues(b.window, 1).size() == 10; }));
    QCOMPARE(highlightValues(b.window, 0), repeated(10, 10));
    QCOMPARE(highlightValues(b.window, 1), repeated(140, 10));
    // At the samples' ends, over the totals of their class.
    const QList<QPointF> points = traffic->points(b.window.charts()->highlightLineOf(0));
    QCOMPARE(points.front().x(), 1.0);
    QCOMPARE(points.back().x(), 10.0);
    QVERIFY(traffic->legendNames().contains("ip:203.0.113.7 allowed"));
    QVERIFY(traffic->legendNames().contains("ip:203.0.113.7 throttled"));
    // The sums are the client's row.
    QCOMPARE(clients.rows()[0].requests, std::int64_t(1500));
    QCOMPARE(clients.rows()[0].throttled, std::int64_t(1400));
    QCOMPARE(clients.data(clients.index(0, 0), Qt::FontRole).value<QFont>().bold(), true);

    clickClient(clientsView, clients, "ip:198.51.100.1");
    QVERIFY(waitForFrames(session, [&] {
        return highlightValues(b.window, 1) == repeated(40, 10);
    }));
    QCOMPARE(highlightValues(b.window, 0), repeated(10, 10));
    QVERIFY(traffic->legendNames().contains("ip:198.51.100.1 throttled"));
    QVERIFY(!traffic->legendNames().contains("ip:203.0.113.7 throttled"));
    QCOMPARE(clients.data(clients.index(0, 0), Qt::FontRole).value<QFont>().bold(), false);

    // Again on it: cleared, the lines gone from the plot and the legend.
    clickClient(clientsView, clients, "ip:198.51.100.1");
    QCOMPARE(b.workbench.highlightedClient(), std::int64_t(-1));
    QVERIFY(highlightValues(b.window, 0).isEmpty());
    QCOMPARE(traffic->pointCount(b.window.charts()->highlightLineOf(0)), qsizetype(0));
    QVERIFY(!traffic->legendNames().join(' ').contains("198.51.100.1"));

    clickClient(clientsView, clients, "ip:203.0.113.7");
    QVERIFY(waitForFrames(session, [&] { return highlightValues(b.window, 1).size() == 10; }));
    QTest::keyClick(clientsView, Qt::Key_Escape);
    QCOMPARE(b.workbench.highlightedClient(), std::int64_t(-1));
    QVERIFY(highlightValues(b.window, 1).isEmpty());
    QVERIFY(!traffic->legendNames().join(' ').contains("203.0.113.7"));
    // The others row is not a client: nothing to draw.
    clickClient(clientsView, clients, "52 other clients");
    QCOMPARE(b.workbench.highlightedClient(), std::int64_t(-1));
    QVERIFY(b.ui.errors.isEmpty());
}

// Under compare, the client is drawn in both lanes: A (a window of 10 a second) solid, B (a
// window of 20, the editor's) dashed; 203.0.113.7 has 10 and 140 a second under A, 20 and 130
// under B, and its row counts B's.
void TestReplayClients::aClickedClientUnderCompare() {
    QVERIFY(dir_.isValid());
    const QString a = writeFile(dir_, "window10.json", policyJson("fixed_window", 10, 1.0, 1000));
    const QString bPolicy =
        writeFile(dir_, "window20.json", policyJson("fixed_window", 20, 1.0, 1000));
    const QString log = writeFile(dir_, "busy.csv", twoBusyClientsLog());
    WindowBench b;
    b.window.resize(1280, 800);
    b.window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&b.window));
    auto* clientsView = b.window.findChild<QTableView*>("clientTable");
    QVERIFY(b.workbench.openPolicy(a));
    QSignalSpy opened(&b.workbench, &Workbench::accessLogOpened);
    b.workbench.openAccessLog(log);
    QVERIFY(opened.wait(30000));
    QVERIFY(b.workbench.compareAgainst(bPolicy));
    SimulationSession& session = b.workbench.session();
    QVERIFY(waitForFrames(session, [&] { return session.shape().comparing(); }));
    b.workbench.setSpeed(0);
    b.workbench.run();
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Finished; }));
    const ClientTableModel& clients = b.workbench.clients();
    QCOMPARE(clients.rows()[0].throttled, std::int64_t(1300));

    clickClient(clientsView, clients, "ip:203.0.113.7");
    QVERIFY(waitForFrames(session, [&] { return highlightValues(b.window, 3).size() == 10; }));
    QCOMPARE(highlightValues(b.window, 0), repeated(10, 10));
    QCOMPARE(highlightValues(b.window, 1), repeated(140, 10));
    QCOMPARE(highlightValues(b.window, 2), repeated(20, 10));
    QCOMPARE(highlightValues(b.window, 3), repeated(130, 10));
    TimePlot* traffic = b.window.charts()->plot(ChartKind::Traffic);
    QVERIFY(traffic->legendNames().contains("ip:203.0.113.7 allowed (A)"));
    QVERIFY(traffic->legendNames().contains("ip:203.0.113.7 throttled (B)"));
    QCOMPARE(traffic->lineStyle(b.window.charts()->highlightLineOf(3)), Qt::DashLine);
    QCOMPARE(traffic->lineStyle(b.window.charts()->highlightLineOf(1)), Qt::SolidLine);
    QVERIFY(b.ui.errors.isEmpty());
}

// Highlighted three samples into the replay, the client's lines grow with each Step from the
// worker's new intervals alone, and hold the same values as a highlight after the end.
void TestReplayClients::aHighlightGrowsWithTheRun() {
    QVERIFY(dir_.isValid());
    const QString policy =
        writeFile(dir_, "window.json", policyJson("fixed_window", 10, 1.0, 1000));
    const QString log = writeFile(dir_, "busy.csv", twoBusyClientsLog());
    WindowBench b;
    b.window.resize(1280, 800);
    b.window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&b.window));
    auto* clientsView = b.window.findChild<QTableView*>("clientTable");
    QVERIFY(b.workbench.openPolicy(policy));
    QSignalSpy opened(&b.workbench, &Workbench::accessLogOpened);
    b.workbench.openAccessLog(log);
    QVERIFY(opened.wait(30000));
    SimulationSession& session = b.workbench.session();
    auto stepTo = [&](std::size_t samples) {
        b.workbench.step();
        return waitForFrames(session, [&] { return b.workbench.series().size() == samples; });
    };
    for (std::size_t n = 1; n <= 3; ++n)
        QVERIFY(stepTo(n));
    const ClientTableModel& clients = b.workbench.clients();
    QVERIFY(waitForFrames(session, [&] { return clients.rowCount() > 0; }));
    clickClient(clientsView, clients, "ip:203.0.113.7");
    QVERIFY(waitForFrames(session, [&] { return highlightValues(b.window, 1).size() == 3; }));
    QCOMPARE(highlightValues(b.window, 1), repeated(140, 3));
    for (std::size_t n = 4; n <= 10; ++n) {
        QVERIFY(stepTo(n));
        QVERIFY(waitForFrames(session, [&] { return highlightValues(b.window, 1).size() == int(n); }));
        QCOMPARE(highlightValues(b.window, 0), repeated(10, int(n)));
        QCOMPARE(highlightValues(b.window, 1), repeated(140, int(n)));
    }
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Finished; }));
}

QTEST_MAIN(TestReplayClients)
#include "tst_replay_clients.moc"
