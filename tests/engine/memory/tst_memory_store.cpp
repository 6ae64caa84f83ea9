// The embedded store (engine/src/memory/memory_store.cpp): keys, budgets, eviction, the hard
// cap, and concurrency. Time is injected through ConsumeRequest::now.

#include <QtTest>

#include <algorithm>
#include <atomic>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "ratelab/memory_store.h"

using namespace ratelab;

namespace {

constexpr Nanos kSecond = kNanosPerSecond;

Limit bucket(std::int64_t capacity, Nanos interval) {
    Limit l;
    l.algorithm = Algorithm::TokenBucket;
    l.capacity = capacity;
    l.emissionInterval = interval;
    return l;
}

struct Call {
    std::uint32_t limitId = 0;
    const Limit* limit = nullptr;
    std::string partition;
    std::string key;
    std::int64_t cost = 1;
    Nanos now = 0;
    const BucketBudget* budget = nullptr;

    ConsumeResult on(Store& store) const {
        ConsumeRequest r;
        r.limitId = limitId;
        r.limitName = "test";
        r.limit = limit;
        r.partition = partition;
        r.key = key;
        r.cost = cost;
        r.now = now;
        r.budget = budget;
        return store.consume(r);
    }
};

ConsumeResult consume(Store& store, const Limit& limit, std::string key, Nanos now,
                      const BucketBudget* budget = nullptr, std::string partition = "") {
    Call c;
    c.limit = &limit;
    c.partition = partition.empty() ? key : partition;
    c.key = std::move(key);
    c.now = now;
    c.budget = budget;
    return c.on(store);
}

}  // namespace

class TestMemoryStore : public QObject {
    Q_OBJECT

private slots:
    void decidesLikeTheAlgorithm() {
        auto store = makeMemoryStore({});
        const Limit l = bucket(5, kSecond);
        for (int i = 0; i < 5; ++i) {
            ConsumeResult r = consume(*store, l, "ip:198.51.100.7", 0);
            QCOMPARE(r.status, StoreStatus::Ok);
            QVERIFY(r.decision.allowed);
            QCOMPARE(r.decision.remaining, std::int64_t(4 - i));
        }
        ConsumeResult refused = consume(*store, l, "ip:198.51.100.7", 0);
        QVERIFY(!refused.decision.allowed);
        QCOMPARE(refused.decision.retryAfter, kSecond);
        QVERIFY(consume(*store, l, "ip:198.51.100.8", 0).decision.allowed);
        QCOMPARE(store->keyspace().buckets, std::int64_t(2));
        QCOMPARE(store->kind(), std::string_view("memory"));
    }

    // Buckets of different limits never meet, even under one key and partition.
    void limitsAreSeparate() {
        auto store = makeMemoryStore({});
        const Limit l = bucket(1, kSecond);
        Call a{0, &l, "p", "k"};
        Call b{1, &l, "p", "k"};
        QVERIFY(a.on(*store).decision.allowed);
        QVERIFY(!a.on(*store).decision.allowed);
        QVERIFY(b.on(*store).decision.allowed);
        // The same key in another partition is another bucket.
        Call c{0, &l, "q", "k"};
        QVERIFY(c.on(*store).decision.allowed);
    }

    void refusedNewKeysStoreNothing() {
        auto store = makeMemoryStore({});
        const Limit l = bucket(3, kSecond);
        Call c{0, &l, "p", "k", /*cost=*/4};
        ConsumeResult r = c.on(*store);
        QCOMPARE(r.decision.reason, DenyReason::CostExceedsCapacity);
        QCOMPARE(store->keyspace().buckets, std::int64_t(0));
    }

