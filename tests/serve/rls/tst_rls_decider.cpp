// The decider's own features beyond the original's sequences: the RateLimit header fields,
// reloads that keep counters, the ratelab extensions (algorithms, several limits, identities
// with their budgets), the observer's counters, store errors by rule, and many threads.

#include <QtTest>

#include <atomic>
#include <memory>
#include <thread>

#include "fixtures/redis_fixture.h"
#include "ratelab/memory_store.h"
#include "ratelab/redis_store.h"
#include "rls_sequence.h"

using namespace ratelab;
using namespace ratelab::rlstest;
namespace fe = ratelab::formats::envoy;

namespace {

std::shared_ptr<const fe::RlsConfig> config(const std::string& text) {
    fe::RlsLoadResult r = fe::parseRlsConfig({{"f.yaml", text}});
    if (!r.ok()) qFatal("%s", formatDiagnostics(r.diagnostics).c_str());
    return std::make_shared<const fe::RlsConfig>(std::move(*r.config));
}

QStringList headers(const RlsResult& r) {
    QStringList out;
    for (const auto& [name, value] : r.response.headers)
        out << QString::fromStdString(name + ": " + value);
    return out;
}

RlsRequest call(const std::string& domain, std::vector<RlsEntry> entries) {
    RlsRequest r;
    r.domain = domain;
    r.descriptors.push_back({std::move(entries), std::nullopt});
    return r;
}

constexpr Nanos kT = 1'000'000 * kNanosPerSecond;  // an hour's window 800 s from its end

class Hits : public RlsObserver {
public:
    void onHit(const RlsHit& hit) override {
        lines << QString("%1 %2/%3%4%5%6")
                     .arg(QString::fromUtf8(hit.statsKey.data(), int(hit.statsKey.size())))
                     .arg(hit.hits)
                     .arg(hit.requestsPerUnit)
                     .arg(hit.overLimit ? " over" : "")
                     .arg(hit.nearLimit ? " near" : "")
                     .arg(hit.shadow ? " shadow" : "");
    }
    void onDomainNotFound(std::string_view domain) override {
        lines << "not found " + QString::fromUtf8(domain.data(), int(domain.size()));
    }
    QStringList lines;
};

}  // namespace

class TestRlsDecider : public QObject {
    Q_OBJECT

    testing::RedisServer redis_;
    int namespaces_ = 0;

    std::shared_ptr<Store> storeFor(const QString& kind) {
        if (kind == "memory") return makeMemoryStore();
        RedisStoreOptions options;
        options.urls = {redis_.url()};
        options.keyNamespace = "rlsd" + std::to_string(++namespaces_);
        options.timeSource = RedisTimeSource::Caller;
        std::string error;
        std::shared_ptr<Store> store = makeRedisStore(options, &error);
        if (!store) qFatal("%s", error.c_str());
        return store;
    }

    static void stores() {
        QTest::addColumn<QString>("store");
        QTest::newRow("memory") << "memory";
        QTest::newRow("redis") << "redis";
    }

private slots:
    void initTestCase() {
        std::string error;
        QVERIFY2(redis_.start(&error), error.c_str());
    }

