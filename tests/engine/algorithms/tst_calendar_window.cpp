// Fixed windows aligned on the calendar (engine/src/algorithms/calendar.h, window.h): where a
// window ends for an instant (epoch multiples, UTC months and years, leap years, times before
// the epoch), what a key sees across a boundary, the caller's clock placed by unixTimeAtZero,
// and when a key is fresh again. Expected instants were computed with Python's datetime, not
// with the code under test.

#include <QtTest>

#include "algorithms/algorithms.h"
#include "algorithms/calendar.h"
#include "algorithms/window.h"
#include "ratelab/memory_store.h"

using namespace ratelab;
using namespace ratelab::algorithms;

namespace {

constexpr Nanos kMs = kNanosPerMilli;
constexpr Nanos kSecond = kNanosPerSecond;

Limit calendarLimit(std::int64_t quota, CalendarUnit unit, std::int64_t windowMs) {
    Limit l;
    l.algorithm = Algorithm::FixedWindow;
    l.capacity = quota;
    l.align = WindowAlign::Calendar;
    l.calendarUnit = unit;
    l.window = windowMs > 0 ? windowMs * kMs : 60 * kSecond;
    return l;
}

// 2024-02-29T12:00:00Z, a leap day, in ms since the epoch.
constexpr std::int64_t kLeapNoonMs = 1709208000000LL;

}  // namespace

