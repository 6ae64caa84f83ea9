// The one Redis URL grammar (ratelab/redis_url.h), what a policy file, --store and
// makeRedisStore() accept alike: standalone servers, unix sockets and Sentinel-monitored
// masters; every refusal says why without repeating the password, and every URL a message
// names is redacted.

#include <QtTest>

#include <string>

#include "ratelab/redis_store.h"
#include "ratelab/redis_url.h"

using namespace ratelab;

class TestRedisUrl : public QObject {
    Q_OBJECT

private slots:
    void urls_data() {
        QTest::addColumn<QString>("url");
        QTest::addColumn<QString>("name");  // RedisEndpoint::name(); "" with `error` when refused
        QTest::addColumn<int>("database");
        QTest::addColumn<QString>("user");
        QTest::addColumn<QString>("password");
        QTest::addColumn<QString>("master");  // masterName: set for Sentinel URLs only
        QTest::addColumn<QString>("error");
        auto ok = [](const char* row, const char* url, const char* name, int database,
                     const char* user = "", const char* password = "", const char* master = "") {
            QTest::newRow(row) << url << name << database << user << password << master << "";
        };
        auto refused = [](const char* row, const char* url, const char* error) {
            QTest::newRow(row) << url << "" << 0 << ""
                               << ""
                               << "" << error;
        };
        ok("host only", "redis://cache", "cache:6379", 0);
        ok("port and db", "redis://10.1.2.3:7000/3", "10.1.2.3:7000", 3);
        ok("trailing slash", "redis://cache:6380/", "cache:6380", 0);
        ok("ipv6", "redis://[2001:db8::1]:6379/1", "[2001:db8::1]:6379", 1);
        ok("unix", "unix:///run/redis.sock", "unix:/run/redis.sock", 0);
        ok("unix db", "unix:///tmp/r.sock?db=5", "unix:/tmp/r.sock", 5);
        // A socket path may hold ':' and '@'; it is not credentials, and redaction leaves it.
        ok("unix path with @", "unix:///run/a:b@c.sock", "unix:/run/a:b@c.sock", 0);
        ok("user, empty password", "redis://app:@cache", "cache:6379", 0, "app", "");
        ok("password", "redis://:s3cret@127.0.0.1:6379", "127.0.0.1:6379", 0, "", "s3cret");
        ok("user and password", "redis://app:p@ss/w@cache/2", "cache:6379", 2, "app", "p@ss/w");
        refused("credentials without colon", "redis://s3cret@cache", "USER:PASSWORD@");
        refused("tls", "rediss://cache", "hiredis 0.14 has no TLS");
        refused("scheme", "http://cache", "expected redis://");
        refused("no scheme", "127.0.0.1:6379", "expected redis://");
        refused("port 0", "redis://cache:0", "port \"0\"");
        refused("port 70000", "redis://127.0.0.1:70000", "port \"70000\"");
        refused("port text", "redis://cache:http", "port \"http\"");
        refused("bare ipv6", "redis://::1:6379", "goes in brackets");
        refused("bad ipv4", "redis://300.1.1.1", "not a host name");
        refused("no host", "redis://:6379", "no host");
        refused("query", "redis://cache?db=1", "queries");
        refused("unix query", "unix:///tmp/r.sock?timeout=1", "only \"?db=N\"");
        refused("relative unix", "unix://run/redis.sock", "absolute");
        refused("db text", "redis://cache/zero", "database \"zero\"");
        refused("space", "redis://ca che", "spaces");

        // Sentinel: the sentinels (26379 by default) and the master's name; the credentials
        // and database are the master's.
        ok("sentinel", "redis-sentinel://10.0.0.1/cache", "cache via 10.0.0.1:26379", 0, "", "",
           "cache");
        ok("sentinels", "redis-sentinel://10.0.0.1:26380,sentinel-b,[::1]:5000/cache.eu-1_a",
           "cache.eu-1_a via 10.0.0.1:26380,sentinel-b:26379,[::1]:5000", 0, "", "",
           "cache.eu-1_a");
        ok("sentinel db", "redis-sentinel://s1:26379,s2:26379/cache?db=3",
           "cache via s1:26379,s2:26379", 3, "", "", "cache");
        ok("sentinel credentials", "redis-sentinel://app:s3cret@s1/cache", "cache via s1:26379", 0,
           "app", "s3cret", "cache");
        ok("sentinel password with @ and /", "redis-sentinel://:p@/?x@s1,s2/cache?db=1",
           "cache via s1:26379,s2:26379", 1, "", "p@/?x", "cache");
        refused("sentinel without master", "redis-sentinel://s1:26379", "no master name");
        refused("sentinel empty master", "redis-sentinel://s1:26379/", "no master name");
        refused("sentinel master with slash", "redis-sentinel://s1/a/b", "master name \"a/b\"");
        refused("sentinel empty address", "redis-sentinel://s1,,s2/cache",
                "an empty sentinel address");
        refused("sentinel trailing comma", "redis-sentinel://s1,/cache",
                "an empty sentinel address");
        refused("sentinel bad port", "redis-sentinel://s1:0/cache", "sentinel \"s1:0\": port");
        refused("sentinel bare ipv6", "redis-sentinel://::1/cache", "goes in brackets");
        refused("sentinel twice", "redis-sentinel://s1,s1:26379/cache", "listed twice");
        refused("sentinel query", "redis-sentinel://s1/cache?timeout=1", "only \"?db=N\"");
        refused("sentinel db text", "redis-sentinel://s1/cache?db=x", "only \"?db=N\"");
        refused("sentinel credentials without colon", "redis-sentinel://s3cret@s1/cache",
                "USER:PASSWORD@");
        refused("seventeen sentinels",
                "redis-sentinel://a1,a2,a3,a4,a5,a6,a7,a8,a9,b1,b2,b3,b4,b5,b6,b7,b8/cache",
                "more than 16 sentinels");
    }
    void urls() {
        QFETCH(QString, url);
        QFETCH(QString, name);
        QFETCH(int, database);
        QFETCH(QString, user);
        QFETCH(QString, password);
        QFETCH(QString, master);
        QFETCH(QString, error);
        std::string why;
        std::optional<RedisEndpoint> e = parseRedisUrl(url.toStdString(), &why);
        if (!error.isEmpty()) {
            QVERIFY(!e);
            QVERIFY2(QString::fromStdString(why).contains(error), why.c_str());
            QVERIFY(why.find("s3cret") == std::string::npos);
            return;
        }
        QVERIFY2(e, why.c_str());
        QCOMPARE(QString::fromStdString(e->name()), name);
        QCOMPARE(e->database, database);
        QCOMPARE(QString::fromStdString(e->user), user);
        QCOMPARE(QString::fromStdString(e->password), password);
        QCOMPARE(QString::fromStdString(e->masterName), master);
        QCOMPARE(e->isSentinel(), !master.isEmpty());
        // Every message that names the URL names it without its password, and the redacted
        // URL names the same servers.
        const std::string redacted = redactRedisUrl(url.toStdString());
        if (!password.isEmpty()) {
            QVERIFY(redacted.find(password.toStdString()) == std::string::npos);
            QVERIFY2(redacted.find(":***@") != std::string::npos, redacted.c_str());
            std::optional<RedisEndpoint> again = parseRedisUrl(redacted, &why);
            QVERIFY2(again, why.c_str());
            QCOMPARE(again->name(), e->name());
            QCOMPARE(again->password, std::string("***"));
        } else {
            QCOMPARE(redacted, url.toStdString());
        }
    }

