// Envoy's rate limit service end to end: the original's call sequences (a subset of
// tst_rls_sequences' rows, in its sequence language) sent by a real grpc++ client over loopback
// to `serve`'s gRPC listener, on the memory store and on a Redis store behind the service's
// batching store (a redis-server this suite starts); a step's repeated calls are sent at once
// from as many threads, so that concurrent calls meet in the store's batches. Then the SIGSTOP
// drill: while Redis is stopped no call waits past --store-timeout-ms plus 20 ms (measured by the
// client), every answer follows its limit's store-error rule, and after SIGCONT Redis decides
// again; a cold start on the 15 ms bound is decided by Redis from the first call; a reload on
// Redis keeps the counters of unchanged rules. Threads: label "threads".

#include <QtTest>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "fixtures/redis_fixture.h"
#include "fixtures/rls_fixture.h"
#include "fixtures/store_pause_drill.h"
#include "ratelab/batching_store.h"
#include "ratelab/redis_store.h"
#include "rls_configs.h"
#include "rls_sequence.h"

using namespace ratelab;
using namespace ratelab::testing;
using namespace ratelab::rlstest;

namespace {

using SteadyClock = std::chrono::steady_clock;

// A configuration written as one text (files separated by "#--- NAME" lines) as files.
RlsFiles filesOf(const QString& text) {
    RlsFiles files{{"config.yaml", {}}};
    for (const QString& line : text.split('\n')) {
        if (line.startsWith("#--- ")) {
            files.push_back({line.mid(5).toStdString(), {}});
        } else {
            files.back().second += line.toStdString() + "\n";
        }
    }
    return files;
}

rlsv3::RateLimitRequest toMessage(const RlsRequest& request) {
    rlsv3::RateLimitRequest m;
    m.set_domain(request.domain);
    m.set_hits_addend(static_cast<std::uint32_t>(request.hitsAddend));
    for (const RlsDescriptor& d : request.descriptors) {
        auto* descriptor = m.add_descriptors();
        for (const RlsEntry& e : d.entries) {
            auto* entry = descriptor->add_entries();
            entry->set_key(e.key);
            entry->set_value(e.value);
        }
        if (d.hitsAddend) descriptor->mutable_hits_addend()->set_value(*d.hitsAddend);
    }
    return m;
}

// The answer as the decider's result, for rls_sequence.h's render().
RlsResult fromAnswer(const RlsClient::Answer& a) {
    RlsResult r;
    if (!a.status.ok()) {
        r.error = {static_cast<GrpcCode>(a.status.error_code()), a.status.error_message()};
        return r;
    }
    r.response.overall = static_cast<RlsCode>(a.response.overall_code());
    for (const auto& s : a.response.statuses()) {
        RlsStatus status;
        status.code = static_cast<RlsCode>(s.code());
        if (s.has_current_limit()) {
            status.currentLimit =
                RlsLimit{s.current_limit().requests_per_unit(),
                         static_cast<RlsUnit>(s.current_limit().unit()), s.current_limit().name()};
        }
        status.limitRemaining = s.limit_remaining();
        status.durationUntilReset =
            s.duration_until_reset().seconds() * kNanosPerSecond + s.duration_until_reset().nanos();
        r.response.statuses.push_back(std::move(status));
    }
    return r;
}

// Where a test counts rather than times: every call must be decided by Redis for the counts to
// hold, and on a loaded machine any call (not only a fresh store's first, which the service now
// makes before it listens) can be held past --store-timeout-ms's 15 ms by the scheduler, a
// concurrent step's calls most of all; the cold start and the drill run on the 15 ms bound.
constexpr Nanos kCountingTimeout = 2 * kNanosPerSecond;

// The drill's rules: one limit each that fails open, denies, and fails the call (the original's
// answer) while the store cannot be reached. Nothing refills within the test (hour windows).
const RlsFiles kDrillConfig = {{"drill.yaml", R"(domain: drill
descriptors:
  - key: open
    rate_limit: {unit: hour, requests_per_unit: 1000, ratelab: {on_store_error: fail_open_on_transport}}
  - key: deny
    rate_limit: {unit: hour, requests_per_unit: 1000, ratelab: {on_store_error: deny}}
  - key: fail
    rate_limit: {unit: hour, requests_per_unit: 1000}
)"}};

}  // namespace

class TestRlsGrpcRedis : public QObject {
    Q_OBJECT

