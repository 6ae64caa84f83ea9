// The Redis store on a Sentinel-monitored master (redis-sentinel:// URLs), against a
// redis-sentinel, a master and two replicas the suite starts on loopback, each with the ACL user
// the store logs in as. The sentinels are asked for the master, in order, past those that do not
// answer; a wrong password is refused without being repeated; and the failover drill: the master
// killed, the store answers again once a replica is promoted (the gap measured and bounded), its
// counters continuing from the replica's copy; then a failover the sentinel is told to make,
// which the store follows within a second with the old master still up. Waits for the sentinel
// poll the store or the sentinel's log with a deadline.

#include <QtTest>

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <set>
#include <string>
#include <thread>

#include "fixtures/redis_store_fixture.h"
#include "ratelab/batching_store.h"
#include "ratelab/limiter.h"
#include "ratelab/policy_file.h"
#include "ratelab/request.h"
#include "ratelab/store_factory.h"
#include "redis/sentinel.h"
#include "redis/topology.h"

using namespace ratelab;
using namespace ratelab::redistest;
using testing::RedisServer;

namespace {

using SteadyClock = std::chrono::steady_clock;

std::int64_t msSince(SteadyClock::time_point start) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start)
        .count();
}

// Small enough for a short drill, large enough that a loaded machine's late PING answer does not
// make the sentinel take a master for down.
constexpr int kDownAfterMs = 1500;
constexpr auto kPollPause = std::chrono::milliseconds(5);

// The ACL user every server has (replication and the sentinel use the default user).
const std::string kUser = "limiter";
const std::string kPassword = "s3cret-Sentinel";

// A port nothing listens on: a sentinel that is down.
int deadPort() {
    RedisServer probe;
    RedisServer::Options o;
    o.tcp = true;
    std::string error;
    if (!probe.start(o, &error)) return 1;
    const int port = probe.port();
    probe.kill();
    return port;
}

// The thread ids of this process.
std::set<std::string> tasks() {
    std::set<std::string> ids;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task"))
        ids.insert(entry.path().filename().string());
    return ids;
}

// A thread's blocked signals (SigBlk in its /proc status), bit n-1 for signal n.
std::uint64_t blockedSignals(const std::string& task) {
    std::ifstream status("/proc/self/task/" + task + "/status");
    std::string line;
    while (std::getline(status, line))
        if (line.starts_with("SigBlk:")) return std::stoull(line.substr(7), nullptr, 16);
    return 0;
}

}  // namespace

// The number after `field:` in an INFO reply, or -1.
long long infoNumber(const std::string& info, const std::string& field) {
    const std::size_t at = info.find(field + ":");
    if (at == std::string::npos) return -1;
    return std::atoll(info.c_str() + at + field.size() + 1);
}