    // Cap 3: three keys get buckets of their own, the fourth and fifth are charged to the
    // fallback; a key that is already in keeps its bucket.
    void budgetCollapsesOverTheCapOntoTheFallback() {
        auto store = makeMemoryStore({});
        const Limit l = bucket(10, kSecond);
        const BucketBudget budget{"peer:198.51.100.7", "ip:198.51.100.7", 3, 60 * kSecond};
        for (int i = 0; i < 5; ++i) {
            ConsumeResult r =
                consume(*store, l, "auth:" + std::to_string(i), 0, &budget, "peer:198.51.100.7");
            QCOMPARE(r.chargedFallback, i >= 3);
        }
        QVERIFY(
            !consume(*store, l, "auth:1", kSecond, &budget, "peer:198.51.100.7").chargedFallback);
        KeyspaceStats k = store->keyspace();
        QCOMPARE(k.buckets, std::int64_t(4));  // three auth: buckets and the fallback
        QCOMPARE(k.budgetSlots, std::int64_t(3));
        QCOMPARE(k.scopes, std::int64_t(1));
        // The fallback bucket took both overflow requests.
        ConsumeResult fallback =
            consume(*store, l, "ip:198.51.100.7", 0, nullptr, "peer:198.51.100.7");
        QCOMPARE(fallback.decision.remaining, std::int64_t(7));
    }

    // A slot expires a TTL after its key was last used: an unused credential frees its slot,
    // a used one keeps it.
    void slotsExpireAfterLastUse() {
        auto store = makeMemoryStore({});
        const Limit l = bucket(2, kSecond);  // refills in 2 s, well under the TTL
        const BucketBudget budget{"peer:a", "ip:a", 2, 60 * kSecond};
        QVERIFY(!consume(*store, l, "auth:old", 0, &budget, "peer:a").chargedFallback);
        QVERIFY(!consume(*store, l, "auth:kept", 0, &budget, "peer:a").chargedFallback);
        QVERIFY(consume(*store, l, "auth:new", 30 * kSecond, &budget, "peer:a").chargedFallback);
        QVERIFY(!consume(*store, l, "auth:kept", 50 * kSecond, &budget, "peer:a").chargedFallback);
        // 60 s after its last use "old" is gone; "kept" was used at 50 s and stays.
        QVERIFY(
            consume(*store, l, "auth:new", 60 * kSecond - 1, &budget, "peer:a").chargedFallback);
        QVERIFY(!consume(*store, l, "auth:new", 60 * kSecond, &budget, "peer:a").chargedFallback);
        QVERIFY(consume(*store, l, "auth:third", 100 * kSecond, &budget, "peer:a").chargedFallback);
        QVERIFY(!consume(*store, l, "auth:kept", 100 * kSecond, &budget, "peer:a").chargedFallback);
    }

    // A slot never expires before its bucket would be full again, so no fresh generation opens
    // beneath a live bucket: TTL 1 s, refill 10 s.
    void slotsOutliveTheirBucket() {
        auto store = makeMemoryStore({});
        const Limit l = bucket(10, kSecond);
        const BucketBudget budget{"peer:a", "ip:a", 1, kSecond};
        QVERIFY(!consume(*store, l, "auth:x", 0, &budget, "peer:a").chargedFallback);
        QVERIFY(consume(*store, l, "auth:y", 9 * kSecond, &budget, "peer:a").chargedFallback);
        QVERIFY(!consume(*store, l, "auth:y", 10 * kSecond, &budget, "peer:a").chargedFallback);
    }

