// The Limiter (engine/src/limiter/limiter.cpp) deciding: policy matching and routes, several
// policies per request, shadow mode, bypasses, tiers, costs, budgets and the observer's events,
// on a manual clock. Store errors: tst_limiter_store_errors; retunes and reloads:
// tst_limiter_reload.

#include <QtTest>

#include "fixtures/limiter_fixture.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

constexpr Nanos kSecond = kNanosPerSecond;

}  // namespace

class TestLimiter : public QObject {
    Q_OBJECT

private slots:
    // The seed's walk-through: capacity 5, refill 1/s; five pass, the 6th and 7th get 429 with
    // Retry-After: 1; 2.1 s later two pass and the third is refused.
    void fivePassThenTooManyRequests() {
        Limiter limiter(policySet({tokenBucketPolicy("api", 5, 1.0)}), makeMemoryStore({}));
        TestRequest request;
        request.from("198.51.100.7");
        Verdict v;
        for (int i = 0; i < 5; ++i) {
            limiter.decide(request.view(), 0, v);
            QCOMPARE(v.status, 200);
            QVERIFY(v.allowed);
        }
        for (int i = 0; i < 2; ++i) {
            limiter.decide(request.view(), 0, v);
            QCOMPARE(v.status, 429);
            QCOMPARE(headerValue(v, "Retry-After"), std::string("1"));
            QCOMPARE(v.code, RefusalCode::RateLimited);
            QCOMPARE(v.contentType, std::string("application/problem+json"));
        }
        int passed = 0;
        for (int i = 0; i < 3; ++i) {
            limiter.decide(request.view(), 2'100'000'000, v);
            passed += v.allowed;
        }
        QCOMPARE(passed, 2);
        QCOMPARE(v.status, 429);
    }

    void noIdentityIs412() {
        Limiter limiter(policySet({tokenBucketPolicy("api", 5, 1.0)}), makeMemoryStore({}));
        TestRequest request;  // no peer, no credentials
        Verdict v = limiter.decide(request.view(), 0);
        QCOMPARE(v.status, 412);
        QCOMPARE(v.code, RefusalCode::IdentityUnavailable);
        QVERIFY(v.body.find("\"code\":\"identity_unavailable\"") != std::string::npos);
        QCOMPARE(headerValue(v, "Retry-After"), std::string("<absent>"));
    }

    // A global limit and a stricter /login limit: both charged in order, both advertised.
    void severalPoliciesAreChargedInOrder() {
        Policy global = tokenBucketPolicy("global", 100, 10.0);
        Policy login = tokenBucketPolicy("login", 3, 0.1, "/login");
        Limiter limiter(policySet({global, login}), makeMemoryStore({}));
        TestRequest request;
        request.path = "/login";
        request.method = "POST";
        request.from("203.0.113.9");
        Verdict v;
        for (int i = 0; i < 3; ++i) {
            limiter.decide(request.view(), 0, v);
            QVERIFY(v.allowed);
            QCOMPARE(v.check.policies().size(), std::size_t(2));
        }
        QCOMPARE(headerValue(v, "RateLimit-Policy"),
                 std::string("\"global\";q=100;w=10, \"login\";q=3;w=30"));
        QCOMPARE(headerValue(v, "RateLimit"),
                 std::string("\"global\";r=97;t=1, \"login\";r=0;t=30"));
        limiter.decide(request.view(), 0, v);
        QCOMPARE(v.status, 429);
        QCOMPARE(headerValue(v, "Retry-After"), std::string("10"));
        // Other paths only meet the global policy, which has spent 4 of its 100.
        request.path = "/api/items";
        limiter.decide(request.view(), 0, v);
        QVERIFY(v.allowed);
        QCOMPARE(v.check.policies().size(), std::size_t(1));
        QCOMPARE(v.check.policies()[0].decision.remaining, std::int64_t(95));
    }

    // A refused request does not spend the quota of the policies after the refusing one.
    void aRefusalStopsLaterCharges() {
        Policy first = tokenBucketPolicy("first", 1, 1.0);
        Policy second = tokenBucketPolicy("second", 10, 1.0);
        Limiter limiter(policySet({first, second}), makeMemoryStore({}));
        TestRequest request;
        request.from("192.0.2.1");
        QCOMPARE(limiter.decide(request.view(), 0).check.policies()[1].decision.remaining,
                 std::int64_t(9));
        for (int i = 0; i < 4; ++i) {
            Verdict refused = limiter.decide(request.view(), 0);
            QCOMPARE(refused.status, 429);
            QCOMPARE(refused.check.policies().size(), std::size_t(1));
        }
        // Had the refused four been charged to "second", it would hold 5 now, not 9.
        Verdict v = limiter.decide(request.view(), kSecond);
        QVERIFY(v.allowed);
        QCOMPARE(v.check.policies()[1].decision.remaining, std::int64_t(9));
    }

    void shadowModeCountsButNeverRefuses() {
        Policy p = tokenBucketPolicy("api", 1, 1.0);
        p.mode = PolicyMode::Shadow;
        EventRecorder observer;
        LimiterOptions options;
        options.observer = &observer;
        Limiter limiter(policySet({p}), makeMemoryStore({}), options);
        TestRequest request;
        request.from("192.0.2.1");
        for (int i = 0; i < 4; ++i) {
            Verdict v = limiter.decide(request.view(), 0);
            QVERIFY(v.allowed);
            QCOMPARE(v.status, 200);
            QCOMPARE(v.headers.size(), std::size_t(0));
            QCOMPARE(v.check.policies()[0].outcome,
                     i == 0 ? PolicyOutcome::Passed : PolicyOutcome::ShadowThrottled);
        }
        QCOMPARE(observer.hits.size(), std::size_t(3));
        QCOMPARE(observer.hits[0].outcome, PolicyOutcome::ShadowThrottled);
        QCOMPARE(observer.hits[0].policy, std::string_view("api"));
    }

    void bypassSkipsThePolicy() {
        Policy p = tokenBucketPolicy("api", 1, 1.0);
        p.bypass.cidrs.push_back(*Cidr::parse("10.0.0.0/8"));
        p.bypass.principals.push_back("health-checker");
        Limiter limiter(policySet({p}), makeMemoryStore({}));
        TestRequest internal;
        internal.from("10.1.2.3");
        TestRequest robot;
        robot.from("192.0.2.1").principal = "health-checker";
        for (int i = 0; i < 10; ++i) {
            QVERIFY(limiter.decide(internal.view(), 0).allowed);
            Verdict v = limiter.decide(robot.view(), 0);
            QVERIFY(v.allowed);
            QCOMPARE(v.check.policies()[0].outcome, PolicyOutcome::Bypassed);
        }
        QCOMPARE(limiter.store().keyspace().buckets, std::int64_t(0));
    }

    // Plan tiers: free users get 2, premium users 5, on one route and one policy.
    void tiersChooseTheQuotaFromAVerifiedAttribute() {
        Policy p = tokenBucketPolicy("plans", 2, 0.01);
        TierConfig tiers;
        tiers.attribute = "plan";
        tiers.defaultTier = "free";
        tiers.tiers.push_back(Tier{"free", 2, 0, 0});
        tiers.tiers.push_back(Tier{"premium", 5, 0, 0});
        p.tiers = tiers;
        Limiter limiter(policySet({p}), makeMemoryStore({}));
        auto admitted = [&](std::string principal, std::string plan) {
            TestRequest r;
            r.principal = std::move(principal);
            if (!plan.empty()) r.attributes.emplace_back("plan", std::move(plan));
            int n = 0;
            for (int i = 0; i < 10; ++i)
                n += limiter.decide(r.view(), 0).allowed;
            return n;
        };
        QCOMPARE(admitted("alice", "free"), 2);
        QCOMPARE(admitted("bob", "premium"), 5);
        QCOMPARE(admitted("carol", ""), 2);         // no attribute: the default tier
        QCOMPARE(admitted("dave", "platinum"), 2);  // an unknown tier: the default tier
        TestRequest r;
        r.principal = "erin";
        r.attributes.emplace_back("plan", "premium");
        QCOMPARE(headerValue(limiter.decide(r.view(), 0), "RateLimit-Policy"),
                 std::string("\"plans\";q=5;w=500"));
        QVERIFY(limiter.limitId(0, 1) != limiter.limitId(0, 0));
    }

    void costAboveCapacityNeverPasses() {
        Limiter limiter(policySet({tokenBucketPolicy("api", 10, 1.0)}), makeMemoryStore({}));
        TestRequest request;
        request.from("192.0.2.1").cost = 11;
        Verdict v = limiter.decide(request.view(), 0);
        QCOMPARE(v.status, 429);
        QCOMPARE(v.code, RefusalCode::CostExceedsCapacity);
        QCOMPARE(headerValue(v, "Retry-After"), std::string("<absent>"));  // waiting never helps
        request.cost = 10;
        QVERIFY(limiter.decide(request.view(), 0).allowed);
    }

    // Events name keys by a keyed hash: never the key, never the credential.
    void eventsCarryHashedKeysOnly() {
        EventRecorder observer;
        LimiterOptions options;
        options.observer = &observer;
        options.keyHashSecret = 42;
        Limiter limiter(policySet({tokenBucketPolicy("api", 1, 1.0)}), makeMemoryStore({}),
                        options);
        TestRequest request;
        request.from("192.0.2.1").header("Authorization", "Bearer secret-token-123");
        limiter.decide(request.view(), 0);
        limiter.decide(request.view(), 0);
        QCOMPARE(observer.hits.size(), std::size_t(1));
        QCOMPARE(observer.keyHashes[0].size(), std::size_t(16));
        QVERIFY(observer.keyHashes[0].find("secret") == std::string::npos);
        QCOMPARE(observer.hits[0].route, std::string_view("/api/items"));
        Verdict explained = limiter.decide(request.view(), 0, /*explain=*/true);
        QVERIFY(explained.check.policies()[0].key.rfind("auth:", 0) == 0);
        QVERIFY(explained.check.policies()[0].key.find("secret") == std::string::npos);
        QCOMPARE(explained.check.policies()[0].scope, std::string("peer:192.0.2.1"));
    }

    // Over the budget a credential is collapsed onto its caller's own address bucket: the very
    // bucket that caller's requests without a credential use.
    void theBudgetFallbackIsTheAddressBucket() {
        Policy p = tokenBucketPolicy("api", 5, 0.001);
        p.budget.perPeer = 2;
        Limiter limiter(policySet({p}), makeMemoryStore({}));
        auto withToken = [&](std::string token) {
            TestRequest r;
            r.from("203.0.113.9").header("Authorization", "Bearer " + token);
            return limiter.decide(r.view(), 0, /*explain=*/true);
        };
        QVERIFY(!withToken("one").check.policies()[0].chargedFallback);
        QVERIFY(!withToken("two").check.policies()[0].chargedFallback);
        Verdict third = withToken("three");
        QVERIFY(third.check.policies()[0].chargedFallback);
        QCOMPARE(third.check.policies()[0].key, std::string("ip:203.0.113.9"));
        QCOMPARE(third.check.policies()[0].decision.remaining, std::int64_t(4));
        TestRequest anonymous;
        anonymous.from("203.0.113.9");
        Verdict plain = limiter.decide(anonymous.view(), 0, /*explain=*/true);
        QCOMPARE(plain.check.policies()[0].key, std::string("ip:203.0.113.9"));
        QCOMPARE(plain.check.policies()[0].decision.remaining, std::int64_t(3));
        QCOMPARE(limiter.store().keyspace().buckets, std::int64_t(3));
    }

    void routesMatchOnSegmentBoundaries() {
        Policy login = tokenBucketPolicy("login", 1, 1.0, "/login");
        login.match.methods = {"POST"};
        Limiter limiter(policySet({login}), makeMemoryStore({}));
        TestRequest request;
        request.from("192.0.2.1");
        request.method = "POST";
        request.path = "/loginx";
        QCOMPARE(limiter.decide(request.view(), 0).check.policies().size(), std::size_t(0));
        request.path = "/login/step2";
        QCOMPARE(limiter.decide(request.view(), 0).check.policies().size(), std::size_t(1));
        request.method = "GET";
        request.path = "/login";
        QCOMPARE(limiter.decide(request.view(), 0).check.policies().size(), std::size_t(0));
        RouteMatch pattern;
        pattern.pathPattern = "/api/*/items/**";
        QVERIFY(pattern.matches("GET", "/api/v1/items"));
        QVERIFY(pattern.matches("GET", "/api/v2/items/3/parts"));
        QVERIFY(!pattern.matches("GET", "/api/items"));
        QVERIFY(!pattern.matches("GET", "/api/v1/other"));
    }
};

QTEST_APPLESS_MAIN(TestLimiter)
#include "tst_limiter.moc"
