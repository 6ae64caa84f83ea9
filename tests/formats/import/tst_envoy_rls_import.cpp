// The envoy-ratelimit import: the RLS YAML (read by the reader `serve --rls-config` uses) with
// the Envoy route actions that build the descriptors, mapped to one policy per descriptor path
// on its route; and the imported policies deciding traces computed by hand from the service's
// counting (fixed windows aligned on the Unix epoch, every descriptor of a request counted, a
// header-keyed descriptor not sent when the header is missing) on a manual clock.

#include <QTemporaryDir>
#include <QtTest>

#include "fixtures/file_fixture.h"
#include "fixtures/import_fixture.h"
#include "fixtures/limiter_fixture.h"
#include "formats/import/envoy_ratelimit/envoy_rls_import.h"
#include "formats/import/policy_source.h"
#include "ratelab/memory_store.h"

using namespace ratelab;
using namespace ratelab::formats;
using namespace ratelab::formats::envoy_ratelimit;
using namespace ratelab::testing;

namespace {

// 2026-12-07 12:00:00 UTC, in nanoseconds since the epoch: a whole minute, hour and day.
constexpr Nanos kNoon = Nanos{1796644800} * kNanosPerSecond;

struct Imported {
    std::string lines;
    std::string diagnostics;
    std::optional<PolicySet> policies;
};

Imported import(const std::string& config, const std::string& routes) {
    std::vector<envoy::RlsSource> sources{{"rls.yaml", config}};
    std::optional<envoy::RlsSource> actions;
    if (!routes.empty()) actions = envoy::RlsSource{"routes.yaml", routes};
    ImportLog log;
    log.addFile("rls.yaml");
    if (actions) log.addFile("routes.yaml");
    const std::optional<PolicyJson> file = mapEnvoyRatelimitSources(sources, actions, log);
    Imported out;
    out.diagnostics = formatDiagnostics(log.take());
    if (file) out.lines = policyLines(*file);
    const ImportResult whole = importEnvoyRatelimitText(sources, actions);
    out.policies = whole.policies;
    return out;
}

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Call {
    Call(double at_, std::string path_ = "/", std::string peer_ = "192.0.2.1",
         std::string method_ = "GET", Headers headers_ = {})
        : at(at_)
        , path(std::move(path_))
        , peer(std::move(peer_))
        , method(std::move(method_))
        , headers(std::move(headers_)) {}
    double at;  // seconds after noon
    std::string path;
    std::string peer;
    std::string method;
    Headers headers;
};

// 'P' passed, 'R' refused (429), '?' anything else.
QString decide(const PolicySet& policies, const std::vector<Call>& calls) {
    Limiter limiter(policies, std::shared_ptr<Store>(makeMemoryStore()));
    QString out;
    for (const Call& c : calls) {
        TestRequest request;
        request.path = c.path;
        request.method = c.method;
        request.from(c.peer);
        for (const auto& [name, value] : c.headers)
            request.header(name, value);
        const Nanos now = kNoon + static_cast<Nanos>(c.at * 1e9);
        const Verdict v = limiter.decide(request.view(), now);
        out += v.status == 200 ? 'P' : v.status == 429 ? 'R' : '?';
    }
    return out;
}

const std::string kEdge =
    "domain: edge\n"
    "descriptors:\n"
    "  - key: remote_address\n"
    "    rate_limit: {unit: minute, requests_per_unit: 60}\n"
    "  - key: generic_key\n"
    "    value: login\n"
    "    descriptors:\n"
    "      - key: remote_address\n"
    "        rate_limit: {unit: second, requests_per_unit: 5}\n";

const std::string kEdgeRoutes =
    "virtual_hosts:\n"
    "  - name: site\n"
    "    domains: ['*']\n"
    "    rate_limits:\n"
    "      - actions: [{remote_address: {}}]\n"
    "    routes:\n"
    "      - name: login\n"
    "        match: {prefix: /login/}\n"
    "        route:\n"
    "          cluster: web\n"
    "          rate_limits:\n"
    "            - actions: [{generic_key: {descriptor_value: login}}, {remote_address: {}}]\n"
    "      - name: rest\n"
    "        match: {prefix: /}\n"
    "        route: {cluster: web}\n";

}  // namespace

