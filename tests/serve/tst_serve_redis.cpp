// The decision listener on a Redis store (a redis-server the suite starts on a unix socket):
// each loop holds the requests of its turn and decides them together (DecisionHandler::
// handleBatch, one store round trip), with the answers and framing of deciding each at once;
// and the SIGSTOP drill: while Redis is stopped no request waits past --store-timeout-ms plus
// 20 ms (each call's latency measured by the client), every answer follows its policy's
// on_store_error, and after SIGCONT Redis decides again; a cold start on the 15 ms bound is
// decided by Redis from the first request. Threads: label "threads".

#include <QtTest>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fixtures/redis_fixture.h"
#include "fixtures/serve_fixture.h"
#include "fixtures/store_pause_drill.h"
#include "ratelab/batching_store.h"
#include "ratelab/redis_store.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

using SteadyClock = std::chrono::steady_clock;

// Policies on `url`: /client keyed by X-Client (capacity 5), and /open, /deny, /local keyed by
// the peer (capacity 4) failing open, closed and locally on a store shared by two replicas (a
// local share of 2). Nothing refills within a test.
std::string policies(const std::string& url) {
    auto policy = [](const char* name, const char* prefix, int capacity, const char* key,
                     const char* onError) {
        return std::string("    { \"name\": \"") + name + "\", \"match\": { \"path_prefix\": \"" +
               prefix +
               "\" }, \"algorithm\": \"token_bucket\", \"capacity\": " + std::to_string(capacity) +
               ", \"refill_per_second\": 0.001, \"key\": " + key +
               ", \"budget\": { \"enabled\": false }, \"on_store_error\": \"" + onError +
               "\", \"headers\": \"ietf\" }";
    };
    return "{ \"version\": 1,\n  \"store\": { \"kind\": \"redis\", \"url\": \"" + url +
           "\", \"namespace\": \"t" + std::to_string(std::random_device()()) +
           "\", \"replicas\": 2 },\n  \"policies\": [\n" +
           policy("client", "/client", 5, "{ \"source\": \"header\", \"header\": \"x-client\" }",
                  "fail_open_on_transport") +
           ",\n" +
           policy("open", "/open", 4, "{ \"source\": \"peer\" }", "fail_open_on_transport") +
           ",\n" + policy("deny", "/deny", 4, "{ \"source\": \"peer\" }", "deny") + ",\n" +
           policy("local", "/local", 4, "{ \"source\": \"peer\" }", "local") + "\n  ]\n}\n";
}

std::string clientRequest(int client, const std::string& extra = "") {
    return get("/client", "X-Client: c" + std::to_string(client) + "\r\n" + extra);
}

}  // namespace