    RedisServer redis_;

    // The service's store on Redis: the batching store over a Redis store on the caller's
    // (the test's) clock, in a namespace of its own; *inner (when given) is the Redis store.
    std::shared_ptr<Store> redisStore(RedisStore** inner = nullptr) {
        RedisStoreOptions options;
        options.urls = {redis_.url()};
        options.keyNamespace = "g" + std::to_string(std::random_device()());
        options.timeSource = RedisTimeSource::Caller;
        std::string error;
        std::shared_ptr<Store> store = makeRedisStore(options, &error);
        if (!store) qFatal("%s", error.c_str());
        if (inner) *inner = dynamic_cast<RedisStore*>(store.get());
        return makeBatchingStore(std::move(store));
    }

private slots:
    void initTestCase() {
        std::string error;
        QVERIFY2(redis_.start(&error), error.c_str());
    }

    void sequences_data() {
        QTest::addColumn<QString>("store");
        QTest::addColumn<QString>("config");
        QTest::addColumn<QStringList>("steps");
        for (const char* store : {"memory", "redis"}) {
            auto row = [&](const char* tag, const char* config, QStringList steps) {
                QTest::addRow("%s: %s", store, tag) << store << config << steps;
            };
            const char* C = kCountingConfig;
            row("S1 basic", C,
                {"1234: domain*4 key=value => OK | OK 10/second rem 6 reset 1",
                 "1234.5: domain key=value => OK | OK 10/second rem 5 reset 1"});
            row("S2 a descriptor's own addend", C,
                {"1234: domain key2=value2,subkey2=subvalue2+10 => OK | OK 10/minute rem 0 reset "
                 "26",
                 "1234: domain key2=value2+0 ; key2=value2,subkey2=subvalue2+1 => OVER | OK | "
                 "OVER 10/minute rem 0 reset 26"});
            row("S4 towards the limit and past it", C,
                {"1000000: domain key4=value4+10 => OK | OK 15/hour rem 5 reset 800",
                 "1000000: domain key4=value4 => OK | OK 15/hour rem 4 reset 800",
                 "1000000: domain key4=value4+2 => OK | OK 15/hour rem 2 reset 800",
                 "1000000: domain key4=value4+3 => OVER | OVER 15/hour rem 0 reset 800",
                 "x4 1000000: domain key4=value4 => OVER | OVER 15/hour rem 0 reset 800"});
            row("S11 windows on the wall clock", C,
                {"1234.9: domain*10 key=value => OK | OK 10/second rem 0 reset 1",
                 "x3 1234.95: domain key=value => OVER | OVER 10/second rem 0 reset 1",
                 "1235: domain key=value => OK | OK 10/second rem 9 reset 1",
                 "1259: domain m10=a => OK | OK 10/minute rem 9 reset 1",
                 "1260: domain m10=a => OK | OK 10/minute rem 9 reset 60"});
            row("S12 a shadow rule counts and answers OK", C,
                {"1000000: domain shadow4=value4+14 => OK | OK 15/hour rem 1 reset 800",
                 "1000000: domain shadow4=value4 => OK | OK 15/hour rem 0 reset 800",
                 "x3 1000000: domain shadow4=value4 => OK | OK 15/hour rem 0 reset 800"});
            row("S13 two descriptors, one over", C,
                {"1000000: domain key4=value4+11 ; key5=value5+11 => OK | OK 15/hour rem 4 reset "
                 "800 | OK 14/hour rem 3 reset 800",
                 "1000000: domain key4=value4+2 ; key5=value5+2 => OK | OK 15/hour rem 2 reset 800 "
                 "| OK 14/hour rem 1 reset 800",
                 "1000000: domain key4=value4+2 ; key5=value5+2 => OVER | OK 15/hour rem 0 reset "
                 "800 | OVER 14/hour rem 0 reset 800"});
            const char* S = kServiceConfig;
            row("S15 no rule, then a rule over", S,
                {"1: test-domain hello=world => OK | OK",
                 "1: different-domain foo=bar+10 => OK | OK 10/minute/key_name rem 0 reset 59",
                 "1: different-domain hello=world ; foo=bar => OVER | OK | OVER "
                 "10/minute/key_name rem 0 reset 59"});
            row("S18 unlimited is never counted", S,
                {"60: different-domain foo=bar ; hello=world ; baz=qux => OK | OK "
                 "10/minute/key_name rem 9 reset 60 | OK | OK unlimited",
                 "x20 60: different-domain baz=qux => OK | OK unlimited"});
            row("S19 calls refused", S,
                {"1: '' foo=bar => ERROR rate limit domain must not be empty",
                 "1: different-domain => ERROR rate limit descriptor list must not be empty",
                 "1: different-domain foo=bar+9007199254740992 => ERROR hits_addend "
                 "9007199254740992 of descriptor 0 is more than a counter holds (at most "
                 "9007199254740991)"});
            row("S20 quota mode", S,
                {"1: different-domain regular=a ; quota1=a => OK | OK 1/minute rem 0 reset 59 | OK "
                 "1/minute rem 0 reset 59",
                 "61: different-domain quota1=a ; quota2=b => OK | OK 1/minute rem 0 reset 59 | "
                 "OK 1/minute rem 0 reset 59",
                 "61: different-domain quota1=a ; quota2=b => OVER | OVER 1/minute rem 0 reset 59 "
                 "| OVER 1/minute rem 0 reset 59"});
            const char* E = kExampleConfig;
            const QString banned = "rl foo=bkthomps,bar=banned";
            row("S22 replaces", E,
                {"60: " + banned + " => OVER | OVER 0/minute/banned_limit rem 0 reset 60",
                 "60: " + banned +
                     " ; source_cluster=proxy,destination_cluster=override => OK | "
                     "OK | OK 2/minute rem 1 reset 60",
                 "60: " + banned +
                     " ; source_cluster=proxy,destination_cluster=override => OK | "
                     "OK | OK 2/minute rem 0 reset 60",
                 "60: " + banned +
                     " ; source_cluster=proxy,destination_cluster=override => OVER "
                     "| OK | OVER 2/minute rem 0 reset 60"});
            const QString quota = "rl service=service_1 ; service=service_2";
            row("S26 quota descriptors of one call", E,
                {"120: " + quota +
                     " => OK | OK 1/minute rem 0 reset 60 | OK 2/minute rem 1 reset 60",
                 "120: " + quota +
                     " => OK | OVER 1/minute rem 0 reset 60 | OK 2/minute rem 0 reset 60",
                 "120: " + quota +
                     " => OVER | OVER 1/minute rem 0 reset 60 | OVER 2/minute rem 0 reset 60"});
            row("S27 a token quota: a check, then the charge", E,
                {"120: rl service=service_2+0 => OK | OK 2/minute rem 2 reset 60",
                 "120: rl service=service_2+1 => OK | OK 2/minute rem 1 reset 60",
                 "120: rl service=service_2+1 => OK | OK 2/minute rem 0 reset 60",
                 "120: rl service=service_2+0 => OK | OK 2/minute rem 0 reset 60",
                 "120: rl service=service_2+1 => OVER | OVER 2/minute rem 0 reset 60"});
            QStringList s23;
            for (int i = 0; i < 22; ++i) {
                s23 << (i < 20
                            ? QString("3600: another key2=r => OK | OK 20/minute rem %1 reset 60")
                                  .arg(19 - i)
                            : QString("3600: another key2=r => OVER | OVER 20/minute rem 0 "
                                      "reset 60"));
            }
            row("S23 counting per value", kWildcardConfig, s23);
        }
    }
    void sequences() {
        QFETCH(QString, store);
        QFETCH(QString, config);
        QFETCH(QStringList, steps);
        RlsSidecarUnderTest server(filesOf(config), [&](serve::SidecarOptions& o) {
            if (store == "redis") o.rls.store = redisStore();
            o.storeTimeout = kCountingTimeout;
        });
        QVERIFY2(server.sidecar, server.error.c_str());
        for (int n = 0; n < steps.size(); ++n) {
            const Step step = parseStep(steps[n]);
            server.clock.set(step.now);
            const rlsv3::RateLimitRequest message = toMessage(step.request);
            // Each repeat from a thread and a connection of its own, all at once.
            std::vector<QString> got(static_cast<std::size_t>(step.repeat));
            std::vector<std::thread> threads;
            for (int i = 0; i < step.repeat; ++i) {
                threads.emplace_back([&, i] {
                    RlsClient client(server.port());
                    got[static_cast<std::size_t>(i)] =
                        simplified(render(fromAnswer(client.ask(message))));
                });
            }
            for (std::thread& t : threads)
                t.join();
            for (const QString& g : got) {
                QVERIFY2(g == step.expected, qPrintable(QString("step %1 (%2):\n  expected %3\n  "
                                                                "got      %4")
                                                            .arg(n + 1)
                                                            .arg(steps[n], step.expected, g)));
            }
        }
    }

