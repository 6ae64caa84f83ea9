// Calendar-aligned fixed windows on Redis (lua/calendar.lua, lua/fixed_window.lua) decide as the
// memory store does (algorithms/calendar.h), field for field: traces of requests across minute,
// day, month and year ends (leap days included), on Unix caller time and on a caller clock
// placed by Limit::unixTimeAtZero, one by one and pipelined, settles included. A store on the
// server's clock puts its windows on the server's Unix time.

#include <QtTest>

#include <chrono>

#include "fixtures/redis_store_fixture.h"

using namespace ratelab;
using namespace ratelab::redistest;

namespace {

constexpr Nanos kHour = 3600 * kSecond;

// Instants the traces cross, in ms since the epoch, in time order (the memory store evicts a
// key once its window is over, Redis on its own clock: a caller clock stepping back past a
// window's end would tell them apart): month ends (leap February, a 31-day month, the year's
// end), a day's end, and a month end long after 2038.
constexpr std::int64_t kBoundariesMs[] = {
    1706745600000LL,  // 2024-02-01T00:00Z
    1709251200000LL,  // 2024-03-01T00:00Z, after the leap day
    1709337600000LL,  // 2024-03-02T00:00Z
    1735689600000LL,  // 2025-01-01T00:00Z
    4107542400000LL,  // 2100-03-01T00:00Z, after a February without a leap day
};

// Requests on 16 keys from `span` before each boundary to `span` after, in steps of up to
// `maxStep`; mostly cost 1, some 2 to 4, a few above the quota.
std::vector<TraceItem> boundaryTrace(std::int64_t quota, Nanos span, Nanos maxStep, Nanos offset,
                                     std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<TraceItem> trace;
    for (std::int64_t boundary : kBoundariesMs) {
        Nanos t = boundary * kMs - span;
        while (t < boundary * kMs + span) {
            TraceItem item;
            const int id = static_cast<int>(std::min(rng() % 16, rng() % 16));
            item.key = "k" + std::to_string(id);
            item.partition = item.key;
            const std::uint64_t c = rng() % 100;
            item.cost = c < 85 ? 1 : c < 98 ? 2 + static_cast<std::int64_t>(rng() % 3) : quota + 1;
            item.now = t - offset;  // the caller's clock
            trace.push_back(std::move(item));
            t += 1 + static_cast<Nanos>(rng() % static_cast<std::uint64_t>(maxStep));
        }
    }
    return trace;
}

}  // namespace

