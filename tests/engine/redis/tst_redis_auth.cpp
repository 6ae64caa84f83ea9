// Redis AUTH from a policy's store block: the password is read from the environment variable or
// file the block names (makeStore), sent as AUTH user password on every connection the store
// opens (the first, reconnects after a restart, and the Cluster nodes it discovers from one
// seed), and never repeated: not in an error, whichever way the AUTH goes wrong.
//
// The servers are redis-server processes started here on loopback with an ACL user and the
// default user switched off, so a connection that does not AUTH can do nothing.

#include <QtTest>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>

#include "ratelab/store_factory.h"
#include "fixtures/redis_store_fixture.h"

using namespace ratelab;
using namespace ratelab::redistest;

namespace {

const char* const kUser = "ratelab";
const char* const kVariable = "RATELAB_TEST_REDIS_PASSWORD";

// A password no test output could contain by chance; '%' shows it is never a format string.
std::string randomPassword() {
    std::random_device device;
    char text[48];
    std::snprintf(text, sizeof text, "Pw%%s%%n-%08x%08x", device(), device());
    return text;
}

// The ACL rules of the user the store logs in as.
std::vector<std::string> userRules(const std::string& password) {
    return {kUser, "on", ">" + password, "~*", "&*", "+@all"};
}

StoreConfig redisConfig(const std::vector<std::string>& urls) {
    StoreConfig c;
    c.kind = StoreConfig::Kind::Redis;
    c.urls = urls;
    c.keyNamespace = "auth";
    c.username = kUser;
    c.passwordEnv = kVariable;
    return c;
}

std::unique_ptr<Store> storeOf(const StoreConfig& config) {
    std::string error;
    std::unique_ptr<Store> store = makeStore(config, &error);
    if (!store) qFatal("makeStore: %s", error.c_str());
    return store;
}

std::string makeError(const StoreConfig& config) {
    std::string error;
    std::unique_ptr<Store> store = makeStore(config, &error);
    return store ? std::string("<a store was made>") : error;
}

// Calls until one answers Ok (the store backs off between reconnects), for at most `limit`.
ConsumeResult untilOk(Store& store, const Limit& l, const std::string& key,
                      std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    ConsumeResult r;
    do {
        r = consumeOne(store, l, key, kEpoch);
    } while (r.status != StoreStatus::Ok && std::chrono::steady_clock::now() < end);
    return r;
}

}  // namespace

class TestRedisAuth : public QObject {
    Q_OBJECT

private:
    testing::RedisServer server_;
    std::string password_ = randomPassword();
    QTemporaryDir dir_;

    std::string writeFile(const char* name, const std::string& text) {
        const std::string path = dir_.filePath(name).toStdString();
        std::ofstream(path, std::ios::binary) << text;
        return path;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        testing::RedisServer::Options options;
        options.tcp = true;
        options.extraArgs = {"--user", "default", "off"};
        options.extraArgs.push_back("--user");
        for (const std::string& rule : userRules(password_))
            options.extraArgs.push_back(rule);
        std::string error;
        QVERIFY2(server_.start(options, &error), error.c_str());
    }

    void init() { qputenv(kVariable, QByteArray::fromStdString(password_)); }
    void cleanup() { qunsetenv(kVariable); }

    // The right password from the environment: decisions are Redis' own, the bucket drains.
    void passwordFromTheEnvironmentDecides() {
        std::unique_ptr<Store> store = storeOf(redisConfig({server_.url()}));
        Limit l;
        l.capacity = 3;
        l.emissionInterval = 60 * kSecond;
        for (std::int64_t left = 2; left >= 0; --left) {
            const ConsumeResult r = consumeOne(*store, l, "env", kEpoch);
            QVERIFY2(r.status == StoreStatus::Ok, r.error.c_str());
            QVERIFY(r.decision.allowed);
            QCOMPARE(r.decision.remaining, left);
        }
        const ConsumeResult refused = consumeOne(*store, l, "env", kEpoch);
        QCOMPARE(refused.status, StoreStatus::Ok);
        QVERIFY(!refused.decision.allowed);
    }