class TestEnvoyRlsImport : public QObject {
    Q_OBJECT

private slots:
    // One policy per descriptor path the route's actions reach; the virtual host's actions
    // only on a route without its own (no include_vh_rate_limits).
    void routesAndDescriptors() {
        const Imported r = import(kEdge, kEdgeRoutes);
        QCOMPARE(QString::fromStdString(r.lines),
                 "login.generic_key_login.remote_address /login/ fixed_window capacity=5 "
                 "window_ms=1000 align=\"calendar\" "
                 "key={\"source\":\"peer\",\"ipv4_prefix\":32,\"ipv6_prefix\":128}\n"
                 "rest.remote_address / fixed_window capacity=60 window_ms=60000 "
                 "align=\"calendar\" "
                 "key={\"source\":\"peer\",\"ipv4_prefix\":32,\"ipv6_prefix\":128}\n");
        QVERIFY2(r.policies, r.diagnostics.c_str());
        QVERIFY2(r.policies->routing == Routing::MostSpecific, r.diagnostics.c_str());
        QCOMPARE(QString::fromStdString(r.diagnostics), QString());
    }

    // A route that sends no descriptor (a health check) has no policy: under most_specific the
    // engine charges its requests with the route that holds it (warned).
    void quietRoute() {
        const std::string routes =
            "routes:\n"
            "  - name: health\n"
            "    match: {path: /healthz}\n"
            "    route: {cluster: web}\n"
            "  - name: all\n"
            "    match: {prefix: /}\n"
            "    route:\n"
            "      rate_limits: [{actions: [{remote_address: {}}]}]\n";
        const Imported r = import(kEdge, routes);
        QVERIFY2(r.policies, r.diagnostics.c_str());
        QCOMPARE(QString::fromStdString(r.diagnostics),
                 "routes.yaml:2:5: warning: route \"health\" sends no descriptor the "
                 "configuration limits; the engine charges its requests with the policies of "
                 "route \"all\"\n");
    }

    // The minute is the epoch's (and the calendar's): 60 from one address pass, the 61st and
    // one at 59.9 s are refused, the next minute starts at 60 s (a window from the first
    // request would last until 90 s). Another address has its own counter; the login route
    // counts 5 a second, in its own window.
    void fixedWindowTrace() {
        const Imported r = import(kEdge, kEdgeRoutes);
        QVERIFY2(r.policies, r.diagnostics.c_str());
        std::vector<Call> calls;
        for (int i = 0; i <= 60; ++i)
            calls.push_back({30.0 + 0.1 * i});
        calls.push_back({59.9});
        calls.push_back({59.95, "/", "192.0.2.2"});
        calls.push_back({60.0});
        QCOMPARE(decide(*r.policies, calls), QString(60, 'P') + "RRPP");

        std::vector<Call> login;
        for (int i = 0; i < 6; ++i)
            login.push_back({10.2 + 0.1 * i, "/login/form"});
        login.push_back({11.0, "/login/form"});
        QCOMPARE(decide(*r.policies, login), "PPPPPRP");
    }

