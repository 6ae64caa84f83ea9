// Charging by outcome (Limiter::settle, Store::settle): refunds and penalties reach the very
// bucket a decision charged, never above its capacity, never a bucket made again, and never
// from a Check of another limiter. Time is injected.

#include <QtTest>

#include <atomic>
#include <thread>
#include <vector>

#include "fixtures/limiter_fixture.h"

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

// Decides `n` requests at `now` and returns how many passed.
int passes(const Limiter& limiter, TestRequest& request, int n, Nanos now) {
    Check check;
    int passed = 0;
    for (int i = 0; i < n; ++i) {
        limiter.check(request.view(), now, check);
        passed += check.allowed;
    }
    return passed;
}

// Decides `n` requests and settles each with `status`, request i at `from + i * step`; returns
// how many were allowed.
int answered(const Limiter& limiter, TestRequest& request, int n, int status, Nanos from,
             Nanos step = 0) {
    Check check;
    int passed = 0;
    for (int i = 0; i < n; ++i) {
        const Nanos now = from + i * step;
        limiter.check(request.view(), now, check);
        passed += check.allowed;
        limiter.settle(check, status, now);
    }
    return passed;
}

// A limit of the memory store, with a consume and a settle on one key.
struct StoreProbe {
    Limit limit;
    std::unique_ptr<Store> store;
    std::string key;

    StoreProbe(Limit l, std::int64_t maxBuckets = 1000, std::string k = "ip:198.51.100.7")
        : limit(l), key(std::move(k)) {
        limit.settles = true;
        MemoryStoreOptions options;
        options.maxBuckets = maxBuckets;
        options.hashSeed = 7;
        store = makeMemoryStore(options);
    }
    ConsumeResult consume(Nanos now, std::string_view onKey = {}, std::int64_t cost = 1) {
        ConsumeRequest r;
        r.limitId = 3;
        r.limitName = "api";
        r.limit = &limit;
        r.key = onKey.empty() ? std::string_view(key) : onKey;
        r.partition = r.key;
        r.cost = cost;
        r.now = now;
        return store->consume(r);
    }
    SettleResult settle(std::int64_t cost, std::int64_t stamp, Nanos now) {
        SettleRequest s;
        s.limitId = 3;
        s.limitName = "api";
        s.limit = &limit;
        s.key = key;
        s.partition = key;
        s.cost = cost;
        s.stamp = stamp;
        s.now = now;
        return store->settle(s);
    }
    int passes(int n, Nanos now) {
        int passed = 0;
        for (int i = 0; i < n; ++i)
            passed += consume(now).decision.allowed;
        return passed;
    }
};

Limit tokenBucket(std::int64_t capacity, Nanos interval) {
    Limit l;
    l.algorithm = Algorithm::TokenBucket;
    l.capacity = capacity;
    l.emissionInterval = interval;
    return l;
}

