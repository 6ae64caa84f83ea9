// Charging by outcome (Limiter::settle, Store::settle): refunds and penalties reach the very
// bucket a decision charged, never above its capacity, never a bucket made again, and never
// from a Check of another limiter. Time is injected.

#include <QtTest>

#include <atomic>
#include <thread>
#include <vector>

#include "limiter_fixture.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

constexpr Nanos kSecond = kNanosPerSecond;
constexpr Nanos kMinute = 60 * kSecond;

// 5 attempts per 15 minutes for each client address, counting failed logins only.
Policy loginPolicy(ChargeRule rule = ChargeRule::Failures) {
    Policy p = tokenBucketPolicy("login", 5, 5.0 / (15 * 60), "/login");
    p.charge.rule = rule;
    return p;
}

TestRequest loginFrom(std::string_view address) {
    TestRequest r;
    r.method = "POST";
    r.path = "/login";
    r.from(address);
    return r;
}

}  // namespace

class TestSettle : public QObject {
    Q_OBJECT

private slots:
    // The case: 100 successful logins in a row all pass (each is given back), then five
    // failures pass and the sixth is refused.
    void failuresCountOnlyFailedLogins() {
        Limiter limiter(policySet({loginPolicy()}), makeMemoryStore({}));
        TestRequest request = loginFrom("198.51.100.7");
        Check check;
        Nanos now = 0;
        for (int i = 0; i < 100; ++i, now += kSecond) {
            limiter.check(request.view(), now, check);
            QVERIFY2(check.allowed, qPrintable(QString("success %1 refused").arg(i + 1)));
            QVERIFY(check.settles());
            limiter.settle(check, 200, now);
        }
        for (int i = 0; i < 5; ++i, now += kSecond) {
            limiter.check(request.view(), now, check);
            QVERIFY2(check.allowed, qPrintable(QString("failure %1 refused").arg(i + 1)));
            limiter.settle(check, 401, now);
        }
        limiter.check(request.view(), now, check);
        QVERIFY(!check.allowed);
        QCOMPARE(check.status, 429);
        // One attempt comes back after 3 minutes (15 minutes / 5), counted from the first failure.
        QCOMPARE(check.retryAfter, 3 * kMinute - 5 * kSecond);
    }
};

QTEST_APPLESS_MAIN(TestSettle)
#include "tst_settle.moc"
