// The Traefik reader and mapping: the rule grammar, durations, YAML and TOML read alike, every
// error at its line and column, and the imported policies deciding Traefik's documented traces
// (computed by hand from Traefik's bucket: float tokens refilled at average/period, burst, a
// request held up to maxDelay instead of refused) on a manual clock, with the one difference
// the import warns of: a request Traefik would hold is refused.

#include <QtTest>

#include "fixtures/import_fixture.h"
#include "fixtures/limiter_fixture.h"
#include "formats/import/traefik/traefik_import.h"
#include "formats/import/traefik/traefik_rule.h"
#include "ratelab/memory_store.h"
#include "ratelab/policy_file.h"

using namespace ratelab;
using namespace ratelab::formats;
using namespace ratelab::formats::traefik;
using namespace ratelab::testing;

namespace {

std::string rateLimitYaml(const std::string& rule, const std::string& fields) {
    return "http:\n  routers:\n    r:\n      rule: \"" + rule +
           "\"\n      service: s\n      middlewares: [rl]\n  middlewares:\n    rl:\n"
           "      rateLimit:\n" +
           fields;
}

ImportResult importYaml(const std::string& text) {
    return importTraefikText(text, "dynamic.yaml", false);
}

std::string rulesOf(const std::string& text) {
    Rule rule;
    std::string error;
    std::size_t offset = 0;
    if (!parseRule(text, rule, error, offset))
        return "error at " + std::to_string(offset) + ": " + error;
    std::vector<std::string> notes;
    std::string out;
    for (const PolicyJson& r : routesOfRule(rule, notes))
        out += (out.empty() ? "" : " | ") + r.dump();
    for (const std::string& n : notes)
        out += " ; " + n;
    return out;
}

}  // namespace

class TestTraefikImport : public QObject {
    Q_OBJECT

private slots:
    void rules_data() {
        QTest::addColumn<QString>("rule");
        QTest::addColumn<QString>("routes");
        auto row = [](const char* rule, const char* routes) {
            QTest::newRow(rule) << rule << routes;
        };
        row("PathPrefix(`/api/`)", "{\"path_prefix\":\"/api/\"}");
        row("Path(`/login`) && Method(`POST`)",
            "{\"path_pattern\":\"/login\",\"methods\":[\"POST\"]}");
        row("Host(`a.example`) && PathPrefix(`/v1/`)",
            "{\"path_prefix\":\"/v1/\"} ; Host(`a.example`) is not carried: ratelab does not tell "
            "hosts apart");
        row("PathPrefix(`/a/`) || PathPrefix(`/b/`)",
            "{\"path_prefix\":\"/a/\"} | {\"path_prefix\":\"/b/\"}");
        row("(PathPrefix(`/a/`) || Path(`/b`)) && Method(`GET`)",
            "{\"path_prefix\":\"/a/\",\"methods\":[\"GET\"]} | "
            "{\"path_pattern\":\"/b\",\"methods\":[\"GET\"]}");
        row("pathprefix(\"/x/\")", "{\"path_prefix\":\"/x/\"}");
        row("PathPrefix(`/a/`, `/b/`)", "{\"path_prefix\":\"/a/\"} | {\"path_prefix\":\"/b/\"}");
        row("PathRegexp(`^/users/[^/]+/avatar$`)", "{\"path_pattern\":\"/users/*/avatar\"}");
        row("PathPrefix(`/api/`) && !Header(`X-Internal`, `1`)",
            "{\"path_prefix\":\"/api/\"} ; !Header(`X-Internal`, `1`) is not carried: the policy "
            "applies whatever it says");
        row("Host(`*`)",
            "{\"path_prefix\":\"/\"} ; Host(`*`) is not carried: ratelab does not tell hosts "
            "apart");
        row("PathPrefix(`/api/`", "error at 18: expected \")\" after the arguments of PathPrefix");
        row("PathPrefix(`/api/`) &&", "error at 22: expected a matcher such as PathPrefix(`/api`)");
        row("PathPrefix(`/a/) ", "error at 12: unterminated argument");
        row("!(Path(`/a`) || Path(`/b`))",
            "error at 1: a negation of several matchers is not read");
    }
    void rules() {
        QFETCH(QString, rule);
        QFETCH(QString, routes);
        QCOMPARE(QString::fromStdString(rulesOf(rule.toStdString())), routes);
    }

