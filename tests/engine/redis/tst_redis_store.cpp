// The Redis store's plumbing: cluster slots, URLs and options, script hashes, key names and
// their expiry, server time, refused limits, keyspace figures.

#include <QtTest>

#include "fixtures/address_budget_fixture.h"
#include "redis/endpoint.h"
#include "redis/key_slot.h"
#include "redis/lua_scripts.h"
#include "fixtures/redis_store_fixture.h"

using namespace ratelab;
using namespace ratelab::redistest;

namespace {

std::int64_t pttl(const testing::RedisServer& server, const std::string& key) {
    return std::stoll(server.commandText({"PTTL", key}));
}

}  // namespace

class TestRedisStore : public RedisSuite {
    Q_OBJECT

private slots:
    // Vectors from the Redis Cluster specification and others confirmed with CLUSTER KEYSLOT.
    void keySlot_data() {
        QTest::addColumn<QString>("key");
        QTest::addColumn<int>("slot");
        QTest::newRow("check value") << "123456789" << 12739;
        QTest::newRow("tag") << "{u1}:a" << 4574;
        QTest::newRow("tag inside") << "rl:{user42}:tokens" << 14710;
        QTest::newRow("foo") << "foo" << 12182;
        QTest::newRow("a") << "a" << 15495;
        QTest::newRow("empty tag: whole key") << "foo{}{bar}" << 8363;
        QTest::newRow("first brace pair") << "foo{{bar}}zap" << 4015;
        QTest::newRow("first tag only") << "foo{bar}{zap}" << 5061;
    }
    void keySlot() {
        QFETCH(QString, key);
        QFETCH(int, slot);
        QCOMPARE(redis::keySlot(key.toStdString()), slot);
    }

    void unusableOptionsAreRejected() {
        std::string error;
        RedisStoreOptions o;
        QVERIFY(!makeRedisStore(o, &error));
        QVERIFY(error.find("no URL") != std::string::npos);
        o.urls = {"redis://:hunter2@nowhere:99999"};
        QVERIFY(!makeRedisStore(o, &error));
        QVERIFY2(error.find("hunter2") == std::string::npos, error.c_str());  // never echoed
        QVERIFY(error.find("port") != std::string::npos);
        o.urls = {server_.url()};
        o.keyNamespace = "rl{x}";
        QVERIFY(!makeRedisStore(o, &error));
        QVERIFY(error.find("namespace") != std::string::npos);
        o.keyNamespace = "rl";
        o.poolSize = 0;
        QVERIFY(!makeRedisStore(o, &error));
        o.poolSize = 1;
        o.urls = {server_.url() + "?db=1", server_.url()};  // several URLs: a cluster, db 0 only
        QVERIFY(!makeRedisStore(o, &error));
        QVERIFY(error.find("database 0") != std::string::npos);
    }

    // SCRIPT LOAD answers the SHA1 the store computed for each script.
    void scriptHashesMatchTheServer() {
        for (const redis::Script& s : redis::scripts()) {
            QCOMPARE(s.sha1.size(), std::size_t{40});
            QCOMPARE(server_.commandText({"SCRIPT", "LOAD", s.source}), s.sha1);
        }
        QCOMPARE(redis::sha1Hex("abc"), std::string("a9993e364706816aba3e25717850c26c9cd0d89d"));
    }