Limit fixedWindow(std::int64_t quota, Nanos window) {
    Limit l;
    l.algorithm = Algorithm::FixedWindow;
    l.capacity = quota;
    l.window = window;
    return l;
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
        QCOMPARE(answered(limiter, request, 5, 401, now, kSecond), 5);
        now += 5 * kSecond;
        limiter.check(request.view(), now, check);
        QVERIFY(!check.allowed);
        QCOMPARE(check.status, 429);
        // One attempt comes back after 3 minutes (15 minutes / 5), counted from the first failure.
        QCOMPARE(check.retryAfter, 3 * kMinute - 5 * kSecond);
    }

    // Only the policies that charge by outcome are settled: a site-wide limit of 100 that
    // charges always keeps counting the logins the login limit gives back, and refuses the
    // 101st.
    void onlyPoliciesThatChargeByOutcomeAreSettled() {
        Policy site = tokenBucketPolicy("site", 100, 1.0 / 3600);
        Limiter limiter(policySet({site, loginPolicy()}), makeMemoryStore({}));
        TestRequest request = loginFrom("198.51.100.7");
        Check check;
        for (int i = 0; i < 100; ++i) {
            limiter.check(request.view(), 0, check);
            QVERIFY(check.allowed);
            QVERIFY(!check.policies()[0].charge.pending);
            QVERIFY(check.policies()[1].charge.pending);
            limiter.settle(check, 200, 0);
        }
        limiter.check(request.view(), 0, check);
        QVERIFY(!check.allowed);
        QCOMPARE(check.policies().size(), std::size_t{1});  // refused by "site"
        QCOMPARE(check.policies()[0].outcome, PolicyOutcome::Throttled);
    }

    // A decision taken on the local store while the shared one is unreachable (on_store_error
    // "local") is settled there: 100 successes given back, then 5 failures and the 6th refused.
    void decidedLocallyIsSettledLocally() {
        Policy p = loginPolicy();
        p.onStoreError = StoreErrorRule::Local;
        auto shared = std::make_shared<ScriptedStore>();
        shared->failWith = StoreStatus::Transport;
        Limiter limiter(policySet({p}), shared);
        TestRequest request = loginFrom("198.51.100.7");
        Check check;
        for (int i = 0; i < 100; ++i) {
            limiter.check(request.view(), i * kSecond, check);
            QCOMPARE(check.policies()[0].outcome, PolicyOutcome::DecidedLocally);
            QVERIFY(check.allowed && check.policies()[0].charge.local);
            limiter.settle(check, 200, i * kSecond);
        }
        QCOMPARE(answered(limiter, request, 5, 403, 100 * kSecond), 5);
        QCOMPARE(passes(limiter, request, 1, 100 * kSecond), 0);
    }

    // Charges the limiter does not settle: charge "always" without a penalty records nothing,
    // and settling such a Check changes nothing.
    void alwaysWithoutPenaltyIsANoOp() {
        Limiter limiter(policySet({loginPolicy(ChargeRule::Always)}), makeMemoryStore({}));
        TestRequest request = loginFrom("198.51.100.7");
        Check check;
        limiter.check(request.view(), 0, check);
        QVERIFY(check.allowed);
        QVERIFY(!check.settles());
        QVERIFY(!check.policies()[0].charge.pending);
        limiter.settle(check, 200, 0);
        QCOMPARE(passes(limiter, request, 5, 0), 4);
    }

    // Refusals were never charged (a token bucket writes nothing): nothing to give back.
    void refusedRequestsHaveNothingToSettle() {
        Limiter limiter(policySet({loginPolicy()}), makeMemoryStore({}));
        TestRequest request = loginFrom("198.51.100.7");
        Check check;
        QCOMPARE(answered(limiter, request, 5, 401, 0), 5);
        limiter.check(request.view(), 0, check);
        QVERIFY(!check.allowed);
        QVERIFY(!check.settles());
        limiter.settle(check, 200, 0);
        QCOMPARE(passes(limiter, request, 1, 0), 0);
    }

    // A refund never raises a bucket above its capacity: a token bucket of 5 charged 1 and
    // half refilled, given back 5, holds 5 (not 8.5); a window's count stops at 0.
    void refundNeverAboveCapacity() {
        StoreProbe bucket(tokenBucket(5, kSecond));
        const ConsumeResult charged = bucket.consume(0, {}, 2);
        QCOMPARE(charged.decision.remaining, 3);
        QVERIFY(bucket.settle(-5, charged.stamp, kSecond / 2).applied);
        QCOMPARE(bucket.passes(6, kSecond / 2), 5);

        StoreProbe window(fixedWindow(3, kMinute));
        const ConsumeResult counted = window.consume(0);
        QVERIFY(window.settle(-2, counted.stamp, kSecond).applied);
        QVERIFY(window.settle(-2, counted.stamp, kSecond).applied);
        QCOMPARE(window.passes(4, 2 * kSecond), 3);
    }

    // A penalty spends what is left, never more: a bucket of 5 with 4 left, penalised 3, has 1
    // left; penalised 10 at 1 left it is empty, and one refill interval later one passes.
    void penaltyStopsAtEmpty() {
        StoreProbe bucket(tokenBucket(5, kSecond));
        const ConsumeResult charged = bucket.consume(0);
        QVERIFY(bucket.settle(3, charged.stamp, 0).applied);
        QCOMPARE(bucket.consume(0).decision.remaining, 0);
        QVERIFY(bucket.settle(10, charged.stamp, 0).applied);
        QCOMPARE(bucket.passes(1, 0), 0);
        QCOMPARE(bucket.passes(2, kSecond), 1);
    }

    // The limiter's penalty: charge "always", 2 more for a 422. A bucket of 5: one request and
    // its penalty leave 2, so two more pass and the third is refused.
    void penaltyThroughTheLimiter() {
        Policy p = tokenBucketPolicy("forms", 5, 1.0, "/forms");
        p.charge.penalty = 2;
        p.charge.penaltyStatuses = {422};
        Limiter limiter(policySet({p}), makeMemoryStore({}));
        TestRequest request;
        request.method = "POST";
        request.path = "/forms/signup";
        request.from("203.0.113.9");
        Check check;
        limiter.check(request.view(), 0, check);
        QVERIFY(check.settles());
        limiter.settle(check, 200, 0);  // no penalty for a 200
        limiter.check(request.view(), 0, check);
        limiter.settle(check, 422, 0);
        QCOMPARE(passes(limiter, request, 3, 0), 1);
    }

    // "successes", for quotas on completed work: answers in failure_statuses are given back.
    // Five 503s cost nothing; then five 200s pass and the sixth request is refused.
    void successesGiveBackFailures() {
        Policy p = tokenBucketPolicy("exports", 5, 1.0 / 3600, "/exports");
        p.charge.rule = ChargeRule::Successes;
        p.charge.failureStatuses = {500, 502, 503};
        Limiter limiter(policySet({p}), makeMemoryStore({}));
        TestRequest request;
        request.path = "/exports/run";
        request.from("203.0.113.9");
        QCOMPARE(answered(limiter, request, 5, 503, 0, kSecond), 5);
        QCOMPARE(answered(limiter, request, 5, 200, 10 * kSecond), 5);
        QCOMPARE(passes(limiter, request, 1, 10 * kSecond), 0);
    }

    // A bucket that was full again since the charge has forgotten it: a settle with the old
    // stamp changes nothing, even on the same bucket (it now owes a later request).
    void fullSinceTheChargeIsLeftAlone() {
        StoreProbe bucket(tokenBucket(2, kSecond));
        const ConsumeResult first = bucket.consume(0);             // owes 1 s, since 0
        const ConsumeResult second = bucket.consume(2 * kSecond);  // full at 1 s: owes anew
        QVERIFY(first.stamp != second.stamp);
        QVERIFY(!bucket.settle(-1, first.stamp, 2 * kSecond).applied);
        QCOMPARE(bucket.consume(2 * kSecond).decision.remaining, 0);
        QVERIFY(bucket.settle(-1, second.stamp, 2 * kSecond).applied);
        QCOMPARE(bucket.passes(2, 2 * kSecond), 1);
    }

    // A settle on an evicted bucket changes nothing. A store of one bucket: 198.51.100.7 is
    // charged at 0 s; at 2 s (idle since 1 s) it is evicted for 198.51.100.8, which at 4 s is
    // evicted in turn when .7 comes back and is made again. The old charge's refund and penalty
    // leave the new bucket as it is (one of two tokens left), and settles of keys the store no
    // longer holds find nothing.
    void evictedBucketIsLeftAlone() {
        StoreProbe bucket(tokenBucket(2, kSecond), /*maxBuckets=*/1);
        const ConsumeResult old = bucket.consume(0);
        QVERIFY(bucket.consume(2 * kSecond, "ip:198.51.100.8").decision.allowed);
        QCOMPARE(bucket.store->keyspace().buckets, 1);
        QVERIFY(!bucket.settle(-1, old.stamp, 2 * kSecond).applied);  // not in the store
        const ConsumeResult again = bucket.consume(4 * kSecond);
        QVERIFY(again.decision.allowed);
        QCOMPARE(bucket.store->keyspace().buckets, 1);
        QVERIFY(!bucket.settle(-1, old.stamp, 4 * kSecond).applied);
        QVERIFY(!bucket.settle(+1, old.stamp, 4 * kSecond).applied);
        QCOMPARE(bucket.passes(3, 4 * kSecond), 1);
    }

    // A settle after a reload is ignored: the new limiter decides on the same buckets, but a
    // Check of the old one is not its own. A retune that changes the numbers does the same.
    void settleAfterReloadOrRetuneIsIgnored() {
        const PolicySet set = policySet({loginPolicy()});
        Limiter before(set, makeMemoryStore({}));
        TestRequest request = loginFrom("198.51.100.7");
        Check check;
        before.check(request.view(), 0, check);
        Limiter after(set, before);
        QCOMPARE(after.limitId(0), before.limitId(0));  // the same buckets
        after.settle(check, 200, 0);
        QCOMPARE(passes(after, request, 5, 0), 4);

        Limiter tuned(set, makeMemoryStore({}));
        tuned.check(request.view(), 0, check);
        PolicyTuning tuning = tuningOf(tuned.policies().policies[0]);
        tuning.capacity = 6;
        tuned.retune(0, tuning);
        tuned.settle(check, 200, 0);
        QCOMPARE(passes(tuned, request, 6, 0), 5);
        // A retune that keeps the numbers (only the mode) keeps settling.
        tuned.check(request.view(), kSecond, check);
        QVERIFY(!check.allowed);
        Limiter kept(set, makeMemoryStore({}));
        kept.check(request.view(), 0, check);
        tuning = tuningOf(kept.policies().policies[0]);
        tuning.headers = HeaderStyle::Legacy;
        kept.retune(0, tuning);
        kept.settle(check, 200, 0);
        QCOMPARE(passes(kept, request, 6, 0), 5);
    }

    // Checks from checkBatch carry what settle needs, and settleBatch applies them in one go:
    // five logins decided in one batch and answered 200 leave the whole budget.
    void checkBatchChecksSettle() {
        Limiter limiter(policySet({loginPolicy()}), makeMemoryStore({}));
        std::vector<TestRequest> owned(5, loginFrom("198.51.100.7"));
        std::vector<RequestView> views;
        for (TestRequest& r : owned)
            views.push_back(r.view());
        std::vector<Check> checks(5);
        limiter.checkBatch(views, 0, checks);
        for (const Check& c : checks)
            QVERIFY(c.allowed && c.settles());
        const std::vector<int> statuses(5, 200);
        limiter.settleBatch(checks, statuses, 0);
        QCOMPARE(passes(limiter, owned[0], 6, 0), 5);
    }

    // Fixed window: a refund decrements the window it was charged in, only while it lasts. A
    // quota of 3 per minute: a success given back leaves 3; a charge from the first window
    // settled after it ended leaves the second window's count alone.
    void fixedWindowSettlesItsOwnWindow() {
        Policy p = loginPolicy();
        p.algorithm = Algorithm::FixedWindow;
        p.capacity = 3;
        p.windowMs = 60'000;
        Limiter limiter(policySet({p}), makeMemoryStore({}));
        TestRequest request = loginFrom("198.51.100.7");
        Check check;
        limiter.check(request.view(), 0, check);
        limiter.settle(check, 200, kSecond);
        QCOMPARE(passes(limiter, request, 4, 2 * kSecond), 3);  // window [0, 60 s) is full

        Limiter fresh(policySet({p}), makeMemoryStore({}));
        Check late;
        fresh.check(request.view(), 0, late);                  // window [0, 60 s), count 1
        QCOMPARE(passes(fresh, request, 1, 61 * kSecond), 1);  // window [61 s, 121 s), count 1
        fresh.settle(late, 200, 62 * kSecond);                 // its window ended: ignored
        QCOMPARE(passes(fresh, request, 3, 62 * kSecond), 2);
    }

    // Eight threads deciding and settling on one key keep the count exact: a budget of 400
    // failures (no refill within the test), every success given back, 1,600 attempts of which
    // a third fail. What stays charged is exactly the failures that passed, and the bucket has
    // the rest.
    void eightThreadsKeepTheCountExact() {
        Policy p = loginPolicy();
        p.capacity = 400;
        p.refillPerSecond = 1.0 / 3600;
        Limiter limiter(policySet({p}), makeMemoryStore({}));
        std::atomic<int> keptFailures{0};
        std::atomic<int> refundedSuccesses{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 8; ++t) {
            threads.emplace_back([&, t] {
                TestRequest request = loginFrom("198.51.100.7");
                Check check;
                for (int i = 0; i < 200; ++i) {
                    limiter.check(request.view(), 0, check);
                    if (!check.allowed) continue;
                    const bool failed = (i + t) % 3 == 0;
                    limiter.settle(check, failed ? 401 : 200, 0);
                    (failed ? keptFailures : refundedSuccesses).fetch_add(1);
                }
            });
        }
        for (std::thread& t : threads)
            t.join();
        TestRequest request = loginFrom("198.51.100.7");
        const int left = passes(limiter, request, 500, 0);
        qInfo("%d failures kept, %d successes given back, %d left", keptFailures.load(),
              refundedSuccesses.load(), left);
        QCOMPARE(keptFailures.load() + left, 400);
        QVERIFY(keptFailures.load() >= 390);  // the budget was spent, nearly to the last
        QVERIFY(refundedSuccesses.load() >= 400);
    }
};

QTEST_APPLESS_MAIN(TestSettle)
#include "tst_settle.moc"