    // average per period as the refill, burst as the capacity, the key from sourceCriterion.
    void mapping_data() {
        QTest::addColumn<QString>("fields");
        QTest::addColumn<QString>("policies");
        const QString peer = "{\"source\":\"peer\",\"ipv4_prefix\":32,\"ipv6_prefix\":128}";
        QTest::newRow("defaults: period 1s, burst 1")
            << "        average: 10\n"
            << "rl.r /api/ token_bucket capacity=1 refill_per_second=10.0 key=" + peer;
        QTest::newRow("period 1m")
            << "        average: 100\n        period: 1m\n        burst: 50\n"
            << "rl.r /api/ token_bucket capacity=50 refill_per_second=1.6666666666666667 key=" +
                   peer;
        QTest::newRow("period in whole seconds")
            << "        average: 5\n        period: 10\n        burst: 0\n"
            << "rl.r /api/ token_bucket capacity=1 refill_per_second=0.5 key=" + peer;
        QTest::newRow("period 1h30m")
            << "        average: 54\n        period: 1h30m\n"
            << "rl.r /api/ token_bucket capacity=1 refill_per_second=0.01 key=" + peer;
        QTest::newRow("period 500ms")
            << "        average: 1\n        period: 500ms\n        burst: 2\n"
            << "rl.r /api/ token_bucket capacity=2 refill_per_second=2.0 key=" + peer;
        QTest::newRow("header")
            << "        average: 1\n        sourceCriterion:\n          requestHeaderName: "
               "X-Api-Key\n"
            << "rl.r /api/ token_bucket capacity=1 refill_per_second=1.0 "
               "key={\"source\":\"header\",\"header\":\"X-Api-Key\",\"when_missing\":"
               "\"shared\"}";
        QTest::newRow("host")
            << "        average: 1\n        sourceCriterion:\n          requestHost: true\n"
            << "rl.r /api/ token_bucket capacity=1 refill_per_second=1.0 "
               "key={\"source\":\"header\",\"header\":\"host\"}";
        QTest::newRow("ipv6Subnet")
            << "        average: 1\n        sourceCriterion:\n          ipStrategy:\n"
               "            ipv6Subnet: 64\n"
            << "rl.r /api/ token_bucket capacity=1 refill_per_second=1.0 "
               "key={\"source\":\"peer\",\"ipv4_prefix\":32,\"ipv6_prefix\":64}";
    }
    void mapping() {
        QFETCH(QString, fields);
        QFETCH(QString, policies);
        ImportLog log;
        TraefikConfig config;
        parseTraefikText(rateLimitYaml("PathPrefix(`/api/`)", fields.toStdString()), "dynamic.yaml",
                         false, config, log);
        const std::optional<PolicyJson> file = mapTraefikConfig(config, log);
        QVERIFY2(file, formatDiagnostics(log.take()).c_str());
        QCOMPARE(QString::fromStdString(policyLines(*file)).trimmed(), policies);
    }