// Whether every replica has read `master`'s replication stream up to where it is now (polled
// for at most five seconds).
bool replicasCaughtUp(RedisServer& master, std::initializer_list<RedisServer*> replicas) {
    const long long target =
        infoNumber(master.commandText({"INFO", "replication"}), "master_repl_offset");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (;;) {
        bool all = target >= 0;
        for (RedisServer* r : replicas) {
            all = all && infoNumber(r->commandText({"INFO", "replication"}), "slave_repl_offset") >=
                             target;
        }
        if (all || std::chrono::steady_clock::now() > deadline) return all;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

class TestRedisSentinel : public QObject {
    Q_OBJECT

private slots:
    // A master, two replicas of it, and a sentinel (quorum 1) that knows all three.
    void initTestCase() {
        RedisServer::Options tcp;
        tcp.tcp = true;
        // No delay before a full resynchronisation (5 s by default), so that replicas follow
        // a new master at once.
        tcp.extraArgs = {"--user", kUser, "on",    ">" + kPassword,
                         "~*",     "&*",  "+@all", "--repl-diskless-sync-delay",
                         "0"};
        std::string error;
        QVERIFY2(servers_[0].start(tcp, &error), error.c_str());
        for (int i : {1, 2}) {
            RedisServer::Options replica = tcp;
            replica.extraArgs.insert(replica.extraArgs.end(), {"--replicaof", "127.0.0.1",
                                                               std::to_string(servers_[0].port())});
            QVERIFY2(servers_[i].start(replica, &error), error.c_str());
            QVERIFY(servers_[i].waitForLog("MASTER <-> REPLICA sync: Finished with success",
                                           std::chrono::seconds(10)));
        }
        RedisServer::Options sentinel;
        sentinel.sentinelConfig = {
            "sentinel monitor cache 127.0.0.1 " + std::to_string(servers_[0].port()) + " 1",
            "sentinel down-after-milliseconds cache " + std::to_string(kDownAfterMs),
            "sentinel failover-timeout cache 1000",
            "sentinel parallel-syncs cache 1",
        };
        QVERIFY2(sentinel_.start(sentinel, &error), error.c_str());
        for (int i : {1, 2}) {
            QVERIFY2(
                sentinel_.waitForLog("+slave slave 127.0.0.1:" + std::to_string(servers_[i].port()),
                                     std::chrono::seconds(15)),
                "the sentinel did not discover a replica");
        }
        sentinels_ = "127.0.0.1:" + std::to_string(deadPort()) +
                     ",127.0.0.1:" + std::to_string(sentinel_.port());
        url_ = "redis-sentinel://" + kUser + ":" + kPassword + "@" + sentinels_ + "/cache";
    }

    // The sentinels are asked in order: one that is down is skipped, the next answers; a name
    // no sentinel monitors is an error that says so, naming each sentinel.
    void asksTheSentinelsInOrder() {
        std::string why;
        std::optional<RedisEndpoint> service = parseRedisUrl(url_, &why);
        QVERIFY2(service, why.c_str());
        redis::Topology topology({*service}, false, kMs, 10 * kMs);
        QVERIFY(topology.sentinel());
        QCOMPARE(topology.primary(), -1);
        QVERIFY(topology.masters().empty());
        std::string host;
        int port = 0;
        const auto deadline = redis::Clock::now() + std::chrono::seconds(2);
        QVERIFY2(topology.sentinel()->ask(deadline, &host, &port, &why), why.c_str());
        QCOMPARE(host, std::string("127.0.0.1"));
        QCOMPARE(port, servers_[0].port());
        const int master = topology.sentinel()->master(deadline, &why);
        QVERIFY(master >= 0);
        QCOMPARE(topology.node(master).endpoint().port, servers_[0].port());
        QCOMPARE(topology.masters(), std::vector<int>{master});

        service->masterName = "elsewhere";
        redis::Topology unknown({*service}, false, kMs, 10 * kMs);
        QVERIFY(!unknown.sentinel()->ask(deadline, &host, &port, &why));
        QVERIFY2(why.find("does not monitor a master named \"elsewhere\"") != std::string::npos,
                 why.c_str());
        QVERIFY2(
            why.find("sentinel 127.0.0.1:" + std::to_string(sentinel_.port())) != std::string::npos,
            why.c_str());
        QCOMPARE(unknown.sentinel()->master(deadline, &why), -1);
    }

    // The master's password is the store's, never the sentinels' (they are asked without AUTH):
    // a wrong one is the master refusing the login, and no error or name repeats it.
    void refusesAWrongPasswordWithoutRepeatingIt() {
        RedisStoreOptions options;
        options.urls = {"redis-sentinel://" + kUser + ":wr0ng-Secret@" + sentinels_ + "/cache"};
        options.timeout = 500 * kMs;
        std::string error;
        std::unique_ptr<Store> store = makeRedisStore(options, &error);
        QVERIFY2(store, error.c_str());
        Limit l = makeLimit(Algorithm::TokenBucket);
        const ConsumeResult r = consumeOne(*store, l, "k", 0);
        QCOMPARE(r.status, StoreStatus::Refused);
        QVERIFY2(r.error.find("AUTH failed") != std::string::npos, r.error.c_str());
        QVERIFY2(
            r.error.find("127.0.0.1:" + std::to_string(servers_[0].port())) != std::string::npos,
            r.error.c_str());
        QVERIFY2(r.error.find("wr0ng") == std::string::npos, r.error.c_str());
        QVERIFY(redactRedisUrl(options.urls.front()).find("wr0ng") == std::string::npos);
    }

    // The store's watcher thread takes none of the process's signals: a service blocks SIGTERM
    // in its threads and waits for it (sigwait); delivered to a thread of the store instead, its
    // default action would end the process. The thread the store starts (the one task more in
    // /proc/self/task) blocks SIGTERM, SIGINT and SIGHUP, though its maker blocked nothing.
    void leavesTheProcessSignalsToItsHost() {
        const std::set<std::string> before = tasks();
        sigset_t none;
        sigemptyset(&none);
        sigset_t previous;
        pthread_sigmask(SIG_SETMASK, &none, &previous);
        RedisStoreOptions options;
        options.urls = {url_};
        std::string error;
        std::unique_ptr<Store> store = makeRedisStore(options, &error);
        pthread_sigmask(SIG_SETMASK, &previous, nullptr);
        QVERIFY2(store, error.c_str());
        std::vector<std::string> started;
        for (const std::string& task : tasks())
            if (!before.contains(task)) started.push_back(task);
        QCOMPARE(started.size(), std::size_t(1));
        const std::uint64_t blocked = blockedSignals(started.front());
        for (int signal : {SIGTERM, SIGINT, SIGHUP})
            QVERIFY2(blocked & (std::uint64_t(1) << (signal - 1)),
                     qPrintable(QString::number(signal)));
    }

    // A policy file whose store is a Sentinel URL, the master's credentials where a redis://
    // store has them (username, password_env): it loads, and its limit is kept on the master.
    void aPolicyFileDecidesOnTheSentinelsMaster() {
        qputenv("RATELAB_TEST_SENTINEL_PASSWORD", QByteArray::fromStdString(kPassword));
        const std::string text =
            "{\"version\": 1,\n"
            " \"store\": {\"kind\": \"redis\", \"url\": \"redis-sentinel://" +
            sentinels_ +
            "/cache\",\n"
            "           \"namespace\": \"policy\", \"username\": \"" +
            kUser +
            "\", \"password_env\": \"RATELAB_TEST_SENTINEL_PASSWORD\"},\n"
            " \"policies\": [{\"name\": \"api\", \"match\": {\"path_prefix\": \"/\"},\n"
            "   \"algorithm\": \"token_bucket\", \"capacity\": 3, \"refill_per_second\": 0.001,\n"
            "   \"key\": {\"source\": \"header\", \"header\": \"x-client\"}}]}\n";
        PolicyLoadResult loaded = parsePolicyText(text, "sentinel.json");
        for (const Diagnostic& d : loaded.diagnostics)
            qWarning("%s", d.message.c_str());
        QVERIFY(loaded.ok());
        QCOMPARE(loaded.policies->store.urls.front().find(kPassword), std::string::npos);
        std::string error;
        std::shared_ptr<Store> store = makeStore(loaded.policies->store, &error);
        qunsetenv("RATELAB_TEST_SENTINEL_PASSWORD");
        QVERIFY2(store, error.c_str());
        Limiter limiter(std::move(*loaded.policies), store);
        const Header headers[] = {{"X-Client", "sentinel-client"}};
        RequestView request;
        request.method = "GET";
        request.path = "/api";
        request.headers = headers;
        for (int expected : {200, 200, 200, 429}) {
            const Verdict v = limiter.decide(request, 0);
            QCOMPARE(v.status, expected);
        }
        // The bucket is on the master the sentinels name.
        QVERIFY(servers_[0].commandText({"KEYS", "policy*"}).find("policy") != std::string::npos);
    }

    // A service's store given as one URL with the master's credentials in it (serve --store):
    // the store block it stands for, made and wrapped in the batching store as serve does.
    void aUrlWithCredentialsMakesTheServiceStore() {
        StoreConfig config;
        config.kind = StoreConfig::Kind::Redis;
        config.urls = {url_};
        config.keyNamespace = "service";
        std::string error;
        std::shared_ptr<Store> inner = makeStore(config, &error);
        QVERIFY2(inner, error.c_str());
        std::shared_ptr<Store> store = makeBatchingStore(std::move(inner));
        Limit l = makeLimit(Algorithm::TokenBucket);
        for (std::int64_t remaining : {9, 8, 7}) {
            const ConsumeResult r = consumeOne(*store, l, "service-key", 0);
            QVERIFY2(r.status == StoreStatus::Ok, r.error.c_str());
            QCOMPARE(r.decision.remaining, remaining);
        }
    }

    // The drill. Six decisions on the master, replicated; the master killed: calls fail (the
    // policy's on_store_error would decide them) until the sentinel promotes a replica, then
    // answer again, the bucket's count continuing from the replica's copy (6 taken, the 7th
    // leaves 3). Then the sentinel is told to fail over to the other replica, the promoted master
    // staying up: the store follows the sentinels' switch within a second (count 8).
    void followsAFailover() {
        RedisStoreOptions options;
        options.urls = {url_};
        options.timeout = 100 * kMs;
        options.keyNamespace = "drill";
        std::string error;
        std::unique_ptr<Store> store = makeRedisStore(options, &error);
        QVERIFY2(store, error.c_str());
        Limit l;
        l.algorithm = Algorithm::TokenBucket;
        l.capacity = 10;
        l.emissionInterval = 1000 * kSecond;  // nothing refills during the drill
        for (int i = 0; i < 6; ++i) {
            const ConsumeResult r = consumeOne(*store, l, "counted", 0);
            QCOMPARE(r.status, StoreStatus::Ok);
            QCOMPARE(r.decision.remaining, std::int64_t(9 - i));
        }
        // WAIT covers only the writes of the connection that sends it, not the store's: the
        // drill kills the master once both replicas have read its whole replication stream.
        QVERIFY2(replicasCaughtUp(servers_[0], {&servers_[1], &servers_[2]}),
                 "the replicas did not receive the counted requests");

        servers_[0].kill();
        const auto killed = SteadyClock::now();
        int failures = 0;
        ConsumeResult r;
        for (;;) {
            r = consumeOne(*store, l, "gap", 0);
            if (r.status == StoreStatus::Ok || msSince(killed) > 20'000) break;
            QCOMPARE(r.status, StoreStatus::Transport);
            QVERIFY2(r.error.find(kPassword) == std::string::npos, r.error.c_str());
            ++failures;
            std::this_thread::sleep_for(kPollPause);
        }
        const std::int64_t gapMs = msSince(killed);
        QCOMPARE(r.status, StoreStatus::Ok);
        QVERIFY2(sentinel_.waitForLog(
                     "+switch-master cache 127.0.0.1 " + std::to_string(servers_[0].port()),
                     std::chrono::seconds(15)),
                 qPrintable(QString("after %1 ms, %2 failures; the sentinel's log:\n%3")
                                .arg(gapMs)
                                .arg(failures)
                                .arg(QString::fromStdString(sentinel_.log()))));
        const ConsumeResult seventh = consumeOne(*store, l, "counted", 0);
        QCOMPARE(seventh.status, StoreStatus::Ok);
        QCOMPARE(seventh.decision.remaining, std::int64_t(3));
        QCOMPARE(countersOf(*store).failovers, std::int64_t(1));
        qInfo(
            "master killed: decisions again after %lld ms (%d calls failed meanwhile; sentinel "
            "down-after-milliseconds %d)",
            static_cast<long long>(gapMs), failures, kDownAfterMs);
        // Down-after, the sentinel's desynchronisation (up to 1 s), the promotion (the
        // sentinel reads the replica's INFO every second meanwhile), an ask (100 ms at most).
        QVERIFY2(gapMs < kDownAfterMs + 5'000, qPrintable(QString::number(gapMs)));

        // The new master, and the replica it keeps.
        const int promoted = servers_[1].commandText({"ROLE"}).starts_with("[master") ? 1 : 2;
        const int other = 3 - promoted;
        QVERIFY2(servers_[promoted].commandText({"ROLE"}).starts_with("[master"),
                 servers_[promoted].commandText({"ROLE"}).c_str());
        QVERIFY(sentinel_.waitForLog("+failover-end master cache", std::chrono::seconds(10)));
        QVERIFY(replicasCaughtUp(servers_[promoted], {&servers_[other]}));

        // Until the sentinel has seen the remaining replica follow the new master, it has no
        // replica to promote (NOGOODSLAVE): asked again until it takes the order.
        auto told = SteadyClock::now();
        std::string answer;
        while ((answer = sentinel_.commandText({"SENTINEL", "FAILOVER", "cache"})) != "OK" &&
               msSince(told) < 30'000) {
            QVERIFY2(answer.find("NOGOODSLAVE") != std::string::npos, answer.c_str());
            std::this_thread::sleep_for(kPollPause);
        }
        QCOMPARE(answer, std::string("OK"));
        qInfo("the sentinel took the failover order after %lld ms",
              static_cast<long long>(msSince(told)));
        told = SteadyClock::now();
        QVERIFY(sentinel_.waitForLog(
            "+switch-master cache 127.0.0.1 " + std::to_string(servers_[promoted].port()),
            std::chrono::seconds(15)));
        const std::int64_t switchedMs = msSince(told);
        // The old master is still up, and a master, until the sentinel demotes it on its next
        // INFO read (up to 10 s): nothing fails, and the store's watcher, asking the sentinels
        // every second, follows the switch.
        while (countersOf(*store).failovers < 2 && msSince(told) < 5'000)
            std::this_thread::sleep_for(kPollPause);
        const std::int64_t followedMs = msSince(told);
        QCOMPARE(countersOf(*store).failovers, std::int64_t(2));
        QVERIFY2(followedMs < switchedMs + 1'500, qPrintable(QString::number(followedMs)));
        const ConsumeResult eighth = consumeOne(*store, l, "counted", 0);
        QCOMPARE(eighth.status, StoreStatus::Ok);
        QCOMPARE(eighth.decision.remaining, std::int64_t(2));
        QCOMPARE(countersOf(*store).failovers, std::int64_t(2));
        QVERIFY(servers_[other].commandText({"ROLE"}).starts_with("[master"));
        qInfo("told to fail over: the sentinel switched after %lld ms, the store after %lld ms",
              static_cast<long long>(switchedMs), static_cast<long long>(followedMs));
    }

private:
    RedisServer servers_[3];
    RedisServer sentinel_;
    std::string sentinels_;  ///< "host:port,host:port", the first one down
    std::string url_;
};

QTEST_APPLESS_MAIN(TestRedisSentinel)
#include "tst_redis_sentinel.moc"