    // Eight clients ask for one key at once, 40 calls each, through the batching store: exactly
    // the limit's 250 pass, the rest are over, and the remaining hits count down without a gap.
    void concurrentCallsShareOneCounter() {
        RlsSidecarUnderTest server({{"c.yaml",
                                     "domain: c\ndescriptors:\n  - key: k\n"
                                     "    rate_limit: {unit: hour, requests_per_unit: 250}\n"}},
                                   [&](serve::SidecarOptions& o) {
                                       o.rls.store = redisStore();
                                       o.storeTimeout = kCountingTimeout;
                                   });
        QVERIFY2(server.sidecar, server.error.c_str());
        constexpr int kClients = 8, kCalls = 40;
        std::vector<std::vector<std::uint32_t>> remaining(kClients);
        std::atomic<int> over{0}, failed{0};
        std::vector<std::thread> threads;
        for (int c = 0; c < kClients; ++c) {
            threads.emplace_back([&, c] {
                RlsClient client(server.port());
                for (int i = 0; i < kCalls; ++i) {
                    const auto a = client.ask("c", {{{"k", "x"}}});
                    if (!a.status.ok()) {
                        ++failed;
                    } else if (a.response.overall_code() == rlsv3::RateLimitResponse::OVER_LIMIT) {
                        ++over;
                    } else {
                        remaining[c].push_back(a.response.statuses(0).limit_remaining());
                    }
                }
            });
        }
        for (std::thread& t : threads)
            t.join();
        QCOMPARE(failed.load(), 0);
        QCOMPARE(over.load(), kClients * kCalls - 250);
        std::vector<std::uint32_t> all;
        for (const auto& r : remaining)
            all.insert(all.end(), r.begin(), r.end());
        std::sort(all.begin(), all.end());
        QCOMPARE(all.size(), std::size_t(250));
        for (std::uint32_t i = 0; i < 250; ++i)
            QCOMPARE(all[i], i);
    }

