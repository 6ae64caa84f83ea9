// The Redis store on a three-node loopback Redis Cluster: keys spread over every node with never
// a CROSSSLOT (every key of a decision shares its partition's hash tag), and a slot migrated
// between nodes during a run (SETSLOT IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE) is followed
// through ASK and MOVED without a lost or doubled decision: the results stay those of the memory
// store for the same requests.

#include <QtTest>

#include <atomic>
#include <thread>

#include "redis/key_slot.h"
#include "fixtures/redis_store_fixture.h"

using namespace ratelab;
using namespace ratelab::redistest;

namespace {

std::int64_t dbsize(testing::RedisServer& node) {
    return std::stoll(node.commandText({"DBSIZE"}));
}

}  // namespace

class TestRedisCluster : public QObject {
    Q_OBJECT

private:
    testing::RedisCluster cluster_;

    // Runs items [from, to) of a trace on both stores, one by one or in one pipelined batch,
    // and fails on the first difference.
    void runBoth(Store& redis, Store& memory, const std::vector<TraceItem>& trace, std::size_t from,
                 std::size_t to, const Limit& limit, const BucketBudget* budgetTemplate,
                 bool batched) {
        const std::size_t n = to - from;
        std::vector<BucketBudget> budgets(n);
        std::vector<ConsumeRequest> requests(n);
        for (std::size_t k = 0; k < n; ++k)
            requests[k] = requestOf(trace[from + k], limit, budgetTemplate, &budgets[k]);
        std::vector<ConsumeResult> results(n);
        if (batched) {
            redis.consumeBatch(requests, results);
        } else {
            for (std::size_t k = 0; k < n; ++k)
                results[k] = redis.consume(requests[k]);
        }
        for (std::size_t k = 0; k < n; ++k) {
            const std::string diff = difference(memory.consume(requests[k]), results[k]);
            QVERIFY2(diff.empty(), qPrintable(QString("request %1 (%2): %3")
                                                  .arg(from + k)
                                                  .arg(trace[from + k].key.c_str())
                                                  .arg(diff.c_str())));
        }
    }

private slots:
    void initTestCase() {
        std::string error;
        QVERIFY2(cluster_.start(&error), error.c_str());
    }

    // 6000 budgeted decisions over 300 peers: every node holds keys, none answered CROSSSLOT
    // (that would be a Refused result, and a difference from the memory store).
    void keysSpreadOverEveryNode() {
        RedisStoreOptions o;
        o.timeout = 5 * kSecond;
        std::unique_ptr<Store> redis = callerTimeStore(cluster_.urls(), "spread", o);
        std::unique_ptr<Store> memory = makeMemoryStore();
        const Limit limit = makeLimit(Algorithm::TokenBucket);
        BucketBudget budget;
        budget.cap = 2;
        TraceShape shape;
        shape.keys = 1200;
        shape.peers = 300;
        shape.timeGoesBack = false;
        const std::vector<TraceItem> trace = makeTrace(limit, 6000, 7, shape);
        runBoth(*redis, *memory, trace, 0, 1000, limit, &budget, false);
        for (std::size_t i = 1000; i < trace.size(); i += 500)
            runBoth(*redis, *memory, trace, i, i + 500, limit, &budget, true);
        // The keyspace walk visits every node: at the trace's end both stores count the same
        // buckets, slots and scopes, and an hour later none.
        for (const Nanos at : {trace.back().now, trace.back().now + 3600 * kSecond}) {
            const KeyspaceStats m = memory->keyspaceAt(at);
            const KeyspaceStats r = redis->keyspaceAt(at);
            qInfo("at %lld: %lld buckets, %lld slots, %lld scopes", static_cast<long long>(at),
                  static_cast<long long>(r.buckets), static_cast<long long>(r.budgetSlots),
                  static_cast<long long>(r.scopes));
            QCOMPARE(r.buckets, m.buckets);
            QCOMPARE(r.budgetSlots, m.budgetSlots);
            QCOMPARE(r.scopes, m.scopes);
        }
        QVERIFY(redis->keyspaceAt(trace.back().now).budgetSlots > 300);
        QCOMPARE(redis->keyspaceAt(trace.back().now + 3600 * kSecond).buckets, std::int64_t{0});
        for (int i = 0; i < cluster_.size(); ++i) {
            const std::int64_t keys = dbsize(cluster_.node(i));
            qInfo("node %d holds %lld keys", i, static_cast<long long>(keys));
            QVERIFY(keys > 100);
        }
        const RedisStoreCounters c = countersOf(*redis);
        QCOMPARE(c.refusals, std::int64_t{0});
        QCOMPARE(c.redirects, std::int64_t{0});  // the slot map was right from the start
        QCOMPARE(c.connects, std::int64_t{cluster_.size()});
    }