    // Key names carry the partition as the hash tag; the bucket expires when it is full again
    // (1 token of a 1/s bucket: 1000 ms, plus 1 ms for Redis' ms clock), the scope ZSET holds
    // the key with its last use in ms and expires a slot lifetime later.
    void keyNamesAndExpiry() {
        RedisStoreOptions o;
        o.callerTimeMinKeyLifetime = 0;  // see the exact lifetimes
        std::unique_ptr<Store> store = callerTimeStore({server_.url()}, "names", o);
        Limit l;
        l.capacity = 5;
        l.emissionInterval = kSecond;
        BucketBudget budget;
        budget.scope = "peer:192.0.2.1";
        budget.fallbackKey = "ip:192.0.2.1";
        budget.cap = 3;
        budget.slotTtl = 60 * kSecond;
        const Nanos now = kEpoch + 123'456'789;
        QVERIFY(consumeOne(*store, l, "auth:abc", now, &budget, "peer:192.0.2.1").decision.allowed);

        const std::string bucket = "names:{peer:192.0.2.1}:api:auth:abc";
        QCOMPARE(server_.commandText({"GET", bucket}), std::to_string(now + kSecond));
        const std::int64_t bucketTtl = pttl(server_, bucket);
        QVERIFY2(bucketTtl > 990 && bucketTtl <= 1001, std::to_string(bucketTtl).c_str());
        const std::string scope = "names:{peer:192.0.2.1}:api:scope:peer:192.0.2.1";
        QCOMPARE(server_.commandText({"ZSCORE", scope, "auth:abc"}),
                 std::to_string(now / kNanosPerMilli));
        const std::int64_t scopeTtl = pttl(server_, scope);
        QVERIFY2(scopeTtl > 59'990 && scopeTtl <= 60'001, std::to_string(scopeTtl).c_str());
        QCOMPARE(server_.commandText({"EXISTS", "names:{peer:192.0.2.1}:api:ip:192.0.2.1"}),
                 std::string("0"));  // the fallback is only written when charged
    }

    // A scope keeps at most `cap` slots however many keys pass through it: a new key in a full
    // scope drops the expired slots.
    void scopeStaysBounded() {
        std::unique_ptr<Store> store = callerTimeStore({server_.url()}, "bounded");
        Limit l;
        l.capacity = 2;
        l.emissionInterval = 10 * kMs;
        BucketBudget budget;
        budget.scope = "peer:b";
        budget.fallbackKey = "ip:b";
        budget.cap = 3;
        budget.slotTtl = kSecond;
        const std::string scope = "bounded:{peer:b}:api:scope:peer:b";
        int members = 0;
        for (int i = 0; i < 500; ++i) {
            const Nanos now = kEpoch + i * 300 * kMs;  // a slot outlives about three steps
            const ConsumeResult r =
                consumeOne(*store, l, "auth:" + std::to_string(i), now, &budget, "peer:b");
            QCOMPARE(r.status, StoreStatus::Ok);
            members += !r.chargedFallback;
            QVERIFY(std::stoll(server_.commandText({"ZCARD", scope})) <= 3);
        }
        QVERIFY(members > 300);  // slots free up as they expire
        QVERIFY(members < 500);  // and the cap holds meanwhile
    }

    // Every algorithm's key expires once its state is fresh again (one request: one token of
    // 100 or 250 ms, a 2 s window, a sliding window idle two windows later, a 1 s log, 100 ms of
    // leak, HAProxy's counter gone at its 1.5 s expire), and a refusal writes nothing (but where
    // refusals count).
    void everyKeyExpires_data() {
        QTest::addColumn<int>("algorithm");
        QTest::addColumn<qint64>("maxTtlMs");
        QTest::newRow("token_bucket") << int(Algorithm::TokenBucket) << qint64(101);
        QTest::newRow("gcra") << int(Algorithm::Gcra) << qint64(251);
        QTest::newRow("fixed_window") << int(Algorithm::FixedWindow) << qint64(2001);
        QTest::newRow("sliding_window") << int(Algorithm::SlidingWindow) << qint64(4001);
        QTest::newRow("sliding_log") << int(Algorithm::SlidingLog) << qint64(1001);
        QTest::newRow("leaky_bucket") << int(Algorithm::LeakyBucket) << qint64(101);
        QTest::newRow("haproxy_rate") << int(Algorithm::HaproxyRate) << qint64(1501);
    }
    void everyKeyExpires() {
        QFETCH(int, algorithm);
        QFETCH(qint64, maxTtlMs);
        RedisStoreOptions o;
        o.callerTimeMinKeyLifetime = 0;
        const std::string ns = "ttl" + std::to_string(algorithm);
        std::unique_ptr<Store> store = callerTimeStore({server_.url()}, ns, o);
        const Limit l = makeLimit(Algorithm(algorithm));
        const std::string key = ns + ":{k}:api:k";
        QVERIFY(consumeOne(*store, l, "k", kEpoch).decision.allowed);
        const std::int64_t ttl = pttl(server_, key);
        QVERIFY2(ttl > maxTtlMs - 15 && ttl <= maxTtlMs, std::to_string(ttl).c_str());
        // Exhaust, then refuse: the refusal leaves the value as it was.
        ConsumeResult r;
        for (int i = 0; i < 100 && (r = consumeOne(*store, l, "k", kEpoch)).decision.allowed; ++i) {
        }
        QVERIFY(!r.decision.allowed);
        const std::string value = server_.commandText({"DUMP", key});
        r = consumeOne(*store, l, "k", kEpoch);
        QVERIFY(!r.decision.allowed);
        // Fixed windows and HAProxy's counter count refusals.
        if (Algorithm(algorithm) != Algorithm::FixedWindow &&
            Algorithm(algorithm) != Algorithm::HaproxyRate)
            QCOMPARE(server_.commandText({"DUMP", key}), value);
    }