    // Idle buckets (full again) are evicted as new keys arrive: memory follows the live keys.
    void idleBucketsAreEvicted() {
        auto store = makeMemoryStore({});
        const Limit l = bucket(1, kSecond);
        for (int i = 0; i < 10'000; ++i)
            consume(*store, l, "k" + std::to_string(i), 0);
        QCOMPARE(store->keyspace().buckets, std::int64_t(10'000));
        // One second later all of them are full again; new keys push the old ones out.
        for (int i = 0; i < 10'000; ++i)
            consume(*store, l, "n" + std::to_string(i), kSecond);
        const std::int64_t live = store->keyspace().buckets;
        QVERIFY2(live < 14'000, qPrintable(QString::number(live)));
        QVERIFY(live >= 10'000);
    }

    // The hard cap: a new key when the store is full and nothing is idle is refused clearly;
    // once buckets go idle, they make room.
    void fullStoreRefusesUntilSomethingIsIdle() {
        MemoryStoreOptions options;
        options.maxBuckets = 100;
        auto store = makeMemoryStore(options);
        const Limit l = bucket(5, kSecond);  // one request leaves a bucket busy for 1 s
        for (int i = 0; i < 100; ++i) {
            QCOMPARE(consume(*store, l, "k" + std::to_string(i), 0).status, StoreStatus::Ok);
        }
        ConsumeResult full = consume(*store, l, "k100", 500'000'000);
        QCOMPARE(full.status, StoreStatus::Full);
        QVERIFY(full.error.find("full") != std::string::npos);
        // Existing keys still decide.
        QCOMPARE(consume(*store, l, "k7", 500'000'000).status, StoreStatus::Ok);
        ConsumeResult later = consume(*store, l, "k100", 2 * kSecond);
        QCOMPARE(later.status, StoreStatus::Ok);
        QVERIFY(later.decision.allowed);
        QVERIFY(store->keyspace().buckets <= 100);
    }

    // Several threads on one key admit exactly the capacity (no refill within the test);
    // on many keys, exactly the capacity per key.
    void threadsNeverAdmitMoreThanTheLimit() {
        auto store = makeMemoryStore({});
        const Limit l = bucket(1000, 3600 * kSecond);
        std::atomic<int> admitted{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&] {
                for (int i = 0; i < 5000; ++i)
                    admitted += consume(*store, l, "hot", 0).decision.allowed;
            });
        }
        for (auto& t : threads)
            t.join();
        QCOMPARE(admitted.load(), 1000);

        const Limit small = bucket(3, 3600 * kSecond);
        std::atomic<int> many{0};
        threads.clear();
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&] {
                for (int round = 0; round < 5; ++round) {
                    for (int k = 0; k < 2000; ++k) {
                        many +=
                            consume(*store, small, "key" + std::to_string(k), 0).decision.allowed;
                    }
                }
            });
        }
        for (auto& t : threads)
            t.join();
        QCOMPARE(many.load(), 3 * 2000);
    }

    // Threads deciding batches at once (each batch locks every shard it touches, in shard
    // order) admit exactly the capacity per key, with the fewest shards a store takes and the
    // most, where a batch's keys spread over all 64 bits of its mask of shards to lock.
    void batchesOnThreadsNeverAdmitMoreThanTheLimit_data() {
        QTest::addColumn<unsigned>("shards");
        QTest::newRow("4 shards") << 4u;
        QTest::newRow("64 shards") << 64u;
    }
    void batchesOnThreadsNeverAdmitMoreThanTheLimit() {
        QFETCH(unsigned, shards);
        MemoryStoreOptions options;
        options.shards = shards;
        auto store = makeMemoryStore(options);
        const Limit small = bucket(3, 3600 * kSecond);
        constexpr int kKeys = 2000;
        std::vector<std::string> keys;
        for (int k = 0; k < kKeys; ++k)
            keys.push_back("key" + std::to_string(k));
        std::atomic<int> admitted{0};
        std::latch start(4);
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&, t] {
                std::vector<ConsumeRequest> batch(32);
                std::vector<ConsumeResult> results(batch.size());
                // Each thread walks the keys from its own start, 13 keys on at each request
                // and the same key again at every seventh; 20 * kKeys requests a thread, 80 a
                // key on average, all threads let go at once.
                std::size_t k = static_cast<std::size_t>(t) * 577;
                int n = 0;
                start.arrive_and_wait();
                for (int sent = 0; sent < 20 * kKeys; sent += static_cast<int>(batch.size())) {
                    for (ConsumeRequest& r : batch) {
                        r.limitName = "test";
                        r.limit = &small;
                        r.key = keys[k % kKeys];
                        r.partition = r.key;
                        r.now = 0;
                        if (++n % 7 != 0) k += 13;
                    }
                    store->consumeBatch(batch, results);
                    for (const ConsumeResult& result : results)
                        admitted += result.decision.allowed;
                }
            });
        }
        for (auto& t : threads)
            t.join();
        QCOMPARE(admitted.load(), 3 * kKeys);
        QCOMPARE(store->keyspace().buckets, std::int64_t(kKeys));
    }

    // Threads minting new keys in one scope at once never exceed its cap.
    void concurrentMintingNeverExceedsTheCap() {
        auto store = makeMemoryStore({});
        const Limit l = bucket(5, kSecond);
        const BucketBudget budget{"peer:a", "ip:a", 128, 60 * kSecond};
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&, t] {
                for (int i = 0; i < 1000; ++i) {
                    consume(*store, l, "auth:" + std::to_string(t) + "-" + std::to_string(i), 0,
                            &budget, "peer:a");
                }
            });
        }
        for (auto& t : threads)
            t.join();
        KeyspaceStats k = store->keyspace();
        QCOMPARE(k.budgetSlots, std::int64_t(128));
        QCOMPARE(k.buckets, std::int64_t(129));
    }

    void slidingLogMemoryIsReturned() {
        auto store = makeMemoryStore({});
        Limit l;
        l.algorithm = Algorithm::SlidingLog;
        l.capacity = 100;
        l.window = kSecond;
        for (int i = 0; i < 1000; ++i) {
            for (int j = 0; j < 10; ++j)
                consume(*store, l, "k" + std::to_string(i), 0);
        }
        const std::int64_t busy = store->keyspace().bytes;
        for (int i = 0; i < 1000; ++i)
            consume(*store, l, "other" + std::to_string(i), 2 * kSecond);
        QVERIFY(store->keyspace().bytes < busy);
    }

    // Each shard sizes its own table, so the bytes a store reports depend on its shard count:
    // a store told its count reports the same bytes on every machine (the simulator's reports
    // rely on it), and a count that is no power of two in [4, 64] is taken to the next one.
    void byteCountsFollowTheShardCountNotTheMachine() {
        const Limit l = bucket(10, kSecond);
        auto bytesWith = [&](unsigned shards) {
            MemoryStoreOptions options;
            options.hashSeed = 42;
            options.shards = shards;
            auto store = makeMemoryStore(options);
            for (int i = 0; i < 1000; ++i)
                consume(*store, l, "k" + std::to_string(i), 0);
            return store->keyspace().bytes;
        };
        QCOMPARE(bytesWith(4), std::int64_t(36592));
        QCOMPARE(bytesWith(8), std::int64_t(36624));
        QCOMPARE(bytesWith(64), std::int64_t(35312));
        QCOMPARE(bytesWith(1), bytesWith(4));
        QCOMPARE(bytesWith(5), bytesWith(8));
        QCOMPARE(bytesWith(1000), bytesWith(64));
        QCOMPARE(bytesWith(0), bytesWith(2 * std::max(1u, std::thread::hardware_concurrency())));
    }

    void everyAlgorithmStoresAndDecides() {
        for (Algorithm a : {Algorithm::TokenBucket, Algorithm::Gcra, Algorithm::FixedWindow,
                            Algorithm::SlidingWindow, Algorithm::SlidingLog, Algorithm::LeakyBucket,
                            Algorithm::HaproxyRate}) {
            auto store = makeMemoryStore({});
            Limit l;
            l.algorithm = a;
            l.capacity = 2;
            l.window = kSecond;
            l.emissionInterval = kSecond;
            l.delay = kNoDelay;
            int admitted = 0;
            for (int i = 0; i < 10; ++i)
                admitted += consume(*store, l, "k", 0).decision.allowed;
            QCOMPARE(admitted, a == Algorithm::LeakyBucket ? 3 : 2);  // nginx: burst + 1
        }
    }
};

QTEST_APPLESS_MAIN(TestMemoryStore)
#include "tst_memory_store.moc"
