// The Limiter (engine/src/limiter/limiter.cpp): policy matching, several policies per request, shadow
// mode, bypasses, tiers, store-error rules and the observer, on a manual clock.

#include <QtTest>
#include <functional>

#include "fixtures/limiter_fixture.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

constexpr Nanos kSecond = kNanosPerSecond;

struct RecordingObserver final : LimitObserver {
    std::vector<LimitEvent> hits;
    std::vector<std::string> keyHashes;
    std::vector<StoreErrorEvent> storeErrors;
    void onLimitHit(const LimitEvent& e) override {
        hits.push_back(e);
        keyHashes.emplace_back(e.keyHash);
    }
    void onStoreError(const StoreErrorEvent& e) override { storeErrors.push_back(e); }
};

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
        RecordingObserver observer;
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
        RecordingObserver observer;
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
        RecordingObserver observer;
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
        RecordingObserver observer;
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

    // The workbench slider: a retune changes the next decision, buckets keep their state.
    void retuneChangesTheNextDecision() {
        Limiter limiter(policySet({tokenBucketPolicy("api", 2, 1.0)}), makeMemoryStore({}));
        TestRequest request;
        request.from("192.0.2.1");
        QVERIFY(limiter.decide(request.view(), 0).allowed);
        QVERIFY(limiter.decide(request.view(), 0).allowed);
        QVERIFY(!limiter.decide(request.view(), 0).allowed);
        PolicyTuning wider = tuningOf(limiter.policies().policies[0]);
        wider.capacity = 4;
        limiter.retune(0, wider);
        QVERIFY(limiter.decide(request.view(), 0).allowed);
        QVERIFY(limiter.decide(request.view(), 0).allowed);
        QVERIFY(!limiter.decide(request.view(), 0).allowed);
        QCOMPARE(limiter.policies().policies[0].capacity, std::int64_t(4));
        QCOMPARE(limiter.decide(request.view(), 0).headers.at(0).value,
                 std::string("\"api\";q=4;w=4"));  // the advertised limit is recompiled too
    }

    // One list of what a running policy may change: canRetune() says yes exactly when a retune
    // with the edited policy's tuning makes the running one equal to it, field for field.
    void canRetuneExactlyWhatRetuneApplies_data() {
        QTest::addColumn<QString>("field");
        QTest::addColumn<bool>("live");
        for (const char* f : {"capacity", "refill", "window", "cost", "mode", "headers",
                              "onStoreError", "storeTimeout", "delay", "nodelay", "tierNumbers"})
            QTest::newRow(f) << QString(f) << true;
        for (const char* f : {"name", "algorithm", "keySource", "ipv6Prefix", "budget", "path",
                              "methods", "bypass", "tierName", "tierCount", "tierAttribute"})
            QTest::newRow(f) << QString(f) << false;
    }
    void canRetuneExactlyWhatRetuneApplies() {
        QFETCH(QString, field);
        QFETCH(bool, live);
        Policy running = tokenBucketPolicy("api", 10, 1.0);
        running.tiers = TierConfig{"plan", "free", {Tier{"free", 0, 0, 0}, Tier{"pro", 100, 0, 0}}};
        Policy edited = running;
        if (field == "capacity") edited.capacity = 99;
        if (field == "refill") edited.refillPerSecond = 0.5;
        if (field == "window") edited.windowMs = 1000;
        if (field == "cost") edited.cost = 3;
        if (field == "mode") edited.mode = PolicyMode::Shadow;
        if (field == "headers") edited.headers = HeaderStyle::Legacy;
        if (field == "onStoreError") edited.onStoreError = StoreErrorRule::Deny;
        if (field == "storeTimeout") edited.storeTimeout = kNanosPerSecond;
        if (field == "delay") edited.delay = 4;
        if (field == "nodelay") edited.nodelay = true;
        if (field == "tierNumbers") edited.tiers->tiers[1].capacity = 500;
        if (field == "name") edited.name = "other";
        if (field == "algorithm") edited.algorithm = Algorithm::Gcra;
        if (field == "keySource") edited.key.source = KeySource::Peer;
        if (field == "ipv6Prefix") edited.key.ipv6Prefix = 56;
        if (field == "budget") edited.budget.perPeer = 16;
        if (field == "path") edited.match.pathPrefix = "/login";
        if (field == "methods") edited.match.methods = {"POST"};
        if (field == "bypass") edited.bypass.principals = {"ops"};
        if (field == "tierName") edited.tiers->tiers[1].name = "premium";
        if (field == "tierCount") edited.tiers->tiers.push_back(Tier{"team", 50, 0, 0});
        if (field == "tierAttribute") edited.tiers->attribute = "tier";
        QCOMPARE(canRetune(running, edited), live);
        PolicySet set;
        set.policies = {running};
        Limiter limiter(set, makeMemoryStore({}));
        limiter.retune(0, tuningOf(edited));
        QCOMPARE(limiter.policies().policies[0] == edited, live);
        PolicySet updated = set;
        updated.policies = {edited};
        QCOMPARE(canRetune(set, updated), live);
    }

    // A set whose store or trusted proxies change, or which gains a policy, is rebuilt.
    void canRetuneSetsOnlyOfTheSameShape() {
        PolicySet running = policySet({tokenBucketPolicy("api", 10, 1.0)});
        PolicySet moreProxies = running;
        moreProxies.trustedProxies.cidrs.push_back(*Cidr::parse("10.0.0.0/8"));
        QVERIFY(!canRetune(running, moreProxies));
        PolicySet otherStore = running;
        otherStore.store.maxBuckets = 10;
        QVERIFY(!canRetune(running, otherStore));
        PolicySet more = running;
        more.policies.push_back(tokenBucketPolicy("login", 1, 1.0, "/login"));
        QVERIFY(!canRetune(running, more));
        QVERIFY(canRetune(running, running));
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

    // A limiter taking over from another (a policy reload) keeps the buckets of the policies
    // whose name, algorithm and key rules stayed, whatever else changed; a policy whose algorithm
    // changed, or a new one, starts fresh.
    void aReloadKeepsTheBucketsOfUnchangedPolicies() {
        std::shared_ptr<Store> store = makeMemoryStore({});
        Policy login = tokenBucketPolicy("login", 2, 0.001, "/login");
        Policy api = tokenBucketPolicy("api", 2, 0.001, "/api");
        Limiter before(policySet({login, api}), store);
        TestRequest toLogin;
        toLogin.from("192.0.2.1").path = "/login";
        TestRequest toApi;
        toApi.from("192.0.2.1").path = "/api/x";
        for (int i = 0; i < 2; ++i) {
            QVERIFY(before.decide(toLogin.view(), 0).allowed);
            QVERIFY(before.decide(toApi.view(), 0).allowed);
        }
        QCOMPARE(before.decide(toLogin.view(), 0).status, 429);

        // login's numbers and route change, api's algorithm changes, a new policy arrives and
        // the order moves: login stays limited, api starts over.
        Policy loginNext = tokenBucketPolicy("login", 3, 0.001, "/login");
        loginNext.match.methods = {"GET", "POST"};
        Policy apiNext = api;
        apiNext.algorithm = Algorithm::Gcra;
        Policy fresh = tokenBucketPolicy("fresh", 1, 0.001, "/fresh");
        QVERIFY(keepsBucketState(login, loginNext));
        QVERIFY(!keepsBucketState(api, apiNext));
        Limiter after(policySet({fresh, apiNext, loginNext}), before);
        QCOMPARE(&after.store(), &before.store());
        // login had spent 2 of 2 (and one refusal wrote nothing); it now holds 3: one more.
        QVERIFY(after.decide(toLogin.view(), 0).allowed);
        QCOMPARE(after.decide(toLogin.view(), 0).status, 429);
        QVERIFY(after.decide(toApi.view(), 0).allowed);
        QVERIFY(after.decide(toApi.view(), 0).allowed);
        QCOMPARE(after.decide(toApi.view(), 0).status, 429);
        QCOMPARE(after.limitId(2), before.limitId(0));  // login: the same buckets
        QVERIFY(after.limitId(1) != before.limitId(1));
        QVERIFY(after.limitId(0) != before.limitId(1) && after.limitId(0) != before.limitId(0));

        // Another reload back to api's first algorithm does not meet the GCRA buckets either.
        Limiter again(policySet({login, api}), after);
        QVERIFY(again.limitId(1) != after.limitId(1) && again.limitId(1) != before.limitId(1));
        QVERIFY(again.decide(toApi.view(), 0).allowed);
    }

    // What a reload may change under a policy and still keep its buckets.
    void keepsBucketStateTable() {
        struct Row {
            const char* change;
            std::function<void(Policy&)> apply;
            bool kept;
        };
        const Row rows[] = {
            {"capacity", [](Policy& p) { p.capacity = 50; }, true},
            {"mode", [](Policy& p) { p.mode = PolicyMode::Shadow; }, true},
            {"budget", [](Policy& p) { p.budget.perPeer = 3; }, true},
            {"route", [](Policy& p) { p.match.pathPrefix = "/v2"; }, true},
            {"name", [](Policy& p) { p.name = "api2"; }, false},
            {"algorithm", [](Policy& p) { p.algorithm = Algorithm::SlidingWindow; }, false},
            {"key source", [](Policy& p) { p.key.source = KeySource::Peer; }, false},
            {"ipv6 prefix", [](Policy& p) { p.key.ipv6Prefix = 48; }, false},
        };
        const Policy before = tokenBucketPolicy("api", 5, 1.0);
        for (const Row& row : rows) {
            Policy after = before;
            row.apply(after);
            QVERIFY2(keepsBucketState(before, after) == row.kept, row.change);
        }
    }
};

QTEST_APPLESS_MAIN(TestLimiter)
#include "tst_limiter.moc"