    // Server time (the default): the script reads TIME, ConsumeRequest::now is ignored.
    void serverTimeDecides() {
        RedisStoreOptions o;
        o.urls = {server_.url()};
        o.keyNamespace = "servertime";
        std::string error;
        std::unique_ptr<Store> store = makeRedisStore(o, &error);
        QVERIFY(store);
        Limit l;
        l.capacity = 3;
        l.emissionInterval = 3600 * kSecond;
        for (int i = 0; i < 3; ++i) {
            const ConsumeResult r = consumeOne(*store, l, "k", /*now ignored*/ 0);
            QCOMPARE(r.status, StoreStatus::Ok);
            QVERIFY(r.decision.allowed);
            QCOMPARE(r.decision.remaining, std::int64_t(2 - i));
        }
        const ConsumeResult refused = consumeOne(*store, l, "k", 0);
        QVERIFY(!refused.decision.allowed);
        QCOMPARE(refused.decision.reason, DenyReason::OverLimit);
        // An hour per token, less the few ms this test took since the first request.
        QVERIFY(refused.decision.retryAfter > 3590 * kSecond);
        QVERIFY(refused.decision.retryAfter <= 3600 * kSecond);
        // The stored TAT is a server time in ns (about now + 3 h), far above 2^53.
        const std::int64_t tat = std::stoll(server_.commandText({"GET", "servertime:{k}:api:k"}));
        const std::int64_t serverNow =
            std::stoll(server_.commandText({"TIME"}).substr(1)) * kSecond;  // "[s us]"
        QVERIFY(tat > serverNow + 3 * 3590 * kSecond &&
                tat < serverNow + 3 * 3600 * kSecond + kSecond);
    }

    // Requests the scripts cannot compute exactly are refused, never guessed.
    void unsupportedRequestsAreRefused_data() {
        QTest::addColumn<int>("algorithm");
        QTest::addColumn<qint64>("capacity");
        QTest::addColumn<qint64>("interval");
        QTest::addColumn<qint64>("window");
        QTest::addColumn<QString>("partition");
        QTest::newRow("burst over 90 days")
            << int(Algorithm::Gcra) << qint64(100) << qint64(kMaxDuration / 50) << qint64(0) << "p";
        QTest::newRow("window over 90 days") << int(Algorithm::FixedWindow) << qint64(10)
                                             << qint64(0) << qint64(kMaxDuration + 1) << "p";
        QTest::newRow("sliding quota over 2^32")
            << int(Algorithm::SlidingWindow) << qint64(1LL << 33) << qint64(0) << qint64(kSecond)
            << "p";
        QTest::newRow("empty partition")
            << int(Algorithm::TokenBucket) << qint64(10) << qint64(kSecond) << qint64(0) << "";
        QTest::newRow("partition closing the tag")
            << int(Algorithm::TokenBucket) << qint64(10) << qint64(kSecond) << qint64(0) << "}x";
    }
    void unsupportedRequestsAreRefused() {
        QFETCH(int, algorithm);
        QFETCH(qint64, capacity);
        QFETCH(qint64, interval);
        QFETCH(qint64, window);
        QFETCH(QString, partition);
        std::unique_ptr<Store> store = callerTimeStore({server_.url()}, "unsupported");
        Limit l;
        l.algorithm = Algorithm(algorithm);
        l.capacity = capacity;
        l.emissionInterval = interval;
        l.window = window;
        ConsumeRequest r;
        r.limit = &l;
        r.limitName = "api";
        r.key = "k";
        const QByteArray p = partition.toUtf8();
        r.partition = std::string_view(p.constData(), static_cast<std::size_t>(p.size()));
        const ConsumeResult result = store->consume(r);
        QCOMPARE(result.status, StoreStatus::Refused);
        QVERIFY(!result.decision.allowed);
        QVERIFY(result.error.find("redis store") != std::string::npos);
        QCOMPARE(countersOf(*store).commands, std::int64_t{0});  // decided locally
    }

