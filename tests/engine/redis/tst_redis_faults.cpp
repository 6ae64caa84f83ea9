// Real faults against a real redis-server: a stalled server (SIGSTOP) costs each call at most its
// timeout; a killed one fails calls fast, without a tight reconnect loop, and is back within a
// second of its restart; a flushed script cache is reloaded transparently; a server out of memory
// refuses every call; a read-only replica refuses. Time is measured, never slept on.

#include <QtTest>

#include <chrono>

#include "redis/lua_scripts.h"
#include "fixtures/redis_store_fixture.h"

using namespace ratelab;
using namespace ratelab::redistest;

namespace {

using SteadyClock = std::chrono::steady_clock;

std::int64_t msSince(SteadyClock::time_point start) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start)
        .count();
}

// Calls until one answers Ok (the store backs off between reconnects), at most `limit`.
// Returns the result and how long it took.
std::pair<ConsumeResult, std::int64_t> untilOk(Store& store, const Limit& l, const std::string& key,
                                               std::int64_t limitMs) {
    const auto start = SteadyClock::now();
    ConsumeResult r;
    do {
        r = consumeOne(store, l, key, kEpoch);
    } while (r.status != StoreStatus::Ok && msSince(start) < limitMs);
    return {r, msSince(start)};
}

constexpr std::int64_t kMarginMs = 100;  // scheduling on a shared 2-core machine

// Runs `undo` when the scope ends, so a failed check does not leave the server stopped or
// out of memory for the tests after it.
template <class F>
struct Undo {
    F undo;
    ~Undo() { undo(); }
};
template <class F>
Undo(F) -> Undo<F>;

}  // namespace

class TestRedisFaults : public RedisSuite {
    Q_OBJECT

private slots:
    // Each test finds the server running (a test before may have killed it).
    void init() {
        std::string error;
        if (!server_.running()) QVERIFY2(server_.restart(&error), error.c_str());
    }

    // SIGSTOP: every call returns within its timeout plus a small margin, as Transport; the
    // first says the request may have been applied. SIGCONT: decisions resume.
    void stalledServerCostsAtMostTheTimeout() {
        RedisStoreOptions o;
        o.timeout = 200 * kMs;
        std::unique_ptr<Store> store = callerTimeStore({server_.url()}, "stall", o);
        const Limit l = makeLimit(Algorithm::TokenBucket);
        QCOMPARE(consumeOne(*store, l, "warm", kEpoch).status, StoreStatus::Ok);

        server_.pause();
        Undo resume{[&] { server_.resume(); }};
        QCOMPARE(server_.processState(), std::string("T"));  // stopped before the first call
        for (int i = 0; i < 8; ++i) {
            const auto start = SteadyClock::now();
            // Every other call brings its own, shorter bound (ConsumeRequest::timeout).
            const Nanos timeout = i % 2 ? 120 * kMs : 0;
            const ConsumeResult r = consumeOne(*store, l, "stalled" + std::to_string(i), kEpoch,
                                               nullptr, {}, 1, timeout);
            const std::int64_t elapsed = msSince(start);
            QCOMPARE(r.status, StoreStatus::Transport);
            QVERIFY(!r.decision.allowed);
            QVERIFY2(elapsed <= (timeout ? 120 : 200) + kMarginMs,
                     qPrintable(QString("call %1 took %2 ms").arg(i).arg(elapsed)));
            if (i == 0) {
                QVERIFY2(r.error.find("timed out") != std::string::npos, r.error.c_str());
                QVERIFY2(r.error.find("may or may not have been applied") != std::string::npos,
                         r.error.c_str());
            }
        }
        QCOMPARE(server_.processState(), std::string("T"));  // and still, after eight timeouts
        server_.resume();
        const auto [r, elapsed] = untilOk(*store, l, "fresh", 3000);
        QCOMPARE(r.status, StoreStatus::Ok);
        QVERIFY(r.decision.allowed);
        QCOMPARE(r.decision.remaining, std::int64_t{9});
        qInfo("decisions resumed %lld ms after SIGCONT", static_cast<long long>(elapsed));
    }