    // RateLimit and RateLimit-Policy in each limit's header style, and Retry-After when over.
    void headerFields() {
        RlsDecider d(config(R"(domain: d
descriptors:
  - key: a
    rate_limit: {unit: minute, requests_per_unit: 3}
  - key: b
    rate_limit: {unit: hour, requests_per_unit: 10, name: hourly}
  - key: s
    rate_limit: {unit: hour, requests_per_unit: 1}
    shadow_mode: true
  - key: c
    rate_limit:
      unit: second
      requests_per_unit: 5
      ratelab: {headers: draft7}
)"),
                     makeMemoryStore());
        RlsRequest r = call("d", {{"a", "1"}});
        r.descriptors.push_back({{{"b", "2"}}, std::nullopt});
        r.descriptors.push_back({{{"s", "3"}}, std::nullopt});
        QCOMPARE(headers(d.decide(r, kT)),
                 QStringList({"RateLimit-Policy: \"d.a\";q=3;w=60, \"hourly\";q=10;w=3600",
                              "RateLimit: \"d.a\";r=2;t=20, \"hourly\";r=9;t=800"}));
        d.decide(r, kT);
        d.decide(r, kT);
        const RlsResult over = d.decide(r, kT + kNanosPerSecond / 2);
        QCOMPARE(over.response.overall, RlsCode::OverLimit);
        QCOMPARE(
            headers(over),
            QStringList({"RateLimit-Policy: \"d.a\";q=3;w=60, \"hourly\";q=10;w=3600",
                         "RateLimit: \"d.a\";r=0;t=20, \"hourly\";r=6;t=800", "Retry-After: 20"}));
        QCOMPARE(
            headers(d.decide(call("d", {{"c", "x"}}), kT)),
            QStringList({"RateLimit-Policy: 5;w=1", "RateLimit: limit=5, remaining=4, reset=1"}));
        QVERIFY(d.decide(call("d", {{"none", "x"}}), kT).response.headers.empty());
    }

    // A reload keeps the counters of rules whose domain, path and numbers are unchanged, on both
    // stores; a changed rule starts afresh; the previous decider may go on deciding.
    void reloadKeepsCounters_data() { stores(); }
    void reloadKeepsCounters() {
        QFETCH(QString, store);
        auto first = std::make_unique<RlsDecider>(config(R"(domain: d
descriptors:
  - key: kept
    rate_limit: {unit: minute, requests_per_unit: 10}
  - key: changed
    rate_limit: {unit: minute, requests_per_unit: 10}
  - key: moved
    value: x
    rate_limit: {unit: minute, requests_per_unit: 10}
)"),
                                                  storeFor(store));
        QString m = runSteps(*first, {"60: d kept=1+4 => OK | OK 10/minute rem 6 reset 60",
                                      "60: d changed=1+4 => OK | OK 10/minute rem 6 reset 60",
                                      "60: d moved=x+4 => OK | OK 10/minute rem 6 reset 60"});
        QVERIFY2(m.isEmpty(), qPrintable(m));
        RlsDecider second(config(R"(domain: d
descriptors:
  - key: added
    rate_limit: {unit: second, requests_per_unit: 1}
  - key: kept
    rate_limit: {unit: minute, requests_per_unit: 10}
  - key: changed
    rate_limit: {unit: minute, requests_per_unit: 12}
  - key: moved
    rate_limit: {unit: minute, requests_per_unit: 10}
)"),
                          *first);
        m = runSteps(second, {"61: d kept=1 => OK | OK 10/minute rem 5 reset 59",
                              "61: d changed=1 => OK | OK 12/minute rem 11 reset 59",
                              "61: d moved=x => OK | OK 10/minute rem 9 reset 59",
                              "61: d added=1 => OK | OK 1/second rem 0 reset 1"});
        QVERIFY2(m.isEmpty(), qPrintable(m));
        m = runSteps(*first, {"62: d kept=1 => OK | OK 10/minute rem 4 reset 58"});
        QVERIFY2(m.isEmpty(), qPrintable(m));
        first.reset();  // the store outlives the decider a reload replaced
        m = runSteps(second, {"62: d kept=1 => OK | OK 10/minute rem 3 reset 58"});
        QVERIFY2(m.isEmpty(), qPrintable(m));
    }