class TestCalendarWindow : public QObject {
    Q_OBJECT

private slots:
    void windowEnds_data() {
        QTest::addColumn<qint64>("atMs");
        QTest::addColumn<int>("unit");
        QTest::addColumn<qint64>("windowMs");
        QTest::addColumn<qint64>("endMs");
        auto row = [](const char* name, std::int64_t at, CalendarUnit unit, std::int64_t window,
                      std::int64_t end) {
            QTest::newRow(name) << qint64(at) << int(unit) << qint64(window) << qint64(end);
        };
        // 2024-02-29T12:34:56.789 -> 12:35; at 12:35:00.000 the next minute's window holds it.
        row("minute", 1709210096789LL, CalendarUnit::None, 60000LL, 1709210100000LL);
        row("minute at its start", 1709210100000LL, CalendarUnit::None, 60000LL, 1709210160000LL);
        row("minute 1 ms before", 1709210099999LL, CalendarUnit::None, 60000LL, 1709210100000LL);
        // 2024-02-29T23:59:59.999 -> 2024-03-01T00:00
        row("day", 1709251199999LL, CalendarUnit::None, 86400000LL, 1709251200000LL);
        // Monday 2024-01-01T09:00 -> Thursday 2024-01-04T00:00 (1970-01-01 was a Thursday)
        row("week starts on Thursday", 1704099600000LL, CalendarUnit::None, 604800000LL,
            1704326400000LL);
        // Envoy's MONTH and YEAR: 30 and 365 days from the epoch. 2024-01-15 -> 2024-01-18,
        // 2024-06-01 -> 2024-12-18.
        row("30-day month from the epoch", 1705276800000LL, CalendarUnit::None, 2592000000LL,
            1705536000000LL);
        row("365-day year from the epoch", 1717200000000LL, CalendarUnit::None, 31536000000LL,
            1734480000000LL);
        // 2024-01-31T23:59:59.999 -> 2024-02-01
        row("month end January", 1706745599999LL, CalendarUnit::Month, 0, 1706745600000LL);
        // 2024-02-15T10:00 and the leap day 2024-02-29T00:00 -> 2024-03-01
        row("leap February", 1707991200000LL, CalendarUnit::Month, 0, 1709251200000LL);
        row("leap day", 1709164800000LL, CalendarUnit::Month, 0, 1709251200000LL);
        // 2023-02-28T23:59:59.999 -> 2023-03-01
        row("February 2023", 1677628799999LL, CalendarUnit::Month, 0, 1677628800000LL);
        // 2024-03-01T00:00 -> 2024-04-01
        row("month at its start", 1709251200000LL, CalendarUnit::Month, 0, 1711929600000LL);
        // 2024-12-31T23:59:59.999 -> 2025-01-01
        row("December", 1735689599999LL, CalendarUnit::Month, 0, 1735689600000LL);
        // 2100-02-28T12:00 -> 2100-03-01 (2100 is not a leap year)
        row("February 2100", 4107499200000LL, CalendarUnit::Month, 0, 4107542400000LL);
        // 2000-02-29T12:00 -> 2000-03-01 (2000 is)
        row("February 2000", 951825600000LL, CalendarUnit::Month, 0, 951868800000LL);
        // 2024-12-31T23:59:59.999 and 2024-01-01T00:00 -> 2025-01-01
        row("year end", 1735689599999LL, CalendarUnit::Year, 0, 1735689600000LL);
        row("year at its start", 1704067200000LL, CalendarUnit::Year, 0, 1735689600000LL);
        // 2000-02-29T00:00 -> 2001-01-01
        row("leap day year", 951782400000LL, CalendarUnit::Year, 0, 978307200000LL);
        // 1969-12-31T23:59:59.999 -> the epoch
        row("before the epoch month", -1LL, CalendarUnit::Month, 0, 0LL);
        row("before the epoch minute", -1LL, CalendarUnit::None, 60000LL, 0LL);
        // 1900-03-10 -> 1900-04-01
        row("1900 March", -2203113600000LL, CalendarUnit::Month, 0, -2201212800000LL);
    }
    void windowEnds() {
        QFETCH(qint64, atMs);
        QFETCH(int, unit);
        QFETCH(qint64, windowMs);
        QFETCH(qint64, endMs);
        const Limit l = calendarLimit(1, CalendarUnit(unit), windowMs);
        QCOMPARE(calendarWindowEnd(atMs * kMs, l), endMs * kMs);
        // Any nanosecond of the same millisecond lies in the same window.
        QCOMPARE(calendarWindowEnd(atMs * kMs + 999'999, l), endMs * kMs);
    }

    // Quota 2 a minute on the calendar: every key's windows end on the minute, so a key first
    // seen at 12:00:50 has 10 s of window, and at 12:01:00 it starts over with the full quota.
    void quotaPerCalendarMinute() {
        const Limit l = calendarLimit(2, CalendarUnit::None, 60'000);
        const Nanos noon = kLeapNoonMs * kMs;
        FixedWindowState a;
        Decision d = fixedWindowConsume(a, noon + 50 * kSecond, 1, l);
        QVERIFY(d.allowed);
        QCOMPARE(d.remaining, std::int64_t(1));
        QCOMPARE(d.resetAfter, 10 * kSecond);
        QCOMPARE(a.windowEnd, noon + 60 * kSecond);
        QVERIFY(fixedWindowConsume(a, noon + 55 * kSecond, 1, l).allowed);
        d = fixedWindowConsume(a, noon + 60 * kSecond - 1, 1, l);
        QVERIFY(!d.allowed);
        QCOMPARE(d.retryAfter, Nanos(1));
        QCOMPARE(d.resetAfter, Nanos(1));
        d = fixedWindowConsume(a, noon + 60 * kSecond, 1, l);
        QVERIFY(d.allowed);
        QCOMPARE(d.remaining, std::int64_t(1));
        QCOMPARE(d.resetAfter, 60 * kSecond);
        // Another key first seen a second before the minute's end shares that end.
        FixedWindowState b;
        d = fixedWindowConsume(b, noon + 119 * kSecond, 1, l);
        QCOMPARE(d.resetAfter, kSecond);
        QCOMPARE(b.windowEnd, a.windowEnd);
    }

    // A month's quota across the leap day: 3 a month; the fourth request in February is refused
    // until 2024-03-01T00:00Z, whatever the day it came.
    void quotaPerCalendarMonth() {
        const Limit l = calendarLimit(3, CalendarUnit::Month, 0);
        const Nanos march = 1709251200000LL * kMs;  // 2024-03-01T00:00Z
        const Nanos feb28 = march - 2 * kNanosPerDay;
        FixedWindowState s;
        for (int i = 0; i < 3; ++i)
            QVERIFY(fixedWindowConsume(s, feb28 + i * kSecond, 1, l).allowed);
        Decision d = fixedWindowConsume(s, march - kNanosPerDay, 1, l);  // the leap day, 00:00
        QVERIFY(!d.allowed);
        QCOMPARE(d.retryAfter, kNanosPerDay);
        QCOMPARE(d.resetAfter, kNanosPerDay);
        d = fixedWindowConsume(s, march - 1, 1, l);
        QVERIFY(!d.allowed);
        QCOMPARE(d.retryAfter, Nanos(1));
        d = fixedWindowConsume(s, march, 1, l);
        QVERIFY(d.allowed);
        QCOMPARE(d.remaining, std::int64_t(2));
        QCOMPARE(d.resetAfter, 31 * kNanosPerDay);  // March
    }

    // A year's window holds a whole leap year: 366 days, beyond the engine's 90-day limit.
    void quotaPerCalendarYear() {
        const Limit l = calendarLimit(1, CalendarUnit::Year, 0);
        const Nanos newYear2024 = 1704067200000LL * kMs;
        FixedWindowState s;
        Decision d = fixedWindowConsume(s, newYear2024, 1, l);
        QVERIFY(d.allowed);
        QCOMPARE(d.resetAfter, 366 * kNanosPerDay);
        d = fixedWindowConsume(s, newYear2024 + 300 * kNanosPerDay, 1, l);
        QVERIFY(!d.allowed);
        QCOMPARE(d.retryAfter, 66 * kNanosPerDay);
        QVERIFY(fixedWindowConsume(s, newYear2024 + 366 * kNanosPerDay, 1, l).allowed);
    }

    // A caller on CLOCK_MONOTONIC says which Unix time its zero is: the windows fall where the
    // Unix clock puts them, and states and results stay in the caller's time.
    void callerTimeIsPlacedByUnixTimeAtZero() {
        Limit unix = calendarLimit(2, CalendarUnit::None, 60'000);
        Limit monotonic = unix;
        const Nanos bootedAt = kLeapNoonMs * kMs + 123'456'789;  // not on a whole ms
        monotonic.unixTimeAtZero = bootedAt;
        FixedWindowState byUnix;
        FixedWindowState byMonotonic;
        for (Nanos t : {Nanos(0), 5 * kSecond, 59 * kSecond, 60 * kSecond, 61 * kSecond}) {
            const Nanos m = 40 * kSecond + t;  // the caller's own time
            const Decision u = fixedWindowConsume(byUnix, bootedAt + m, 1, unix);
            const Decision c = fixedWindowConsume(byMonotonic, m, 1, monotonic);
            QCOMPARE(c.allowed, u.allowed);
            QCOMPARE(c.remaining, u.remaining);
            QCOMPARE(c.resetAfter, u.resetAfter);
            QCOMPARE(c.retryAfter, u.retryAfter);
            QCOMPARE(byMonotonic.windowEnd + bootedAt, byUnix.windowEnd);
        }
        // The first window ends at 12:01:00 Unix: 60 s - 40.123456789 s after the caller's zero.
        FixedWindowState s;
        QCOMPARE(fixedWindowConsume(s, 0, 1, monotonic).resetAfter, 60 * kSecond - 123'456'789);
    }

    // A key is fresh once its window is over (idleAt), and a used key takes at most a whole
    // window to become fresh: 31 days for months, 366 for years (freshAfter, the budget slots'
    // floor).
    void freshOnceTheWindowIsOver() {
        const Limit month = calendarLimit(3, CalendarUnit::Month, 0);
        FixedWindowState s;
        const Nanos mid = kLeapNoonMs * kMs;
        fixedWindowConsume(s, mid, 1, month);
        QCOMPARE(FixedWindow::idleAt(s, month), 1709251200000LL * kMs);
        QCOMPARE(FixedWindow::freshAfter(month), 31 * kNanosPerDay);
        QCOMPARE(FixedWindow::freshAfter(calendarLimit(1, CalendarUnit::Year, 0)),
                 366 * kNanosPerDay);
        QCOMPARE(FixedWindow::freshAfter(calendarLimit(1, CalendarUnit::None, 7'200'000)),
                 7'200 * kSecond);
    }

    // The memory store evicts a calendar window's key once the window is over, not before: with
    // room for two buckets, a third key is refused (Full) until the month ends, then admitted.
    void memoryStoreEvictsEndedWindows() {
        const Limit l = calendarLimit(5, CalendarUnit::Month, 0);
        MemoryStoreOptions options;
        options.maxBuckets = 2;
        options.hashSeed = 7;
        std::unique_ptr<Store> store = makeMemoryStore(options);
        auto consume = [&](std::string_view key, Nanos now) {
            ConsumeRequest r;
            r.limitId = 1;
            r.limitName = "api";
            r.limit = &l;
            r.partition = key;
            r.key = key;
            r.now = now;
            return store->consume(r);
        };
        const Nanos march = 1709251200000LL * kMs;
        QCOMPARE(consume("a", march - 10 * kNanosPerDay).status, StoreStatus::Ok);
        QCOMPARE(consume("b", march - 9 * kNanosPerDay).status, StoreStatus::Ok);
        QCOMPARE(consume("c", march - 1).status, StoreStatus::Full);
        const ConsumeResult c = consume("c", march);
        QCOMPARE(c.status, StoreStatus::Ok);
        QCOMPARE(c.decision.remaining, std::int64_t(4));
        QCOMPARE(store->keyspace().buckets, std::int64_t(1));
    }
};

QTEST_APPLESS_MAIN(TestCalendarWindow)
#include "tst_calendar_window.moc"