    // DBSIZE and used memory, cheap enough for a chart sample; the URL's database is used.
    void keyspaceFiguresAndDatabase() {
        std::unique_ptr<Store> store = callerTimeStore({server_.url() + "?db=3"}, "ks");
        const Limit l = makeLimit(Algorithm::Gcra);
        for (int i = 0; i < 250; ++i)
            QVERIFY(consumeOne(*store, l, "key" + std::to_string(i), kEpoch).decision.allowed);
        const KeyspaceStats stats = store->keyspace();
        QCOMPARE(stats.buckets, std::int64_t{250});
        QVERIFY(stats.bytes > 250 * 20);
        QCOMPARE(server_.commandText(
                     {"EVAL", "redis.call('SELECT', 3) return redis.call('DBSIZE')", "0"}),
                 std::string("250"));
        QCOMPARE(std::string(store->kind()), std::string("redis"));
        const RedisStoreCounters c = countersOf(*store);
        QCOMPARE(c.commands, std::int64_t{250});
        QCOMPARE(c.connects, std::int64_t{1});  // one thread: one pooled connection, reused
    }

    // The address budget in Redis: a client minting a new /64 per request in one /32 leaves at
    // most the /32's cap of buckets (plus the /32's own) and their scopes in Redis, each key
    // carrying the /32's hash tag, and a client elsewhere still gets a bucket of its own.
    void mintingClientFillsOnlyItsNetworksShare() {
        std::unique_ptr<Store> store = callerTimeStore({server_.url()}, "mint");
        Limit l;
        l.capacity = 20;
        l.emissionInterval = 100 * kSecond;
        testing::AddressCaps caps;
        caps.per48 = 8;
        caps.per32 = 32;
        int own = 0;
        for (unsigned i = 0; i < 2000; ++i) {
            const testing::MintedAddress a(i % 16, i);
            const ConsumeResult r = testing::consumeMinted(*store, l, a, caps, kEpoch);
            QCOMPARE(r.status, StoreStatus::Ok);
            own += r.chargedLevel == 0;
        }
        QVERIFY(own <= 32);
        QCOMPARE(
            server_.commandText({"ZCARD", "mint:{ip:2001:db8::/32}:api:scope:net:2001:db8::/32"}),
            std::string("32"));
        // Buckets: the /32's 32 members and its own; scopes: the /32's and the /48s that took a
        // member. Nothing else.
        testing::ReplyPtr keys = server_.command({"KEYS", "mint:*"});
        QVERIFY(keys && keys->type == REDIS_REPLY_ARRAY);
        int buckets = 0;
        for (std::size_t k = 0; k < keys->elements; ++k) {
            const std::string name(keys->element[k]->str, keys->element[k]->len);
            QVERIFY2(name.rfind("mint:{ip:2001:db8::/32}:api:", 0) == 0, name.c_str());
            buckets += name.find(":scope:") == std::string::npos;
        }
        QCOMPARE(buckets, 33);
        QVERIFY(keys->elements <= 33 + 1 + 16);
        // Someone else: a bucket of its own.
        const ConsumeResult later = consumeOne(*store, l, "ip:198.51.100.7", kEpoch);
        QCOMPARE(later.status, StoreStatus::Ok);
        QCOMPARE(later.decision.remaining, std::int64_t(19));
    }
};

QTEST_APPLESS_MAIN(TestRedisStore)
#include "tst_redis_store.moc"
