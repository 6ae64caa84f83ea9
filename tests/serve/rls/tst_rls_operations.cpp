// Operating the rate limit service: grpc.health.v1 Check, the drain (health NOT_SERVING at once,
// calls in flight answered), the Prometheus counters per domain and rule with their bounded
// labels, the reload drill (a valid configuration keeps the counters of unchanged descriptors;
// one with errors keeps the running configuration, says why at FILE:LINE:COLUMN in the answer
// and the log), and one process serving a policy over HTTP and the rate limit service over
// gRPC on one store and one admin listener.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>
#include <thread>

#include "fixtures/rls_fixture.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

constexpr const char* kRl = R"(domain: rl
descriptors:
  - key: key1
    value: value1
    rate_limit: {unit: second, requests_per_unit: 3, name: first}
  - key: shadowed
    value: s
    shadow_mode: true
    rate_limit: {unit: minute, requests_per_unit: 1}
)";
constexpr const char* kOther = R"(domain: other
descriptors:
  - key: k
    value: v
    rate_limit: {unit: day, requests_per_unit: 5}
)";
const RlsFiles kConfig = {{"rl.yaml", kRl}, {"other.yaml", kOther}};

constexpr int kServing = 1;
constexpr int kNotServing = 2;

HttpAnswer adminCall(std::uint16_t port, const std::string& method, const std::string& path) {
    RawClient c(port);
    c.send(method + " " + path + " HTTP/1.1\r\nHost: admin\r\nContent-Length: 0\r\n\r\n");
    return c.read(10'000);
}

// The value of the sample line that starts with `series` ("name{labels}"), or -1.
double metric(const std::string& exposition, const std::string& series) {
    const std::string start = "\n" + series + " ";
    const std::size_t at = exposition.find(start);
    if (at == std::string::npos) return -1;
    return std::stod(exposition.substr(at + start.size()));
}

QJsonObject json(const std::string& body) {
    return QJsonDocument::fromJson(QByteArray::fromStdString(body)).object();
}

}  // namespace

class TestRlsOperations : public QObject {
    Q_OBJECT

private slots:
    // The server ("") and the rate limit service by either name are SERVING; other names are
    // NOT_FOUND, as the health protocol asks.
    void healthCheck_data() {
        QTest::addColumn<QString>("service");
        QTest::addColumn<int>("status");
        QTest::newRow("server") << "" << kServing;
        QTest::newRow("full name") << "envoy.service.ratelimit.v3.RateLimitService" << kServing;
        QTest::newRow("original's name") << "ratelimit" << kServing;
        QTest::newRow("unknown") << "payments" << -1;
    }
    void healthCheck() {
        QFETCH(QString, service);
        QFETCH(int, status);
        RlsSidecarUnderTest server(kConfig);
        QVERIFY2(server.sidecar, server.error.c_str());
        RlsClient client(server.port());
        grpc::Status call;
        QCOMPARE(client.health(service.toStdString(), &call), status);
        if (status < 0) QCOMPARE(call.error_code(), grpc::StatusCode::NOT_FOUND);
    }

    // SIGTERM's drain: health turns NOT_SERVING (and /readyz 503) at once, while the listener
    // keeps answering for its grace; a call in flight gets its answer; once cut, calls fail
    // UNAVAILABLE, which Envoy's filter treats by its failure mode.
    void drainAnswersCallsInFlight() {
        RlsSidecarUnderTest server(kConfig, [](serve::SidecarOptions& o) {
            o.http.drainIdleGrace = 60 * kNanosPerSecond;  // the test ends it with cut()
        });
        QVERIFY2(server.sidecar, server.error.c_str());
        RlsClient client(server.port());
        QCOMPARE(client.health(""), kServing);

        server.gate().holdDecisions();
        RlsClient::Answer inFlight;
        std::thread caller([&] { inFlight = client.ask("rl", {{{"key1", "value1"}}}); });
        QVERIFY(server.gate().waitHeld(1));
        server.sidecar->drain();
        QCOMPARE(client.health(""), kNotServing);
        QCOMPARE(adminCall(server.adminPort(), "GET", "/readyz").status, 503);
        server.gate().release();
        caller.join();
        QVERIFY2(inFlight.status.ok(), inFlight.status.error_message().c_str());
        QCOMPARE(inFlight.response.statuses(0).limit_remaining(), 2u);
        // Still in the grace: answered.
        QVERIFY(client.ask("rl", {{{"key1", "value1"}}}).status.ok());

        server.sidecar->cut();
        server.sidecar->wait();
        const auto after = client.ask("rl", {{{"key1", "value1"}}}, 0);
        QCOMPARE(after.status.error_code(), grpc::StatusCode::UNAVAILABLE);
        QVERIFY(server.logged("\"event\":\"draining\""));
        QVERIFY(server.logged("\"event\":\"stopped\""));
        server.sidecar.reset();
    }

