// The Limiter (engine/src/limiter/limiter.cpp) under changing policies: retune() and what
// canRetune() lets a running policy change, and a reload that keeps the buckets of the
// policies whose name, algorithm and key rules stayed.

#include <QtTest>
#include <functional>

#include "fixtures/limiter_fixture.h"

using namespace ratelab;
using namespace ratelab::testing;

class TestLimiterReload : public QObject {
    Q_OBJECT

private slots:
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

QTEST_APPLESS_MAIN(TestLimiterReload)
#include "tst_limiter_reload.moc"
