// The Redis store decides exactly as the memory store does: for each algorithm, without a bucket
// budget, with one, and with a chain of three (a peer, its network, every network), a seeded trace
// of 10^5 requests (caller time) gets the same results field for field from both. Part of each
// trace goes through consume(), the rest through pipelined consumeBatch().

#include <QtTest>

#include "tst_redis_common.h"

using namespace ratelab;
using namespace ratelab::redistest;

namespace {

constexpr int kTraceLength = 100'000;
constexpr int kOneByOne = 3'000;  // then batches
constexpr std::size_t kBatch = 256;

}  // namespace

class TestRedisEquivalence : public QObject {
    Q_OBJECT

private:
    testing::RedisServer server_;

private slots:
    void initTestCase() {
        std::string error;
        QVERIFY2(server_.start(&error), error.c_str());
    }

    void sameDecisionsAsMemoryStore_data() {
        QTest::addColumn<int>("algorithm");
        QTest::addColumn<bool>("budget");
        QTest::addColumn<bool>("chain");
        const std::pair<const char*, Algorithm> algorithms[] = {
            {"token_bucket", Algorithm::TokenBucket}, {"gcra", Algorithm::Gcra},
            {"fixed_window", Algorithm::FixedWindow}, {"sliding_window", Algorithm::SlidingWindow},
            {"sliding_log", Algorithm::SlidingLog},   {"leaky_bucket", Algorithm::LeakyBucket},
        };
        for (const auto& [name, algorithm] : algorithms) {
            QTest::newRow(name) << int(algorithm) << false << false;
            QTest::newRow((std::string(name) + "+budget").c_str())
                << int(algorithm) << true << false;
            QTest::newRow((std::string(name) + "+chain").c_str()) << int(algorithm) << true << true;
        }
    }

    void sameDecisionsAsMemoryStore() {
        QFETCH(int, algorithm);
        QFETCH(bool, budget);
        QFETCH(bool, chain);
        const Limit limit = makeLimit(Algorithm(algorithm));
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
        const std::vector<TraceItem> trace =
            makeTrace(limit, kTraceLength, 1000 + algorithm * 3 + budget + chain, shape);
        BucketBudget budgetTemplate;
        budgetTemplate.cap = 4;
        budgetTemplate.slotTtl = 3 * kSecond;

        MemoryStoreOptions memoryOptions;
        memoryOptions.hashSeed = 42;
        std::unique_ptr<Store> memory = makeMemoryStore(memoryOptions);
        RedisStoreOptions options;
        options.timeout = 10 * kSecond;  // a shared 2-core machine; the bound is not under test
        std::unique_ptr<Store> redis = callerTimeStore(
            {server_.url()},
            "eq" + std::to_string(algorithm) + (budget ? "b" : "") + (chain ? "c" : ""), options);

        std::vector<BucketBudget> budgets(kBatch * kMaxBudgetLevels);
        std::vector<ConsumeRequest> requests(kBatch);
        std::vector<ConsumeResult> redisResults(kBatch);
        std::int64_t allowed = 0;
        std::int64_t refused = 0;
        std::int64_t tooCostly = 0;
        std::int64_t fallbacks = 0;
        std::array<std::int64_t, kMaxBudgetLevels + 1> levels{};
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
                allowed += expected.decision.allowed;
                refused += expected.decision.reason == DenyReason::OverLimit;
                tooCostly += expected.decision.reason == DenyReason::CostExceedsCapacity;
                fallbacks += expected.chargedFallback;
                levels[expected.chargedLevel] += 1;
            }
            i += n;
        }
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
};

QTEST_APPLESS_MAIN(TestRedisEquivalence)
#include "tst_redis_equivalence.moc"