    // The sentinels of a Sentinel URL, in the order written.
    void sentinelAddresses() {
        std::string why;
        std::optional<RedisEndpoint> e =
            parseRedisUrl("redis-sentinel://10.0.0.1:26380,sentinel-b,[2001:db8::7]/cache", &why);
        QVERIFY2(e, why.c_str());
        QCOMPARE(e->sentinels.size(), std::size_t(3));
        QCOMPARE(e->sentinels[0], (RedisSentinelAddress{"10.0.0.1", 26380}));
        QCOMPARE(e->sentinels[1], (RedisSentinelAddress{"sentinel-b", 26379}));
        QCOMPARE(e->sentinels[2], (RedisSentinelAddress{"2001:db8::7", 26379}));
        QVERIFY(e->host.empty());
        QVERIFY(!e->isUnix());
    }

    // The store takes a Sentinel URL alone: not among Cluster seeds, and never with a password
    // in an error.
    void storesTakeASentinelUrlAlone() {
        RedisStoreOptions o;
        o.urls = {"redis-sentinel://127.0.0.1:1/cache"};
        std::string error;
        QVERIFY2(makeRedisStore(o, &error), error.c_str());
        o.urls = {"redis://127.0.0.1:7000", "redis-sentinel://:s3cret@127.0.0.1:1/cache"};
        QVERIFY(!makeRedisStore(o, &error));
        QVERIFY2(error.find("a Sentinel URL stands alone") != std::string::npos, error.c_str());
        QVERIFY(error.find("s3cret") == std::string::npos);
        o.urls = {"redis-sentinel://127.0.0.1:1/cache"};
        o.cluster = true;
        QVERIFY(!makeRedisStore(o, &error));
        QVERIFY2(error.find("a Sentinel URL stands alone") != std::string::npos, error.c_str());
    }
};

QTEST_APPLESS_MAIN(TestRedisUrl)
#include "tst_redis_url.moc"
