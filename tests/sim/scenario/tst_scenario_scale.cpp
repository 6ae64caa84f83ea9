// Scaling a scenario's crowds (sim/scenario/scenario.h): the one rule `ratelab-cli fit --scale`
// and the workbench's scenario editor share, max(1, llround(count * factor)), and which actors
// it applies to (crowds; single actors and replayed logs stay as they are).

#include <QtTest>

#include "sim/scenario/scenario.h"

using namespace ratelab;
using namespace ratelab::sim;

class TestScenarioScale : public QObject {
    Q_OBJECT

private slots:
    void scaledCrowdCount_data();
    void scaledCrowdCount();
    void scaleCrowdsLeavesSingleActors();
    void aPoolTooSmallIsWidened();
};

void TestScenarioScale::scaledCrowdCount_data() {
    QTest::addColumn<qint64>("count");
    QTest::addColumn<double>("factor");
    QTest::addColumn<qint64>("scaled");
    QTest::newRow("a tenth of 1,700") << qint64(1700) << 0.1 << qint64(170);
    QTest::newRow("a tenth of 25 rounds half up") << qint64(25) << 0.1 << qint64(3);
    QTest::newRow("a tenth of 24 rounds down") << qint64(24) << 0.1 << qint64(2);
    QTest::newRow("one") << qint64(1700) << 1.0 << qint64(1700);
    QTest::newRow("2.5 times 3") << qint64(3) << 2.5 << qint64(8);
    QTest::newRow("2.5 times 2") << qint64(2) << 2.5 << qint64(5);
    QTest::newRow("tenfold") << qint64(1700) << 10.0 << qint64(17000);
    QTest::newRow("tiny stays 1: 4 x 0.1") << qint64(4) << 0.1 << qint64(1);
    QTest::newRow("tiny stays 1: 1 x 0.001") << qint64(1) << 0.001 << qint64(1);
    QTest::newRow("tiny stays 1: 2 x 0.2") << qint64(2) << 0.2 << qint64(1);
    QTest::newRow("a thousandfold") << qint64(1000) << 1000.0 << qint64(1'000'000);
}

void TestScenarioScale::scaledCrowdCount() {
    QFETCH(qint64, count);
    QFETCH(double, factor);
    QFETCH(qint64, scaled);
    QCOMPARE(sim::scaledCrowdCount(count, factor), scaled);
}

void TestScenarioScale::scaleCrowdsLeavesSingleActors() {
    Scenario s;
    Actor crowd;
    crowd.name = "crowd";
    crowd.count = 1700;
    Actor single;
    single.name = "single";
    single.count = 1;
    Actor small;
    small.name = "small";
    small.count = 3;
    s.actors = {crowd, single, small};
    QCOMPARE(scaleCrowds(s, 10), 2);
    QCOMPARE(s.actors[0].count, std::int64_t(17000));
    QCOMPARE(s.actors[1].count, std::int64_t(1));
    QCOMPARE(s.actors[2].count, std::int64_t(30));
    // Down again: the small crowd keeps one instance, not none.
    QCOMPARE(scaleCrowds(s, 0.01), 2);
    QCOMPARE(s.actors[0].count, std::int64_t(170));
    QCOMPARE(s.actors[2].count, std::int64_t(1));
    // An actor of one instance is single: scaling leaves it (and reports no change).
    QCOMPARE(scaleCrowds(s, 10), 1);
    QCOMPARE(s.actors[0].count, std::int64_t(1700));
    QCOMPARE(s.actors[2].count, std::int64_t(1));
}

// Two hundred readers in 198.51.100.0/24, scaled tenfold, need 2,000 addresses: the pool becomes
// the /21 holding it (2,048), which the loader takes; a /24 already large enough stays. Where the
// wider network would take in another actor's address, the pool stays and the loader says why.
void TestScenarioScale::aPoolTooSmallIsWidened() {
    Scenario s;
    Actor readers;
    readers.name = "readers";
    readers.count = 200;
    readers.identity.peer.kind = PeerSpec::Kind::Ipv4Pool;
    readers.identity.peer.cidr = *Cidr::parse("198.51.100.0/24");
    Actor scraper;
    scraper.name = "scraper";
    scraper.identity.peer.kind = PeerSpec::Kind::Ipv4;
    scraper.identity.peer.address = *IpAddress::parse("203.0.113.50");
    s.actors = {readers, scraper};

    Scenario small = s;
    QCOMPARE(scaleCrowds(small, 1.25), 1);
    QCOMPARE(small.actors[0].count, std::int64_t(250));
    QCOMPARE(small.actors[0].identity.peer.cidr.toString(), std::string("198.51.100.0/24"));

    Scenario tenfold = s;
    QCOMPARE(scaleCrowds(tenfold, 10), 1);
    QCOMPARE(tenfold.actors[0].count, std::int64_t(2000));
    QCOMPARE(tenfold.actors[0].identity.peer.cidr.toString(), std::string("198.51.96.0/21"));
    QCOMPARE(tenfold.actors[1].identity.peer.address.toString(), std::string("203.0.113.50"));

    Scenario crowded = s;
    crowded.actors[1].identity.peer.address = *IpAddress::parse("198.51.101.7");
    QCOMPARE(scaleCrowds(crowded, 10), 1);
    QCOMPARE(crowded.actors[0].count, std::int64_t(2000));
    QCOMPARE(crowded.actors[0].identity.peer.cidr.toString(), std::string("198.51.100.0/24"));
}

QTEST_APPLESS_MAIN(TestScenarioScale)
#include "tst_scenario_scale.moc"
