// The store choice (app/gui/session/store_choice.cpp) through the worker: Redis on the virtual clock
// decides as the memory store does, and a Redis that cannot be reached fails the run at once
// with a message naming it, instead of a run of fail-open passes or a hang.

#include <QtTest>

#include "fixtures/gui_fixture.h"
#include "fixtures/redis_fixture.h"
#include "sim/scenario/scenario.h"
#include "gui/session/simulation_session.h"
#include "gui/session/workbench.h"

using namespace ratelab;
using namespace ratelab::gui;
using namespace ratelab::guitest;

namespace {

RunSetup setupOn(const StoreChoice& store) {
    sim::ScenarioLoadResult r =
        sim::parseScenarioText(attackScenarioJson("flood", 100, 20).toStdString(), "flood.json");
    if (!r.ok()) qFatal("scenario does not parse");
    RunSetup setup;
    setup.scenario = std::move(*r.scenario);
    Policy p;
    p.name = "api";
    p.algorithm = Algorithm::TokenBucket;
    p.capacity = 20;
    p.refillPerSecond = 5;
    p.key.source = KeySource::Peer;
    setup.policies.policies.push_back(p);
    setup.store = store;
    return setup;
}

std::vector<sim::Sample> runToEnd(const StoreChoice& store) {
    SimulationSession session;
    session.setSpeed(0);
    std::vector<sim::Sample> samples;
    QObject::connect(&session, &SimulationSession::frame, &session, [&](const SimBatch& b) {
        samples.insert(samples.end(), b.samples.begin(), b.samples.end());
    });
    session.load(setupOn(store));
    session.play();
    if (!waitForFrames(session, [&] {
            return session.state() == RunState::Finished || session.state() == RunState::Failed;
        })) {
        qFatal("the run did not end");
    }
    return samples;
}

}  // namespace

class TestStoreChoice : public QObject {
    Q_OBJECT

private slots:
    void unreachableRedisFailsWithAClearMessage_data();
    void unreachableRedisFailsWithAClearMessage();
    void redisOnTheVirtualClockDecidesAsMemory();
    void theWorkbenchShowsTheFailure();
};

void TestStoreChoice::unreachableRedisFailsWithAClearMessage_data() {
    QTest::addColumn<QString>("url");
    QTest::newRow("closed port") << "redis://127.0.0.1:1/0";
    QTest::newRow("missing socket") << "unix:///nonexistent/ratelab-test/redis.sock";
}

void TestStoreChoice::unreachableRedisFailsWithAClearMessage() {
    QFETCH(QString, url);
    SimulationSession session;
    QSignalSpy failed(&session, &SimulationSession::failed);
    StoreChoice choice;
    choice.kind = StoreChoice::Kind::Redis;
    choice.redisUrl = url.toStdString();
    QElapsedTimer elapsed;
    elapsed.start();
    session.load(setupOn(choice));
    QVERIFY(failed.wait(10000));
    QVERIFY(elapsed.elapsed() < 5000);
    QCOMPARE(session.state(), RunState::Failed);
    const QString message = failed.at(0).at(0).toString();
    QVERIFY2(message.contains(url), qPrintable(message));
    QVERIFY2(message.contains("Cannot use Redis"), qPrintable(message));
    // Nothing to run: play does nothing.
    session.play();
    session.step();
    QCOMPARE(session.now(), Nanos(0));
}

// Caller time: Redis follows the virtual clock, so the same scenario decides the same way,
// sample by sample, as on the memory store. A second run starts from empty buckets.
void TestStoreChoice::redisOnTheVirtualClockDecidesAsMemory() {
    testing::RedisServer server;
    std::string error;
    QVERIFY2(server.start(&error), error.c_str());
    StoreChoice redis;
    redis.kind = StoreChoice::Kind::Redis;
    redis.redisUrl = server.url();
    const std::vector<sim::Sample> memory = runToEnd(StoreChoice{});
    for (int round = 0; round < 2; ++round) {
        const std::vector<sim::Sample> onRedis = runToEnd(redis);
        QCOMPARE(onRedis.size(), memory.size());
        for (std::size_t i = 0; i < memory.size(); ++i)
            QCOMPARE(onRedis[i].classes, memory[i].classes);
    }
    QCOMPARE(memory.size(), std::size_t(20));
    QCOMPARE(memory[5].classes[1].allowed, std::int64_t(5));  // the attacker at the refill rate
}

// Through the workbench: choosing a Redis that is not there shows the reason in a dialog.
void TestStoreChoice::theWorkbenchShowsTheFailure() {
    QTemporaryDir dir;
    RecordingInteraction ui;
    Workbench workbench(ui);
    QVERIFY(workbench.openPolicy(writeFile(dir, "p.json", policyJson("token_bucket", 20, 5.0))));
    QVERIFY(workbench.openScenario(writeFile(dir, "s.json", attackScenarioJson("flood", 100, 20))));
    QVERIFY(waitForFrames(workbench.session(),
                          [&] { return workbench.session().state() == RunState::Ready; }));
    StoreChoice redis;
    redis.kind = StoreChoice::Kind::Redis;
    redis.redisUrl = "redis://127.0.0.1:1/0";
    QSignalSpy failed(&workbench.session(), &SimulationSession::failed);
    workbench.setStoreChoice(redis);
    QVERIFY(failed.wait(10000));
    QCOMPARE(ui.errors.size(), 1);
    QVERIFY(ui.errors[0].text.contains("Cannot use Redis at redis://127.0.0.1:1/0"));
    // Back to memory: the run is rebuilt and ready.
    workbench.setStoreChoice(StoreChoice{});
    QVERIFY(waitForFrames(workbench.session(),
                          [&] { return workbench.session().state() == RunState::Ready; }));
}

QTEST_MAIN(TestStoreChoice)
#include "tst_store_choice.moc"
