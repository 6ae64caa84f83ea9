// SimulationSession and SimulationWorker (app/gui/simulation_*.cpp): the worker thread,
// pacing on an injected clock, pause and step, live retunes, batching and stale batches.

#include <QtTest>

#include "fixtures/gui_fixture.h"
#include "ratelab/policy.h"
#include "sim/scenario/scenario.h"
#include "gui/session/simulation_session.h"

using namespace ratelab;
using namespace ratelab::gui;
using namespace ratelab::guitest;

namespace {

constexpr Nanos kSecond = kNanosPerSecond;

Policy fixedWindow(std::int64_t quota) {
    Policy p;
    p.name = "api";
    p.algorithm = Algorithm::FixedWindow;
    p.capacity = quota;
    p.windowMs = 1000;
    p.key.source = KeySource::Peer;
    return p;
}

RunSetup attackSetup(double rate, int seconds, std::int64_t quota) {
    sim::ScenarioLoadResult r = sim::parseScenarioText(
        attackScenarioJson("flood", rate, seconds).toStdString(), "flood.json");
    if (!r.ok()) qFatal("scenario does not parse");
    RunSetup setup;
    setup.scenario = std::move(*r.scenario);
    setup.policies.policies.push_back(fixedWindow(quota));
    return setup;
}

// Per-sample counters of class `cls`, collected from frames.
struct Collector {
    std::vector<sim::Sample> samples;
    void take(const SimBatch& b) {
        if (b.fresh) samples.clear();
        samples.insert(samples.end(), b.samples.begin(), b.samples.end());
    }
};

}  // namespace

class TestSimulationSession : public QObject {
    Q_OBJECT

private slots:
    void loadsReadyWithTheRunShape();
    void pacedRunFollowsTheClock();
    void pauseStopsVirtualTimeAndStepAdvancesOneInterval();
    void retuneChangesTheNextDecisions_data();
    void retuneChangesTheNextDecisions();
    void fastRunSendsBatchesNotRequests();
    void reloadDropsTheOldRunsBatches();
};

void TestSimulationSession::loadsReadyWithTheRunShape() {
    SimulationSession session;
    QSignalSpy loaded(&session, &SimulationSession::runLoaded);
    session.load(attackSetup(100, 20, 10));
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Ready; }));
    QCOMPARE(loaded.count(), 1);
    const RunShape& shape = session.shape();
    QCOMPARE(shape.scenarioName, std::string("flood"));
    QCOMPARE(shape.duration, 20 * kSecond);
    QCOMPARE(shape.sampleInterval, kSecond);
    QCOMPARE(shape.classNames, (std::vector<std::string>{"legit", "attacker"}));
    QCOMPARE(shape.storeKind, std::string("memory"));
    QCOMPARE(session.now(), Nanos(0));
}

