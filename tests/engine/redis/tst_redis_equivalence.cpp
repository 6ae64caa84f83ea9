// The Redis store decides exactly as the memory store does: for each algorithm, without a bucket
// budget, with one, and with a chain of three (a peer, its network, every network), a seeded trace
// of 10^5 requests (caller time) gets the same results field for field from both. Part of each
// trace goes through consume(), the rest through pipelined consumeBatch(). Limits that settle
// (charging by outcome) get the same trace with settles mixed in: refunds and penalties, some at
// once, some late (after their bucket was full again, or their window ended), some through
// pipelined settleBatch(); both stores apply exactly the same ones, so every later decision
// agrees too.

#include <QtTest>

#include "fixtures/redis_store_fixture.h"

using namespace ratelab;
using namespace ratelab::redistest;

namespace {

constexpr int kTraceLength = 100'000;
constexpr int kOneByOne = 3'000;  // then batches
constexpr std::size_t kBatch = 256;

}  // namespace

class TestRedisEquivalence : public RedisSuite {
    Q_OBJECT

private slots:
    void sameDecisionsAsMemoryStore_data() {
        QTest::addColumn<int>("algorithm");
        QTest::addColumn<bool>("budget");
        QTest::addColumn<bool>("chain");
        QTest::addColumn<bool>("countRefused");  // haproxy_rate only
        const std::pair<const char*, Algorithm> algorithms[] = {
            {"token_bucket", Algorithm::TokenBucket}, {"gcra", Algorithm::Gcra},
            {"fixed_window", Algorithm::FixedWindow}, {"sliding_window", Algorithm::SlidingWindow},
            {"sliding_log", Algorithm::SlidingLog},   {"leaky_bucket", Algorithm::LeakyBucket},
            {"haproxy_rate", Algorithm::HaproxyRate},
        };
        for (const auto& [name, algorithm] : algorithms) {
            QTest::newRow(name) << int(algorithm) << false << false << true;
            QTest::newRow((std::string(name) + "+budget").c_str())
                << int(algorithm) << true << false << true;
            QTest::newRow((std::string(name) + "+chain").c_str())
                << int(algorithm) << true << true << true;
        }
        // HAProxy's deny before its track-sc: refused requests are not counted.
        QTest::newRow("haproxy_rate read first")
            << int(Algorithm::HaproxyRate) << false << false << false;
        QTest::newRow("haproxy_rate read first+budget")
            << int(Algorithm::HaproxyRate) << true << false << false;
    }