    // The file form, with the final newline an editor or `echo` leaves; the password alone
    // (no user) logs in as the default user, which is off here: a clear refusal.
    void passwordFromAFile() {
        StoreConfig c = redisConfig({server_.url()});
        c.passwordEnv.clear();
        c.passwordFile = writeFile("redis-password", password_ + "\n");
        std::unique_ptr<Store> store = storeOf(c);
        const Limit l = makeLimit(Algorithm::TokenBucket);
        const ConsumeResult r = consumeOne(*store, l, "file", kEpoch);
        QVERIFY2(r.status == StoreStatus::Ok, r.error.c_str());

        c.username.clear();
        std::unique_ptr<Store> noUser = storeOf(c);
        const ConsumeResult anonymous = consumeOne(*noUser, l, "file", kEpoch);
        QCOMPARE(anonymous.status, StoreStatus::Refused);
        QVERIFY2(QString::fromStdString(anonymous.error).contains("AUTH failed"),
                 anonymous.error.c_str());
        QVERIFY(anonymous.error.find(password_) == std::string::npos);
    }

    // A wrong password is a refusal by a reachable server (never a transport failure that a
    // fail-open policy would pass): every call says AUTH failed, and never what was sent.
    void wrongPasswordIsAClearRefusal() {
        const std::string wrong = randomPassword();
        qputenv(kVariable, QByteArray::fromStdString(wrong));
        std::unique_ptr<Store> store = storeOf(redisConfig({server_.url()}));
        const Limit l = makeLimit(Algorithm::Gcra);
        for (int i = 0; i < 3; ++i) {
            const ConsumeResult r = consumeOne(*store, l, "wrong", kEpoch);
            QCOMPARE(r.status, StoreStatus::Refused);
            QVERIFY2(QString::fromStdString(r.error).contains("AUTH failed: WRONGPASS"),
                     r.error.c_str());
            QVERIFY(QString::fromStdString(r.error).contains(
                QString::number(server_.port())));  // which server
            QVERIFY(r.error.find(wrong) == std::string::npos);
            QVERIFY(r.error.find(password_) == std::string::npos);
        }
        QCOMPARE(countersOf(*store).connects, std::int64_t{0});
    }

    // Without credentials the server answers NOAUTH: the same clear refusal.
    void noCredentialsIsARefusal() {
        StoreConfig c = redisConfig({server_.url()});
        c.username.clear();
        c.passwordEnv.clear();
        std::unique_ptr<Store> store = storeOf(c);
        const ConsumeResult r = consumeOne(*store, makeLimit(Algorithm::Gcra), "none", kEpoch);
        QCOMPARE(r.status, StoreStatus::Refused);
        QVERIFY2(QString::fromStdString(r.error).contains("NOAUTH"), r.error.c_str());
    }

    // A restarted server is a new connection: the store logs in again by itself.
    void reconnectLogsInAgain() {
        std::unique_ptr<Store> store = storeOf(redisConfig({server_.url()}));
        const Limit l = makeLimit(Algorithm::FixedWindow);
        QCOMPARE(consumeOne(*store, l, "before", kEpoch).status, StoreStatus::Ok);
        const std::int64_t connects = countersOf(*store).connects;
        std::string error;
        QVERIFY2(server_.restart(&error), error.c_str());
        // Backoff makes the first calls fail fast; each is bounded by the store's timeout.
        const ConsumeResult r = untilOk(*store, l, "after", std::chrono::milliseconds(3000));
        QVERIFY2(r.status == StoreStatus::Ok, r.error.c_str());
        QVERIFY(countersOf(*store).connects > connects);
    }