    // Eight threads start at once on a store that knows no slot map yet: one of them loads it,
    // the others wait for it, and every key admits exactly its capacity.
    void concurrentCallersShareOneMap() {
        constexpr int kThreads = 8;
        constexpr int kKeys = 40;
        RedisStoreOptions o;
        o.poolSize = kThreads;
        o.timeout = 5 * kSecond;
        std::unique_ptr<Store> redis = callerTimeStore(cluster_.urls(), "threads", o);
        Limit limit;
        limit.capacity = 5;
        limit.emissionInterval = kSecond;
        std::atomic<int> admitted{0};
        std::atomic<int> failures{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&, t] {
                for (int k = 0; k < kKeys; ++k) {
                    const std::string key = "t" + std::to_string(t) + "-" + std::to_string(k);
                    for (int i = 0; i < 8; ++i) {
                        const ConsumeResult r = consumeOne(*redis, limit, key, kEpoch);
                        failures += r.status != StoreStatus::Ok;
                        admitted += r.decision.allowed;
                    }
                }
            });
        }
        for (std::thread& t : threads)
            t.join();
        QCOMPARE(failures.load(), 0);
        QCOMPARE(admitted.load(), kThreads * kKeys * 5);
        QCOMPARE(countersOf(*redis).redirects, std::int64_t{0});
    }

    // The slot of a hot partition moves from its owner to another node in the middle of a run:
    // keys still on the source are served there, missing ones are ASKed to the target, moved
    // ones too, and once the slot is reassigned MOVED updates the map. Not one decision differs.
    void slotMigrationLosesNoDecision_data() {
        QTest::addColumn<bool>("batched");
        QTest::newRow("one by one") << false;
        QTest::newRow("pipelined") << true;
    }
    void slotMigrationLosesNoDecision() {
        QFETCH(bool, batched);
        const std::string ns = batched ? "migb" : "mig";
        RedisStoreOptions o;
        o.timeout = 5 * kSecond;
        std::unique_ptr<Store> redis = callerTimeStore(cluster_.urls(), ns, o);
        std::unique_ptr<Store> memory = makeMemoryStore();
        const Limit limit = makeLimit(Algorithm::SlidingLog);
        TraceShape shape;
        shape.keys = 40;
        shape.timeGoesBack = false;
        std::vector<TraceItem> trace = makeTrace(limit, 8000, batched ? 11 : 12, shape);
        // The hottest keys share one tenant partition: one slot, migrated below.
        const std::string hot = "tenant:hot-" + ns;
        for (std::size_t i = 0; i < trace.size(); ++i) {
            TraceItem& item = trace[i];
            if (item.key.size() == 6) item.partition = hot;  // auth:0 .. auth:9
            // Keys first seen while the slot migrates: missing on the source, so ASKed.
            if (i >= 2000 && i < 4000 && item.key.size() == 7 && item.key[5] == '3') {
                item.key = "late:" + item.key.substr(5);
                item.partition = hot;
            }
        }
        const int slot = redis::keySlot(ns + ":{" + hot + "}:api:x");
        const int from = cluster_.owner(slot);
        const int to = (from + 1) % cluster_.size();
        QVERIFY(from >= 0);

        std::string error;
        runBoth(*redis, *memory, trace, 0, 2000, limit, nullptr, batched);
        QVERIFY2(cluster_.beginMigration(slot, from, to, &error), error.c_str());
        runBoth(*redis, *memory, trace, 2000, 4000, limit, nullptr, batched);
        const std::int64_t askedWhileMigrating = countersOf(*redis).redirects;
        const int moved = cluster_.migrateKeys(slot, from, to, &error);
        QVERIFY2(moved > 0, error.c_str());
        runBoth(*redis, *memory, trace, 4000, 6000, limit, nullptr, batched);
        const std::int64_t askedAfterMigrate = countersOf(*redis).redirects;
        QVERIFY2(cluster_.finishMigration(slot, to, &error), error.c_str());
        runBoth(*redis, *memory, trace, 6000, 8000, limit, nullptr, batched);
        const RedisStoreCounters c = countersOf(*redis);
        qInfo(
            "slot %d moved from node %d to %d (%d keys); redirects: %lld while migrating, "
            "%lld after MIGRATE, %lld after SETSLOT NODE",
            slot, from, to, moved, static_cast<long long>(askedWhileMigrating),
            static_cast<long long>(askedAfterMigrate - askedWhileMigrating),
            static_cast<long long>(c.redirects - askedAfterMigrate));
        QVERIFY(askedWhileMigrating > 0);                  // ASK: new keys go to the target
        QVERIFY(askedAfterMigrate > askedWhileMigrating);  // ASK: keys moved, slot not yet
        QVERIFY(c.redirects - askedAfterMigrate >= 1);     // MOVED once, then the new map
        QVERIFY(c.redirects - askedAfterMigrate <= 3);
        QCOMPARE(c.refusals, std::int64_t{0});
        QCOMPARE(c.transportErrors, std::int64_t{0});
        QCOMPARE(cluster_.owner(slot), to);
        QCOMPARE(
            cluster_.node(from).commandText({"CLUSTER", "COUNTKEYSINSLOT", std::to_string(slot)}),
            std::string("0"));
    }
};

QTEST_APPLESS_MAIN(TestRedisCluster)
#include "tst_redis_cluster.moc"