    void sameDecisionsAsMemoryStore() {
        QFETCH(int, algorithm);
        QFETCH(bool, budget);
        QFETCH(bool, chain);
        QFETCH(bool, countRefused);
        Limit limit = makeLimit(Algorithm(algorithm));
        limit.countRefused = countRefused;
        TraceShape shape;
        if (budget) {
            shape.keys = 160;  // 40 keys per peer against a cap of 4: the budget fills up
            shape.peers = 4;
            // The memory store evicts idle buckets as it inserts others: when a caller's clock
            // steps back past a bucket's idle instant, its decision depends on whether it was
            // evicted meanwhile (Redis keeps it until its key expires). The budget rows' many
            // keys make evictions frequent, so their clock only moves forward.
            shape.timeGoesBack = false;
            shape.chain = chain;
        }
        const std::vector<TraceItem> trace = makeTrace(
            limit, kTraceLength, 1000 + algorithm * 3 + budget + chain + !countRefused, shape);
        BucketBudget budgetTemplate;
        budgetTemplate.cap = 4;
        budgetTemplate.slotTtl = 3 * kSecond;

        MemoryStoreOptions memoryOptions;
        memoryOptions.hashSeed = 42;
        std::unique_ptr<Store> memory = makeMemoryStore(memoryOptions);
        RedisStoreOptions options;
        options.timeout = 10 * kSecond;  // a shared 2-core machine; the bound is not under test
        std::unique_ptr<Store> redis =
            callerTimeStore({server_.url()},
                            "eq" + std::to_string(algorithm) + (budget ? "b" : "") +
                                (chain ? "c" : "") + (countRefused ? "" : "r"),
                            options);

        std::vector<BucketBudget> budgets(kBatch * kMaxBudgetLevels);
        std::vector<ConsumeRequest> requests(kBatch);
        std::vector<ConsumeResult> redisResults(kBatch);
        std::int64_t allowed = 0;
        std::int64_t refused = 0;
        std::int64_t tooCostly = 0;
        std::int64_t fallbacks = 0;
        std::array<std::int64_t, kMaxBudgetLevels + 1> levels{};
        // Both stores count the same keyspace at the latest time yet (a bucket the memory store
        // evicted was fresh by then), however long Redis keeps the keys.
        Nanos latest = std::numeric_limits<Nanos>::min();
        int keyspaceChecks = 0;
        const auto sameKeyspace = [&](Nanos at) {
            const KeyspaceStats m = memory->keyspaceAt(at);
            const KeyspaceStats r = redis->keyspaceAt(at);
            ++keyspaceChecks;
            return m.buckets == r.buckets && m.budgetSlots == r.budgetSlots &&
                           m.scopes == r.scopes
                       ? std::string()
                       : QString("keyspace at %1: memory %2 buckets, %3 slots, %4 scopes; redis "
                                 "%5, %6, %7")
                             .arg(at)
                             .arg(m.buckets)
                             .arg(m.budgetSlots)
                             .arg(m.scopes)
                             .arg(r.buckets)
                             .arg(r.budgetSlots)
                             .arg(r.scopes)
                             .toStdString();
        };
        std::int64_t liveSeen = 0;
        std::size_t nextCheck = kTraceLength / 10;
        std::size_t i = 0;
        while (i < trace.size()) {
            const std::size_t n = i < kOneByOne ? 1 : std::min(kBatch, trace.size() - i);
            for (std::size_t k = 0; k < n; ++k)
                requests[k] = requestOf(trace[i + k], limit, budget ? &budgetTemplate : nullptr,
                                        &budgets[k * kMaxBudgetLevels]);
            if (n == 1)
                redisResults[0] = redis->consume(requests[0]);
            else
                redis->consumeBatch({requests.data(), n}, {redisResults.data(), n});
            for (std::size_t k = 0; k < n; ++k) {
                const ConsumeResult expected = memory->consume(requests[k]);
                const std::string diff = difference(expected, redisResults[k]);
                if (!diff.empty()) {
                    const TraceItem& item = trace[i + k];
                    QFAIL(qPrintable(QString("request %1 (key %2, cost %3, now %4):\n   %5")
                                         .arg(i + k)
                                         .arg(item.key.c_str())
                                         .arg(item.cost)
                                         .arg(item.now)
                                         .arg(diff.c_str())));
                }
                latest = std::max(latest, trace[i + k].now);
                allowed += expected.decision.allowed;
                refused += expected.decision.reason == DenyReason::OverLimit;
                tooCostly += expected.decision.reason == DenyReason::CostExceedsCapacity;
                fallbacks += expected.chargedFallback;
                levels[expected.chargedLevel] += 1;
            }
            i += n;
            if (i >= nextCheck || i == trace.size()) {
                nextCheck += kTraceLength / 10;
                const std::string diff = sameKeyspace(latest);
                QVERIFY2(diff.empty(), diff.c_str());
                liveSeen = std::max(liveSeen, memory->keyspaceAt(latest).buckets);
            }
        }
        QVERIFY(keyspaceChecks > 4);
        QVERIFY(liveSeen > 0);
        const std::string later = sameKeyspace(latest + 3600 * kSecond);
        QVERIFY2(later.empty(), later.c_str());
        QCOMPARE(redis->keyspaceAt(latest + 3600 * kSecond).buckets, std::int64_t{0});
        qInfo("%lld allowed, %lld over limit, %lld above capacity, %lld charged to the fallback",
              static_cast<long long>(allowed), static_cast<long long>(refused),
              static_cast<long long>(tooCostly), static_cast<long long>(fallbacks));
        // The trace exercised both outcomes (and the budget's fallback) heavily.
        QVERIFY(allowed > kTraceLength / 10);
        QVERIFY(refused > kTraceLength / 10);
        QVERIFY(tooCostly > 0);
        if (budget) QVERIFY(fallbacks > kTraceLength / 20);
        // A chain charges every level: the key, the peer's, the network's and the outer bucket.
        if (chain) {
            qInfo("charged by level: %lld %lld %lld %lld", static_cast<long long>(levels[0]),
                  static_cast<long long>(levels[1]), static_cast<long long>(levels[2]),
                  static_cast<long long>(levels[3]));
            for (int k = 0; k <= 3; ++k)
                QVERIFY(levels[k] > 0);
        }
        QCOMPARE(countersOf(*redis).commands, std::int64_t{kTraceLength});
    }

    void sameSettlesAsMemoryStore_data();
    void sameSettlesAsMemoryStore();
};

void TestRedisEquivalence::sameSettlesAsMemoryStore_data() {
    QTest::addColumn<int>("algorithm");
    QTest::addColumn<bool>("budget");
    const std::pair<const char*, Algorithm> algorithms[] = {
        {"token_bucket", Algorithm::TokenBucket},
        {"gcra", Algorithm::Gcra},
        {"fixed_window", Algorithm::FixedWindow},
    };
    for (const auto& [name, algorithm] : algorithms) {
        QTest::newRow(name) << int(algorithm) << false;
        QTest::newRow((std::string(name) + "+budget").c_str()) << int(algorithm) << true;
    }
}

