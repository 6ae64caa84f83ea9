// The Envoy local rate limit filter reader: the filter-level bucket for the whole listener,
// per-route and per-virtual-host buckets for their routes, every percentage, duration and
// error at its line and column; and an imported bucket deciding Envoy's continuous refill
// (max_tokens, then one token every fill_interval / tokens_per_fill) on a manual clock.

#include <QtTest>

#include "fixtures/import_fixture.h"
#include "fixtures/limiter_fixture.h"
#include "formats/import/envoy_local/envoy_local_import.h"
#include "formats/import/policy_import.h"
#include "ratelab/memory_store.h"

using namespace ratelab;
using namespace ratelab::formats;
using namespace ratelab::formats::envoy_local;
using namespace ratelab::testing;

namespace {

std::string lines(const std::string& text) {
    ImportLog log;
    log.addFile("envoy.yaml");
    envoy::YamlParseResult parsed = envoy::parseYaml(text);
    const std::optional<PolicyJson> file = mapEnvoyLocalConfig(parsed.root, log);
    return file ? policyLines(*file) : formatDiagnostics(log.take());
}

// An HTTP connection manager with the local rate limit filter `filter` (its typed_config's
// fields, indented 14) and one route on `prefix` with per-route fields `route` (indented 20).
std::string config(const std::string& filter, const std::string& route) {
    return "static_resources:\n"
           "  listeners:\n"
           "  - name: main\n"
           "    filter_chains:\n"
           "    - filters:\n"
           "      - name: envoy.filters.network.http_connection_manager\n"
           "        typed_config:\n"
           "          stat_prefix: ingress\n"
           "          route_config:\n"
           "            virtual_hosts:\n"
           "            - name: all\n"
           "              domains: [\"*\"]\n"
           "              routes:\n"
           "              - name: api\n"
           "                match: {prefix: \"/api/\"}\n"
           "                route: {cluster: api}\n" +
           (route.empty() ? std::string()
                          : "                typed_per_filter_config:\n"
                            "                  envoy.filters.http.local_ratelimit:\n"
                            "                    \"@type\": type.googleapis.com/envoy.extensions."
                            "filters.http.local_ratelimit.v3.LocalRateLimit\n" +
                                route) +
           "          http_filters:\n"
           "          - name: envoy.filters.http.local_ratelimit\n"
           "            typed_config:\n"
           "              \"@type\": type.googleapis.com/envoy.extensions.filters.http."
           "local_ratelimit.v3.LocalRateLimit\n"
           "              stat_prefix: local\n" +
           filter + "          - name: envoy.filters.http.router\n";
}

const std::string kOn =
    "filter_enabled: {default_value: {numerator: 100}}\n"
    "filter_enforced: {default_value: {numerator: 100}}\n";

std::string indent(const std::string& text, int n) {
    std::string out;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t end = text.find('\n', start);
        out += std::string(n, ' ') + text.substr(start, end - start + 1);
        start = end + 1;
    }
    return out;
}

}  // namespace

class TestEnvoyLocalImport : public QObject {
    Q_OBJECT

private slots:
    void mapping_data() {
        QTest::addColumn<QString>("filter");
        QTest::addColumn<QString>("route");
        QTest::addColumn<QString>("policies");
        const QString one = "{\"source\":\"composite\",\"parts\":[\"route\"]}";
        QTest::newRow("listener bucket")
            << QString::fromStdString(indent(
                   "token_bucket: {max_tokens: 10, tokens_per_fill: 5, fill_interval: 1s}\n" + kOn,
                   14))
            << ""
            << "ingress / token_bucket capacity=10 refill_per_second=5.0 key=" + one + "\n";
        QTest::newRow("route bucket, listener without one")
            << QString::fromStdString(indent(kOn, 14))
            << QString::fromStdString(
                   indent("token_bucket: {max_tokens: 3, fill_interval: 0.5s}\n" + kOn, 20))
            << "api /api/ token_bucket capacity=3 refill_per_second=2.0 key=" + one + "\n";
        QTest::newRow("both, duration as a map, per mille")
            << QString::fromStdString(
                   indent("token_bucket: {max_tokens: 100, tokens_per_fill: 100, fill_interval: "
                          "{seconds: 60}}\n" +
                              kOn,
                          14))
            << QString::fromStdString(
                   indent("token_bucket: {max_tokens: 1, fill_interval: 2s}\n"
                          "filter_enabled: {default_value: {numerator: 10000, denominator: "
                          "TEN_THOUSAND}}\n",
                          20))
            << "ingress / token_bucket capacity=100 refill_per_second=1.6666666666666667 key=" +
                   one + "\napi /api/ token_bucket capacity=1 refill_per_second=0.5 key=" + one +
                   " shadow\n";
        QTest::newRow("disabled listener bucket")
            << QString::fromStdString(
                   indent("token_bucket: {max_tokens: 10, fill_interval: 1s}\n", 14))
            << QString::fromStdString(
                   indent("token_bucket: {max_tokens: 2, fill_interval: 1s}\n" + kOn, 20))
            << "api /api/ token_bucket capacity=2 refill_per_second=1.0 key=" + one + "\n";
    }

    void mapping() {
        QFETCH(QString, filter);
        QFETCH(QString, route);
        QFETCH(QString, policies);
        QCOMPARE(QString::fromStdString(lines(config(filter.toStdString(), route.toStdString()))),
                 policies);
    }