    // The original's counters per domain and rule, with its arithmetic (80 % near the limit),
    // the answers' codes and the calls' histogram.
    void countersPerRule() {
        RlsSidecarUnderTest server(kConfig);
        QVERIFY2(server.sidecar, server.error.c_str());
        RlsClient client(server.port());
        for (int i = 0; i < 4; ++i)
            QVERIFY(client.ask("rl", {{{"key1", "value1"}}}).status.ok());
        for (int i = 0; i < 2; ++i)
            QVERIFY(client.ask("rl", {{{"shadowed", "s"}}}).status.ok());
        QVERIFY(client.ask("nowhere", {{{"a", "b"}}}).status.ok());
        QCOMPARE(client.ask("", {{{"a", "b"}}}).status.error_code(), grpc::StatusCode::UNKNOWN);
        QCOMPARE(client.health(""), kServing);

        const HttpAnswer m = adminCall(server.adminPort(), "GET", "/metrics");
        QCOMPARE(m.status, 200);
        const std::string& text = m.body;
        const std::string key1 = "{domain=\"rl\",descriptor=\"key1_value1\"}";
        const std::string shadow = "{domain=\"rl\",descriptor=\"shadowed_s\"}";
        // 3 a second, four hits: within 3; near (above 2) 1; over 1.
        QCOMPARE(metric(text, "ratelab_rls_total_hits_total" + key1), 4.0);
        QCOMPARE(metric(text, "ratelab_rls_within_limit_total" + key1), 3.0);
        QCOMPARE(metric(text, "ratelab_rls_near_limit_total" + key1), 1.0);
        QCOMPARE(metric(text, "ratelab_rls_over_limit_total" + key1), 1.0);
        QCOMPARE(metric(text, "ratelab_rls_shadow_mode_total" + key1), 0.0);
        // 1 a minute in shadow mode, two hits: the second over, answered OK, counted as shadow.
        QCOMPARE(metric(text, "ratelab_rls_total_hits_total" + shadow), 2.0);
        QCOMPARE(metric(text, "ratelab_rls_over_limit_total" + shadow), 1.0);
        QCOMPARE(metric(text, "ratelab_rls_shadow_mode_total" + shadow), 1.0);
        // A made-up domain or descriptor never becomes a label.
        QVERIFY(text.find("nowhere") == std::string::npos);
        QCOMPARE(metric(text, "ratelab_rls_answers_total{overall_code=\"OK\"}"), 6.0);
        QCOMPARE(metric(text, "ratelab_rls_answers_total{overall_code=\"OVER_LIMIT\"}"), 1.0);
        const std::string rls =
            "ratelab_grpc_calls_total{service=\"envoy.service.ratelimit.v3.RateLimitService\","
            "method=\"ShouldRateLimit\",code=";
        QCOMPARE(metric(text, rls + "\"OK\"}"), 7.0);
        QCOMPARE(metric(text, rls + "\"UNKNOWN\"}"), 1.0);
        QCOMPARE(metric(text,
                        "ratelab_grpc_calls_total{service=\"grpc.health.v1.Health\","
                        "method=\"Check\",code=\"OK\"}"),
                 1.0);
        QCOMPARE(
            metric(text, "ratelab_grpc_call_duration_seconds_count{method=\"ShouldRateLimit\"}"),
            8.0);
        QCOMPARE(metric(text,
                        "ratelab_grpc_call_duration_seconds_bucket{method="
                        "\"ShouldRateLimit\",le=\"+Inf\"}"),
                 8.0);
        QCOMPARE(metric(text, "ratelab_rls_config_reloads_total{result=\"success\"}"), 1.0);
    }