void TestRedisEquivalence::sameSettlesAsMemoryStore() {
    QFETCH(int, algorithm);
    QFETCH(bool, budget);
    Limit limit = makeLimit(Algorithm(algorithm));
    limit.settles = true;
    TraceShape shape;
    shape.timeGoesBack = false;  // as the budget rows above: eviction must not matter
    if (budget) {
        shape.keys = 160;
        shape.peers = 4;
    }
    constexpr int kSettleTrace = 30'000;
    const std::vector<TraceItem> trace = makeTrace(limit, kSettleTrace, 77 + algorithm, shape);
    BucketBudget budgetTemplate;
    budgetTemplate.cap = 4;
    budgetTemplate.slotTtl = 3 * kSecond;
    MemoryStoreOptions memoryOptions;
    memoryOptions.hashSeed = 42;
    std::unique_ptr<Store> memory = makeMemoryStore(memoryOptions);
    RedisStoreOptions options;
    options.timeout = 10 * kSecond;
    std::unique_ptr<Store> redis = callerTimeStore(
        {server_.url()}, "settle" + std::to_string(algorithm) + (budget ? "b" : ""), options);

    // A charge waiting for its outcome: the bucket it charged, as Limiter::settle records it.
    struct Pending {
        std::string key;
        std::string partition;
        std::int64_t cost = 0;
        std::int64_t stamp = 0;
    };
    std::vector<Pending> late;
    std::vector<SettleRequest> batch;
    std::mt19937_64 rng(5);
    std::int64_t applied = 0;
    std::int64_t ignored = 0;
    std::int64_t settled = 0;
    auto settleOf = [&](const Pending& p, Nanos now) {
        SettleRequest s;
        s.limitId = 1;
        s.limitName = "api";
        s.limit = &limit;
        s.partition = p.partition;
        s.key = p.key;
        s.cost = p.cost;
        s.stamp = p.stamp;
        s.now = now;
        return s;
    };
    auto compare = [&](const SettleRequest& s, const SettleResult& expected,
                       const SettleResult& actual, std::size_t at) {
        if (expected.status == actual.status && expected.applied == actual.applied) return true;
        qWarning(
            "settle after request %zu (key %s, cost %lld, stamp %lld): memory %d/%d, redis "
            "%d/%d %s",
            at, std::string(s.key).c_str(), static_cast<long long>(s.cost),
            static_cast<long long>(s.stamp), int(expected.status), int(expected.applied),
            int(actual.status), int(actual.applied), actual.error.c_str());
        return false;
    };
    std::vector<BucketBudget> chain(kMaxBudgetLevels);
    for (std::size_t i = 0; i < trace.size(); ++i) {
        const ConsumeRequest request =
            requestOf(trace[i], limit, budget ? &budgetTemplate : nullptr, chain.data());
        const ConsumeResult expected = memory->consume(request);
        const ConsumeResult actual = redis->consume(request);
        const std::string diff = difference(expected, actual);
        if (!diff.empty())
            QFAIL(qPrintable(QString("request %1:\n   %2").arg(i).arg(diff.c_str())));
        if (expected.status != StoreStatus::Ok || !expected.decision.allowed) continue;
        const TraceItem& item = trace[i];
        Pending p;
        p.key = expected.chargedLevel == 0 ? item.key : item.fallback;
        p.partition = item.partition;
        p.stamp = expected.stamp;
        const std::uint64_t r = rng() % 100;
        // 45 in 100 given back (a success under "failures"), 10 penalised, the rest stay.
        p.cost = r < 45 ? -item.cost : r < 55 ? 3 : 0;
        if (p.cost == 0) continue;
        if (rng() % 4 == 0) {  // a slow response: settled some requests later
            late.push_back(std::move(p));
        } else {
            const SettleRequest s = settleOf(p, item.now);
            const SettleResult e = memory->settle(s);
            const SettleResult a = redis->settle(s);
            QVERIFY(compare(s, e, a, i));
            applied += e.applied;
            ignored += !e.applied;
            ++settled;
        }
        if (late.size() >= 64) {  // the late ones in one pipelined batch
            batch.clear();
            for (const Pending& l : late)
                batch.push_back(settleOf(l, item.now));
            std::vector<SettleResult> fromMemory(batch.size());
            std::vector<SettleResult> fromRedis(batch.size());
            memory->settleBatch(batch, fromMemory);
            redis->settleBatch(batch, fromRedis);
            for (std::size_t k = 0; k < batch.size(); ++k) {
                QVERIFY(compare(batch[k], fromMemory[k], fromRedis[k], i));
                applied += fromMemory[k].applied;
                ignored += !fromMemory[k].applied;
                ++settled;
            }
            late.clear();
        }
    }
    qInfo("%lld settles: %lld applied, %lld found their bucket full again, ended or replaced",
          static_cast<long long>(settled), static_cast<long long>(applied),
          static_cast<long long>(ignored));
    QVERIFY(applied > settled / 4);
    QVERIFY(ignored > 100);
}

QTEST_APPLESS_MAIN(TestRedisEquivalence)
#include "tst_redis_equivalence.moc"