    // A reload on Redis: a rule whose domain, path and numbers are unchanged goes on counting
    // in Redis; a rule whose numbers changed starts afresh; a file with errors changes nothing.
    void reloadKeepsRedisCounters() {
        const std::string before =
            "domain: r\ndescriptors:\n"
            "  - key: same\n    rate_limit: {unit: hour, requests_per_unit: 5}\n"
            "  - key: changed\n    rate_limit: {unit: hour, requests_per_unit: 5}\n";
        RlsSidecarUnderTest server({{"r.yaml", before}}, [&](serve::SidecarOptions& o) {
            o.rls.store = redisStore();
            o.storeTimeout = kCountingTimeout;
        });
        QVERIFY2(server.sidecar, server.error.c_str());
        RlsClient client(server.port());
        auto remaining = [&](const char* key) {
            const auto a = client.ask("r", {{{key, "x"}}});
            return a.status.ok() ? a.response.statuses(0).limit_remaining() : 999u;
        };
        QCOMPARE(remaining("same"), 4u);
        QCOMPARE(remaining("same"), 3u);
        QCOMPARE(remaining("changed"), 4u);
        writeText(server.file("r.yaml"),
                  "domain: r\ndescriptors:\n"
                  "  - key: same\n    rate_limit: {unit: hour, requests_per_unit: 5}\n"
                  "  - key: changed\n    rate_limit: {unit: hour, requests_per_unit: 8}\n");
        auto results = server.sidecar->reload("test");
        QCOMPARE(results.size(), std::size_t(1));
        QVERIFY(results[0].ok);
        QCOMPARE(remaining("same"), 2u);
        QCOMPARE(remaining("changed"), 7u);
        writeText(server.file("r.yaml"), before + "  - key: bad\n    rate_limit: {unit: eon}\n");
        results = server.sidecar->reload("test");
        QVERIFY(!results[0].ok);
        QCOMPARE(remaining("same"), 1u);
        QCOMPARE(remaining("changed"), 6u);
    }