    // The ratelab block's algorithms, with their own reset and retry times.
    void algorithms_data() { stores(); }
    void algorithms() {
        QFETCH(QString, store);
        RlsDecider d(config(R"(domain: d
descriptors:
  - key: bucket
    rate_limit:
      unit: second
      requests_per_unit: 10
      ratelab: {algorithm: token_bucket, capacity: 20}
  - key: gcra
    rate_limit:
      unit: minute
      requests_per_unit: 60
      ratelab: {algorithm: gcra, capacity: 2}
  - key: sliding
    rate_limit:
      unit: minute
      requests_per_unit: 10
      ratelab: {algorithm: sliding_window}
)"),
                     storeFor(store));
        const QString m =
            runSteps(d, {"100: d bucket=a+20 => OK | OK 10/second rem 0 reset 2",
                         "100: d bucket=a => OVER | OVER 10/second rem 0 reset 0.1",
                         "100: d bucket=a+0 => OK | OK 10/second rem 0 reset 2",
                         "100.5: d bucket=a+5 => OK | OK 10/second rem 0 reset 2",
                         "100: d gcra=a => OK | OK 60/minute rem 1 reset 1",
                         "100: d gcra=a => OK | OK 60/minute rem 0 reset 2",
                         "100: d gcra=a => OVER | OVER 60/minute rem 0 reset 1",
                         "101: d gcra=a => OK | OK 60/minute rem 0 reset 2",
                         // the previous minute's 10 weigh 3/4 at 15 s into the next one
                         "60: d sliding=a+10 => OK | OK 10/minute rem 0 reset 120",
                         "135: d sliding=a+3 => OK | OK 10/minute rem 0 reset 105",
                         "135: d sliding=a => OVER | OVER 10/minute rem 0 reset 2.999267579"});
        QVERIFY2(m.isEmpty(), qPrintable(m));
    }

    // rate_limits: every limit charged, over when any is, answered by the refusing limit or
    // else the one closest to its limit.
    void severalLimits_data() { stores(); }
    void severalLimits() {
        QFETCH(QString, store);
        RlsDecider d(config(R"(domain: d
descriptors:
  - key: k
    rate_limits:
      - {unit: second, requests_per_unit: 10}
      - {unit: minute, requests_per_unit: 15, name: per-minute}
)"),
                     storeFor(store));
        const QString m =
            runSteps(d, {"60: d k=a+8 => OK | OK 10/second rem 2 reset 1",
                         "60.5: d k=a+2 => OK | OK 10/second rem 0 reset 1",
                         "61: d k=a+3 => OK | OK 15/minute/per-minute rem 2 reset 59",
                         "61: d k=a+3 => OVER | OVER 15/minute/per-minute rem 0 reset 59",
                         "120: d k=a => OK | OK 10/second rem 9 reset 1"});
        QVERIFY2(m.isEmpty(), qPrintable(m));
    }

    // identity: remote_address keys on the client's /64 (IPv6) or address (IPv4); a value that
    // is no address shares one bucket.
    void remoteAddress_data() { stores(); }
    void remoteAddress() {
        QFETCH(QString, store);
        RlsDecider d(config(R"(domain: d
descriptors:
  - key: remote_address
    identity: remote_address
    rate_limit: {unit: minute, requests_per_unit: 1}
)"),
                     storeFor(store));
        const QString m = runSteps(
            d, {"60: d remote_address=2001:db8:1:2::1 => OK | OK 1/minute rem 0 reset 60",
                "60: d remote_address=2001:db8:1:2:ffff::9 => OVER | OVER 1/minute rem 0 reset 60",
                "60: d remote_address=2001:db8:1:3::1 => OK | OK 1/minute rem 0 reset 60",
                "60: d remote_address=198.51.100.7 => OK | OK 1/minute rem 0 reset 60",
                "60: d remote_address=::ffff:198.51.100.7 => OVER | OVER 1/minute rem 0 reset 60",
                "60: d remote_address=198.51.100.8 => OK | OK 1/minute rem 0 reset 60",
                "60: d remote_address=garbage => OK | OK 1/minute rem 0 reset 60",
                "60: d remote_address=junk => OVER | OVER 1/minute rem 0 reset 60"});
        QVERIFY2(m.isEmpty(), qPrintable(m));
    }