    // Killed: calls fail fast with Transport while the store backs off (no tight reconnect
    // loop); after a restart decisions resume within a second, the scripts loaded again.
    void killedServerRecoversWithinASecond() {
        RedisStoreOptions o;
        o.timeout = 300 * kMs;
        std::unique_ptr<Store> store = callerTimeStore({server_.url()}, "kill", o);
        const Limit l = makeLimit(Algorithm::Gcra);
        QCOMPARE(consumeOne(*store, l, "warm", kEpoch).status, StoreStatus::Ok);

        server_.kill();
        const RedisStoreCounters before = countersOf(*store);
        const auto start = SteadyClock::now();
        int calls = 0;
        while (msSince(start) < 400) {
            const auto callStart = SteadyClock::now();
            const ConsumeResult r = consumeOne(*store, l, "k", kEpoch);
            QCOMPARE(r.status, StoreStatus::Transport);
            QVERIFY(msSince(callStart) <= 300 + kMarginMs);
            ++calls;
        }
        const std::int64_t attempts = countersOf(*store).connectFailures - before.connectFailures;
        qInfo("%d calls in 400 ms of outage made %lld connection attempts", calls,
              static_cast<long long>(attempts));
        // Backoff from 10 ms doubling to 500 ms, jittered to 50-100%: about 7 attempts in
        // 400 ms; a tight loop would have made one per call.
        QVERIFY(attempts >= 2);
        QVERIFY(attempts <= 12);
        QVERIFY(calls > 10 * attempts);

        std::string error;
        QVERIFY2(server_.restart(&error), error.c_str());
        const auto [r, elapsed] = untilOk(*store, l, "after", 3000);
        QCOMPARE(r.status, StoreStatus::Ok);
        qInfo("decisions resumed %lld ms after the restart", static_cast<long long>(elapsed));
        QVERIFY(elapsed <= 1000);
        for (const redis::Script& s : redis::scripts())
            QCOMPARE(server_.commandText({"SCRIPT", "EXISTS", s.sha1}), std::string("[1]"));
    }

    // Not reachable when the store is made: not an error; calls answer Transport until it is.
    void unreachableAtConstructionIsNotAnError() {
        server_.kill();
        std::string error;
        RedisStoreOptions o;
        o.urls = {server_.url()};
        o.timeout = 200 * kMs;
        std::unique_ptr<Store> store = makeRedisStore(o, &error);
        QVERIFY2(store, error.c_str());
        const ConsumeResult down = consumeOne(*store, makeLimit(Algorithm::Gcra), "k", 0);
        QCOMPARE(down.status, StoreStatus::Transport);
        QVERIFY2(down.error.find("connect") != std::string::npos, down.error.c_str());
        QVERIFY2(down.error.find("may or may not") == std::string::npos, down.error.c_str());
        QVERIFY2(server_.restart(&error), error.c_str());
        QCOMPARE(untilOk(*store, makeLimit(Algorithm::Gcra), "k", 3000).first.status,
                 StoreStatus::Ok);
    }

    // SCRIPT FLUSH: NOSCRIPT is reloaded and retried, one by one and inside pipelines, and the
    // decisions stay those of the memory store.
    void flushedScriptsAreReloaded() {
        std::unique_ptr<Store> store = callerTimeStore({server_.url()}, "flush");
        std::unique_ptr<Store> memory = makeMemoryStore();
        const Limit l = makeLimit(Algorithm::SlidingWindow);
        Nanos now = kEpoch;
        auto both = [&](const std::string& key) {
            const ConsumeResult expected = consumeOne(*memory, l, key, now);
            const ConsumeResult actual = consumeOne(*store, l, key, now);
            return difference(expected, actual);
        };
        QCOMPARE(both("a"), std::string());
        QCOMPARE(server_.commandText({"SCRIPT", "FLUSH"}), std::string("OK"));
        QCOMPARE(both("a"), std::string());
        QCOMPARE(countersOf(*store).scriptLoads, std::int64_t{1});

        QCOMPARE(server_.commandText({"SCRIPT", "FLUSH"}), std::string("OK"));
        std::vector<std::string> keys;
        std::vector<ConsumeRequest> requests(64);
        for (int i = 0; i < 64; ++i)
            keys.push_back("k" + std::to_string(i % 5));
        for (int i = 0; i < 64; ++i) {
            requests[i].limit = &l;
            requests[i].limitName = "api";
            requests[i].limitId = 1;
            requests[i].key = keys[i];
            requests[i].partition = keys[i];
            requests[i].now = now + i * kMs;
        }
        std::vector<ConsumeResult> results(64);
        store->consumeBatch(requests, results);
        for (int i = 0; i < 64; ++i)
            QCOMPARE(difference(memory->consume(requests[i]), results[i]), std::string());
        QCOMPARE(countersOf(*store).scriptLoads, std::int64_t{2});
        // After EVAL put the script back, EVALSHA works again without reloading.
        now += kSecond;
        QCOMPARE(both("b"), std::string());
        QCOMPARE(countersOf(*store).scriptLoads, std::int64_t{2});
    }

