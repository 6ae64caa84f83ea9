// The limiter with this round's ways of counting, on a manual clock: calendar-aligned windows
// (their headers count to the window's end, placed by LimiterOptions::unixTimeAtZero) and
// HAProxy's rate counter (its headers say what the counter implies).

#include <QtTest>

#include "fixtures/limiter_fixture.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

constexpr Nanos kSecond = kNanosPerSecond;
constexpr Nanos kDay = 86'400 * kSecond;
// 2024-02-29T12:00:00Z
constexpr Nanos kLeapNoon = 1'709'208'000LL * kSecond;

Policy calendarPolicy(std::string name, std::int64_t quota, std::int64_t windowMs,
                      CalendarUnit unit = CalendarUnit::None) {
    Policy p;
    p.name = std::move(name);
    p.algorithm = Algorithm::FixedWindow;
    p.capacity = quota;
    p.windowMs = windowMs;
    p.align = WindowAlign::Calendar;
    p.calendarUnit = unit;
    p.key.source = KeySource::Peer;
    return p;
}

}  // namespace

class TestLimiterLimits : public QObject {
    Q_OBJECT

private slots:
    // A service on CLOCK_MONOTONIC, booted 40.5 s before noon: a minute's window on the calendar
    // ends at 12:01:00 for every client, and the headers and Retry-After count to it.
    void calendarHeadersCountToTheWindowsEnd() {
        LimiterOptions options;
        options.unixTimeAtZero = kLeapNoon - 40'500'000'000LL;
        Limiter limiter(policySet({calendarPolicy("api", 2, 60'000)}), makeMemoryStore({}),
                        options);
        TestRequest a;
        a.from("198.51.100.7");
        const Nanos t = 50 * kSecond;  // 12:00:09.5 Unix
        Verdict v = limiter.decide(a.view(), t);
        QCOMPARE(v.status, 200);
        QCOMPARE(headerValue(v, "RateLimit-Policy"), std::string("\"api\";q=2;w=60"));
        QCOMPARE(headerValue(v, "RateLimit"), std::string("\"api\";r=1;t=51"));
        limiter.decide(a.view(), t + kSecond, v);
        limiter.decide(a.view(), t + 2 * kSecond, v);
        QCOMPARE(v.status, 429);
        QCOMPARE(headerValue(v, "Retry-After"), std::string("49"));  // 48.5 s, rounded up
        // Another client first seen at 12:00:59 has one second of window.
        TestRequest b;
        b.from("198.51.100.8");
        limiter.decide(b.view(), 99'500'000'000LL, v);
        QCOMPARE(headerValue(v, "RateLimit"), std::string("\"api\";r=1;t=1"));
        // 12:01:00: both start over.
        limiter.decide(a.view(), 100'500'000'000LL, v);
        QCOMPARE(v.status, 200);
        QCOMPARE(headerValue(v, "RateLimit"), std::string("\"api\";r=1;t=60"));
    }

    // A month's quota: its window is advertised as 30 days (w=2592000), and Retry-After counts
    // to the first of the next month however long this month is.
    void calendarMonthRetryAfter() {
        Limiter limiter(policySet({calendarPolicy("monthly", 1, 0, CalendarUnit::Month)}),
                        makeMemoryStore({}));
        TestRequest r;
        r.from("198.51.100.7");
        Verdict v = limiter.decide(r.view(), kLeapNoon);
        QCOMPARE(headerValue(v, "RateLimit-Policy"), std::string("\"monthly\";q=1;w=2592000"));
        QCOMPARE(headerValue(v, "RateLimit"), std::string("\"monthly\";r=0;t=43200"));
        limiter.decide(r.view(), kLeapNoon + kSecond, v);
        QCOMPARE(v.status, 429);
        QCOMPARE(headerValue(v, "Retry-After"), std::string("43199"));
        limiter.decide(r.view(), kLeapNoon + kDay / 2, v);  // 2024-03-01T00:00Z
        QCOMPARE(v.status, 200);
        QCOMPARE(headerValue(v, "RateLimit"), std::string("\"monthly\";r=0;t=2678400"));  // 31 d
    }

    // HAProxy's counter, `gt 5` over 10 s, refused requests counted: RateLimit-Policy advertises
    // the period; the sixth request at 500 ms is refused, and Retry-After is the first ms a
    // request passes, 1 + floor(6 * (20000 - t) / 10000) <= 5 from t = 11667 ms: 11.167 s,
    // rounded up.
    void haproxyRateHeaders() {
        Policy p;
        p.name = "hap";
        p.algorithm = Algorithm::HaproxyRate;
        p.capacity = 5;
        p.windowMs = 10'000;
        p.key.source = KeySource::Peer;
        Limiter limiter(policySet({p}), makeMemoryStore({}));
        TestRequest r;
        r.from("198.51.100.7");
        const Nanos t0 = 1000 * kSecond;
        const Nanos ms = kNanosPerMilli;
        Verdict v = limiter.decide(r.view(), t0);
        QCOMPARE(v.status, 200);
        QCOMPARE(headerValue(v, "RateLimit-Policy"), std::string("\"hap\";q=5;w=10"));
        QCOMPARE(headerValue(v, "RateLimit"), std::string("\"hap\";r=4;t=21"));
        for (int i = 1; i <= 4; ++i)
            limiter.decide(r.view(), t0 + i * 100 * ms, v);
        QCOMPARE(v.status, 200);
        QCOMPARE(headerValue(v, "RateLimit"), std::string("\"hap\";r=0;t=20"));
        limiter.decide(r.view(), t0 + 500 * ms, v);
        QCOMPARE(v.status, 429);
        QCOMPARE(headerValue(v, "Retry-After"), std::string("12"));
        limiter.decide(r.view(), t0 + 11'667 * ms, v);
        QCOMPARE(v.status, 200);
        QCOMPARE(headerValue(v, "RateLimit"), std::string("\"hap\";r=0;t=19"));
    }
};

QTEST_APPLESS_MAIN(TestLimiterLimits)
#include "tst_limiter_limits.moc"