    // Keys by header (a request without it sends no descriptor), by the client's /24, and the
    // skip_if_absent variant; methods from a :method header_value_match.
    void headersMasksAndMethods() {
        const std::string config =
            "domain: api\n"
            "descriptors:\n"
            "  - key: api_key\n"
            "    rate_limit: {unit: hour, requests_per_unit: 1000}\n"
            "  - key: anonymous\n"
            "    value: 'yes'\n"
            "    descriptors:\n"
            "      - key: masked_remote_address\n"
            "        rate_limit: {unit: minute, requests_per_unit: 3}\n"
            "  - key: writes\n"
            "    value: 'true'\n"
            "    descriptors:\n"
            "      - key: api_key\n"
            "        rate_limit: {unit: second, requests_per_unit: 2}\n";
        const std::string routes =
            "virtual_hosts:\n"
            "  - name: api\n"
            "    routes:\n"
            "      - name: v1\n"
            "        match: {path_separated_prefix: /v1}\n"
            "        route:\n"
            "          rate_limits:\n"
            "            - actions:\n"
            "                - request_headers: {header_name: x-api-key, descriptor_key: "
            "api_key}\n"
            "            - actions:\n"
            "                - generic_key: {descriptor_key: anonymous, descriptor_value: 'yes'}\n"
            "                - masked_remote_address: {v4_prefix_mask_len: 24}\n"
            "            - actions:\n"
            "                - header_value_match:\n"
            "                    descriptor_key: writes\n"
            "                    descriptor_value: 'true'\n"
            "                    headers: [{name: ':method', exact_match: POST}]\n"
            "                - request_headers: {header_name: x-api-key, descriptor_key: api_key, "
            "skip_if_absent: true}\n";
        const Imported r = import(config, routes);
        QCOMPARE(
            QString::fromStdString(r.lines),
            "v1.api_key /v1 fixed_window capacity=1000 window_ms=3600000 align=\"calendar\" "
            "key={\"source\":\"header\",\"header\":\"x-api-key\",\"when_missing\":\"skip\"}\n"
            "v1.anonymous_yes.masked_remote_address /v1 fixed_window capacity=3 "
            "window_ms=60000 align=\"calendar\" "
            "key={\"source\":\"peer\",\"ipv4_prefix\":24,\"ipv6_prefix\":128}\n"
            "v1.writes_true.api_key /v1,POST fixed_window capacity=2 window_ms=1000 "
            "align=\"calendar\" "
            "key={\"source\":\"header\",\"header\":\"x-api-key\",\"when_missing\":\"skip\"}\n");
        QVERIFY2(r.policies, r.diagnostics.c_str());
        QVERIFY2(r.diagnostics.find("routes.yaml:4:9: warning: the RLS counts every descriptor "
                                    "of a request, refused or not") != std::string::npos,
                 r.diagnostics.c_str());
        // Two addresses of one /24 share 3 a minute; a third network does not.
        QCOMPARE(decide(*r.policies, {{1, "/v1/a", "198.51.100.1"},
                                      {2, "/v1/a", "198.51.100.200"},
                                      {3, "/v1/a", "198.51.100.7"},
                                      {4, "/v1/a", "198.51.100.9"},
                                      {5, "/v1/a", "203.0.113.9"}}),
                 "PPPRP");
        // With a key, POSTs count 2 a second by key (from any network); GETs do not. Every
        // descriptor counts a request, refused or not: the refused third POST is one of its
        // network's 3 a minute.
        const Headers key{{"x-api-key", "k1"}};
        QCOMPARE(decide(*r.policies, {{1.0, "/v1/a", "192.0.2.1", "POST", key},
                                      {1.1, "/v1/a", "198.51.100.1", "POST", key},
                                      {1.2, "/v1/a", "203.0.113.1", "POST", key},
                                      {1.3, "/v1/a", "10.0.0.1", "GET", key},
                                      {2.0, "/v1/a", "10.1.0.1", "POST", key},
                                      {2.1, "/v1/a", "203.0.113.2", "GET", key},
                                      {2.2, "/v1/a", "203.0.113.3", "GET", key},
                                      {2.3, "/v1/a", "203.0.113.4", "GET"}}),
                 "PPRPPPPR");
    }

    // replaces: the replaced rule is dropped from the route (warned); a route without the
    // replacing descriptor keeps it.
    void replaces() {
        const std::string config =
            "domain: t\n"
            "descriptors:\n"
            "  - key: shared\n"
            "    value: all\n"
            "    rate_limit: {name: shared, unit: minute, requests_per_unit: 4}\n"
            "  - key: tenant\n"
            "    rate_limit:\n"
            "      name: tenant\n"
            "      unit: minute\n"
            "      requests_per_unit: 2\n"
            "      replaces: [{name: shared}]\n";
        const std::string routes =
            "routes:\n"
            "  - match: {prefix: /app/}\n"
            "    route:\n"
            "      rate_limits:\n"
            "        - actions: [{generic_key: {descriptor_key: shared, descriptor_value: all}}]\n"
            "        - actions: [{request_headers: {header_name: x-tenant, descriptor_key: "
            "tenant}}]\n"
            "  - match: {prefix: /admin/}\n"
            "    route:\n"
            "      rate_limits:\n"
            "        - actions: [{generic_key: {descriptor_key: shared, descriptor_value: all}}]\n";
        const Imported r = import(config, routes);
        QVERIFY2(r.policies, r.diagnostics.c_str());
        QCOMPARE(QString::fromStdString(r.lines),
                 "route1.tenant /app/ fixed_window capacity=2 window_ms=60000 align=\"calendar\" "
                 "key={\"source\":\"header\",\"header\":\"x-tenant\",\"when_missing\":\"skip\"}\n"
                 "route2.shared_all /admin/ fixed_window capacity=4 window_ms=60000 "
                 "align=\"calendar\" key={\"source\":\"composite\",\"parts\":[\"route\"]}\n");
        QVERIFY2(r.diagnostics.find("rls.yaml:8:7: warning: replaces \"shared\": the RLS drops "
                                    "that rule from a request that also sends this descriptor; "
                                    "the import drops it from route \"route1\" altogether") !=
                     std::string::npos,
                 r.diagnostics.c_str());
        const Headers t{{"x-tenant", "a"}};
        QCOMPARE(decide(*r.policies, {{1, "/app/x", "192.0.2.1", "GET", t},
                                      {2, "/app/x", "192.0.2.2", "GET", t},
                                      {3, "/app/x", "192.0.2.3", "GET", t},
                                      {4, "/admin/x"},
                                      {5, "/admin/x", "192.0.2.9"},
                                      {6, "/admin/x"},
                                      {7, "/admin/x"},
                                      {8, "/admin/x"}}),
                 "PPRPPPPR");
    }