    // maxmemory 1 with noeviction: every call is refused as Full (the store has no room), never
    // Ok (not even a refusal that only reads) and never Transport; with the limit lifted,
    // decisions resume.
    void outOfMemoryRefusesEveryCall_data() {
        QTest::addColumn<int>("algorithm");
        for (Algorithm a : {Algorithm::TokenBucket, Algorithm::Gcra, Algorithm::FixedWindow,
                            Algorithm::SlidingWindow, Algorithm::SlidingLog, Algorithm::LeakyBucket,
                            Algorithm::HaproxyRate})
            QTest::newRow(std::string(algorithmName(a)).c_str()) << int(a);
    }
    void outOfMemoryRefusesEveryCall() {
        QFETCH(int, algorithm);
        const std::string ns = "oom" + std::to_string(algorithm);
        std::unique_ptr<Store> store = callerTimeStore({server_.url()}, ns);
        const Limit l = makeLimit(Algorithm(algorithm));
        BucketBudget budget;
        budget.scope = "peer:x";
        budget.fallbackKey = "ip:x";
        budget.cap = 2;
        // An exhausted key: its next decision is a refusal that writes nothing.
        ConsumeResult r;
        do {
            r = consumeOne(*store, l, "exhausted", kEpoch);
        } while (r.decision.allowed);
        QCOMPARE(r.status, StoreStatus::Ok);
        QVERIFY(consumeOne(*store, l, "member", kEpoch, &budget, "peer:x").decision.allowed);

        QCOMPARE(server_.commandText({"CONFIG", "SET", "maxmemory-policy", "noeviction"}),
                 std::string("OK"));
        Undo lift{[&] { server_.commandText({"CONFIG", "SET", "maxmemory", "0"}); }};
        QCOMPARE(server_.commandText({"CONFIG", "SET", "maxmemory", "1"}), std::string("OK"));
        std::vector<ConsumeResult> results;
        results.push_back(consumeOne(*store, l, "new", kEpoch));
        results.push_back(consumeOne(*store, l, "exhausted", kEpoch));
        results.push_back(consumeOne(*store, l, "member", kEpoch, &budget, "peer:x"));
        results.push_back(consumeOne(*store, l, "newcomer", kEpoch, &budget, "peer:x"));
        std::vector<ConsumeRequest> batch(3);
        const std::string keys[] = {"new", "exhausted", "other"};
        for (int i = 0; i < 3; ++i) {
            batch[i].limit = &l;
            batch[i].limitName = "api";
            batch[i].key = keys[i];
            batch[i].partition = keys[i];
            batch[i].now = kEpoch;
        }
        std::vector<ConsumeResult> batchResults(3);
        store->consumeBatch(batch, batchResults);
        results.insert(results.end(), batchResults.begin(), batchResults.end());
        QCOMPARE(server_.commandText({"CONFIG", "SET", "maxmemory", "0"}), std::string("OK"));

        for (const ConsumeResult& result : results) {
            QCOMPARE(result.status, StoreStatus::Full);
            QVERIFY(!result.decision.allowed);
            QVERIFY2(result.error.find("OOM") != std::string::npos, result.error.c_str());
        }
        QCOMPARE(consumeOne(*store, l, "new", kEpoch).status, StoreStatus::Ok);
    }

    // A read-only replica: the server is reachable and says no, so the call is Refused.
    void readOnlyReplicaRefuses() {
        testing::RedisServer primary;
        testing::RedisServer replica;
        std::string error;
        testing::RedisServer::Options tcp;
        tcp.tcp = true;
        QVERIFY2(primary.start(tcp, &error), error.c_str());
        testing::RedisServer::Options replicaOptions = tcp;
        replicaOptions.extraArgs = {"--replicaof", "127.0.0.1", std::to_string(primary.port())};
        QVERIFY2(replica.start(replicaOptions, &error), error.c_str());
        std::unique_ptr<Store> store = callerTimeStore({replica.url()}, "ro");
        const ConsumeResult r = consumeOne(*store, makeLimit(Algorithm::Gcra), "k", kEpoch);
        QCOMPARE(r.status, StoreStatus::Refused);
        QVERIFY2(r.error.find("READONLY") != std::string::npos, r.error.c_str());
    }
};

QTEST_APPLESS_MAIN(TestRedisFaults)
#include "tst_redis_faults.moc"