class TestServeRedis : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        std::string error;
        QVERIFY2(redis_.start(&error), error.c_str());
    }

    // /metrics reports the Redis store's own counters and the batching in front of it: every
    // decision reached Redis as one script call of some batch, nothing failed, one or more
    // connections were made, and no failover happened.
    void metricsCountRedisCalls() {
        SidecarUnderTest s(policies(redis_.url()));
        QVERIFY2(s.sidecar, s.error.c_str());
        constexpr int kRequests = 20;
        RawClient client(s.port());
        for (int i = 0; i < kRequests; ++i) {
            QVERIFY(client.send(clientRequest(i % 4)));
            QVERIFY(client.read().status != 0);
        }
        RawClient admin(s.adminPort());
        QVERIFY(admin.send(get("/metrics")));
        const HttpAnswer metrics = admin.read();
        QCOMPARE(metrics.status, 200);
        auto sample = [&](const std::string& name) -> std::int64_t {
            const std::size_t at = metrics.body.find("\n" + name + " ");
            if (at == std::string::npos) return -1;
            return std::stoll(metrics.body.substr(at + name.size() + 2));
        };
        QVERIFY2(sample("ratelab_redis_commands_total") >= kRequests, metrics.body.c_str());
        QVERIFY(sample("ratelab_redis_connects_total") >= 1);
        QCOMPARE(sample("ratelab_redis_connect_failures_total"), std::int64_t(0));
        QCOMPARE(sample("ratelab_redis_transport_errors_total"), std::int64_t(0));
        QCOMPARE(sample("ratelab_redis_refusals_total"), std::int64_t(0));
        QCOMPARE(sample("ratelab_redis_failovers_total"), std::int64_t(0));
        QCOMPARE(sample("ratelab_store_batched_consumptions_total"), std::int64_t(kRequests));
        const std::int64_t batches = sample("ratelab_store_batches_total");
        QVERIFY(batches >= 1 && batches <= kRequests);
        QCOMPARE(sample("ratelab_store_batch_timeouts_total"), std::int64_t(0));
        QVERIFY(sample("ratelab_store_largest_batch") >= 1);
    }

    // Six connections, three clients, every request pipelined at once: the loops decide them
    // in batches, yet each client gets exactly its capacity of passes, their remaining counts
    // 4 to 0 once each, and every other request 429.
    void batchedDecisionsKeepEachBucketExact() {
        SidecarUnderTest s(policies(redis_.url()));
        QVERIFY2(s.sidecar, s.error.c_str());
        constexpr int kConnections = 6;
        constexpr int kPerConnection = 12;
        std::vector<RawClient> clients;
        for (int c = 0; c < kConnections; ++c)
            clients.emplace_back(s.port());
        for (int c = 0; c < kConnections; ++c) {
            std::string burst;
            for (int i = 0; i < kPerConnection; ++i)
                burst += clientRequest((c + i) % 3);
            QVERIFY(clients[c].send(burst));
        }
        std::map<std::string, std::multiset<std::string>> passes;  // client -> RateLimit values
        int refused = 0;
        for (int c = 0; c < kConnections; ++c) {
            for (int i = 0; i < kPerConnection; ++i) {
                const HttpAnswer a = clients[c].read();
                const std::string client = "c" + std::to_string((c + i) % 3);
                if (a.status == 200) {
                    passes[client].insert(a.header("ratelimit"));
                } else {
                    QCOMPARE(a.status, 429);
                    ++refused;
                }
            }
        }
        QCOMPARE(refused, kConnections * kPerConnection - 3 * 5);
        for (const auto& [client, seen] : passes) {
            QCOMPARE(seen.size(), std::size_t(5));
            for (int r = 0; r < 5; ++r) {
                const std::string value = "\"client\";r=" + std::to_string(r) + ";t=";
                QVERIFY2(
                    std::count_if(seen.begin(), seen.end(),
                                  [&](const std::string& v) { return v.starts_with(value); }) == 1,
                    qPrintable(QString::fromStdString(client + ": " + value)));
            }
        }
    }

    // What a held request's connection does is what an answered one's does: pipelined answers
    // in order, a request that cannot be decided answered 400 beside decided ones, HEAD without
    // a body, Connection: close and HTTP/1.0 closing after their answer, a client that stops
    // sending right after its request still answered.
    void heldRequestsKeepTheirFraming() {
        SidecarUnderTest s(policies(redis_.url()));
        QVERIFY2(s.sidecar, s.error.c_str());
        {
            RawClient c(s.port());
            std::string burst;
            for (int i = 0; i < 4; ++i)
                burst +=
                    clientRequest(10 + i, "X-Ratelab-Respond: 20" + std::to_string(i) + "\r\n");
            burst += "GET /client%01 HTTP/1.1\r\nHost: test\r\nX-Client: c19\r\n\r\n";
            burst += clientRequest(21, "Connection: close\r\n");
            burst += clientRequest(22);  // after the close: never answered
            QVERIFY(c.send(burst));
            for (int i = 0; i < 4; ++i) {
                const HttpAnswer a = c.read();
                QCOMPARE(a.status, 200 + i);
                QCOMPARE(a.header("ratelimit").substr(0, 15), std::string("\"client\";r=4;t="));
            }
            const HttpAnswer undescribed = c.read();
            QCOMPARE(undescribed.status, 400);
            QVERIFY(undescribed.body.find("request_undescribed") != std::string::npos);
            const HttpAnswer last = c.read();
            QCOMPARE(last.status, 200);
            QCOMPARE(last.header("connection"), std::string("close"));
            QVERIFY(c.closedBy());
            QVERIFY(c.buffered().empty());
        }
        {
            RawClient c(s.port());
            QVERIFY(
                c.send("HEAD /client HTTP/1.1\r\nHost: test\r\nX-Client: c20\r\n"
                       "Connection: close\r\n\r\n"));
            QVERIFY(c.closedBy());
            const std::string& head = c.buffered();
            QVERIFY2(head.starts_with("HTTP/1.1 200 OK\r\n") && head.ends_with("\r\n\r\n") &&
                         head.find("RateLimit: \"client\";r=4;t=") != std::string::npos,
                     head.c_str());
        }
        {
            RawClient c(s.port());
            QVERIFY(c.send("GET /client HTTP/1.0\r\nX-Client: c30\r\n\r\n"));
            QCOMPARE(c.read().status, 200);
            QVERIFY(c.closedBy());
        }
        {
            RawClient c(s.port());
            QVERIFY(c.send(clientRequest(31)));
            QCOMPARE(::shutdown(c.fd(), SHUT_WR), 0);
            const HttpAnswer a = c.read();
            QCOMPARE(a.status, 200);
            QCOMPARE(a.header("ratelimit").substr(0, 15), std::string("\"client\";r=4;t="));
            QVERIFY(c.closedBy());
        }
        const serve::HttpServerStats stats = s.sidecar->decisionServer().stats();
        QCOMPARE(stats.requests, std::int64_t(9));
    }

    // A cold start on the 15 ms store timeout: the service connects to Redis and loads its
    // scripts before the listener takes a request (one connection made before any request, none
    // by the first), so the first requests are decided by Redis: /deny is not refused by its
    // store-error rule (503), and its RateLimit field counts down from Redis' bucket.
    void coldStartDecidedByRedis() {
        SidecarUnderTest s(policies(redis_.url()),
                           [](serve::SidecarOptions& o) { o.storeTimeout = 15 * kNanosPerMilli; });
        QVERIFY2(s.sidecar, s.error.c_str());
        auto* batching = dynamic_cast<BatchingStore*>(&s.sidecar->runtime().store());
        QVERIFY(batching);
        auto* redis = dynamic_cast<RedisStore*>(&batching->inner());
        QVERIFY(redis);
        QCOMPARE(redis->counters().connects, std::int64_t(1));
        const auto lines = s.logLines();
        QVERIFY(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
            return l.find("\"store_ready\":true") != std::string::npos;
        }));
        RawClient client(s.port());
        for (int r : {3, 2}) {
            QVERIFY(client.send(get("/deny")));
            const HttpAnswer a = client.read();
            QCOMPARE(a.status, 200);
            const std::string expected = "\"deny\";r=" + std::to_string(r) + ";t=";
            QVERIFY2(a.header("ratelimit").starts_with(expected), a.header("ratelimit").c_str());
        }
        QCOMPARE(redis->counters().connects, std::int64_t(1));
        QCOMPARE(redis->counters().transportErrors, std::int64_t(0));
    }

    // The drill: Redis stopped under load. Four connections send requests one at a time,
    // rotating over /open, /deny and /local: 40 each, then Redis is stopped (SIGSTOP) and they
    // go on for 1.5 s of its stop (the store times out its calls, backs off, probes again), then
    // it is continued and they send 40 more each. No answer takes longer than the store timeout
    // (15 ms) plus 20 ms; while stopped /open passes without Redis' fields (failed open), /deny
    // is 503 store_unavailable, /local passes its local share (2 of 4) and then refuses; after
    // SIGCONT, Redis decides again.
    void sigstopDrill() {
        SidecarUnderTest s(policies(redis_.url()),
                           [](serve::SidecarOptions& o) { o.storeTimeout = 15 * kNanosPerMilli; });
        QVERIFY2(s.sidecar, s.error.c_str());
        constexpr int kConnections = 4;
        const char* paths[] = {"/open", "/deny", "/local"};
        struct Seen {
            std::int64_t micros = 0;
            int status = 0;
            int phase = kRunning;
            std::string path;
            std::string ratelimit;
            std::string body;
        };
        const StorePauseDrill drill{kConnections, 40, std::chrono::milliseconds(1500), 40};
        std::vector<std::vector<Seen>> seen;
        const DrillTimes times = runStorePauseDrill(
            drill, redis_, [&](int) { return RawClient(s.port()); },
            [&](RawClient& client, int c, int i) {
                Seen x;
                x.path = paths[(c + i) % 3];
                client.send(get(x.path));
                const HttpAnswer a = client.read(10'000);
                x.status = a.status;
                x.ratelimit = a.header("ratelimit");
                x.body = a.body;
                return x;
            },
            &seen);
        QVERIFY(times.allReady && times.allDone);
        const auto stoppedFor = times.stoppedFor;
        const auto continuedAt = times.continuedAt;

        std::int64_t slowest[kDrillPhases] = {0, 0, 0};
        int failedOpen = 0, denied = 0, localPasses = 0, localRefusals = 0, localAsked = 0;
        for (int c = 0; c < kConnections; ++c) {
            for (const Seen& one : seen[c]) {
                QVERIFY2(one.status != 0, "a request got no answer");
                slowest[one.phase] = std::max(slowest[one.phase], one.micros);
                if (one.phase != kStoppedPhase) continue;
                if (one.path == "/open") {
                    QCOMPARE(one.status, 200);
                    QVERIFY2(one.ratelimit.empty(), one.ratelimit.c_str());
                    ++failedOpen;
                } else if (one.path == "/deny") {
                    QCOMPARE(one.status, 503);
                    QVERIFY(one.body.find("\"code\":\"store_unavailable\"") != std::string::npos);
                    ++denied;
                } else if (++localAsked, one.status == 200) {
                    ++localPasses;
                } else {
                    QCOMPARE(one.status, 429);
                    ++localRefusals;
                }
            }
        }
        for (int p : {kRunning, kStoppedPhase, kContinued}) {
            QVERIFY2(slowest[p] <= (15 + 20) * 1000,
                     qPrintable(QString("an answer took %1 ms").arg(slowest[p] / 1000.0)));
        }
        QVERIFY(failedOpen > 0 && denied > 0);
        // The peer's local bucket holds 4 / 2 replicas.
        QCOMPARE(localPasses, 2);
        QCOMPARE(localRefusals, localAsked - 2);
        // After SIGCONT Redis decides again: its fields come back once the backoff has run out.
        RawClient probe(s.port());
        HttpAnswer after;
        const auto deadline = SteadyClock::now() + std::chrono::seconds(5);
        do {
            probe.send(get("/client", "X-Client: after\r\n"));
            after = probe.read();
        } while (after.header("ratelimit").empty() && SteadyClock::now() < deadline);
        qInfo(
            "Redis stopped %lld ms; slowest answer before %.1f ms, while stopped %.1f ms, after "
            "%.1f ms; while stopped: %d failed open, %d denied, %d local passes, %d local "
            "refusals; Redis decided again %lld ms after SIGCONT",
            static_cast<long long>(
                std::chrono::duration_cast<std::chrono::milliseconds>(stoppedFor).count()),
            slowest[kRunning] / 1000.0, slowest[kStoppedPhase] / 1000.0,
            slowest[kContinued] / 1000.0, failedOpen, denied, localPasses, localRefusals,
            static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                       SteadyClock::now() - continuedAt)
                                       .count()));
        QCOMPARE(after.status, 200);
        QCOMPARE(after.header("ratelimit").substr(0, 15), std::string("\"client\";r=4;t="));
    }

private:
    RedisServer redis_;
};

QTEST_APPLESS_MAIN(TestServeRedis)
#include "tst_serve_redis.moc"
