// sim/fault_store: the scenario's store outages reach settles as they reach consumptions. A
// settle inside an outage fails and changes nothing; outside it reaches the wrapped store.
// Time is injected.

#include <QtTest>

#include <array>
#include <memory>
#include <vector>

#include "ratelab/limiter.h"
#include "ratelab/memory_store.h"
#include "sim/run/fault_store.h"
#include "fixtures/sim_fixture.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

constexpr Nanos kSecond = kNanosPerSecond;

// An outage of the store by transport over [10 s, 20 s).
std::shared_ptr<sim::FaultStore> storeDownFrom10To20() {
    sim::ScenarioEvent outage;
    outage.kind = sim::ScenarioEvent::Kind::StoreOutage;
    outage.from = 10 * kSecond;
    outage.to = 20 * kSecond;
    outage.failure = sim::StoreFailure::Transport;
    return std::make_shared<sim::FaultStore>(std::shared_ptr<Store>(makeMemoryStore()),
                                             std::vector<sim::ScenarioEvent>{outage});
}

// Failed logins only, 3 per 1,000 s: nothing refills within the test.
Policy loginPolicy() {
    Policy p = tokenBucketPolicy("login", 3, 0.001);
    p.charge.rule = ChargeRule::Failures;
    return p;
}

}  // namespace

class TestFaultStore : public QObject {
    Q_OBJECT

private slots:
    // Three successful logins decided at 1 s fill the bucket's 3 charges. The first is settled
    // (refunded) at 5 s; the second at 15 s, inside the outage, is not; the third at 25 s is.
    // At 30 s two of the three charges are given back: two more requests pass, not three.
    void settleInsideAnOutageChangesNothing() {
        auto store = storeDownFrom10To20();
        Limiter limiter(policySet({loginPolicy()}), store);
        TestRequest request;
        request.from("198.51.100.7");
        std::array<Check, 3> checks;
        for (Check& c : checks) {
            limiter.check(request.view(), kSecond, c);
            QVERIFY(c.allowed);
        }
        Check refused;
        limiter.check(request.view(), kSecond, refused);
        QVERIFY(!refused.allowed);

        limiter.settle(checks[0], 200, 5 * kSecond);
        limiter.settle(checks[1], 200, 15 * kSecond);
        limiter.settle(checks[2], 200, 25 * kSecond);
        Check later;
        int passed = 0;
        for (int i = 0; i < 3; ++i) {
            limiter.check(request.view(), 30 * kSecond, later);
            passed += later.allowed;
        }
        QCOMPARE(passed, 2);
    }

    // The store's own answers: inside the window a settle fails by transport and is not
    // applied, one by one and in a batch that spans the window's edge.
    void settleBatchSplitsAtTheWindow() {
        auto store = storeDownFrom10To20();
        Limit limit;
        limit.algorithm = Algorithm::TokenBucket;
        limit.capacity = 5;
        limit.emissionInterval = 1000 * kSecond;
        limit.settles = true;
        ConsumeRequest consume;
        consume.limitId = 1;
        consume.limitName = "api";
        consume.limit = &limit;
        consume.key = consume.partition = "ip:198.51.100.7";
        consume.now = kSecond;
        const ConsumeResult charged = store->consume(consume);
        QCOMPARE(charged.status, StoreStatus::Ok);

        SettleRequest settle;
        settle.limitId = 1;
        settle.limitName = "api";
        settle.limit = &limit;
        settle.key = settle.partition = "ip:198.51.100.7";
        settle.cost = -1;
        settle.stamp = charged.stamp;
        settle.now = 12 * kSecond;
        const SettleResult down = store->settle(settle);
        QCOMPARE(down.status, StoreStatus::Transport);
        QVERIFY(!down.applied);
        QVERIFY(!down.error.empty());

        std::array<SettleRequest, 3> batch{settle, settle, settle};
        batch[0].now = 9 * kSecond;   // before the outage: applied
        batch[1].now = 19 * kSecond;  // inside: fails
        batch[2].now = 20 * kSecond;  // the window has ended: reaches the store
        std::array<SettleResult, 3> results;
        store->settleBatch(batch, results);
        QCOMPARE(results[0].status, StoreStatus::Ok);
        QVERIFY(results[0].applied);
        QCOMPARE(results[1].status, StoreStatus::Transport);
        QVERIFY(!results[1].applied);
        QCOMPARE(results[2].status, StoreStatus::Ok);
    }
};

QTEST_APPLESS_MAIN(TestFaultStore)
#include "tst_fault_store.moc"