    // Errors, each at its line and column; the file is not written.
    void errors_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("error");
        QTest::newRow("yaml syntax") << "http:\n  routers: [\n"
                                     << "dynamic.yaml:3:1: error: ";
        QTest::newRow("rule") << QString::fromStdString(
                                     rateLimitYaml("PathPrefix(`/api/`", "        average: 1\n"))
                              << "dynamic.yaml:4:32: error: rule: expected \")\" after the "
                                 "arguments of PathPrefix";
        QTest::newRow("average") << QString::fromStdString(rateLimitYaml("PathPrefix(`/a/`)",
                                                                         "        average: many\n"))
                                 << "dynamic.yaml:10:18: error: average: expected a whole number";
        QTest::newRow("period") << QString::fromStdString(rateLimitYaml(
                                       "PathPrefix(`/a/`)",
                                       "        average: 1\n        period: 1 minute\n"))
                                << "dynamic.yaml:11:17: error: period: \"1 minute\" is not a "
                                   "duration";
        QTest::newRow("negative period")
            << QString::fromStdString(
                   rateLimitYaml("PathPrefix(`/a/`)", "        average: 1\n        period: -1s\n"))
            << "dynamic.yaml:11:17: error: period: a negative period";
        QTest::newRow("two criteria")
            << QString::fromStdString(rateLimitYaml(
                   "PathPrefix(`/a/`)",
                   "        average: 1\n        sourceCriterion:\n          requestHost: true\n"
                   "          requestHeaderName: X\n"))
            << "dynamic.yaml:12:11: error: sourceCriterion: at most one of";
        QTest::newRow("undefined middleware")
            << "http:\n  routers:\n    r:\n      rule: \"PathPrefix(`/`)\"\n"
               "      middlewares: [nope]\n  middlewares:\n    rl:\n      rateLimit:\n"
               "        average: 1\n"
            << "dynamic.yaml:5:21: error: middleware \"nope\" is not defined";
        QTest::newRow("no rate limit")
            << "http:\n  routers:\n    r:\n      rule: \"PathPrefix(`/`)\"\n      service: s\n"
            << "dynamic.yaml: error: no rate limit";
    }
    void errors() {
        QFETCH(QString, text);
        QFETCH(QString, error);
        const ImportResult r = importYaml(text.toStdString());
        QVERIFY(!r.policies);
        const std::string all = formatDiagnostics(r.diagnostics);
        QVERIFY2(all.find(error.toStdString()) != std::string::npos, all.c_str());
    }

    // The same configuration in TOML gives the same policies, and positions in the TOML file.
    void tomlReadsAsYaml() {
        const std::string yaml =
            "http:\n  routers:\n    api:\n      rule: \"PathPrefix(`/api/`) && Method(`GET`)\"\n"
            "      middlewares: [api-rl, common]\n  middlewares:\n    api-rl:\n"
            "      rateLimit:\n        average: 100\n        period: 1m\n        burst: 50\n"
            "        sourceCriterion:\n          requestHeaderName: X-Api-Key\n    common:\n"
            "      chain:\n        middlewares: [web-rl]\n    web-rl:\n      rateLimit:\n"
            "        average: 2\n        burst: 3\n";
        const std::string toml =
            "[http.routers.api]\nrule = \"PathPrefix(`/api/`) && Method(`GET`)\"\n"
            "middlewares = [\"api-rl\", \"common\"]\n\n"
            "[http.middlewares.api-rl.rateLimit]\naverage = 100\nperiod = \"1m\"\nburst = 50\n"
            "[http.middlewares.api-rl.rateLimit.sourceCriterion]\n"
            "requestHeaderName = \"X-Api-Key\"\n\n"
            "[http.middlewares.common.chain]\nmiddlewares = [\"web-rl\"]\n\n"
            "[http.middlewares.web-rl.rateLimit]\naverage = 2\nburst = 3\n";
        const ImportResult a = importYaml(yaml);
        const ImportResult b = importTraefikText(toml, "dynamic.toml", true);
        QVERIFY2(a.policies, formatDiagnostics(a.diagnostics).c_str());
        QVERIFY2(b.policies, formatDiagnostics(b.diagnostics).c_str());
        QCOMPARE(savePolicyText(*a.policies), savePolicyText(*b.policies));
        QCOMPARE(a.policies->policies.size(), std::size_t{2});
        QCOMPARE(a.policies->policies[1].name, std::string("web-rl.api"));
        const std::string warnings = formatDiagnostics(b.diagnostics);
        QVERIFY2(warnings.find("dynamic.toml:5:1: warning: Traefik holds a request for up to "
                               "500 ms") != std::string::npos,
                 warnings.c_str());
        const ImportResult broken = importTraefikText("[http.routers\nrule = 1\n", "d.toml", true);
        QVERIFY(!broken.policies);
        QVERIFY2(formatDiagnostics(broken.diagnostics).find("d.toml:1:") != std::string::npos,
                 formatDiagnostics(broken.diagnostics).c_str());
    }

    // Traefik's documented bucket, by hand (average 2, period 1s, burst 3: r = 2 tokens a
    // second, maxDelay 1s / (2 * 2) = 250 ms): tokens before -> after, the wait for a token,
    // Traefik's answer; and the import's token bucket deciding the same requests.
    void decidesTraefiksTrace_data() {
        QTest::addColumn<QString>("fields");
        QTest::addColumn<QList<int>>("timesMs");
        QTest::addColumn<QString>("traefik");  // P pass, D held then passed, R 429
        QTest::addColumn<QString>("ratelab");  // P pass, R refused
        // t=0 3->2, 2->1, 1->0 pass; 0->-1 wait 500 > 250: 429 (given back); 100: 0.2->-0.8
        // wait 400: 429; 300: 0.6->-0.4 wait 200 <= 250: held 200 ms; 400: -0.2 -> -1.2 wait
        // 600: 429; 1000: 1.0 -> 0: pass. The token bucket refuses at 300 (0.6 < 1), which
        // leaves it 0.8 at 400 (refused) and 2 at 1000 (pass).
        QTest::newRow("average 2, burst 3")
            << "        average: 2\n        burst: 3\n"
            << QList<int>{0, 0, 0, 0, 100, 300, 400, 1000} << "PPPRRDRP"
            << "PPPRRRRP";
        // r = 1/60, maxDelay 500 ms: 0 pass (1 -> 0); 30 s 0.5 wait 30 s: 429; 59.6 s 0.9933
        // wait 400 ms: held; 60 s: -0.0067 + 0.0067 = 0 -> -1, wait 60 s: 429. The token bucket
        // refuses at 59.6 s, so at 60 s it has its token again: passes.
        QTest::newRow("average 1, period 1m") << "        average: 1\n        period: 1m\n"
                                              << QList<int>{0, 30000, 59600, 60000} << "PRDR"
                                              << "PRRP";
        // Within the burst and at the rate: the same answers everywhere.
        QTest::newRow("average 5, burst 5")
            << "        average: 5\n        burst: 5\n"
            << QList<int>{0, 0, 0, 0, 0, 0, 200, 400, 400, 1400} << "PPPPPRPPRP"
            << "PPPPPRPPRP";
    }
    void decidesTraefiksTrace() {
        QFETCH(QString, fields);
        QFETCH(QList<int>, timesMs);
        QFETCH(QString, traefik);
        QFETCH(QString, ratelab);
        const ImportResult r =
            importYaml(rateLimitYaml("PathPrefix(`/api/`)", fields.toStdString()));
        QVERIFY2(r.policies, formatDiagnostics(r.diagnostics).c_str());
        QVERIFY(formatDiagnostics(r.diagnostics).find("Traefik holds a request for up to") !=
                std::string::npos);
        Limiter limiter(*r.policies, std::shared_ptr<Store>(makeMemoryStore()));
        QString decided;
        for (int ms : timesMs) {
            TestRequest request;
            request.path = "/api/x";
            request.from("192.0.2.1");
            const Verdict v = limiter.decide(request.view(), Nanos{ms} * kNanosPerMilli);
            decided += v.status == 200 ? 'P' : v.status == 429 ? 'R' : '?';
        }
        QCOMPARE(decided, ratelab);
        // Where the two differ, Traefik held the request (D) or the difference follows from
        // that request: the token Traefik spent on it.
        for (int i = 0; i < traefik.size(); ++i) {
            const bool same = (traefik[i] == 'D' ? 'P' : traefik[i]) == decided[i];
            QVERIFY2(same || traefik[i] == 'D' || (i > 0 && traefik.left(i).contains('D')),
                     qPrintable(QString("request %1: Traefik %2, ratelab %3")
                                    .arg(i)
                                    .arg(traefik[i])
                                    .arg(decided[i])));
        }
    }

    // One router per request, in Traefik and in the set routed "most_specific": nothing to warn
    // of. Keys: a header of its own bucket per value, and one shared bucket without it.
    void routersAndKeys() {
        const std::string yaml =
            "http:\n  routers:\n    api:\n      rule: \"PathPrefix(`/api/`)\"\n"
            "      middlewares: [per-key]\n    web:\n      rule: \"PathPrefix(`/`)\"\n"
            "      middlewares: [per-ip]\n  middlewares:\n    per-key:\n      rateLimit:\n"
            "        average: 1\n        sourceCriterion:\n          requestHeaderName: X-Key\n"
            "    per-ip:\n      rateLimit:\n        average: 100\n        burst: 100\n"
            "    unused:\n      rateLimit:\n        average: 1\n";
        const ImportResult r = importYaml(yaml);
        QVERIFY2(r.policies, formatDiagnostics(r.diagnostics).c_str());
        const std::string warnings = formatDiagnostics(r.diagnostics);
        for (const char* expected :
             {"dynamic.yaml:19:5: warning: middleware \"unused\" is not used by any router: not "
              "imported"})
            QVERIFY2(warnings.find(expected) != std::string::npos, warnings.c_str());
        for (const char* gone : {"charges every policy", "412"})
            QVERIFY2(warnings.find(gone) == std::string::npos, warnings.c_str());
        Limiter limiter(*r.policies, std::shared_ptr<Store>(makeMemoryStore()));
        auto decide = [&limiter](const char* key, Nanos at) {
            TestRequest request;
            request.path = "/api/x";
            request.from("192.0.2.1");
            if (*key) request.header("X-Key", key);
            return limiter.decide(request.view(), at).status;
        };
        QCOMPARE(decide("a", 0), 200);
        QCOMPARE(decide("a", kNanosPerMilli), 429);
        QCOMPARE(decide("b", 2 * kNanosPerMilli), 200);
        QCOMPARE(decide("", 3 * kNanosPerMilli), 200);
        QCOMPARE(decide("", 4 * kNanosPerMilli), 429);
        QCOMPARE(decide("a", 1001 * kNanosPerMilli), 200);
    }
};

QTEST_GUILESS_MAIN(TestTraefikImport)
#include "tst_traefik_import.moc"