    // A cold start on the 15 ms store timeout: the service connects to Redis and loads its
    // scripts before its listener takes a call (one connection made before any call, none by
    // the first calls), so the first calls are decided by Redis, not by their store-error rule
    // (`fail` would be UNAVAILABLE, `deny` OVER_LIMIT), and the store is ready at once.
    void coldStartDecidedByRedis() {
        RedisStore* redis = nullptr;
        RlsSidecarUnderTest server(kDrillConfig, [&](serve::SidecarOptions& o) {
            o.rls.store = redisStore(&redis);
            o.storeTimeout = 15 * kNanosPerMilli;
        });
        QVERIFY2(server.sidecar, server.error.c_str());
        QVERIFY(redis);
        QCOMPARE(redis->counters().connects, std::int64_t(1));
        QCOMPARE(redis->counters().connectFailures, std::int64_t(0));
        QVERIFY(server.logged("\"store_ready\":true"));
        RlsClient client(server.port());
        for (const char* key : {"fail", "deny"}) {
            const auto a = client.ask("drill", {{{key, "first"}}});
            QVERIFY2(a.status.ok(), a.status.error_message().c_str());
            QCOMPARE(a.response.overall_code(), rlsv3::RateLimitResponse::OK);
            QCOMPARE(a.response.statuses(0).limit_remaining(), 999u);
        }
        QCOMPARE(redis->counters().connects, std::int64_t(1));
        QCOMPARE(redis->counters().transportErrors, std::int64_t(0));
        QCOMPARE(client.health(""), int(grpc::health::v1::HealthCheckResponse::SERVING));
    }

