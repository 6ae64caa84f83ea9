// nginx limit_req semantics (engine/src/algorithms/leaky_bucket.h).

#include <QtTest>

#include "algorithms/leaky_bucket.h"

using namespace ratelab;
using namespace ratelab::algorithms;

namespace {

constexpr Nanos kMs = kNanosPerMilli;

// rate in requests per second (as nginx's rate=Nr/s), burst, delay (kNoDelay for nodelay).
Limit nginx(double rate, std::int64_t burst, std::int64_t delay) {
    Limit l;
    l.algorithm = Algorithm::LeakyBucket;
    l.capacity = burst;
    l.emissionInterval = static_cast<Nanos>(std::llround(1e9 / rate));
    l.delay = delay;
    return l;
}

}  // namespace

class TestLeakyBucket : public QObject {
    Q_OBJECT

private slots:
    // rate=1r/s burst=5 nodelay accepts 6 simultaneous requests and refuses the 7th.
    void burstFiveNodelayAcceptsSix() {
        const Limit l = nginx(1, 5, kNoDelay);
        LeakyState s;
        for (int i = 0; i < 6; ++i) {
            Decision d = leakyConsume(s, 1000 * kMs, 1, l);
            QVERIFY2(d.allowed, qPrintable(QString::number(i)));
            QCOMPARE(d.delay, Nanos(0));
            QCOMPARE(d.remaining, std::int64_t(5 - i));
            QCOMPARE(d.limit, std::int64_t(6));
        }
        Decision seventh = leakyConsume(s, 1000 * kMs, 1, l);
        QVERIFY(!seventh.allowed);
        QCOMPARE(seventh.reason, DenyReason::OverLimit);
        QCOMPARE(seventh.retryAfter, 1000 * kMs);
        QCOMPARE(s.excess, std::int64_t(5000));
    }

    // Without nodelay nginx queues the excess: the n-th extra request waits n / rate.
    void withoutNodelayExcessIsDelayed() {
        const Limit l = nginx(2, 3, 0);
        LeakyState s;
        QCOMPARE(leakyConsume(s, 0, 1, l).delay, Nanos(0));
        QCOMPARE(leakyConsume(s, 0, 1, l).delay, 500 * kMs);
        QCOMPARE(leakyConsume(s, 0, 1, l).delay, 1000 * kMs);
        QCOMPARE(leakyConsume(s, 0, 1, l).delay, 1500 * kMs);
        QVERIFY(!leakyConsume(s, 0, 1, l).allowed);
    }

    // delay=2: two excess requests pass at once, later ones are delayed.
    void delayTwoPassesTwoAtOnce() {
        const Limit l = nginx(1, 4, 2);
        LeakyState s;
        QCOMPARE(leakyConsume(s, 0, 1, l).delay, Nanos(0));
        QCOMPARE(leakyConsume(s, 0, 1, l).delay, Nanos(0));
        QCOMPARE(leakyConsume(s, 0, 1, l).delay, Nanos(0));
        QCOMPARE(leakyConsume(s, 0, 1, l).delay, 1000 * kMs);
        QCOMPARE(leakyConsume(s, 0, 1, l).delay, 2000 * kMs);
    }

    // Without a burst, nginx works in milliseconds: two requests in one millisecond at
    // 1000r/s are one too many; a millisecond later the next passes.
    void noBurstIsMillisecondGranular() {
        const Limit l = nginx(1000, 0, 0);
        LeakyState s;
        QVERIFY(leakyConsume(s, 5 * kMs, 1, l).allowed);
        QVERIFY(!leakyConsume(s, 5 * kMs + 999'999, 1, l).allowed);
        QVERIFY(leakyConsume(s, 6 * kMs, 1, l).allowed);
    }

    // nginx's truncating leak at rates under 1r/ms: 30r/m is rate=500 (thousandths per second);
    // a request 1 ms after another leaks 500 * 1 / 1000 = 0, and `last` still moves, so the
    // leak of that millisecond is lost. Reproduced on purpose.
    void truncatingLeakIsReproduced() {
        const Limit l = nginx(0.5, 1, kNoDelay);
        QCOMPARE(leakyRate(l), std::int64_t(500));
        LeakyState s;
        QVERIFY(leakyConsume(s, 0, 1, l).allowed);        // excess 0
        QVERIFY(leakyConsume(s, 1 * kMs, 1, l).allowed);  // excess 0 - 0 + 1000 = 1000
        QCOMPARE(s.excess, std::int64_t(1000));
        QCOMPARE(s.lastMs, std::int64_t(1));
        QVERIFY(!leakyConsume(s, 2 * kMs, 1, l).allowed);
        // 2000 ms after `last`: 500 * 2000 / 1000 = 1000 leaked, excess back to 1000.
        QVERIFY(leakyConsume(s, 2001 * kMs, 1, l).allowed);
    }

    void retryAfterIsExact() {
        const Limit l = nginx(3, 2, kNoDelay);
        LeakyState s;
        for (int i = 0; i < 3; ++i)
            QVERIFY(leakyConsume(s, 0, 1, l).allowed);
        Decision d = leakyConsume(s, 0, 1, l);
        QVERIFY(!d.allowed);
        LeakyState copy = s;
        QVERIFY(!leakyConsume(copy, d.retryAfter - 1, 1, l).allowed);
        copy = s;
        QVERIFY(leakyConsume(copy, d.retryAfter, 1, l).allowed);
    }

    void backwardsClockNeverLeaks() {
        const Limit l = nginx(1, 1, kNoDelay);
        LeakyState s;
        QVERIFY(leakyConsume(s, 100'000 * kMs, 1, l).allowed);
        QVERIFY(leakyConsume(s, 100'000 * kMs, 1, l).allowed);
        QVERIFY(!leakyConsume(s, 30'000 * kMs, 1, l).allowed);  // 70 s back: no leak
    }

    void idleWhenANewKeyWouldDecideTheSame() {
        const Limit l = nginx(1, 2, kNoDelay);
        LeakyState s;
        leakyConsume(s, 0, 1, l);
        leakyConsume(s, 0, 1, l);  // excess 1000
        // A new key's next request has excess 0; this one reaches 0 once 2000 thousandths leaked.
        QVERIFY(!isIdle(s, 2000 * kMs - 1, l));
        QVERIFY(isIdle(s, 2000 * kMs, l));
    }

    void costAboveBurstPlusOne() {
        const Limit l = nginx(1, 2, kNoDelay);
        LeakyState s;
        QCOMPARE(leakyConsume(s, 0, 4, l).reason, DenyReason::CostExceedsCapacity);
        QVERIFY(leakyConsume(s, 0, 3, l).allowed);
        QVERIFY(!leakyConsume(s, 0, 1, l).allowed);
    }
};

QTEST_APPLESS_MAIN(TestLeakyBucket)
#include "tst_leaky_bucket.moc"