    // Where the password should be and is not: the error names the variable or the file and
    // the reason, never a value.
    void missingSecretsAreClearErrors() {
        StoreConfig c = redisConfig({server_.url()});
        qunsetenv(kVariable);
        QCOMPARE(makeError(c), std::string("store.password_env: the environment variable "
                                           "RATELAB_TEST_REDIS_PASSWORD is not set"));
        qputenv(kVariable, "");
        QCOMPARE(makeError(c), std::string("store.password_env: the environment variable "
                                           "RATELAB_TEST_REDIS_PASSWORD is empty"));

        c.passwordEnv.clear();
        c.passwordFile = dir_.filePath("absent").toStdString();
        QCOMPARE(makeError(c), "store.password_file: " + c.passwordFile +
                                   ": cannot read: No such file or directory");
        c.passwordFile = dir_.path().toStdString();
        QVERIFY2(QString::fromStdString(makeError(c)).contains(": cannot read: Is a directory"),
                 makeError(c).c_str());
        c.passwordFile = writeFile("empty", "\n");
        QCOMPARE(makeError(c), "store.password_file: " + c.passwordFile + ": the file is empty");
        c.passwordFile = writeFile("two-lines", password_ + "\nsecond line\n");
        const std::string twoLines = makeError(c);
        QCOMPARE(twoLines, "store.password_file: " + c.passwordFile +
                               ": more than one line; the file should hold the password alone");
        c.passwordFile = writeFile("long", std::string(5000, 'x'));
        QVERIFY(QString::fromStdString(makeError(c)).contains("longer than 4096 bytes"));

        RedisStoreOptions o;
        o.urls = {server_.url()};
        o.username = kUser;
        std::string error;
        QVERIFY(!makeRedisStore(o, &error));
        QCOMPARE(error, std::string("redis store: a username needs a password"));
    }

    // One seed of a three-node Cluster: the nodes found through CLUSTER SLOTS get the same
    // AUTH (keys land on every node, each connection logged in); a wrong password is refused
    // on each of them.
    void clusterNodesLogInToo() {
        testing::RedisCluster cluster;
        std::string error;
        QVERIFY2(cluster.start(&error), error.c_str());
        std::vector<std::string> setUser = {"ACL", "SETUSER"};
        for (const std::string& rule : userRules(password_))
            setUser.push_back(rule);
        for (int i = 0; i < cluster.size(); ++i) {
            QCOMPARE(cluster.node(i).commandText(setUser), std::string("OK"));
            QCOMPARE(cluster.node(i).commandText({"ACL", "SETUSER", "default", "off"}),
                     std::string("OK"));
        }
        StoreConfig c = redisConfig({cluster.urls().front()});
        RedisStoreOptions forced;  // one URL is a standalone server unless told otherwise
        forced.urls = c.urls;
        forced.cluster = true;
        forced.keyNamespace = "auth";
        forced.username = kUser;
        forced.password = password_;
        std::unique_ptr<Store> store = makeRedisStore(forced, &error);
        QVERIFY2(store, error.c_str());
        const Limit l = makeLimit(Algorithm::TokenBucket);
        for (int k = 0; k < 60; ++k) {
            const ConsumeResult r = consumeOne(*store, l, "key" + std::to_string(k), kEpoch);
            QVERIFY2(r.status == StoreStatus::Ok, r.error.c_str());
        }
        QVERIFY(countersOf(*store).connects >= cluster.size());

        // The policy's form: several seeds make a Cluster; a wrong password fails everywhere.
        const std::string wrong = randomPassword();
        qputenv(kVariable, QByteArray::fromStdString(wrong));
        c.urls = cluster.urls();
        std::unique_ptr<Store> refused = storeOf(c);
        for (int k = 0; k < 6; ++k) {
            const ConsumeResult r = consumeOne(*refused, l, "key" + std::to_string(k), kEpoch);
            QVERIFY2(r.status == StoreStatus::Refused, r.error.c_str());
            QVERIFY2(QString::fromStdString(r.error).contains("WRONGPASS"), r.error.c_str());
            QVERIFY(r.error.find(wrong) == std::string::npos);
        }
    }
};

QTEST_GUILESS_MAIN(TestRedisAuth)
#include "tst_redis_auth.moc"