class TestRedisCalendar : public RedisSuite {
    Q_OBJECT

private slots:
    void sameDecisionsAsMemoryStore_data() {
        QTest::addColumn<int>("unit");
        QTest::addColumn<qint64>("windowMs");
        QTest::addColumn<qint64>("offset");
        QTest::addColumn<bool>("settles");
        QTest::addColumn<int>("quota");
        // A caller whose clock started at some Unix instant, not on a whole millisecond.
        const qint64 booted = 1'704'000'000'123'456'789LL;
        QTest::newRow("minute") << int(CalendarUnit::None) << qint64(60'000) << qint64(0) << false
                                << 3;
        QTest::newRow("minute, monotonic caller")
            << int(CalendarUnit::None) << qint64(60'000) << booted << false << 3;
        QTest::newRow("day") << int(CalendarUnit::None) << qint64(86'400'000) << qint64(0) << false
                             << 30;
        QTest::newRow("30 days") << int(CalendarUnit::None) << qint64(2'592'000'000LL) << qint64(0)
                                 << false << 30;
        QTest::newRow("month") << int(CalendarUnit::Month) << qint64(0) << qint64(0) << false << 30;
        QTest::newRow("month, monotonic caller")
            << int(CalendarUnit::Month) << qint64(0) << booted << false << 30;
        QTest::newRow("year") << int(CalendarUnit::Year) << qint64(0) << qint64(0) << false << 60;
        QTest::newRow("minute, settled, monotonic caller")
            << int(CalendarUnit::None) << qint64(60'000) << booted << true << 3;
        QTest::newRow("month, settled")
            << int(CalendarUnit::Month) << qint64(0) << qint64(0) << true << 30;
    }
    void sameDecisionsAsMemoryStore() {
        QFETCH(int, unit);
        QFETCH(qint64, windowMs);
        QFETCH(qint64, offset);
        QFETCH(bool, settles);
        QFETCH(int, quota);
        Limit l;
        l.algorithm = Algorithm::FixedWindow;
        l.capacity = quota;
        l.align = WindowAlign::Calendar;
        l.calendarUnit = CalendarUnit(unit);
        if (windowMs > 0) l.window = windowMs * kMs;
        l.unixTimeAtZero = offset;
        l.settles = settles;
        const bool minute = windowMs == 60'000;  // denser and shorter traces
        const std::vector<TraceItem> trace = boundaryTrace(
            l.capacity, minute ? 20 * 60 * kSecond : 2 * kHour, minute ? 3 * kSecond : 60 * kSecond,
            offset, 17 + static_cast<std::uint64_t>(unit));
        MemoryStoreOptions memoryOptions;
        memoryOptions.hashSeed = 42;
        std::unique_ptr<Store> memory = makeMemoryStore(memoryOptions);
        RedisStoreOptions options;
        options.timeout = 10 * kSecond;
        const std::string ns = "cal" + std::to_string(QTest::currentDataTag()[0]) +
                               std::to_string(unit) + std::to_string(windowMs) +
                               (offset ? "m" : "") + (settles ? "s" : "");
        std::unique_ptr<Store> redis = callerTimeStore({server_.url()}, ns, options);

        constexpr std::size_t kBatch = 64;
        std::vector<ConsumeRequest> requests(kBatch);
        std::vector<ConsumeResult> results(kBatch);
        std::int64_t allowed = 0;
        std::int64_t refused = 0;
        std::int64_t applied = 0;
        std::size_t i = 0;
        while (i < trace.size()) {
            const std::size_t n = (i / 500) % 2 == 0 ? 1 : std::min(kBatch, trace.size() - i);
            for (std::size_t k = 0; k < n; ++k)
                requests[k] = requestOf(trace[i + k], l, nullptr, nullptr);
            if (n == 1)
                results[0] = redis->consume(requests[0]);
            else
                redis->consumeBatch({requests.data(), n}, {results.data(), n});
            for (std::size_t k = 0; k < n; ++k) {
                const ConsumeResult expected = memory->consume(requests[k]);
                const std::string diff = difference(expected, results[k]);
                if (!diff.empty()) {
                    QFAIL(qPrintable(QString("request %1 (key %2, now %3):\n   %4")
                                         .arg(i + k)
                                         .arg(trace[i + k].key.c_str())
                                         .arg(trace[i + k].now)
                                         .arg(diff.c_str())));
                }
                allowed += expected.decision.allowed;
                refused += expected.decision.reason == DenyReason::OverLimit;
            }
            // Every fourth admitted request is given back, after its batch in both stores: both
            // must find the window it went into, through the stamp.
            for (std::size_t k = 0; settles && k < n; ++k) {
                const ConsumeResult& expected = results[k];
                if (expected.decision.allowed && (i + k) % 4 == 0) {
                    SettleRequest s;
                    s.limitId = 1;
                    s.limitName = "api";
                    s.limit = &l;
                    s.partition = trace[i + k].partition;
                    s.key = trace[i + k].key;
                    s.cost = -trace[i + k].cost;
                    s.stamp = expected.stamp;
                    s.now = trace[i + n - 1].now;  // the clock never steps back
                    const SettleResult m = memory->settle(s);
                    const SettleResult r = redis->settle(s);
                    QCOMPARE(r.status, StoreStatus::Ok);
                    QCOMPARE(r.applied, m.applied);
                    applied += m.applied;
                }
            }
            i += n;
        }
        qInfo("%zu requests: %lld allowed, %lld over the quota, %lld refunds applied", trace.size(),
              static_cast<long long>(allowed), static_cast<long long>(refused),
              static_cast<long long>(applied));
        QVERIFY(allowed > 500);
        QVERIFY(refused > 100);
        if (settles) QVERIFY(applied > 100);
    }

    // On the server's clock (the default time source) the window is the one holding the
    // server's Unix time, whatever the caller's `now` says: a year's window resets at the next
    // 1 January, 00:00 UTC.
    void serverTimeWindowsFollowTheServersClock() {
        RedisStoreOptions options;
        options.urls = {server_.url()};
        options.keyNamespace = "calserver";
        std::string error;
        std::unique_ptr<Store> redis = makeRedisStore(options, &error);
        QVERIFY2(redis, error.c_str());
        Limit l;
        l.algorithm = Algorithm::FixedWindow;
        l.capacity = 3;
        l.align = WindowAlign::Calendar;
        l.calendarUnit = CalendarUnit::Year;
        l.unixTimeAtZero = 123 * kSecond;  // a caller's offset: no meaning on the server's clock
        const ConsumeResult r = consumeOne(*redis, l, "year", 0);
        QCOMPARE(r.status, StoreStatus::Ok);
        using namespace std::chrono;
        const auto now = system_clock::now();
        const year_month_day today{floor<days>(now)};
        const sys_days nextYear{(today.year() + years{1}) / January / 1};
        const Nanos expected = duration_cast<nanoseconds>(nextYear - now).count();
        QVERIFY2(std::llabs(r.decision.resetAfter - expected) < 5 * kSecond,
                 qPrintable(QString("reset %1 ns, expected about %2")
                                .arg(r.decision.resetAfter)
                                .arg(expected)));
    }
};

QTEST_APPLESS_MAIN(TestRedisCalendar)
#include "tst_redis_calendar.moc"