    // Without route actions, keys are read by their names, each mapping warned at its node.
    void byName() {
        const std::string config =
            "domain: mail\n"
            "descriptors:\n"
            "  - key: remote_address\n"
            "    rate_limit: {unit: second, requests_per_unit: 10}\n"
            "  - key: remote_address\n"
            "    value: 192.0.2.1\n"
            "  - key: generic_key\n"
            "    value: sender\n"
            "    descriptors:\n"
            "      - key: x-user\n"
            "        shadow_mode: true\n"
            "        rate_limit: {unit: day, requests_per_unit: 200}\n"
            "  - key: header_match\n"
            "    value: internal\n"
            "    rate_limit: {unlimited: true}\n"
            "  - key: generic_key\n"
            "    value: month\n"
            "    rate_limit: {unit: month, requests_per_unit: 0}\n"
            "  - key: 'no header'\n"
            "    rate_limit: {unit: second, requests_per_unit: 1}\n";
        const Imported r = import(config, "");
        QCOMPARE(QString::fromStdString(r.lines),
                 "remote_address / fixed_window capacity=10 window_ms=1000 align=\"calendar\" "
                 "key={\"source\":\"peer\",\"ipv4_prefix\":32,\"ipv6_prefix\":128}\n"
                 "generic_key_sender.x-user / fixed_window capacity=200 window_ms=86400000 "
                 "align=\"calendar\" "
                 "key={\"source\":\"header\",\"header\":\"x-user\",\"when_missing\":\"skip\"} "
                 "shadow\n"
                 "generic_key_month / fixed_window capacity=1 window_ms=2592000000 "
                 "align=\"calendar\" key={\"source\":\"composite\",\"parts\":[\"route\"]}\n");
        QVERIFY2(r.policies, r.diagnostics.c_str());
        for (const char* expected :
             {"rls.yaml:3:10: warning: descriptor key \"remote_address\" is read as the client "
              "address",
              "rls.yaml:5:10: warning: descriptor remote_address_192.0.2.1 applies only when the "
              "client address is \"192.0.2.1\"",
              "rls.yaml:10:14: warning: descriptor key \"x-user\" is read as header x-user",
              "rls.yaml:15:17: warning: unlimited: the RLS never counts these requests",
              "rls.yaml:18:17: warning: requests_per_unit 0: the RLS refuses every request",
              "rls.yaml:19:10: warning: descriptor key \"no header\" is neither an action's key "
              "nor a header name: not imported"})
            QVERIFY2(r.diagnostics.find(expected) != std::string::npos, r.diagnostics.c_str());
    }

