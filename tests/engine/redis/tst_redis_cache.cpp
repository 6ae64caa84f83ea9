// The over-limit cache: a flood from one key that Redis already refused is refused locally until
// its retry time. It never lets a request through that the memory store would refuse (nor
// refuses one it would pass); retry and reset times are exact; only `remaining` may lag.

#include <QtTest>

#include "redis/over_limit_cache.h"
#include "fixtures/redis_store_fixture.h"

using namespace ratelab;
using namespace ratelab::redistest;

class TestRedisCache : public RedisSuite {
    Q_OBJECT

private:
    std::unique_ptr<Store> cachedStore(const std::string& ns) {
        RedisStoreOptions o;
        o.overLimitCacheEntries = 1024;
        return callerTimeStore({server_.url()}, ns, o);
    }

private slots:
    // One key flooded at about 50 times its limit, with a few costlier requests mixed in.
    void floodIsAnsweredLocally_data() {
        QTest::addColumn<int>("algorithm");
        for (Algorithm a :
             {Algorithm::TokenBucket, Algorithm::Gcra, Algorithm::FixedWindow,
              Algorithm::SlidingWindow, Algorithm::SlidingLog, Algorithm::LeakyBucket})
            QTest::newRow(std::string(algorithmName(a)).c_str()) << int(a);
    }
    void floodIsAnsweredLocally() {
        QFETCH(int, algorithm);
        constexpr int kRequests = 50'000;
        const Limit l = makeLimit(Algorithm(algorithm));
        std::unique_ptr<Store> redis = cachedStore("flood" + std::to_string(algorithm));
        std::unique_ptr<Store> memory = makeMemoryStore();
        std::mt19937_64 rng(algorithm);
        const Nanos step = periodOf(l) / (l.capacity + 1) / 50;
        Nanos now = kEpoch;
        int allowed = 0;
        int lagging = 0;
        for (int i = 0; i < kRequests; ++i) {
            now += static_cast<Nanos>(rng() % static_cast<std::uint64_t>(2 * step + 1));
            const std::int64_t cost = rng() % 50 == 0 ? 2 : 1;
            const ConsumeResult expected =
                consumeOne(*memory, l, "flooder", now, nullptr, {}, cost);
            const ConsumeResult actual = consumeOne(*redis, l, "flooder", now, nullptr, {}, cost);
            QCOMPARE(actual.status, StoreStatus::Ok);
            // Never through early, never refused wrongly, with the same reason and times.
            QCOMPARE(actual.decision.allowed, expected.decision.allowed);
            QCOMPARE(actual.decision.reason, expected.decision.reason);
            QCOMPARE(actual.decision.retryAfter, expected.decision.retryAfter);
            QCOMPARE(actual.decision.resetAfter, expected.decision.resetAfter);
            QCOMPARE(actual.decision.limit, expected.decision.limit);
            QVERIFY(actual.decision.remaining <= expected.decision.remaining);
            lagging += actual.decision.remaining < expected.decision.remaining;
            allowed += expected.decision.allowed;
        }
        const RedisStoreCounters c = countersOf(*redis);
        const double callsPerRequest = double(c.commands) / kRequests;
        qInfo(
            "%d of %d allowed; %lld Redis calls (%.4f per request), %lld answered locally, "
            "%d with a lower 'remaining'",
            allowed, kRequests, static_cast<long long>(c.commands), callsPerRequest,
            static_cast<long long>(c.cacheHits), lagging);
        QVERIFY(allowed > 0);
        QVERIFY(callsPerRequest <= 0.1);
        QCOMPARE(c.commands + c.cacheHits, std::int64_t{kRequests});
    }

    // HAProxy's counter counting refused requests: each refusal moves the counter, so none is
    // answered locally and every decision stays the memory store's; read first, refusals
    // change nothing and are cached.
    void haproxyRateCachesOnlyRefusalsThatDoNotCount() {
        for (const bool countRefused : {true, false}) {
            std::unique_ptr<Store> redis =
                cachedStore(countRefused ? "haproxy-counted" : "haproxy-read");
            std::unique_ptr<Store> memory = makeMemoryStore();
            Limit l = makeLimit(Algorithm::HaproxyRate);
            l.countRefused = countRefused;
            Nanos now = kEpoch;
            for (int i = 0; i < 2000; ++i) {
                now += 7 * kMs;
                const ConsumeResult expected = consumeOne(*memory, l, "flooder", now);
                const ConsumeResult actual = consumeOne(*redis, l, "flooder", now);
                QCOMPARE(actual.decision.allowed, expected.decision.allowed);
                QCOMPARE(actual.decision.retryAfter, expected.decision.retryAfter);
            }
            const RedisStoreCounters c = countersOf(*redis);
            if (countRefused) {
                QCOMPARE(c.cacheHits, std::int64_t{0});
            } else {
                QVERIFY(c.cacheHits > 1000);
            }
        }
    }

