// The Limiter (engine/src/limiter/limiter.cpp) when its store fails or is slow: each policy's
// on_store_error rule, the bound on every store call, and the per-replica local limit that
// decides while the shared store is down, on a manual clock.

#include <QtTest>

#include "fixtures/limiter_fixture.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

constexpr Nanos kSecond = kNanosPerSecond;

}  // namespace

class TestLimiterStoreErrors : public QObject {
    Q_OBJECT

private slots:
    void storeErrorsFollowThePolicyRule_data() {
        QTest::addColumn<int>("rule");
        QTest::addColumn<int>("failure");
        QTest::addColumn<int>("status");
        QTest::addColumn<int>("outcome");
        QTest::addColumn<QString>("code");
        const int open = int(StoreErrorRule::FailOpenOnTransport);
        const int deny = int(StoreErrorRule::Deny);
        const int transport = int(StoreStatus::Transport);
        const int local = int(StoreErrorRule::Local);
        const int refused = int(StoreStatus::Refused);
        const int full = int(StoreStatus::Full);
        QTest::newRow("transport, fail open")
            << open << transport << 200 << int(PolicyOutcome::FailedOpen) << "";
        QTest::newRow("transport, deny")
            << deny << transport << 503 << int(PolicyOutcome::FailedClosed) << "store_unavailable";
        QTest::newRow("refusal, fail open")
            << open << refused << 503 << int(PolicyOutcome::StoreRefused) << "store_refused";
        QTest::newRow("refusal, deny")
            << deny << refused << 503 << int(PolicyOutcome::StoreRefused) << "store_refused";
        QTest::newRow("transport, local")
            << local << transport << 200 << int(PolicyOutcome::DecidedLocally) << "";
        QTest::newRow("refusal, local")
            << local << refused << 503 << int(PolicyOutcome::StoreRefused) << "store_refused";
        for (int rule : {open, deny, local}) {
            QTest::addRow("full, rule %d", rule)
                << rule << full << 503 << int(PolicyOutcome::StoreFull) << "store_full";
        }
    }
    void storeErrorsFollowThePolicyRule() {
        QFETCH(int, rule);
        QFETCH(int, failure);
        QFETCH(int, status);
        QFETCH(int, outcome);
        QFETCH(QString, code);
        Policy p = tokenBucketPolicy("api", 5, 1.0);
        p.onStoreError = StoreErrorRule(rule);
        auto store = std::make_shared<ScriptedStore>();
        store->failWith = StoreStatus(failure);
        EventRecorder observer;
        LimiterOptions options;
        options.observer = &observer;
        Limiter limiter(policySet({p}), store, options);
        TestRequest request;
        request.from("192.0.2.1");
        Verdict v = limiter.decide(request.view(), 0);
        QCOMPARE(v.status, status);
        QCOMPARE(v.check.policies()[0].outcome, PolicyOutcome(outcome));
        QCOMPARE(QString::fromStdString(std::string(refusalCodeName(v.code))), code);
        QCOMPARE(headerValue(v, "RateLimit"), std::string("<absent>"));  // no trustworthy state
        QCOMPARE(observer.storeErrors.size(), std::size_t(1));
        QCOMPARE(observer.storeErrors[0].outcome, PolicyOutcome(outcome));
        QCOMPARE(observer.storeErrors[0].status, StoreStatus(failure));
    }

    // Every store call is bounded by the shorter of its policy's store_timeout_ms and the
    // limiter's maxStoreTimeout (a service's --store-timeout-ms): consumptions and settles alike.
    void storeCallsTakeTheShorterTimeout_data() {
        QTest::addColumn<int>("policyMs");
        QTest::addColumn<int>("limiterMs");  // 0: none
        QTest::addColumn<int>("expectedMs");
        QTest::newRow("the policy's alone") << 500 << 0 << 500;
        QTest::newRow("the service's, shorter") << 500 << 15 << 15;
        QTest::newRow("the policy's, shorter") << 10 << 15 << 10;
        QTest::newRow("equal") << 15 << 15 << 15;
    }
    void storeCallsTakeTheShorterTimeout() {
        QFETCH(int, policyMs);
        QFETCH(int, limiterMs);
        QFETCH(int, expectedMs);
        Policy p = tokenBucketPolicy("api", 5, 1.0);
        p.storeTimeout = policyMs * kNanosPerMilli;
        p.charge.rule = ChargeRule::Failures;  // settles: a second kind of store call
        auto store = std::make_shared<ScriptedStore>();
        LimiterOptions options;
        options.maxStoreTimeout = limiterMs * kNanosPerMilli;
        Limiter limiter(policySet({p}), store, options);
        TestRequest request;
        request.from("192.0.2.1");
        Verdict v = limiter.decide(request.view(), 0);
        QVERIFY(v.allowed);
        limiter.settle(v.check, 200, 0);  // a success: refunded
        std::vector<Check> checks(2);
        std::vector<RequestView> views{request.view(), request.view()};
        limiter.checkBatch(views, 0, checks);
        QCOMPARE(store->timeouts.size(), std::size_t(4));
        for (Nanos t : store->timeouts)
            QCOMPARE(t, expectedMs * kNanosPerMilli);
    }