    // identity: authorization hashes the credential and budgets it per client address: a
    // client minting credentials fills its 128 slots, then charges its address's own bucket.
    void authorizationBudget_data() { stores(); }
    void authorizationBudget() {
        QFETCH(QString, store);
        RlsDecider d(config(R"(domain: d
descriptors:
  - key: remote_address
    identity: remote_address
    descriptors:
      - key: authorization
        identity: authorization
        rate_limit: {unit: minute, requests_per_unit: 1}
)"),
                     storeFor(store));
        auto ask = [&](const char* peer, const std::string& credential) {
            return render(
                d.decide(call("d", {{"remote_address", peer}, {"authorization", credential}}),
                         60 * kNanosPerSecond));
        };
        const QString ok = "OK | OK 1/minute rem 0 reset 60";
        const QString over = "OVER | OVER 1/minute rem 0 reset 60";
        QCOMPARE(ask("198.51.100.7", "Bearer same"), ok);
        QCOMPARE(ask("198.51.100.7", "Bearer same"), over);
        QCOMPARE(ask("198.51.100.9", "Bearer same"), ok);  // another client, its own bucket
        for (int i = 1; i < 128; ++i)
            QCOMPARE(ask("198.51.100.7", "Bearer minted-" + std::to_string(i)), ok);
        // 128 credentials held: a new one is charged to the address's bucket, once
        QCOMPARE(ask("198.51.100.7", "Bearer minted-128"), ok);
        QCOMPARE(ask("198.51.100.7", "Bearer minted-129"), over);
        QCOMPARE(ask("198.51.100.8", "Bearer minted-129"), ok);
    }