    // More (domain, rule) pairs than kMaxRuleLabels (rules named after request values, as
    // detailed_metric does): the excess is counted under "(other)", the exposition stays
    // bounded.
    void ruleLabelsAreBounded() {
        serve::RlsMetrics metrics;
        const std::uint32_t n = serve::RlsMetrics::kMaxRuleLabels + 904;
        for (std::uint32_t i = 0; i < n; ++i) {
            const std::string key = "api.user_" + std::to_string(i);
            serve::rls::RlsHit hit;
            hit.domain = "api";
            hit.statsKey = key;
            hit.requestsPerUnit = 10;
            hit.hits = 1;
            metrics.onHit(hit);
        }
        std::string text;
        metrics.render(text);
        std::size_t lines = 0;
        for (std::size_t at = 0;
             (at = text.find("\nratelab_rls_total_hits_total{", at)) != std::string::npos; ++at)
            ++lines;
        QCOMPARE(lines, std::size_t(serve::RlsMetrics::kMaxRuleLabels + 1));
        QCOMPARE(
            metric(text, "ratelab_rls_total_hits_total{domain=\"(other)\",descriptor=\"(other)\"}"),
            904.0);
        QCOMPARE(metric(text, "ratelab_rls_total_hits_total{domain=\"api\",descriptor=\"user_7\"}"),
                 1.0);
    }

    // The reload drill: POST /-/reload with a valid change keeps the counters of unchanged
    // descriptors and serves the new rule; a file with errors is refused with its
    // FILE:LINE:COLUMN in the answer and the log, and everything keeps running as it was.
    void reloadDrill() {
        RlsSidecarUnderTest server(kConfig);
        QVERIFY2(server.sidecar, server.error.c_str());
        RlsClient client(server.port());
        QCOMPARE(client.ask("rl", {{{"key1", "value1"}}}).response.statuses(0).limit_remaining(),
                 2u);

        const std::string fresh = server.file("fresh.yaml");
        writeText(fresh,
                  "domain: fresh\ndescriptors:\n  - key: k\n    value: v\n"
                  "    rate_limit: {unit: minute, requests_per_unit: 2}\n");
        HttpAnswer answer = adminCall(server.adminPort(), "POST", "/-/reload");
        QCOMPARE(answer.status, 200);
        QJsonObject body = json(answer.body);
        QCOMPARE(body.value("reloaded").toBool(), true);
        QCOMPARE(body.value("config").toString(), QString("rls"));
        QCOMPARE(body.value("generation").toInt(), 2);
        QCOMPARE(body.value("kept").toArray(), QJsonArray({"other", "rl"}));
        QCOMPARE(body.value("fresh").toArray(), QJsonArray({"fresh"}));
        // key1's rule is unchanged: its window goes on counting.
        QCOMPARE(client.ask("rl", {{{"key1", "value1"}}}).response.statuses(0).limit_remaining(),
                 1u);
        QCOMPARE(client.ask("fresh", {{{"k", "v"}}}).response.statuses(0).limit_remaining(), 1u);

        // Two problems: every one is reported, and nothing changes.
        writeText(fresh,
                  "domain: fresh\ndescriptors:\n  - key: k\n    value: v\n"
                  "    rate_limit: {unit: fortnight, requests_per_unit: 2}\n");
        writeText(server.file("rl.yaml"), std::string(kRl) + "  - key: key9\n    ratelimit: {}\n");
        answer = adminCall(server.adminPort(), "POST", "/-/reload");
        QCOMPARE(answer.status, 422);
        body = json(answer.body);
        QCOMPARE(body.value("reloaded").toBool(), false);
        QCOMPARE(body.value("generation").toInt(), 2);
        QVERIFY(body.value("error").toString().contains("the running one stays"));
        const QJsonArray diagnostics = body.value("diagnostics").toArray();
        QCOMPARE(diagnostics.size(), 2);
        QStringList texts;
        for (const QJsonValue& d : diagnostics)
            texts << d.toString();
        QCOMPARE(texts.at(0), QString::fromStdString(fresh) +
                                  ":5:24: error: invalid rate limit unit 'fortnight' (second, "
                                  "minute, hour, day, week, month or year) (at "
                                  "/descriptors/0/rate_limit/unit)");
        QCOMPARE(texts.at(1), QString::fromStdString(server.file("rl.yaml")) +
                                  ":11:5: error: config error, unknown key 'ratelimit'; did you "
                                  "mean 'rate_limit'?");
        QVERIFY(server.logged("\"event\":\"rls_diagnostic\",\"diagnostic\":\"" + fresh +
                              ":5:24: error: invalid rate limit unit 'fortnight'"));
        QVERIFY(server.logged("\"event\":\"rls_reload_failed\",\"trigger\":\"admin\""));
        // Still generation 2: its rules, its counters.
        QCOMPARE(client.ask("rl", {{{"key1", "value1"}}}).response.statuses(0).limit_remaining(),
                 0u);
        QCOMPARE(client.ask("fresh", {{{"k", "v"}}}).response.statuses(0).limit_remaining(), 0u);
        QCOMPARE(client.ask("other", {{{"k", "v"}}}).response.statuses(0).limit_remaining(), 4u);

        // SIGHUP takes the same path, and says so in the log.
        writeText(server.file("rl.yaml"), kRl);
        ::unlink(fresh.c_str());
        const auto results = server.sidecar->reload("sighup");
        QCOMPARE(results.size(), std::size_t(1));
        QVERIFY(results[0].ok);
        QVERIFY(
            server.logged("\"event\":\"rls_reloaded\",\"trigger\":\"sighup\",\"generation\":3"));
        QCOMPARE(client.ask("fresh", {{{"k", "v"}}}).response.statuses(0).has_current_limit(),
                 false);
        const HttpAnswer m = adminCall(server.adminPort(), "GET", "/metrics");
        QCOMPARE(metric(m.body, "ratelab_rls_config_reloads_total{result=\"success\"}"), 3.0);
        QCOMPARE(metric(m.body, "ratelab_rls_config_reloads_total{result=\"failure\"}"), 1.0);
    }