    // Server time: the entry lives on the local steady clock from the moment the request left,
    // which is never later than the server's decision.
    void serverTimeFlood() {
        RedisStoreOptions o;
        o.urls = {server_.url()};
        o.keyNamespace = "floodserver";
        o.overLimitCacheEntries = 64;
        std::string error;
        std::unique_ptr<Store> store = makeRedisStore(o, &error);
        Limit l;
        l.capacity = 3;
        l.emissionInterval = 3600 * kSecond;
        int allowed = 0;
        for (int i = 0; i < 10'000; ++i) {
            const ConsumeResult r = consumeOne(*store, l, "k", 0);
            QCOMPARE(r.status, StoreStatus::Ok);
            allowed += r.decision.allowed;
            if (!r.decision.allowed) QVERIFY(r.decision.retryAfter > 3590 * kSecond);
        }
        QCOMPARE(allowed, 3);
        const RedisStoreCounters c = countersOf(*store);
        QCOMPARE(c.commands, std::int64_t{4});  // three admissions and the first refusal
        QCOMPARE(c.cacheHits, std::int64_t{9'996});
    }

    // Only the refused cost is answered locally; refusals charged to a budget's fallback are
    // never cached (the key might get a slot of its own any moment).
    void onlyTheSameCostAndNeverTheFallback() {
        std::unique_ptr<Store> store = cachedStore("costs");
        Limit l;
        l.capacity = 2;
        l.emissionInterval = 3600 * kSecond;
        QVERIFY(consumeOne(*store, l, "k", kEpoch, nullptr, {}, 2).decision.allowed);
        QVERIFY(!consumeOne(*store, l, "k", kEpoch).decision.allowed);                  // Redis
        QVERIFY(!consumeOne(*store, l, "k", kEpoch).decision.allowed);                  // cache
        QVERIFY(!consumeOne(*store, l, "k", kEpoch, nullptr, {}, 2).decision.allowed);  // Redis
        RedisStoreCounters c = countersOf(*store);
        QCOMPARE(c.commands, std::int64_t{3});
        QCOMPARE(c.cacheHits, std::int64_t{1});

        BucketBudget budget;
        budget.scope = "peer:p";
        budget.fallbackKey = "ip:p";
        budget.cap = 1;
        QVERIFY(consumeOne(*store, l, "member", kEpoch, &budget, "peer:p").decision.allowed);
        for (int i = 0; i < 5; ++i) {
            const ConsumeResult r = consumeOne(*store, l, "newcomer", kEpoch, &budget, "peer:p");
            QVERIFY(r.chargedFallback);
            QCOMPARE(r.decision.allowed, i < 2);
        }
        c = countersOf(*store);
        QCOMPARE(c.commands, std::int64_t{3 + 1 + 5});
        QCOMPARE(c.cacheHits, std::int64_t{1});
    }

    // Bounded: a fixed table, whatever the number of flooding keys; a collision only evicts.
    void boundedTable() {
        redis::OverLimitCache cache(100);
        QCOMPARE(cache.entries(), std::size_t{128});
        Decision refusal;
        refusal.reason = DenyReason::OverLimit;
        refusal.retryAfter = kSecond;
        refusal.limit = 5;
        for (std::uint64_t fp = 1; fp < 100'000; ++fp)
            cache.remember(fp * 0x9E3779B97F4A7C15ULL | 1, 1, 0, refusal);
        Decision d;
        int found = 0;
        for (std::uint64_t fp = 1; fp < 100'000; ++fp)
            found += cache.find(fp * 0x9E3779B97F4A7C15ULL | 1, 1, 0, &d);
        QVERIFY(found <= 128);
        QVERIFY(found > 0);
        QVERIFY(!cache.find(12345, 1, 0, &d));  // never a stranger's refusal
    }
};

QTEST_APPLESS_MAIN(TestRedisCache)
#include "tst_redis_cache.moc"