    // What the service's counters hear: the original's stats keys, near and over.
    void observer() {
        Hits hits;
        RlsDeciderOptions options;
        options.observer = &hits;
        RlsDecider d(config(R"(domain: d
descriptors:
  - key: a
    value: b
    descriptors:
      - key: c
        rate_limit: {unit: minute, requests_per_unit: 5}
  - key: unspec
    rate_limit: {unit: minute, requests_per_unit: 2}
    detailed_metric: true
  - key: s
    rate_limit: {unit: minute, requests_per_unit: 1}
    shadow_mode: true
  - key: route
    value_to_metric: true
    descriptors:
      - key: http_method
        value_to_metric: true
        descriptors:
          - key: subject_id
            rate_limit: {unit: minute, requests_per_unit: 9}
  - key: service
    value: svc/*
    share_threshold: true
    descriptors:
      - key: endpoint
        rate_limit: {unit: minute, requests_per_unit: 9}
        detailed_metric: true
)"),
                     makeMemoryStore(), options);
        const QString m = runSteps(d, {"60: d a=b,c=x+3 => OK | OK 5/minute rem 2 reset 60",
                                       "60: d a=b,c=y+5 => OK | OK 5/minute rem 0 reset 60",
                                       "60: d a=b,c=y => OVER | OVER 5/minute rem 0 reset 60",
                                       "60: d unspec=v1 ; s=1+2 => OK | OK 2/minute rem 1 reset 60 "
                                       "| OK 1/minute rem 0 reset 60",
                                       "60: nowhere a=b => OK | OK",
                                       "60: d route=draw,http_method=GET,subject_id=123 => OK | OK "
                                       "9/minute rem 8 reset 60",
                                       "60: d route=,http_method=GET,subject_id=1 => OK | OK "
                                       "9/minute rem 8 reset 60",
                                       "60: d service=svc/a,endpoint=get => OK | OK 9/minute rem 8 "
                                       "reset 60"});
        QVERIFY2(m.isEmpty(), qPrintable(m));
        QCOMPARE(hits.lines,
                 QStringList({"d.a_b.c 3/5", "d.a_b.c 5/5 near", "d.a_b.c 1/5 over",
                              "d.unspec_v1 1/2", "d.s 2/1 over shadow", "not found nowhere",
                              "d.route_draw.http_method_GET.subject_id 1/9",
                              "d.route.http_method_GET.subject_id 1/9",
                              "d.service_svc/*.endpoint_get 1/9"}));
    }

    // A store that cannot be reached: the call fails (the original's answer), or the limit
    // passes, is over, or is decided on this process's share, as the rule says.
    void storeErrors_data() {
        QTest::addColumn<int>("rule");
        QTest::addColumn<QString>("expected");
        QTest::newRow("fail the call")
            << int(RlsStoreErrorRule::FailCall) << "ERROR store error: redis store:";
        QTest::newRow("fail open")
            << int(RlsStoreErrorRule::FailOpen) << "OK | OK 4/minute rem 4 reset 60";
        QTest::newRow("deny") << int(RlsStoreErrorRule::Deny)
                              << "OVER | OVER 4/minute rem 0 reset 60";
        QTest::newRow("local share")
            << int(RlsStoreErrorRule::Local) << "OK | OK 4/minute rem 1 reset 60";
    }
    void storeErrors() {
        QFETCH(int, rule);
        QFETCH(QString, expected);
        testing::RedisServer stopped;
        std::string error;
        testing::RedisServer::Options tcp;
        tcp.tcp = true;
        QVERIFY2(stopped.start(tcp, &error), error.c_str());
        const std::string url = stopped.url();
        stopped.kill();
        RedisStoreOptions redis;
        redis.urls = {url};
        redis.timeout = 50 * kNanosPerMilli;
        redis.timeSource = RedisTimeSource::Caller;
        std::shared_ptr<Store> store = makeRedisStore(redis, &error);
        QVERIFY(store);
        RlsDeciderOptions options;
        options.onStoreError = static_cast<RlsStoreErrorRule>(rule);
        options.replicas = 2;
        RlsDecider d(config("domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, "
                            "requests_per_unit: 4}\n"),
                     store, options);
        const RlsResult r = d.decide(call("d", {{"k", "v"}}), 60 * kNanosPerSecond);
        QVERIFY2(render(r).startsWith(expected), qPrintable(render(r)));
        if (!r.ok()) QCOMPARE(r.error.code, GrpcCode::Unavailable);
    }

    // A batch given no store time (a listener's queued calls whose store timeout has passed)
    // sends nothing: each limit is decided by its rule as for an unreachable store, and the store
    // has counted nothing afterwards.
    void noStoreTimeLeft_data() {
        QTest::addColumn<int>("rule");
        QTest::addColumn<QString>("expected");
        QTest::newRow("fail the call") << int(RlsStoreErrorRule::FailCall)
                                       << "ERROR store error: no time left of the store timeout";
        QTest::newRow("fail open")
            << int(RlsStoreErrorRule::FailOpen) << "OK | OK 4/minute rem 4 reset 60";
        QTest::newRow("deny") << int(RlsStoreErrorRule::Deny)
                              << "OVER | OVER 4/minute rem 0 reset 60";
        QTest::newRow("local share")
            << int(RlsStoreErrorRule::Local) << "OK | OK 4/minute rem 1 reset 60";
    }
    void noStoreTimeLeft() {
        QFETCH(int, rule);
        QFETCH(QString, expected);
        RlsDeciderOptions options;
        options.onStoreError = static_cast<RlsStoreErrorRule>(rule);
        options.replicas = 2;
        RlsDecider d(config("domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, "
                            "requests_per_unit: 4}\n"),
                     makeMemoryStore(), options);
        const RlsRequest requests[] = {call("d", {{"k", "v"}}), call("d", {{"k", "w"}})};
        RlsResult out[2];
        d.decideBatch(requests, 60 * kNanosPerSecond, out, 0);
        for (const RlsResult& r : out)
            QCOMPARE(render(r), expected);
        d.decideBatch(requests, 60 * kNanosPerSecond, out, 15 * kNanosPerMilli);
        QCOMPARE(render(out[0]), QString("OK | OK 4/minute rem 3 reset 60"));
    }

    // Many threads on one key: exactly the limit passes (each charge is atomic in the store).
    void threads() {
        RlsDecider d(config("domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, "
                            "requests_per_unit: 1000}\n"),
                     makeMemoryStore());
        std::atomic<int> passed{0};
        std::vector<std::thread> workers;
        for (int t = 0; t < 4; ++t) {
            workers.emplace_back([&] {
                const RlsRequest r = call("d", {{"k", "v"}});
                for (int i = 0; i < 500; ++i) {
                    if (d.decide(r, kT).response.overall == RlsCode::Ok) ++passed;
                }
            });
        }
        for (std::thread& w : workers)
            w.join();
        QCOMPARE(passed.load(), 1000);
    }
};

QTEST_APPLESS_MAIN(TestRlsDecider)
#include "tst_rls_decider.moc"
