// The GUI thread never stalls: a run of 10^7 requests as fast as possible, with the whole
// window drawing, while a watchdog timer on the GUI thread measures the largest gap between
// its ticks; once with one policy, once in compare mode (every request decided by A and B, the
// charts drawing both, the compared tables refreshed). Prints the figures (gap, frame times,
// wall time, decisions per second).

#include <QElapsedTimer>
#include <QtTest>

#include <algorithm>

#include "fixtures/gui_fixture.h"
#include "gui/window/main_window.h"
#include "gui/session/workbench.h"

using namespace ratelab;
using namespace ratelab::gui;
using namespace ratelab::guitest;

class TestResponsiveness : public QObject {
    Q_OBJECT

private slots:
    void tenMillionRequestsNeverStallTheGui_data();
    void tenMillionRequestsNeverStallTheGui();
};

void TestResponsiveness::tenMillionRequestsNeverStallTheGui_data() {
    QTest::addColumn<bool>("compare");
    QTest::newRow("one policy") << false;
    QTest::newRow("compare mode") << true;
}

// 50 s of virtual time: one client rotating its Authorization header at 150 000 requests per
// second (every request a new credential, so the budget and the keyspace work), one flooding
// from a single address at 49 000 per second, and 1000 users: 10^7 requests in all.
void TestResponsiveness::tenMillionRequestsNeverStallTheGui() {
    QFETCH(bool, compare);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString policy = writeFile(dir, "api.json", R"({
  "version": 1,
  "policies": [ { "name": "api", "match": { "path_prefix": "/" }, "algorithm": "token_bucket",
                  "capacity": 20, "refill_per_second": 5.0 } ]
}
)");
    const QString scenario = writeFile(dir, "ten-million.json", R"({
  "name": "ten-million",
  "title": "Ten million requests",
  "seed": 5,
  "duration_s": 50,
  "sample_ms": 100,
  "actors": [
    { "name": "users", "class": "legit", "count": 1000,
      "arrival": { "kind": "constant", "rate_per_s": 1 },
      "request": { "method": "GET", "path": "/api" },
      "identity": { "peer": { "kind": "ipv4_pool", "cidr": "10.1.0.0/16" }, "authorization": "fixed" } },
    { "name": "rotator", "class": "attacker", "count": 1,
      "arrival": { "kind": "constant", "rate_per_s": 150000 },
      "request": { "method": "GET", "path": "/api" },
      "identity": { "peer": { "kind": "ipv4", "address": "203.0.113.7" }, "authorization": "rotate" } },
    { "name": "flood", "class": "attacker", "count": 1,
      "arrival": { "kind": "constant", "rate_per_s": 49000 },
      "request": { "method": "GET", "path": "/api" },
      "identity": { "peer": { "kind": "ipv4", "address": "203.0.113.8" } } }
  ],
  "events": [ { "kind": "store_outage", "failure": "transport", "from_s": 20, "to_s": 25 } ]
}
)");
    RecordingInteraction ui;
    Workbench workbench(ui);
    MainWindow window(workbench, ui);
    window.resize(1280, 800);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(workbench.openPolicy(policy));
    QVERIFY(workbench.openScenario(scenario));
    if (compare) {
        // B refills twice as fast, so the lanes differ and flips and collateral are counted.
        Policy b = workbench.document().policies().policies[0];
        b.refillPerSecond = 10.0;
        workbench.document().setPolicy(0, b);
        QVERIFY(workbench.compareWithLoaded());
    }
    SimulationSession& session = workbench.session();
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Ready; }));
    // One sample interval first, so that every view has drawn a frame once (first-use costs such
    // as glyph caches are not what this test measures); the measured run continues from there.
    workbench.step();
    QVERIFY(waitForFrames(session, [&] { return session.now() == 100 * kNanosPerMilli; }));

    // The watchdog: a 5 ms timer on the GUI thread; a stall shows as a long gap between ticks.
    QElapsedTimer clock;
    qint64 last = -1;
    qint64 largestGap = 0;
    QTimer watchdog;
    watchdog.setTimerType(Qt::PreciseTimer);
    watchdog.setInterval(5);
    connect(&watchdog, &QTimer::timeout, this, [&] {
        const qint64 now = clock.nsecsElapsed();
        if (last >= 0) largestGap = std::max(largestGap, now - last);
        last = now;
    });
    clock.start();
    watchdog.start();
    workbench.setSpeed(0);
    workbench.run();
    QVERIFY(waitForFrames(
        session, [&] { return session.state() == RunState::Finished; }, 240000));
    const double wall = static_cast<double>(clock.nsecsElapsed()) / 1e9;
    watchdog.stop();

    QVERIFY(session.requests() >= 10'000'000);
    QCOMPARE(workbench.series().size(), std::size_t(500));
    QCOMPARE(workbench.series().comparing(), compare);
    if (compare) {
        // The end's comparison covers every request.
        QVERIFY(workbench.comparedActors().comparison());
        QCOMPARE(workbench.comparedActors().comparison()->a.requests, session.requests());
    }
    const SimulationSession::FrameStats& frames = session.frameStats();
    qInfo(
        "10^7 run (%s): %lld requests in %.2f s wall (%.2f s in the engine, %.0f decisions/s); "
        "%lld frames, mean %.2f ms, max %.2f ms each; watchdog largest gap %.2f ms",
        compare ? "compare mode" : "one policy", static_cast<long long>(session.requests()), wall,
        session.wallSeconds(), static_cast<double>(session.requests()) / session.wallSeconds(),
        static_cast<long long>(frames.frames),
        static_cast<double>(frames.totalNanos) / static_cast<double>(frames.frames) / 1e6,
        static_cast<double>(frames.maxNanos) / 1e6, static_cast<double>(largestGap) / 1e6);
    QVERIFY2(largestGap < 50'000'000,
             qPrintable(QStringLiteral("the GUI thread stalled for %1 ms").arg(largestGap / 1e6)));
    QVERIFY(ui.errors.isEmpty());
}

QTEST_MAIN(TestResponsiveness)
#include "tst_responsiveness.moc"
