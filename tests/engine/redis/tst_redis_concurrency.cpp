// Many callers, one view of consumption: threads sharing one Redis store never take more budget
// slots than the cap, and several limiter instances (separate Store objects, as separate
// replicas would have) sharing one Redis admit exactly the quota between them.

#include <QtTest>

#include <atomic>
#include <thread>

#include "fixtures/address_budget_fixture.h"
#include "fixtures/redis_store_fixture.h"

using namespace ratelab;
using namespace ratelab::redistest;

class TestRedisConcurrency : public RedisSuite {
    Q_OBJECT

private slots:
    // Eight threads (eight pooled connections) each mint 200 new credentials behind one peer,
    // all at once: exactly `cap` of the 1600 keys get a slot, the rest go to the fallback.
    void eightThreadsNeverExceedTheBudgetCap_data() {
        QTest::addColumn<int>("cap");
        QTest::newRow("cap 1") << 1;
        QTest::newRow("cap 50") << 50;
        QTest::newRow("cap 700") << 700;
    }
    void eightThreadsNeverExceedTheBudgetCap() {
        QFETCH(int, cap);
        constexpr int kThreads = 8;
        constexpr int kPerThread = 200;
        RedisStoreOptions o;
        o.poolSize = kThreads;
        o.timeout = 10 * kSecond;
        const std::string ns = "cap" + std::to_string(cap);
        std::unique_ptr<Store> store = callerTimeStore({server_.url()}, ns, o);
        Limit l;
        l.capacity = 1000;
        l.emissionInterval = kNanosPerMilli;
        BucketBudget budget;
        budget.scope = "peer:203.0.113.9";
        budget.fallbackKey = "ip:203.0.113.9";
        budget.cap = static_cast<std::uint32_t>(cap);
        std::atomic<int> members{0};
        std::atomic<int> fallbacks{0};
        std::atomic<int> failures{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&, t] {
                for (int i = 0; i < kPerThread; ++i) {
                    const std::string key = "auth:" + std::to_string(t) + "-" + std::to_string(i);
                    const ConsumeResult r =
                        consumeOne(*store, l, key, kEpoch + i, &budget, "peer:203.0.113.9");
                    if (r.status != StoreStatus::Ok) ++failures;
                    (r.chargedFallback ? fallbacks : members)++;
                }
            });
        }
        for (std::thread& t : threads)
            t.join();
        QCOMPARE(failures.load(), 0);
        QCOMPARE(members.load(), cap);
        QCOMPARE(fallbacks.load(), kThreads * kPerThread - cap);
        const std::string scope = ns + ":{peer:203.0.113.9}:api:scope:peer:203.0.113.9";
        QCOMPARE(server_.commandText({"ZCARD", scope}), std::to_string(cap));
        // The pool bounds the connections (each thread leases one while it calls).
        const std::int64_t connects = countersOf(*store).connects;
        qInfo("%lld pooled connections served %d threads", static_cast<long long>(connects),
              kThreads);
        QVERIFY(connects >= 1 && connects <= kThreads);
    }

    // The address budget's chain under eight threads on eight connections: /64s minted in four
    // /48s of one /32 at once. No /48 gives more than its cap of /64s a bucket, and the /32's
    // scope admits exactly its cap; the scopes in Redis hold no more.
    void eightThreadsNeverExceedTheAddressCaps() {
        constexpr int kThreads = 8;
        RedisStoreOptions o;
        o.poolSize = kThreads;
        o.timeout = 10 * kSecond;
        std::unique_ptr<Store> store = callerTimeStore({server_.url()}, "chain", o);
        Limit l;
        l.capacity = 1000;
        l.emissionInterval = kNanosPerMilli;
        testing::AddressCaps caps;
        caps.per48 = 20;
        caps.per32 = 60;
        const testing::MintCounts counts =
            testing::mintConcurrently(*store, l, caps, kThreads, 150, 4, kEpoch);
        QVERIFY2(counts.failures == 0, counts.firstError.c_str());
        for (int own : counts.own64PerNet48)
            QVERIFY2(own <= 20, qPrintable(QString::number(own)));
        QCOMPARE(counts.members32(), 60);
        QVERIFY(counts.charged32 > 0);  // the rest went to the networks' buckets
        const std::string scope32 = "chain:{ip:2001:db8::/32}:api:scope:net:2001:db8::/32";
        QCOMPARE(server_.commandText({"ZCARD", scope32}), std::string("60"));
        for (unsigned net = 0; net < 4; ++net) {
            const testing::MintedAddress a(net, 0);
            const std::string scope48 = "chain:{ip:2001:db8::/32}:api:scope:" + a.scope48;
            QCOMPARE(server_.commandText({"ZCARD", scope48}),
                     std::to_string(counts.own64PerNet48[net]));
        }
    }

    // Four Store objects (four replicas' limiters) on one Redis, four threads hammering one key
    // at one instant: together they admit the quota once, not four times.
    void fourInstancesShareOneQuota_data() {
        QTest::addColumn<int>("algorithm");
        QTest::addColumn<int>("quota");
        QTest::newRow("token_bucket") << int(Algorithm::TokenBucket) << 10;
        QTest::newRow("gcra") << int(Algorithm::Gcra) << 5;
        QTest::newRow("fixed_window") << int(Algorithm::FixedWindow) << 20;
        QTest::newRow("sliding_window") << int(Algorithm::SlidingWindow) << 20;
        QTest::newRow("sliding_log") << int(Algorithm::SlidingLog) << 8;
        QTest::newRow("leaky_bucket") << int(Algorithm::LeakyBucket) << 6;  // burst 5 + 1
    }
    void fourInstancesShareOneQuota() {
        QFETCH(int, algorithm);
        QFETCH(int, quota);
        constexpr int kInstances = 4;
        constexpr int kPerInstance = 100;
        const Limit l = makeLimit(Algorithm(algorithm));
        const std::string ns = "shared" + std::to_string(algorithm);
        std::vector<std::unique_ptr<Store>> stores;
        for (int i = 0; i < kInstances; ++i)
            stores.push_back(callerTimeStore({server_.url()}, ns));
        std::atomic<int> admitted{0};
        std::atomic<int> failures{0};
        std::vector<std::thread> threads;
        for (int i = 0; i < kInstances; ++i) {
            threads.emplace_back([&, i] {
                for (int k = 0; k < kPerInstance; ++k) {
                    const ConsumeResult r =
                        consumeOne(*stores[static_cast<std::size_t>(i)], l, "auth:shared", kEpoch);
                    if (r.status != StoreStatus::Ok) ++failures;
                    admitted += r.decision.allowed;
                }
            });
        }
        for (std::thread& t : threads)
            t.join();
        QCOMPARE(failures.load(), 0);
        QCOMPARE(admitted.load(), quota);
        // Each instance would have admitted the whole quota on its own.
        std::unique_ptr<Store> alone = makeMemoryStore();
        int aloneAdmitted = 0;
        for (int k = 0; k < kPerInstance; ++k)
            aloneAdmitted += consumeOne(*alone, l, "auth:shared", kEpoch).decision.allowed;
        QCOMPARE(aloneAdmitted, quota);
    }
};

QTEST_APPLESS_MAIN(TestRedisConcurrency)
#include "tst_redis_concurrency.moc"
