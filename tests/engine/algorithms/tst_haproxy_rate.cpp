// HAProxy's rate counter (engine/src/algorithms/haproxy_rate.h): the two traces reproduced on
// HAProxy 2.6.12 with `stick-table type ip size 100 expire 60s store http_req_rate(10s)`, then
// the counter's edge cases, each computed by hand from HAProxy's freq_ctr arithmetic.

#include <QtTest>

#include "algorithms/algorithms.h"
#include "algorithms/haproxy_rate.h"

using namespace ratelab;
using namespace ratelab::algorithms;

namespace {

constexpr Nanos kMs = kNanosPerMilli;

Limit haproxy(std::int64_t capacity, std::int64_t periodMs, bool countRefused,
              std::int64_t expireMs = 0) {
    Limit l;
    l.algorithm = Algorithm::HaproxyRate;
    l.capacity = capacity;
    l.window = periodMs * kMs;
    l.countRefused = countRefused;
    l.expire = expireMs * kMs;
    return l;
}

struct Step {
    std::int64_t ms;  // from the trace's start
    bool allowed;
};

// Runs `steps` from `startMs` and checks each decision; returns the state.
HaproxyRateState run(const Limit& l, std::int64_t startMs, const std::vector<Step>& steps) {
    HaproxyRateState s;
    for (const Step& step : steps) {
        const Decision d = haproxyRateConsume(s, (startMs + step.ms) * kMs, 1, l);
        if (d.allowed != step.allowed) {
            qWarning("at %lld ms: expected %s", static_cast<long long>(step.ms),
                     step.allowed ? "pass" : "refusal");
        }
        if (d.allowed != step.allowed) return HaproxyRateState{};
    }
    return s;
}

// The decisions are the same wherever the first request falls on an even ms.
constexpr std::int64_t kStarts[] = {0, 1'700'000'000'000, 86'400'000};

}  // namespace