    void errors_data() {
        QTest::addColumn<QString>("config");
        QTest::addColumn<QString>("routes");
        QTest::addColumn<QString>("error");
        const QString ok =
            "domain: d\ndescriptors:\n  - key: remote_address\n"
            "    rate_limit: {unit: second, requests_per_unit: 1}\n";
        QTest::newRow("rls unknown key")
            << "domain: d\ndescriptors:\n  - key: a\n    ratelimit: {unit: second}\n"
            << ""
            << "rls.yaml:4:5: error: config error, unknown key 'ratelimit'";
        QTest::newRow("routes syntax") << ok << "routes: [\n"
                                       << "routes.yaml:2:1: error: ";
        QTest::newRow("not routes") << ok << "listeners: []\n"
                                    << "routes.yaml:1:1: error: no virtual_hosts, routes or "
                                       "rate_limits";
        QTest::newRow("header without key")
            << ok
            << "routes:\n  - match: {prefix: /}\n    route:\n      rate_limits:\n"
               "        - actions: [{request_headers: {header_name: x-a}}]\n"
            << "routes.yaml:5:21: error: request_headers needs a header_name and a "
               "descriptor_key";
        QTest::newRow("mask too long")
            << ok
            << "rate_limits:\n  - actions: [{masked_remote_address: {v4_prefix_mask_len: 33}}]\n"
            << "routes.yaml:2:15: error: masked_remote_address: v4_prefix_mask_len is 1 to 32";
        QTest::newRow("one domain, no filter")
            << ok << "rate_limits:\n  - actions: [{remote_address: {}}]\n"
            << "";  // one domain: fine (the row below has the filter's domain)
        QTest::newRow("filter domain missing")
            << ok
            << "typed_config: {domain: other, rate_limit_service: {}}\n"
               "rate_limits:\n  - actions: [{remote_address: {}}]\n"
            << "routes.yaml:1:24: error: the rate limit filter's domain \"other\" is not in the "
               "RLS configuration";
        QTest::newRow("no limit reached")
            << ok << "rate_limits:\n  - actions: [{generic_key: {descriptor_value: x}}]\n"
            << ": error: no rate limit: no descriptor the route actions build reaches a limit";
    }
    void errors() {
        QFETCH(QString, config);
        QFETCH(QString, routes);
        QFETCH(QString, error);
        const Imported r = import(config.toStdString(), routes.toStdString());
        if (error.isEmpty()) {
            QVERIFY2(r.policies, r.diagnostics.c_str());
            return;
        }
        QVERIFY(!r.policies);
        QVERIFY2(r.diagnostics.find(error.toStdString()) != std::string::npos,
                 r.diagnostics.c_str());
    }

    // "envoy-ratelimit:CONFIG+ROUTES" and a directory with routes.yaml, wherever --policy is
    // taken; a missing file is unreadable.
    void policySource() {
        QTemporaryDir dir;
        writeFile(dir.filePath("edge.yaml"), QByteArray::fromStdString(kEdge));
        writeFile(dir.filePath("routes.yaml"), QByteArray::fromStdString(kEdgeRoutes));
        const std::string base = dir.path().toStdString() + "/";
        const PolicyLoadResult joined =
            loadPolicySource("envoy-ratelimit:" + base + "edge.yaml+" + base + "routes.yaml");
        QVERIFY(joined.ok());
        QCOMPARE(joined.policies->policies.size(), std::size_t{2});
        const PolicyLoadResult directory = loadPolicySource("envoy-ratelimit:" + base);
        QVERIFY(directory.ok());
        QCOMPARE(directory.policies->policies.size(), std::size_t{2});
        QCOMPARE(directory.policies->policies[0].name, joined.policies->policies[0].name);
        const PolicyLoadResult alone = loadPolicySource("envoy-ratelimit:" + base + "edge.yaml");
        QVERIFY(alone.ok());
        QCOMPARE(alone.policies->policies.size(), std::size_t{2});  // both keys by name
        QCOMPARE(alone.policies->routing, Routing::All);
        // One file holding both, as the export's stream: split at its "---" line, the routes'
        // lines keeping their numbers.
        writeFile(dir.filePath("stream.yaml"),
                  QByteArray::fromStdString(kEdge + "---\n" + kEdgeRoutes));
        const PolicyLoadResult stream = loadPolicySource("envoy-ratelimit:" + base + "stream.yaml");
        QVERIFY(stream.ok());
        QCOMPARE(stream.policies->policies.size(), std::size_t{2});
        QCOMPARE(stream.policies->policies[0].name, joined.policies->policies[0].name);
        QCOMPARE(stream.policies->routing, Routing::MostSpecific);
        writeFile(dir.filePath("broken.yaml"),
                  QByteArray::fromStdString(kEdge + "---\nrate_limits:\n  - actions: [{x: {}}]\n"
                                                    "virtual_hosts: 3\n"));
        const PolicyLoadResult broken = loadPolicySource("envoy-ratelimit:" + base + "broken.yaml");
        QVERIFY(!broken.ok());
        QVERIFY2(
            formatDiagnostics(broken.diagnostics).find("broken.yaml:12:15: warning: action x") !=
                std::string::npos,
            formatDiagnostics(broken.diagnostics).c_str());
        const PolicyLoadResult missing =
            loadPolicySource("envoy-ratelimit:" + base + "edge.yaml+" + base + "none.yaml");
        QVERIFY(missing.unreadable);
    }
};

QTEST_GUILESS_MAIN(TestEnvoyRlsImport)
#include "tst_envoy_rls_import.moc"