    // on_store_error "local": while the shared store is unreachable, a process holds
    // 1/replicas of the limit on its own memory (20 at once, 2 per second over 4 replicas: 5 at
    // once, 0.5 per second), and the first answer of the shared store takes over again.
    void localLimitWhileTheSharedStoreIsDown() {
        Policy p = tokenBucketPolicy("api", 20, 2.0);
        p.onStoreError = StoreErrorRule::Local;
        PolicySet set = policySet({p});
        set.store.replicas = 4;
        auto store = std::make_shared<ScriptedStore>();
        EventRecorder observer;
        LimiterOptions options;
        options.observer = &observer;
        Limiter limiter(set, store, options);
        QVERIFY(limiter.localStore() != nullptr);
        TestRequest request;
        request.from("192.0.2.1");

        store->failWith = StoreStatus::Transport;
        Verdict v;
        for (int i = 0; i < 5; ++i) {
            limiter.decide(request.view(), 0, v);
            QCOMPARE(v.status, 200);
            QCOMPARE(v.check.policies()[0].outcome, PolicyOutcome::DecidedLocally);
            QCOMPARE(v.check.policies()[0].decision.remaining, std::int64_t(4 - i));
        }
        limiter.decide(request.view(), 0, v);
        QCOMPARE(v.status, 429);
        QCOMPARE(v.code, RefusalCode::RateLimited);
        QCOMPARE(v.check.policies()[0].outcome, PolicyOutcome::DecidedLocally);
        QCOMPARE(headerValue(v, "Retry-After"), std::string("2"));       // one token per 2 s
        QCOMPARE(headerValue(v, "RateLimit"), std::string("<absent>"));  // a partial view
        QVERIFY(v.body.find("\"violated-policies\":[\"api\"]") != std::string::npos);
        QCOMPARE(observer.storeErrors.size(), std::size_t(6));
        QCOMPARE(observer.storeErrors[5].outcome, PolicyOutcome::DecidedLocally);
        QVERIFY(!observer.storeErrors[5].decision.allowed);
        QVERIFY(observer.hits.empty());                  // one event per decision: the store error
        limiter.decide(request.view(), 2 * kSecond, v);  // the local bucket refilled one
        QCOMPARE(v.status, 200);
        QCOMPARE(v.check.policies()[0].outcome, PolicyOutcome::DecidedLocally);

        // The shared store answers again: its own bucket, untouched by the outage, decides.
        store->failWith = StoreStatus::Ok;
        limiter.decide(request.view(), 2 * kSecond, v);
        QCOMPARE(v.status, 200);
        QCOMPARE(v.check.policies()[0].outcome, PolicyOutcome::Passed);
        QCOMPARE(v.check.policies()[0].decision.remaining, std::int64_t(19));
        QCOMPARE(headerValue(v, "RateLimit"), std::string("\"api\";r=19;t=1"));
    }

    // The local limit of each algorithm: what passes at once and the rate divided by the
    // replicas (at least one request at once), windows kept.
    void perReplicaLimitDividesTheNumbers_data() {
        QTest::addColumn<int>("algorithm");
        QTest::addColumn<qint64>("capacity");
        QTest::addColumn<qint64>("interval");
        QTest::addColumn<qint64>("delay");
        QTest::addColumn<int>("replicas");
        QTest::addColumn<qint64>("localCapacity");
        QTest::addColumn<qint64>("localInterval");
        QTest::addColumn<qint64>("localDelay");
        const int tb = int(Algorithm::TokenBucket);
        const int fw = int(Algorithm::FixedWindow);
        const int lb = int(Algorithm::LeakyBucket);
        QTest::newRow("one replica") << tb << qint64(20) << qint64(500) << qint64(0) << 1
                                     << qint64(20) << qint64(500) << qint64(0);
        QTest::newRow("token bucket / 4") << tb << qint64(20) << qint64(500) << qint64(0) << 4
                                          << qint64(5) << qint64(2000) << qint64(0);
        QTest::newRow("rounded down") << tb << qint64(10) << qint64(500) << qint64(0) << 4
                                      << qint64(2) << qint64(2000) << qint64(0);
        QTest::newRow("at least one") << tb << qint64(3) << qint64(500) << qint64(0) << 8
                                      << qint64(1) << qint64(4000) << qint64(0);
        QTest::newRow("window quota") << fw << qint64(100) << qint64(1) << qint64(0) << 3
                                      << qint64(33) << qint64(1) << qint64(0);
        // burst 9 passes 10 at once; over 4 replicas 2 at once: burst 1, delay 5 / 4 = 1.
        QTest::newRow("leaky burst") << lb << qint64(9) << qint64(100) << qint64(5) << 4
                                     << qint64(1) << qint64(400) << qint64(1);
        QTest::newRow("leaky nodelay") << lb << qint64(0) << qint64(100) << qint64(kNoDelay) << 2
                                       << qint64(0) << qint64(200) << qint64(kNoDelay);
    }
    void perReplicaLimitDividesTheNumbers() {
        QFETCH(int, algorithm);
        QFETCH(qint64, capacity);
        QFETCH(qint64, interval);
        QFETCH(qint64, delay);
        QFETCH(int, replicas);
        QFETCH(qint64, localCapacity);
        QFETCH(qint64, localInterval);
        QFETCH(qint64, localDelay);
        Limit l;
        l.algorithm = Algorithm(algorithm);
        l.capacity = capacity;
        l.emissionInterval = interval;
        l.window = 60 * kSecond;
        l.delay = delay;
        const Limit local = perReplicaLimit(l, replicas);
        QCOMPARE(local.capacity, localCapacity);
        QCOMPARE(local.emissionInterval, localInterval);
        QCOMPARE(local.delay, localDelay);
        QCOMPARE(local.window, 60 * kSecond);
    }
};

QTEST_APPLESS_MAIN(TestLimiterStoreErrors)
#include "tst_limiter_store_errors.moc"