    // The drill: Redis stopped under load. Four clients call one at a time, rotating over the
    // open, deny and fail rules: 30 each, then Redis is stopped (SIGSTOP) and they go on for
    // 1.5 s, then it is continued and they call 30 more each. No call takes longer than the
    // store timeout (15 ms) plus 20 ms; while stopped, open answers OK without a count, deny
    // OVER_LIMIT, fail the gRPC error UNAVAILABLE; after SIGCONT Redis counts again.
    void sigstopDrill() {
        RlsSidecarUnderTest server(kDrillConfig, [&](serve::SidecarOptions& o) {
            o.rls.store = redisStore();
            o.storeTimeout = 15 * kNanosPerMilli;
        });
        QVERIFY2(server.sidecar, server.error.c_str());
        constexpr int kClients = 4;
        const char* keys[] = {"open", "deny", "fail"};
        struct Seen {
            std::int64_t micros = 0;
            int phase = kRunning;
            std::string key;
            int grpcCode = 0;
            int code = 0;
            std::uint32_t remaining = 0;
        };
        const StorePauseDrill drill{kClients, 30, std::chrono::milliseconds(1500), 30};
        std::vector<std::vector<Seen>> seen;
        const DrillTimes times = runStorePauseDrill(
            drill, redis_,
            [&](int) {
                auto client = std::make_unique<RlsClient>(server.port());
                client->health("");  // the connection is made before any call is timed
                return client;
            },
            [&](std::unique_ptr<RlsClient>& client, int c, int i) {
                Seen x;
                x.key = keys[(c + i) % 3];
                const auto a = client->ask("drill", {{{x.key, "c" + std::to_string(c)}}});
                x.grpcCode = a.status.error_code();
                if (a.status.ok()) {
                    x.code = a.response.overall_code();
                    x.remaining = a.response.statuses(0).limit_remaining();
                }
                return x;
            },
            &seen);
        QVERIFY(times.allReady && times.allDone);
        const auto continuedAt = times.continuedAt;

        // Each answer is Redis' decision or the rule's answer to a store error, never anything
        // else; while Redis is stopped, only the latter. (While it runs, a call of a busy
        // machine may still pass the 15 ms bound: the rule answers it too, and it is counted.)
        std::int64_t slowest[kDrillPhases] = {0, 0, 0};
        int decided[kDrillPhases] = {0, 0, 0}, storeErrors[kDrillPhases] = {0, 0, 0};
        int failedOpen = 0, denied = 0, unavailable = 0;
        for (int c = 0; c < kClients; ++c) {
            for (const Seen& one : seen[c]) {
                slowest[one.phase] = std::max(slowest[one.phase], one.micros);
                bool byRedis = false;
                if (one.key == "open") {
                    QCOMPARE(one.grpcCode, 0);
                    QCOMPARE(one.code, int(rlsv3::RateLimitResponse::OK));
                    byRedis = one.remaining < 1000u;  // failed open: nothing counted
                    if (!byRedis) ++failedOpen;
                } else if (one.key == "deny") {
                    QCOMPARE(one.grpcCode, 0);
                    byRedis = one.code == rlsv3::RateLimitResponse::OK;
                    if (!byRedis) ++denied;
                } else if (one.grpcCode == 0) {
                    QCOMPARE(one.code, int(rlsv3::RateLimitResponse::OK));
                    byRedis = true;
                } else {
                    QCOMPARE(one.grpcCode, int(grpc::StatusCode::UNAVAILABLE));
                    ++unavailable;
                }
                ++(byRedis ? decided : storeErrors)[one.phase];
            }
        }
        QCOMPARE(decided[kStoppedPhase], 0);
        QVERIFY(decided[kRunning] > 0);
        for (int p : {kRunning, kStoppedPhase, kContinued}) {
            QVERIFY2(slowest[p] <= (15 + 20) * 1000,
                     qPrintable(
                         QString("a call took %1 ms (phase %2)").arg(slowest[p] / 1000.0).arg(p)));
        }
        QVERIFY(failedOpen > 0 && denied > 0 && unavailable > 0);
        qInfo(
            "calls decided by Redis / answered by the store-error rule: before %d / %d, while "
            "stopped %d / %d, after %d / %d",
            decided[kRunning], storeErrors[kRunning], decided[kStoppedPhase],
            storeErrors[kStoppedPhase], decided[kContinued], storeErrors[kContinued]);
        // After SIGCONT Redis counts again once the store's backoff has run out: a key of its own
        // goes from 999 down.
        RlsClient probe(server.port());
        RlsClient::Answer after;
        const auto deadline = SteadyClock::now() + std::chrono::seconds(5);
        do {
            after = probe.ask("drill", {{{"fail", "after"}}});
        } while (!after.status.ok() && SteadyClock::now() < deadline);
        qInfo(
            "Redis stopped %lld ms; slowest call before %.1f ms, while stopped %.1f ms, after "
            "%.1f ms; while stopped: %d failed open, %d denied, %d unavailable; Redis decided "
            "again %lld ms after SIGCONT",
            static_cast<long long>(drill.stopped.count()), slowest[kRunning] / 1000.0,
            slowest[kStoppedPhase] / 1000.0, slowest[kContinued] / 1000.0, failedOpen, denied,
            unavailable,
            static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                       SteadyClock::now() - continuedAt)
                                       .count()));
        QVERIFY2(after.status.ok(), after.status.error_message().c_str());
        QCOMPARE(after.response.statuses(0).limit_remaining(), 999u);
    }
};

QTEST_APPLESS_MAIN(TestRlsGrpcRedis)
#include "tst_rls_grpc_redis.moc"
