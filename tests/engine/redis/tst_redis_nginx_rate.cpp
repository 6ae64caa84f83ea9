// nginx's leaky bucket rate held exactly (Limit::milliRate): a policy's refill_per_second R runs
// as floor(R * 1000) thousandths of a request per second, as nginx truncates rate=Nr/m to
// N * 1000 / 60. After a first request on a bucket without burst, the next passes once
// rate * ms / 1000 >= 1000, i.e. at ceil(1e6 / rate) ms: the rows give that instant as nginx
// computes it, and the memory store and Redis answer every request of a paced trace field for
// field alike.

#include <QtTest>

#include "algorithms/leaky_bucket.h"
#include "fixtures/redis_store_fixture.h"
#include "ratelab/policy.h"

using namespace ratelab;
using namespace ratelab::redistest;

class TestRedisNginxRate : public RedisSuite {
    Q_OBJECT

private slots:
    void nginxRate_data() {
        QTest::addColumn<double>("refill");
        QTest::addColumn<qint64>("milli");   // nginx's rate
        QTest::addColumn<qint64>("nextMs");  // when the second request passes
        // rate=9r/m: 9000 / 60 = 150; the interval-derived rate was 149 (next at 6712 ms).
        QTest::newRow("9r/m") << 0.15 << qint64(150) << qint64(6667);
        // rate=7r/m: 7000 / 60 = 116, whether written 7 / 60 or 0.116.
        QTest::newRow("7r/m as 7/60") << 7.0 / 60 << qint64(116) << qint64(8621);
        QTest::newRow("7r/m as 0.116") << 0.116 << qint64(116) << qint64(8621);
        QTest::newRow("1r/m") << 1.0 / 60 << qint64(16) << qint64(62500);
        QTest::newRow("6r/s") << 6.0 << qint64(6000) << qint64(167);
        QTest::newRow("2500r/s") << 2500.0 << qint64(2'500'000) << qint64(1);
    }
    void nginxRate() {
        QFETCH(double, refill);
        QFETCH(qint64, milli);
        QFETCH(qint64, nextMs);
        Policy p;
        p.name = "nginx";
        p.algorithm = Algorithm::LeakyBucket;
        p.capacity = 0;  // burst=0
        p.refillPerSecond = refill;
        const Limit l = compileLimit(p);
        QCOMPARE(l.milliRate, milli);
        QCOMPARE(algorithms::leakyRate(l), milli);
        // A replica's share divides nginx's rate.
        QCOMPARE(algorithms::leakyRate(perReplicaLimit(l, 4)), std::max<qint64>(1, milli / 4));

        MemoryStoreOptions memoryOptions;
        memoryOptions.hashSeed = 42;
        std::unique_ptr<Store> memory = makeMemoryStore(memoryOptions);
        RedisStoreOptions options;
        options.timeout = 10 * kSecond;
        std::unique_ptr<Store> redis = callerTimeStore(
            {server_.url()}, "nginx" + std::string(QTest::currentDataTag()), options);
        const Nanos start = 1'700'000'000LL * kSecond;
        auto both = [&](Nanos now, const char* key) {
            TraceItem item;
            item.key = key;
            item.partition = key;
            item.cost = 1;
            item.now = now;
            const ConsumeRequest r = requestOf(item, l, nullptr, nullptr);
            const ConsumeResult expected = memory->consume(r);
            const ConsumeResult actual = redis->consume(r);
            const std::string diff = difference(expected, actual);
            if (!diff.empty()) qWarning("at %lld: %s", static_cast<long long>(now), diff.c_str());
            return diff.empty() ? std::optional<bool>(expected.decision.allowed) : std::nullopt;
        };
        QCOMPARE(both(start, "a"), std::optional<bool>(true));
        if (nextMs > 1) QCOMPARE(both(start + (nextMs - 1) * kMs, "a"), std::optional<bool>(false));
        QCOMPARE(both(start + nextMs * kMs, "a"), std::optional<bool>(true));
        // A paced trace on a second key: a request every tenth of the interval, and the stores
        // agree on each.
        const Nanos step = std::max<Nanos>(kMs, nextMs * kMs / 10);
        int allowed = 0;
        for (int i = 0; i < 200; ++i) {
            const std::optional<bool> d = both(start + i * step, "b");
            QVERIFY(d.has_value());
            allowed += *d;
        }
        if (nextMs >= 10)
            QVERIFY2(allowed >= 18 && allowed <= 22, qPrintable(QString::number(allowed)));
    }
};

QTEST_APPLESS_MAIN(TestRedisNginxRate)
#include "tst_redis_nginx_rate.moc"
