// Envoy's rate limit service on a Sentinel-monitored Redis: a real grpc++ client over loopback
// calls `serve`'s gRPC listener, whose store is a redis-sentinel:// URL (behind the service's
// batching store, --store-timeout-ms 15) on a master, its replica and a redis-sentinel this suite
// starts. The failover drill: the master killed (SIGKILL), calls answer by the rule's store-error
// answer (the gRPC error UNAVAILABLE) until the sentinel promotes the replica, then Redis answers
// again, the counter continuing from the replica's copy; no answer names the master's password.

#include <QtTest>

#include <chrono>
#include <string>
#include <thread>

#include "fixtures/redis_fixture.h"
#include "fixtures/rls_fixture.h"
#include "ratelab/batching_store.h"
#include "ratelab/redis_store.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

using SteadyClock = std::chrono::steady_clock;

std::int64_t msSince(SteadyClock::time_point start) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start)
        .count();
}

// Above Sentinel's one-second PING period: below it, the sentinel takes a master it has just
// switched to for down (tst_redis_sentinel says more).
constexpr int kDownAfterMs = 1500;
constexpr auto kPollPause = std::chrono::milliseconds(5);
const std::string kUser = "limiter";
const std::string kPassword = "s3cret-Rls-Sentinel";

// One rule, the original's answer to a store error (UNAVAILABLE); its window is the calendar
// hour, so nothing refills during the drill unless the drill spans the top of an hour.
const RlsFiles kConfig = {{"drill.yaml", R"(domain: drill
descriptors:
  - key: k
    rate_limit: {unit: hour, requests_per_unit: 1000}
)"}};

}  // namespace

class TestRlsGrpcSentinel : public QObject {
    Q_OBJECT

    RedisServer master_;
    RedisServer replica_;
    RedisServer sentinel_;

private slots:
    void initTestCase() {
        RedisServer::Options tcp;
        tcp.tcp = true;
        tcp.extraArgs = {"--user", kUser, "on",    ">" + kPassword,
                         "~*",     "&*",  "+@all", "--repl-diskless-sync-delay",
                         "0"};
        std::string error;
        QVERIFY2(master_.start(tcp, &error), error.c_str());
        RedisServer::Options replica = tcp;
        replica.extraArgs.insert(replica.extraArgs.end(),
                                 {"--replicaof", "127.0.0.1", std::to_string(master_.port())});
        QVERIFY2(replica_.start(replica, &error), error.c_str());
        QVERIFY(replica_.waitForLog("MASTER <-> REPLICA sync: Finished with success",
                                    std::chrono::seconds(10)));
        RedisServer::Options sentinel;
        sentinel.sentinelConfig = {
            "sentinel monitor cache 127.0.0.1 " + std::to_string(master_.port()) + " 1",
            "sentinel down-after-milliseconds cache " + std::to_string(kDownAfterMs),
            "sentinel failover-timeout cache 1000",
        };
        QVERIFY2(sentinel_.start(sentinel, &error), error.c_str());
        QVERIFY2(sentinel_.waitForLog("+slave slave 127.0.0.1:" + std::to_string(replica_.port()),
                                      std::chrono::seconds(15)),
                 "the sentinel did not discover the replica");
    }

    void answersContinueAfterThePromotion() {
        RedisStoreOptions options;
        options.urls = {"redis-sentinel://" + kUser + ":" + kPassword +
                        "@127.0.0.1:" + std::to_string(sentinel_.port()) + "/cache"};
        options.keyNamespace = "rls";
        options.timeSource = RedisTimeSource::Caller;
        std::string error;
        std::shared_ptr<Store> redis = makeRedisStore(options, &error);
        QVERIFY2(redis, error.c_str());
        RlsSidecarUnderTest server(kConfig, [&](serve::SidecarOptions& o) {
            o.rls.store = makeBatchingStore(std::move(redis));
            o.storeTimeout = 15 * kNanosPerMilli;
        });
        QVERIFY2(server.sidecar, server.error.c_str());
        RlsClient client(server.port());
        // The service asked the sentinels, connected and loaded the scripts before it listened.
        RlsClient::Answer a;
        const auto hourOf = [] {
            return std::chrono::duration_cast<std::chrono::hours>(
                       std::chrono::system_clock::now().time_since_epoch())
                .count();
        };
        const auto firstHour = hourOf();
        for (std::uint32_t remaining : {999u, 998u, 997u}) {
            a = client.ask("drill", {{{"k", "counted"}}});
            QVERIFY2(a.status.ok(), a.status.error_message().c_str());
            QCOMPARE(a.response.statuses(0).limit_remaining(), remaining);
        }
        // Replication is asynchronous, and WAIT only covers the writes of the connection that
        // sends it, not the store's: the drill kills the master once the replica holds the
        // three.
        const std::string counted =
            "rls:{5:drill1:k7:counted}:rls.fixed_window.1000.3600000ms.calendar:5:drill1:k7:"
            "counted";
        const auto replicating = SteadyClock::now();
        while (!replica_.commandText({"GET", counted}).ends_with(" 3") &&
               msSince(replicating) < 5'000)
            std::this_thread::sleep_for(kPollPause);
        QVERIFY2(replica_.commandText({"GET", counted}).ends_with(" 3"),
                 "the replica did not receive the three counted requests");

        master_.kill();
        const auto killed = SteadyClock::now();
        int unavailable = 0;
        for (;;) {
            a = client.ask("drill", {{{"k", "gap"}}});
            if (a.status.ok() || msSince(killed) > 20'000) break;
            QCOMPARE(int(a.status.error_code()), int(grpc::StatusCode::UNAVAILABLE));
            QVERIFY2(a.status.error_message().find(kPassword) == std::string::npos,
                     a.status.error_message().c_str());
            ++unavailable;
            std::this_thread::sleep_for(kPollPause);
        }
        const std::int64_t gapMs = msSince(killed);
        QVERIFY2(a.status.ok(),
                 qPrintable(QString("after %1 ms: %2; the sentinel's log:\n%3")
                                .arg(gapMs)
                                .arg(QString::fromStdString(a.status.error_message()))
                                .arg(QString::fromStdString(sentinel_.log()))));
        QVERIFY(sentinel_.waitForLog("+switch-master cache", std::chrono::seconds(5)));
        QVERIFY(unavailable > 0);
        a = client.ask("drill", {{{"k", "counted"}}});
        QVERIFY2(a.status.ok(), a.status.error_message().c_str());
        // The counter goes on from the replica's copy (it had the three), in a
        // new window when the drill crossed the top of an hour.
        const std::uint32_t expected = hourOf() == firstHour ? 996u : 999u;
        QVERIFY2(a.response.statuses(0).limit_remaining() == expected,
                 qPrintable(QString("remaining %1; the sentinel's log:\n%2\nthe replica's log:\n%3")
                                .arg(a.response.statuses(0).limit_remaining())
                                .arg(QString::fromStdString(sentinel_.log()))
                                .arg(QString::fromStdString(replica_.log()))));
        QVERIFY(replica_.commandText({"ROLE"}).starts_with("[master"));
        for (const std::string& line : server.logLines())
            QVERIFY2(line.find(kPassword) == std::string::npos, line.c_str());
        qInfo(
            "master killed: Redis answered again after %lld ms (%d calls UNAVAILABLE "
            "meanwhile; down-after-milliseconds %d)",
            static_cast<long long>(gapMs), unavailable, kDownAfterMs);
    }
};

QTEST_APPLESS_MAIN(TestRlsGrpcSentinel)
#include "tst_rls_grpc_sentinel.moc"
