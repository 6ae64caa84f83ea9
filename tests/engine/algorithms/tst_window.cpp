// Fixed window and sliding window counter (engine/src/algorithms/window.h).

#include <QtTest>

#include <random>

#include "algorithms/sliding_log.h"
#include "algorithms/window.h"

using namespace ratelab;
using namespace ratelab::algorithms;

namespace {

constexpr Nanos kSecond = kNanosPerSecond;

Limit windowLimit(Algorithm algorithm, std::int64_t quota, Nanos window) {
    Limit l;
    l.algorithm = algorithm;
    l.capacity = quota;
    l.window = window;
    return l;
}

}  // namespace

class TestWindow : public QObject {
    Q_OBJECT

private slots:
    // Quota 2 per 60 s: remaining 1, then 0, then 429 with Retry-After the rest of the window.
    void fixedWindowQuotaTwo() {
        const Limit l = windowLimit(Algorithm::FixedWindow, 2, 60 * kSecond);
        FixedWindowState s;
        const Nanos start = 5 * kSecond;
        Decision first = fixedWindowConsume(s, start, 1, l);
        QVERIFY(first.allowed);
        QCOMPARE(first.remaining, std::int64_t(1));
        QCOMPARE(first.resetAfter, 60 * kSecond);
        Decision second = fixedWindowConsume(s, start + 10 * kSecond, 1, l);
        QVERIFY(second.allowed);
        QCOMPARE(second.remaining, std::int64_t(0));
        Decision third = fixedWindowConsume(s, start + 20 * kSecond, 1, l);
        QVERIFY(!third.allowed);
        QCOMPARE(third.reason, DenyReason::OverLimit);
        QCOMPARE(third.retryAfter, 40 * kSecond);
        QCOMPARE(third.remaining, std::int64_t(0));
    }

    // Request Q+1 is refused and still counted; the window is never extended; the first
    // request at or after start + W opens a new window that starts at that request.
    void fixedWindowCountsRefusalsAndNeverExtends() {
        const Limit l = windowLimit(Algorithm::FixedWindow, 3, 10 * kSecond);
        FixedWindowState s;
        for (int i = 0; i < 3; ++i)
            QVERIFY(fixedWindowConsume(s, i * kSecond, 1, l).allowed);
        for (int i = 0; i < 4; ++i)
            QVERIFY(!fixedWindowConsume(s, 9 * kSecond, 1, l).allowed);
        QCOMPARE(s.count, std::int64_t(7));
        QCOMPARE(s.windowEnd, 10 * kSecond);
        Decision late = fixedWindowConsume(s, 10 * kSecond - 1, 1, l);
        QVERIFY(!late.allowed);
        QCOMPARE(late.retryAfter, Nanos(1));
        Decision next = fixedWindowConsume(s, 13 * kSecond, 1, l);
        QVERIFY(next.allowed);
        QCOMPARE(next.remaining, std::int64_t(2));
        QCOMPARE(s.windowEnd, 23 * kSecond);
    }

    // The boundary double burst: 2Q in a moment across the edge, the reason sliding windows
    // and token buckets exist.
    void fixedWindowAllowsTheBoundaryDoubleBurst() {
        const Limit l = windowLimit(Algorithm::FixedWindow, 10, 60 * kSecond);
        FixedWindowState s;
        fixedWindowConsume(s, 0, 1, l);  // opens [0, 60 s)
        int admitted = 0;
        for (int i = 0; i < 20; ++i)
            admitted += fixedWindowConsume(s, 60 * kSecond - 1, 1, l).allowed;
        for (int i = 0; i < 20; ++i)
            admitted += fixedWindowConsume(s, 60 * kSecond, 1, l).allowed;
        QCOMPARE(admitted, 9 + 10);
    }

    void fixedWindowCostAboveQuotaStoresNothing() {
        const Limit l = windowLimit(Algorithm::FixedWindow, 5, kSecond);
        FixedWindowState s;
        Decision d = fixedWindowConsume(s, 0, 6, l);
        QCOMPARE(d.reason, DenyReason::CostExceedsCapacity);
        QCOMPARE(s.windowEnd, FixedWindowState::kFresh);
    }

    // Quota 10 per 10 s: 10 in the first window; half-way through the next, half of them
    // still weigh (5), so 5 more pass.
    void slidingWindowWeighsThePreviousWindow() {
        const Limit l = windowLimit(Algorithm::SlidingWindow, 10, 10 * kSecond);
        SlidingWindowState s;
        for (int i = 0; i < 10; ++i)
            QVERIFY(slidingWindowConsume(s, kSecond, 1, l).allowed);
        Decision full = slidingWindowConsume(s, 2 * kSecond, 1, l);
        QVERIFY(!full.allowed);
        // The current window alone is full, so the wait reaches into the next one, [11 s, 21 s),
        // where these 10 weigh floor(10 * w) with w = floor((21 s - t) * 65536 / 10 s) / 65536:
        // 9 from its first nanosecond on.
        QCOMPARE(full.retryAfter, 9 * kSecond + 1);
        int admitted = 0;
        for (int i = 0; i < 10; ++i)
            admitted += slidingWindowConsume(s, 16 * kSecond, 1, l).allowed;
        QCOMPARE(admitted, 5);
        Decision after = slidingWindowConsume(s, 16 * kSecond, 1, l);
        QCOMPARE(after.remaining, std::int64_t(0));
        QVERIFY(after.retryAfter > 0);
        // The retry time is exact: refused just before it, admitted at it.
        SlidingWindowState copy = s;
        QVERIFY(!slidingWindowConsume(copy, 16 * kSecond + after.retryAfter - 1, 1, l).allowed);
        QVERIFY(slidingWindowConsume(copy, 16 * kSecond + after.retryAfter, 1, l).allowed);
    }