    // A configuration with errors at start: no sidecar, and every problem at FILE:LINE:COLUMN.
    void startRefusesAConfigurationWithErrors() {
        RlsSidecarUnderTest server(
            {{"a.yaml", "domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unit: sec}\n"},
             {"b.yaml", "domain: b\ndescriptors:\n  - key: k\n    ratelimit: {}\n"}});
        QVERIFY(!server.sidecar);
        QVERIFY2(server.error.find("/a.yaml:4:24: error: invalid rate limit unit 'sec'") !=
                     std::string::npos,
                 server.error.c_str());
        QVERIFY2(server.error.find("/b.yaml:4:5: error: config error, unknown key 'ratelimit'") !=
                     std::string::npos,
                 server.error.c_str());
    }

    // One process, both front doors: a policy over HTTP and the rate limit service over gRPC,
    // on one store, one admin listener, one reload.
    void oneProcessServesBoth() {
        QTemporaryDir dir;
        const std::string policy = dir.filePath("policy.json").toStdString();
        writeText(policy, policyText({{"api", "/", 2}}));
        RlsSidecarUnderTest server(kConfig, [&](serve::SidecarOptions& o) {
            o.policyPath = policy;
            o.http.listen = {*serve::ListenAddress::parse("127.0.0.1:0", nullptr)};
            o.http.threads = 1;
        });
        QVERIFY2(server.sidecar, server.error.c_str());
        RawClient http(server.sidecar->addresses().front().port);
        http.send(get("/x"));
        QCOMPARE(http.read().status, 200);
        RlsClient client(server.port());
        QVERIFY(client.ask("rl", {{{"key1", "value1"}}}).status.ok());

        const HttpAnswer m = adminCall(server.adminPort(), "GET", "/metrics");
        QVERIFY(m.body.find("\nratelab_decisions_total{policy=\"api\",outcome=\"passed\"} 1") !=
                std::string::npos);
        QCOMPARE(metric(m.body,
                        "ratelab_rls_total_hits_total{domain=\"rl\",descriptor="
                        "\"key1_value1\"}"),
                 1.0);
        const HttpAnswer reload = adminCall(server.adminPort(), "POST", "/-/reload");
        QCOMPARE(reload.status, 200);
        const QJsonObject body = json(reload.body);
        QCOMPARE(body.value("reloaded").toBool(), true);
        const QJsonArray results = body.value("results").toArray();
        QCOMPARE(results.size(), 2);
        QCOMPARE(results.at(0).toObject().value("config").toString(), QString("policy"));
        QCOMPARE(results.at(1).toObject().value("config").toString(), QString("rls"));
        QVERIFY(server.logged("\"grpc\":\"127.0.0.1:"));
    }
};

QTEST_GUILESS_MAIN(TestRlsOperations)
#include "tst_rls_operations.moc"