class TestHaproxyRate : public QObject {
    Q_OBJECT

private slots:
    // Trace 1: `track-sc0 src` then `deny if { sc_http_req_rate(0) gt 5 }`: every request is
    // counted before the rate is read, the refused ones too.
    void traceTrackThenDeny() {
        const Limit l = haproxy(5, 10'000, true, 60'000);
        for (const std::int64_t start : kStarts) {
            HaproxyRateState s;
            for (std::int64_t t : {0, 100, 200, 300, 400}) {
                const Decision d = haproxyRateConsume(s, (start + t) * kMs, 1, l);
                QVERIFY(d.allowed);
                QCOMPARE(d.remaining, 5 - (t / 100 + 1));
            }
            const struct {
                std::int64_t t;
                std::int64_t estimate;
            } refused[] = {{500, 6}, {600, 7}, {12'000, 6}};
            for (const auto& r : refused) {
                const Decision d = haproxyRateConsume(s, (start + r.t) * kMs, 1, l);
                QVERIFY2(!d.allowed, qPrintable(QString::number(r.t)));
                QCOMPARE(d.reason, DenyReason::OverLimit);
                QCOMPARE(haproxyRead(unpack(s), start + r.t, 10'000), r.estimate);
            }
            // After 12000 ms: the period rotated, P = 7, C = 1, T = 10000.
            const HaproxyCounter c = unpack(s);
            QCOMPARE(c.tickMs, start + 10'000);
            QCOMPARE(c.previous, std::int64_t(7));
            QCOMPARE(c.current, std::int64_t(1));
            for (const auto& [t, estimate, pass] :
                 std::vector<std::tuple<std::int64_t, std::int64_t, bool>>{{16'000, 4, true},
                                                                           {17'000, 5, true},
                                                                           {18'000, 5, true},
                                                                           {19'000, 5, true},
                                                                           {19'500, 6, false}}) {
                const Decision d = haproxyRateConsume(s, (start + t) * kMs, 1, l);
                QCOMPARE(d.allowed, pass);
                QCOMPARE(haproxyRead(unpack(s), start + t, 10'000), estimate);
            }
        }
    }

    // Trace 2: `deny if { src_http_req_rate(fb) gt 5 }` before `track-sc0 src`: the rate is
    // read before counting and refused requests are not counted.
    void traceDenyThenTrack() {
        const Limit l = haproxy(5, 10'000, false, 60'000);
        for (const std::int64_t start : kStarts) {
            const HaproxyRateState s = run(l, start,
                                           {{0, true},
                                            {100, true},
                                            {200, true},
                                            {300, true},
                                            {400, true},
                                            {500, true},
                                            {600, false},
                                            {700, false},
                                            {10'500, true},
                                            {10'600, false},
                                            {14'000, true},
                                            {14'100, true},
                                            {14'200, false}});
            const HaproxyCounter c = unpack(s);
            QVERIFY(c.used);
            QCOMPARE(c.tickMs, start + 10'000);
            QCOMPARE(c.previous, std::int64_t(6));
            QCOMPARE(c.current, std::int64_t(3));
        }
    }

    // A first request on an odd ms starts the period one ms earlier: every boundary moves too.
    void oddFirstMillisecondStartsOneEarlier() {
        const Limit l = haproxy(5, 10'000, true);
        HaproxyRateState s;
        haproxyRateConsume(s, 1001 * kMs, 1, l);
        QCOMPARE(unpack(s).tickMs, std::int64_t(1000));
        // The period is [1000, 11000): 10999 is still in it, 11000 starts the next.
        haproxyRateConsume(s, 10'999 * kMs, 1, l);
        QCOMPARE(unpack(s).current, std::int64_t(2));
        haproxyRateConsume(s, 11'000 * kMs, 1, l);
        QCOMPARE(unpack(s).tickMs, std::int64_t(11'000));
        QCOMPARE(unpack(s).previous, std::int64_t(2));
    }

    // The edge cases of the counter, each as (events, then a request: its estimate and result).
    void edgeCases_data() {
        QTest::addColumn<std::int64_t>("periodMs");
        QTest::addColumn<bool>("countRefused");
        QTest::addColumn<std::int64_t>("expireMs");
        QTest::addColumn<std::int64_t>("capacity");
        QTest::addColumn<QList<qint64>>("before");  // ms of earlier requests
        QTest::addColumn<qint64>("at");
        QTest::addColumn<qint64>("tick");      // T after the request at `at`
        QTest::addColumn<qint64>("previous");  // P after it
        QTest::addColumn<qint64>("current");   // C after it
        QTest::addColumn<bool>("allowed");

        // One idle period: P keeps the old count and T moves by one period, not to `at`.
        QTest::newRow("one idle period keeps the alignment")
            << std::int64_t(1000) << true << std::int64_t(0) << std::int64_t(10)
            << QList<qint64>{0, 10, 20} << qint64(1500) << qint64(1000) << qint64(3) << qint64(1)
            << true;
        // Two idle periods or more: P is dropped and the period re-aligns on the request.
        QTest::newRow("two idle periods re-align")
            << std::int64_t(1000) << true << std::int64_t(0) << std::int64_t(10)
            << QList<qint64>{0, 10, 20} << qint64(2501) << qint64(2500) << qint64(0) << qint64(1)
            << true;
        // Exactly two periods after T: re-aligned as well (now - (T + p) >= p).
        QTest::newRow("exactly two periods re-align")
            << std::int64_t(1000) << true << std::int64_t(0) << std::int64_t(10) << QList<qint64>{0}
            << qint64(2000) << qint64(2000) << qint64(0) << qint64(1) << true;
        // P weighted by the part of the period still to come: 9 * 300 / 1000 = 2.7 -> 2, + 1.
        QTest::newRow("previous weighted, floored once")
            << std::int64_t(1000) << true << std::int64_t(0) << std::int64_t(3)
            << QList<qint64>{0, 1, 2, 3, 4, 5, 6, 7, 8} << qint64(1700) << qint64(1000) << qint64(9)
            << qint64(1) << true;
        QTest::newRow("previous weighted, one over")
            << std::int64_t(1000) << true << std::int64_t(0) << std::int64_t(3)
            << QList<qint64>{0, 1, 2, 3, 4, 5, 6, 7, 8} << qint64(1600) << qint64(1000) << qint64(9)
            << qint64(1) << false;
        // Reading before counting, `gt 0`: the low-rate correction returns P' = 1 unweighted
        // once the period ended with a single event (floor(1 * 500 / 1000) would be 0), so the
        // request 1.5 periods later is still refused ...
        QTest::newRow("low-rate correction, read first")
            << std::int64_t(1000) << false << std::int64_t(0) << std::int64_t(0) << QList<qint64>{0}
            << qint64(1500) << qint64(0) << qint64(0) << qint64(1) << false;
        // ... and one ms past two periods the entry reads 0 again.
        QTest::newRow("low-rate correction ends after two periods")
            << std::int64_t(1000) << false << std::int64_t(0) << std::int64_t(0) << QList<qint64>{0}
            << qint64(2001) << qint64(2000) << qint64(0) << qint64(1) << true;
        // Exactly two periods after T the correction still holds (r = 0, P' = C = 1).
        QTest::newRow("low-rate correction at exactly two periods")
            << std::int64_t(1000) << false << std::int64_t(0) << std::int64_t(0) << QList<qint64>{0}
            << qint64(2000) << qint64(0) << qint64(0) << qint64(1) << false;
        // An odd period: T + p is odd and the tick drops to the even ms below.
        QTest::newRow("odd period keeps ticks even")
            << std::int64_t(999) << true << std::int64_t(0) << std::int64_t(5) << QList<qint64>{0}
            << qint64(1200) << qint64(998) << qint64(1) << qint64(1) << true;
        // expire shorter than two periods: the entry is gone 500 ms after its last count.
        QTest::newRow("expire drops the entry")
            << std::int64_t(1000) << true << std::int64_t(500) << std::int64_t(2)
            << QList<qint64>{0, 1, 2, 3} << qint64(503) << qint64(502) << qint64(0) << qint64(1)
            << true;
        QTest::newRow("expire counts from the last use")
            << std::int64_t(1000) << true << std::int64_t(500) << std::int64_t(2)
            << QList<qint64>{0, 1, 2, 3} << qint64(502) << qint64(0) << qint64(0) << qint64(5)
            << false;
        // Refused requests read first are not counted and do not keep the entry alive.
        QTest::newRow("refused, read first: no touch")
            << std::int64_t(1000) << false << std::int64_t(500) << std::int64_t(1)
            << QList<qint64>{0, 1, 400} << qint64(501) << qint64(500) << qint64(0) << qint64(1)
            << true;
    }

    void edgeCases() {
        QFETCH(std::int64_t, periodMs);
        QFETCH(bool, countRefused);
        QFETCH(std::int64_t, expireMs);
        QFETCH(std::int64_t, capacity);
        QFETCH(QList<qint64>, before);
        QFETCH(qint64, at);
        QFETCH(qint64, tick);
        QFETCH(qint64, previous);
        QFETCH(qint64, current);
        QFETCH(bool, allowed);
        const Limit l = haproxy(capacity, periodMs, countRefused, expireMs);
        for (const std::int64_t start : kStarts) {
            HaproxyRateState s;
            for (qint64 t : before)
                haproxyRateConsume(s, (start + t) * kMs, 1, l);
            const Decision d = haproxyRateConsume(s, (start + at) * kMs, 1, l);
            QCOMPARE(d.allowed, allowed);
            const HaproxyCounter c = unpack(s);
            QCOMPARE(c.tickMs, start + tick);
            QCOMPARE(c.previous, previous);
            QCOMPARE(c.current, current);
        }
    }

    // Retry-After: the first ms a request would pass, the refused request counted. After trace
    // 1's requests up to 700 ms (T = 0, C = 8), the next period's estimate
    // 1 + floor(8 * (20000 - t) / 10000) is at most 5 from t = 13751.
    void retryAfterIsTheFirstPassingMillisecond() {
        const Limit l = haproxy(5, 10'000, true, 60'000);
        HaproxyRateState s;
        for (std::int64_t t = 0; t <= 600; t += 100)
            haproxyRateConsume(s, t * kMs, 1, l);
        const Decision d = haproxyRateConsume(s, 700 * kMs + 250'000, 1, l);
        QVERIFY(!d.allowed);
        QCOMPARE(unpack(s).current, std::int64_t(8));
        QCOMPARE(d.retryAfter, 13'751 * kMs - (700 * kMs + 250'000));
        HaproxyRateState probe = s;
        QVERIFY(!haproxyRateConsume(probe, 13'750 * kMs, 1, l).allowed);
        probe = s;
        QVERIFY(haproxyRateConsume(probe, 13'751 * kMs, 1, l).allowed);
        // Reset: two periods after T, plus the ms at which reads fall to 0.
        QCOMPARE(d.resetAfter, 20'001 * kMs - (700 * kMs + 250'000));
    }

    void retryAfterWithExpire() {
        const Limit l = haproxy(2, 10'000, true, 3000);
        HaproxyRateState s;
        for (std::int64_t t : {0, 1, 2})
            haproxyRateConsume(s, t * kMs, 1, l);
        const Decision d = haproxyRateConsume(s, 3 * kMs, 1, l);
        QVERIFY(!d.allowed);
        QCOMPARE(d.retryAfter, 3000 * kMs);  // gone at 3 + 3000 ms
        QCOMPARE(d.resetAfter, 3000 * kMs);
    }

    // Read first, a new period admits capacity + 1 requests, so a cost of capacity + 1 passes
    // a new entry; counting first, a cost above the capacity never passes.
    void readFirstAdmitsOneMore() {
        const Limit l = haproxy(2, 1000, false);
        HaproxyRateState s;
        QVERIFY(haproxyRateConsume(s, 0, 3, l).allowed);
        QCOMPARE(haproxyRateConsume(s, 0, 4, l).reason, DenyReason::CostExceedsCapacity);
        QCOMPARE(haproxyRateConsume(s, 0, 1, l).reason, DenyReason::OverLimit);
        QCOMPARE(unpack(s).current, std::int64_t(3));
        // In the next period the read is floor(3 * (2000 - t) / 1000): 1 at 1666, 0 from 1667.
        QVERIFY(!haproxyRateConsume(s, 1666 * kMs, 3, l).allowed);
        QVERIFY(haproxyRateConsume(s, 1667 * kMs, 3, l).allowed);
    }

    // A check (cost 0) reads and counts nothing; a cost above capacity never passes.
    void checkAndOversizedCost() {
        const Limit l = haproxy(3, 1000, true);
        HaproxyRateState s;
        haproxyRateConsume(s, 0, 1, l);
        const Decision check = haproxyRateConsume(s, 10 * kMs, 0, l);
        QVERIFY(check.allowed);
        QCOMPARE(check.remaining, std::int64_t(2));
        QCOMPARE(unpack(s).current, std::int64_t(1));
        const Decision big = haproxyRateConsume(s, 10 * kMs, 4, l);
        QCOMPARE(big.reason, DenyReason::CostExceedsCapacity);
        QCOMPARE(unpack(s).current, std::int64_t(1));
        QVERIFY(haproxyRateConsume(s, 10 * kMs, 2, l).allowed);
        QCOMPARE(unpack(s).current, std::int64_t(3));
    }

    // A clock stepping back stays at the latest time counted.
    void clockSteppingBackStaysPut() {
        const Limit l = haproxy(5, 1000, true);
        HaproxyRateState s;
        haproxyRateConsume(s, 5000 * kMs, 1, l);
        haproxyRateConsume(s, 4000 * kMs, 1, l);
        const HaproxyCounter c = unpack(s);
        QCOMPARE(c.tickMs, std::int64_t(5000));
        QCOMPARE(c.lastMs, std::int64_t(5000));
        QCOMPARE(c.current, std::int64_t(2));
    }

    // The packed state holds every value the counter takes, negative times included, and all
    // zeros is an unused entry; the counts stop at kHaproxyMaxCount.
    void packedStateRoundTrips() {
        static_assert(sizeof(HaproxyRateState) == 16);
        QVERIFY(!unpack(HaproxyRateState{}).used);
        for (const HaproxyCounter& c :
             {HaproxyCounter{true, kHaproxyMaxMs, kHaproxyMaxMs - kHaproxyMaxPeriodMs,
                             kHaproxyMaxCount, kHaproxyMaxCount},
              HaproxyCounter{true, -kHaproxyMaxMs, -kHaproxyMaxMs - 1, 0, 1},
              HaproxyCounter{true, -3, -4, 7, 9}, HaproxyCounter{true, 0, 0, 1, 0}}) {
            const HaproxyCounter back = unpack(pack(c));
            QVERIFY(back.used);
            QCOMPARE(back.lastMs, c.lastMs);
            QCOMPARE(back.tickMs, c.tickMs);
            QCOMPARE(back.current, c.current);
            QCOMPARE(back.previous, c.previous);
        }
        const Limit l = haproxy(kHaproxyMaxCount - 1, 1000, true);
        HaproxyRateState s;
        haproxyRateConsume(s, 0, kHaproxyMaxCount - 1, l);
        QVERIFY(!haproxyRateConsume(s, 0, kHaproxyMaxCount - 1, l).allowed);
        QCOMPARE(unpack(s).current, kHaproxyMaxCount);
    }

    // The store's traits: idle two periods (+1 ms) after T, or `expire` after the last count.
    void idleAndFreshAfter() {
        const Limit l = haproxy(5, 1000, true);
        HaproxyRateState s;
        haproxyRateConsume(s, 101 * kMs, 1, l);
        QCOMPARE(HaproxyRate::idleAt(s, l), 2101 * kMs);
        QVERIFY(HaproxyRate::freshAfter(l) >= 2001 * kMs);
        const Limit expiring = haproxy(5, 1000, true, 700);
        QCOMPARE(HaproxyRate::idleAt(s, expiring), 801 * kMs);
        QCOMPARE(HaproxyRate::freshAfter(expiring), 700 * kMs);
    }
};

QTEST_APPLESS_MAIN(TestHaproxyRate)
#include "tst_haproxy_rate.moc"