    // What Envoy does that the import does not, each at its line.
    void warnings() {
        const std::string yaml =
            config(indent("token_bucket: {max_tokens: 10, fill_interval: 1s}\n"
                          "filter_enabled: {runtime_key: rl.on, default_value: {numerator: 50}}\n"
                          "filter_enforced: {default_value: {numerator: 100}}\n"
                          "status: {code: 503}\n"
                          "descriptors:\n"
                          "- entries: [{key: client, value: a}]\n"
                          "  token_bucket: {max_tokens: 1, fill_interval: 1s}\n",
                          14),
                   "");
        const ImportResult r = importEnvoyLocalText(yaml, "envoy.yaml");
        QVERIFY2(r.policies, formatDiagnostics(r.diagnostics).c_str());
        const std::string got = formatDiagnostics(r.diagnostics);
        for (const char* expected :
             {"envoy.yaml:20:15: warning: Envoy's local limiter keeps one bucket per Envoy "
              "instance for the whole listener",
              "envoy.yaml:20:15: warning: Envoy applies this limit to a sample of requests "
              "(filter_enabled 50%)",
              "envoy.yaml:23:45: warning: Envoy's runtime may change this percentage",
              "envoy.yaml:25:30: warning: Envoy answers a refused request with status 503",
              "envoy.yaml:27:15: warning: descriptor buckets need the route's rate_limits"})
            QVERIFY2(got.find(expected) != std::string::npos, got.c_str());
    }

    void errors_data() {
        QTest::addColumn<QString>("filter");
        QTest::addColumn<QString>("route");
        QTest::addColumn<QString>("error");
        QTest::newRow("no bucket anywhere")
            << QString::fromStdString(indent(kOn, 14)) << ""
            << "envoy.yaml:1:1: error: no rate limit: no envoy.filters.http.local_ratelimit";
        QTest::newRow("zero max_tokens")
            << QString::fromStdString(
                   indent("token_bucket: {max_tokens: 0, fill_interval: 1s}\n" + kOn, 14))
            << ""
            << "envoy.yaml:22:42: error: token_bucket.max_tokens is a whole number";
        QTest::newRow("bad duration")
            << QString::fromStdString(
                   indent("token_bucket: {max_tokens: 5, fill_interval: soon}\n" + kOn, 14))
            << ""
            << "envoy.yaml:22:60: error: token_bucket.fill_interval is a duration";
        QTest::newRow("bad denominator")
            << QString::fromStdString(
                   indent("token_bucket: {max_tokens: 5, fill_interval: 1s}\n"
                          "filter_enabled: {default_value: {numerator: 5, denominator: HALF}}\n",
                          14))
            << ""
            << "envoy.yaml:23:75: error: denominator is HUNDRED, TEN_THOUSAND or MILLION";
        QTest::newRow("per-route without bucket")
            << "" << QString::fromStdString(indent(kOn, 20))
            << "envoy.yaml:19:21: error: a per-route local rate limit configuration needs a "
               "token_bucket";
        QTest::newRow("yaml") << "              token_bucket: {max_tokens: 5\n"
                              << ""
                              << "envoy.yaml:";
    }

    void errors() {
        QFETCH(QString, filter);
        QFETCH(QString, route);
        QFETCH(QString, error);
        const ImportResult r =
            importEnvoyLocalText(config(filter.toStdString(), route.toStdString()), "envoy.yaml");
        QVERIFY(!r.policies);
        const std::string got = formatDiagnostics(r.diagnostics);
        QVERIFY2(got.find(error.toStdString()) != std::string::npos, got.c_str());
        QVERIFY2(got.find(": error: ") != std::string::npos, got.c_str());
    }

    // max_tokens 3, 2 tokens a second: three requests at once pass, the fourth is refused, one
    // passes 500 ms later (Envoy's continuous refill), and after 2 s idle three pass again.
    void decidesAsEnvoyRefills() {
        const ImportResult r = importEnvoyLocalText(
            config(indent("token_bucket: {max_tokens: 3, tokens_per_fill: 2, fill_interval: "
                          "1s}\n" +
                              kOn,
                          14),
                   ""),
            "envoy.yaml");
        QVERIFY2(r.policies, formatDiagnostics(r.diagnostics).c_str());
        Limiter limiter(*r.policies, std::shared_ptr<Store>(makeMemoryStore()));
        QString out;
        const Nanos start = Nanos{1'000'000} * kNanosPerSecond;
        int i = 0;
        for (const Nanos ms : {0, 0, 0, 0, 499, 500, 501, 2500, 2500, 2500, 2500}) {
            TestRequest request;
            request.path = "/x";
            request.from(i++ % 2 ? "192.0.2.1" : "198.51.100.7");
            const Verdict v = limiter.decide(request.view(), start + ms * kNanosPerMilli);
            out += v.status == 200 ? 'P' : v.status == 429 ? 'R' : '?';
        }
        QCOMPARE(out, QString("PPPRRPRPPPR"));
    }

    void detected() {
        const std::string yaml = config(indent(kOn, 14), "");
        QCOMPARE(detectImportKind("envoy.yaml", yaml), std::optional(ImportKind::EnvoyLocal));
        QCOMPARE(parseImportKind("envoy-local"), std::optional(ImportKind::EnvoyLocal));
        QCOMPARE(parseImportKind("envoy-ratelimit"), std::optional(ImportKind::EnvoyRatelimit));
    }
};

QTEST_APPLESS_MAIN(TestEnvoyLocalImport)
#include "tst_envoy_local_import.moc"