    void slidingWindowRefusalWritesNothing() {
        const Limit l = windowLimit(Algorithm::SlidingWindow, 2, kSecond);
        SlidingWindowState s;
        slidingWindowConsume(s, 0, 2, l);
        const SlidingWindowState before = s;
        QVERIFY(!slidingWindowConsume(s, 1'500'000'000, 2, l).allowed);
        QCOMPARE(s.windowStart, before.windowStart);
        QCOMPARE(s.current, before.current);
    }

    // The sliding log is exact; the counter approximates it. Report how far apart they are on
    // a seeded bursty trace, and hold the counter to a few percent of admissions.
    void slidingCounterApproximatesTheExactLog() {
        const Limit counterLimit = windowLimit(Algorithm::SlidingWindow, 100, 60 * kSecond);
        const Limit logLimit = windowLimit(Algorithm::SlidingLog, 100, 60 * kSecond);
        SlidingWindowState counter;
        SlidingLogState log;
        std::mt19937_64 random(3);
        std::int64_t counterAdmitted = 0, logAdmitted = 0, disagreements = 0;
        Nanos now = 0;
        const int requests = 200'000;
        for (int i = 0; i < requests; ++i) {
            now += static_cast<Nanos>(random() % 600'000'000);  // ~200 per minute, twice the quota
            bool oom = false;
            bool a = slidingWindowConsume(counter, now, 1, counterLimit).allowed;
            bool b = slidingLogConsume(log, now, 1, logLimit, oom).allowed;
            counterAdmitted += a;
            logAdmitted += b;
            disagreements += a != b;
        }
        LogRing::destroy(log.ring);
        const double error =
            double(std::llabs(counterAdmitted - logAdmitted)) / double(logAdmitted);
        qInfo("sliding counter vs exact log: %lld vs %lld admitted (%.3f%%), %lld decisions differ",
              static_cast<long long>(counterAdmitted), static_cast<long long>(logAdmitted),
              100 * error, static_cast<long long>(disagreements));
        QVERIFY(error < 0.05);
        QVERIFY(logAdmitted < requests * 6 / 10);  // the limit did bind
    }

    void slidingLogIsExact() {
        const Limit l = windowLimit(Algorithm::SlidingLog, 3, 10 * kSecond);
        SlidingLogState s;
        bool oom = false;
        QVERIFY(slidingLogConsume(s, 0, 1, l, oom).allowed);
        QVERIFY(slidingLogConsume(s, 4 * kSecond, 1, l, oom).allowed);
        QVERIFY(slidingLogConsume(s, 6 * kSecond, 1, l, oom).allowed);
        Decision refused = slidingLogConsume(s, 7 * kSecond, 1, l, oom);
        QVERIFY(!refused.allowed);
        QCOMPARE(refused.retryAfter, 3 * kSecond);  // the entry at 0 leaves at 10 s
        QVERIFY(!slidingLogConsume(s, 10 * kSecond - 1, 1, l, oom).allowed);
        QVERIFY(slidingLogConsume(s, 10 * kSecond, 1, l, oom).allowed);
        Decision two = slidingLogConsume(s, 10 * kSecond, 2, l, oom);
        QVERIFY(!two.allowed);
        QCOMPARE(two.retryAfter, 6 * kSecond);  // entries at 4 s and 6 s must both leave
        LogRing::destroy(s.ring);
    }

    void clockGoingBackwardsNeverAdmitsExtra() {
        std::mt19937_64 random(11);
        const Limit fixed = windowLimit(Algorithm::FixedWindow, 5, kSecond);
        const Limit sliding = windowLimit(Algorithm::SlidingWindow, 5, kSecond);
        const Limit logL = windowLimit(Algorithm::SlidingLog, 5, kSecond);
        FixedWindowState f1, f2;
        SlidingWindowState s1, s2;
        SlidingLogState l1, l2;
        std::int64_t jumpy[3] = {}, steady[3] = {};
        Nanos now = 100 * kSecond, latest = now;
        bool oom = false;
        for (int i = 0; i < 100'000; ++i) {
            now = std::max<Nanos>(0, now + static_cast<Nanos>(random() % 100'000'000) - 30'000'000);
            latest = std::max(latest, now);
            jumpy[0] += fixedWindowConsume(f1, now, 1, fixed).allowed;
            steady[0] += fixedWindowConsume(f2, latest, 1, fixed).allowed;
            jumpy[1] += slidingWindowConsume(s1, now, 1, sliding).allowed;
            steady[1] += slidingWindowConsume(s2, latest, 1, sliding).allowed;
            jumpy[2] += slidingLogConsume(l1, now, 1, logL, oom).allowed;
            steady[2] += slidingLogConsume(l2, latest, 1, logL, oom).allowed;
        }
        for (int k = 0; k < 3; ++k)
            QVERIFY2(jumpy[k] <= steady[k], qPrintable(QString::number(k)));
        LogRing::destroy(l1.ring);
        LogRing::destroy(l2.ring);
    }
};

QTEST_APPLESS_MAIN(TestWindow)
#include "tst_window.moc"