// At 10x real time, 0.75 s of wall clock is 7.5 s of virtual time, to the nanosecond.
void TestSimulationSession::pacedRunFollowsTheClock() {
    ManualClock clock;
    SimulationSession session(clock.clock());
    session.setSpeed(10);
    session.load(attackSetup(100, 20, 10));
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Ready; }));
    session.play();
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Running; }));
    clock.advance(750 * kNanosPerMilli);
    QVERIFY(waitForFrames(session, [&] { return session.now() == 7'500 * kNanosPerMilli; }));
    // From here on, a quarter second more of wall clock closes samples 8, 9 and 10.
    Collector c;
    QObject::connect(&session, &SimulationSession::frame, &session,
                     [&](const SimBatch& b) { c.take(b); });
    clock.advance(250 * kNanosPerMilli);
    QVERIFY(waitForFrames(session, [&] { return session.now() == 10 * kSecond; }));
    QCOMPARE(c.samples.size(), std::size_t(3));
    QCOMPARE(c.samples.front().end, 8 * kSecond);
    for (const sim::Sample& s : c.samples) {
        QCOMPARE(s.classes[1].offered, std::int64_t(100));
        QCOMPARE(s.classes[1].allowed, std::int64_t(10));
    }
}

void TestSimulationSession::pauseStopsVirtualTimeAndStepAdvancesOneInterval() {
    ManualClock clock;
    SimulationSession session(clock.clock());
    session.setSpeed(1);
    session.load(attackSetup(100, 20, 10));
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Ready; }));
    session.play();
    // The clock moves only once the worker has anchored its pace (play() reads the clock).
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Running; }));
    clock.advance(2'500 * kNanosPerMilli);
    QVERIFY(waitForFrames(session, [&] { return session.now() == 2'500 * kNanosPerMilli; }));

    session.pause();
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Paused; }));
    const Nanos pausedAt = session.now();
    QCOMPARE(pausedAt, 2'500 * kNanosPerMilli);

    // Ten seconds of wall clock pass while paused: virtual time must not follow them, so the
    // step lands exactly one sample interval after the pause.
    clock.advance(10 * kSecond);
    Collector c;
    QObject::connect(&session, &SimulationSession::frame, &session,
                     [&](const SimBatch& b) { c.take(b); });
    session.step();
    QVERIFY(waitForFrames(session, [&] { return session.now() != pausedAt; }));
    QCOMPARE(session.now(), pausedAt + kSecond);
    QCOMPARE(session.state(), RunState::Paused);
    QCOMPARE(c.samples.size(), std::size_t(1));  // the sample [2 s, 3 s) closed
    QCOMPARE(c.samples[0].start, 2 * kSecond);
    QCOMPARE(c.samples[0].end, 3 * kSecond);

    session.step();
    QVERIFY(waitForFrames(session, [&] { return session.now() == pausedAt + 2 * kSecond; }));
    QCOMPARE(c.samples.size(), std::size_t(2));
    QCOMPARE(c.samples[1].end, 4 * kSecond);
}

void TestSimulationSession::retuneChangesTheNextDecisions_data() {
    QTest::addColumn<int>("quotaBefore");
    QTest::addColumn<int>("quotaAfter");
    QTest::newRow("raise 10 -> 40") << 10 << 40;
    QTest::newRow("lower 50 -> 5") << 50 << 5;
    QTest::newRow("above the offered rate 10 -> 150") << 10 << 150;
}

// 100 requests per second into a fixed window of one second: each sample admits the quota and
// throttles the rest. A retune between two steps changes the very next sample.
void TestSimulationSession::retuneChangesTheNextDecisions() {
    QFETCH(int, quotaBefore);
    QFETCH(int, quotaAfter);
    SimulationSession session;
    Collector c;
    QObject::connect(&session, &SimulationSession::frame, &session,
                     [&](const SimBatch& b) { c.take(b); });
    session.load(attackSetup(100, 20, quotaBefore));
    for (int i = 1; i <= 3; ++i)
        session.step();
    QVERIFY(waitForFrames(session, [&] { return session.now() == 3 * kSecond; }));
    session.retune(0, tuningOf(fixedWindow(quotaAfter)));
    for (int i = 1; i <= 3; ++i)
        session.step();
    QVERIFY(waitForFrames(session, [&] { return session.now() == 6 * kSecond; }));
    QCOMPARE(c.samples.size(), std::size_t(6));
    for (std::size_t i = 0; i < 6; ++i) {
        const std::int64_t quota = i < 3 ? quotaBefore : quotaAfter;
        const sim::ClassCounters& attacker = c.samples[i].classes[1];
        QCOMPARE(attacker.offered, std::int64_t(100));
        QCOMPARE(attacker.allowed, std::min<std::int64_t>(quota, 100));
        QCOMPARE(attacker.throttled, std::max<std::int64_t>(100 - quota, 0));
    }
}

// 60 000 requests as fast as possible: the GUI receives a handful of frames, each carrying
// many samples' worth of work, and every sample arrives exactly once, in order.
void TestSimulationSession::fastRunSendsBatchesNotRequests() {
    SimulationSession session;
    session.setSpeed(0);
    Collector c;
    int frames = 0;
    QObject::connect(&session, &SimulationSession::frame, &session, [&](const SimBatch& b) {
        c.take(b);
        ++frames;
    });
    session.load(attackSetup(1000, 60, 10));
    session.play();
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Finished; }));
    QCOMPARE(c.samples.size(), std::size_t(60));
    for (std::size_t i = 0; i < c.samples.size(); ++i)
        QCOMPARE(c.samples[i].end, static_cast<Nanos>(i + 1) * kSecond);
    QVERIFY(session.requests() >= 60'000);
    QVERIFY2(frames * 100 < session.requests(),
             qPrintable(
                 QStringLiteral("%1 frames for %2 requests").arg(frames).arg(session.requests())));
}

// Loading again while a run plays: nothing of the old run reaches the views afterwards.
void TestSimulationSession::reloadDropsTheOldRunsBatches() {
    SimulationSession session;
    session.setSpeed(0);
    session.load(attackSetup(5000, 600, 10));
    session.play();
    QVERIFY(waitForFrames(session, [&] { return session.now() > 0; }));
    QSignalSpy loaded(&session, &SimulationSession::runLoaded);
    Collector c;
    bool staleSeen = false;
    QObject::connect(&session, &SimulationSession::frame, &session, [&](const SimBatch& b) {
        if (loaded.count() == 0) staleSeen = true;
        c.take(b);
    });
    session.load(attackSetup(100, 20, 10));
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Ready; }));
    QCOMPARE(loaded.count(), 1);
    QVERIFY(!staleSeen);
    QCOMPARE(session.now(), Nanos(0));
    QCOMPARE(session.shape().duration, 20 * kSecond);
    QVERIFY(c.samples.empty());
}

QTEST_MAIN(TestSimulationSession)
#include "tst_simulation_session.moc"
