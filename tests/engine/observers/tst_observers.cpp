// The ready-made observers (engine/src/observers.cpp) behind a real Limiter.

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "fixtures/limiter_fixture.h"
#include "ratelab/json_log_observer.h"
#include "ratelab/policy_counters.h"

using namespace ratelab;
using namespace ratelab::testing;

class TestObservers : public QObject {
    Q_OBJECT

private slots:
    void countersPerPolicyAndOutcome() {
        PolicyCounters counters;
        LimiterOptions options;
        options.observer = &counters;
        Policy shadow = tokenBucketPolicy("shadow", 1, 1.0);
        shadow.mode = PolicyMode::Shadow;
        Limiter limiter(policySet({shadow, tokenBucketPolicy("api", 2, 1.0)}), makeMemoryStore({}),
                        options);
        TestRequest request;
        request.from("192.0.2.1");
        for (int i = 0; i < 5; ++i)
            limiter.decide(request.view(), 0);
        TestRequest anonymous;
        limiter.decide(anonymous.view(), 0);
        // shadow: 1 pass, 4 over the limit; api: 2 pass, 3 throttled; then the anonymous request
        // has no identity under either (the shadow policy reports it and lets it go on).
        QCOMPARE(counters.count("shadow", PolicyOutcome::ShadowThrottled), std::int64_t(4));
        QCOMPARE(counters.count("api", PolicyOutcome::Throttled), std::int64_t(3));
        QCOMPARE(counters.count("shadow", PolicyOutcome::NoIdentity), std::int64_t(1));
        QCOMPARE(counters.count("api", PolicyOutcome::NoIdentity), std::int64_t(1));
        QCOMPARE(counters.count("api", PolicyOutcome::Passed),
                 std::int64_t(0));  // passes are no events
        QCOMPARE(counters.snapshot().size(), std::size_t(4));
    }

    // A flood writes at most N lines per policy per second of event time, then says how many
    // it left out.
    void jsonLogIsStructuredAndThrottled() {
        std::vector<std::string> lines;
        JsonLogObserver log([&](std::string_view line) { lines.emplace_back(line); }, 3);
        LimiterOptions options;
        options.observer = &log;
        options.keyHashSecret = 7;
        Limiter limiter(policySet({tokenBucketPolicy("api", 1, 0.001)}), makeMemoryStore({}),
                        options);
        TestRequest request;
        request.from("192.0.2.1").header("Authorization", "Bearer hunter2");
        for (int i = 0; i < 101; ++i)
            limiter.decide(request.view(), 0);  // 100 refusals in second 0
        QCOMPARE(lines.size(), std::size_t(3));
        limiter.decide(request.view(), kNanosPerSecond);
        QCOMPARE(lines.size(), std::size_t(4));
        QJsonObject first = QJsonDocument::fromJson(QByteArray::fromStdString(lines[0])).object();
        QCOMPARE(first.value("event").toString(), QString("limit_hit"));
        QCOMPARE(first.value("policy").toString(), QString("api"));
        QCOMPARE(first.value("outcome").toString(), QString("throttled"));
        QCOMPARE(first.value("retry_after_ms").toInteger(), qint64(1'000'000));
        QCOMPARE(first.value("key").toString().size(), 16);
        QJsonObject later = QJsonDocument::fromJson(QByteArray::fromStdString(lines[3])).object();
        QCOMPARE(later.value("suppressed_before").toInteger(), qint64(97));
        for (const std::string& line : lines)
            QVERIFY(line.find("hunter2") == std::string::npos);
    }

    // Lines carry an RFC 3339 wall-clock time and a level, and name keys with HMAC-SHA-256 under
    // the secret given: the same key, the same name, computable by anyone holding the secret
    // (here checked against Python's hmac module), never by anyone else.
    void jsonLogTimeLevelAndKeyNames() {
        std::vector<std::string> lines;
        const KeyNamer namer("a secret of sixteen+ bytes");
        JsonLogOptions options;
        options.keyNamer = &namer;
        options.wallClock = [] { return Nanos(1'700'000'000'123'456'789); };
        JsonLogObserver log([&](std::string_view line) { lines.emplace_back(line); }, options);
        LimiterOptions limiterOptions;
        limiterOptions.observer = &log;
        Policy peer = tokenBucketPolicy("api", 1, 0.001);
        peer.key.source = KeySource::Peer;
        Limiter limiter(policySet({peer}), makeMemoryStore({}), limiterOptions);
        TestRequest request;
        request.from("192.0.2.1");
        limiter.decide(request.view(), 0);
        limiter.decide(request.view(), 0);
        QCOMPARE(lines.size(), std::size_t(1));
        const QJsonObject line =
            QJsonDocument::fromJson(QByteArray::fromStdString(lines[0])).object();
        QCOMPARE(line.value("time").toString(), QString("2023-11-14T22:13:20.123Z"));
        QCOMPARE(line.value("level").toString(), QString("info"));
        // python3 -c "import hmac,hashlib; print(hmac.new(b'a secret of sixteen+ bytes',
        //             b'ip:192.0.2.1', hashlib.sha256).hexdigest()[:16])"
        QCOMPARE(line.value("key").toString(), QString("36837845836d2027"));
        QCOMPARE(namer.name("ip:192.0.2.1"), std::string("36837845836d2027"));
        QVERIFY(lines[0].find("192.0.2.1") == std::string::npos);
        QVERIFY(KeyNamer().name("ip:192.0.2.1") != KeyNamer().name("ip:192.0.2.1"));
        QCOMPARE(JsonLogObserver::levelOf(PolicyOutcome::FailedOpen), std::string_view("warn"));
        QCOMPARE(JsonLogObserver::levelOf(PolicyOutcome::StoreRefused), std::string_view("error"));
    }
};

QTEST_APPLESS_MAIN(TestObservers)
#include "tst_observers.moc"
