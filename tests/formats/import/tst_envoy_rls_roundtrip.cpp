// Round trips through envoyproxy/ratelimit's configuration (there is no Envoy here):
// - import(export(p)) decides exactly like p on every shipped scenario, for every shipped
//   policy the export can express and for a set written to use what it can (fixed windows of
//   a second, a minute and a day, the address masked, a header, composite keys, methods, a
//   path pattern as a URI template, shadow mode): both run
//   through the simulator and their decision streams compared;
// - shipped policies it cannot express are refused with an error naming the policy;
// - export(import(f)) for the corpus configurations is read back by the RLS reader
//   `serve --rls-config` uses, and imports again to the same policies.

#include <QDir>
#include <QtTest>

#include "fixtures/file_fixture.h"
#include "fixtures/policy_export_fixture.h"
#include "fixtures/sim_fixture.h"
#include "formats/envoy/rls_config.h"
#include "formats/export/export_targets.h"
#include "formats/import/envoy_ratelimit/envoy_rls_import.h"
#include "sim/run/scenario_runner.h"

using namespace ratelab;
using namespace ratelab::formats;
using namespace ratelab::sim;
using namespace ratelab::simtest;
using ratelab::testing::kRoot;

namespace {

class DecisionText final : public DecisionSink {
public:
    std::string text;
    std::int64_t refused = 0;
    // Everything but the bucket key, whose text names the policy.
    void onDecision(const DecisionRecord& d) override {
        text += std::to_string(d.seq) + " " + std::to_string(d.at) + " " +
                (d.allowed ? "1 " : "0 ") + std::to_string(d.status) + " " +
                std::to_string(d.remaining) + " " + std::to_string(d.retryAfter) + "\n";
        if (!d.allowed) ++refused;
    }
};

DecisionText run(const Scenario& scenario, const PolicySet& policies) {
    DecisionText decisions;
    RunnerOptions options;
    options.decisions = &decisions;
    options.measureWallTime = false;
    ScenarioRunner runner(scenario, policies, options);
    runner.runToEnd();
    return decisions;
}

ImportResult reimport(const PolicySet& set, std::string& exported) {
    const ExportResult e = exportPolicySet(set, ExportTarget::EnvoyRatelimit);
    exported = e.text;
    if (!e.ok()) return {};
    const auto [rls, routes] = splitEnvoyRatelimitExport(e.text);
    return envoy_ratelimit::importEnvoyRatelimitText({{"ratelimit.yaml", rls}},
                                                     envoy::RlsSource{"routes.yaml", routes});
}

const char* const kExpressible = R"({"version": 1, "policies": [
  {"name": "login", "match": {"path_prefix": "/login", "methods": ["POST"]},
   "algorithm": "fixed_window", "capacity": 3, "window_ms": 60000, "align": "calendar",
   "key": {"source": "peer", "ipv4_prefix": 32, "ipv6_prefix": 64}, "budget": {"enabled": false}},
  {"name": "reports", "match": {"path_prefix": "/api/reports"}, "algorithm": "fixed_window",
   "capacity": 5, "window_ms": 1000, "align": "calendar",
   "key": {"source": "composite", "parts": ["peer", "header:authorization"], "ipv4_prefix": 24,
           "ipv6_prefix": 48, "when_missing": "skip"}, "budget": {"enabled": false}},
  {"name": "api", "match": {"path_prefix": "/api/"}, "algorithm": "fixed_window",
   "capacity": 20, "window_ms": 1000, "align": "calendar",
   "key": {"source": "header", "header": "authorization", "when_missing": "skip"},
   "budget": {"enabled": false}},
  {"name": "articles", "match": {"path_prefix": "/articles"}, "algorithm": "fixed_window",
   "capacity": 10, "window_ms": 1000, "align": "calendar", "mode": "shadow",
   "key": {"source": "peer", "ipv4_prefix": 24, "ipv6_prefix": 48}, "budget": {"enabled": false}},
  {"name": "article", "match": {"path_pattern": "/articles/\u002a"}, "algorithm": "fixed_window",
   "capacity": 4, "window_ms": 1000, "align": "calendar",
   "key": {"source": "peer", "ipv4_prefix": 32, "ipv6_prefix": 64}, "budget": {"enabled": false}},
  {"name": "site", "algorithm": "fixed_window", "capacity": 400, "window_ms": 1000,
   "align": "calendar", "key": {"source": "composite", "parts": ["route"]},
   "budget": {"enabled": false}},
  {"name": "daily", "algorithm": "fixed_window", "capacity": 100000, "window_ms": 86400000,
   "align": "calendar", "key": {"source": "peer", "ipv4_prefix": 16, "ipv6_prefix": 32},
   "budget": {"enabled": false}}]})";

QStringList shippedScenarios() {
    QStringList names;
    for (const QString& f : QDir(kRoot + "scenarios").entryList({"*.json"}, QDir::Files))
        names << f.chopped(5);
    return names;
}

// The minting scenarios fill their store within a second and then go on for 10^7 requests:
// their first three seconds hold every regime (filling, full).
Scenario shipped(const QString& name) {
    Scenario scenario = shippedScenario(name.toStdString());
    if (name.contains("minting"))
        scenario.duration = std::min<Nanos>(scenario.duration, 3 * kNanosPerSecond);
    return scenario;
}

}  // namespace

class TestEnvoyRlsRoundtrip : public QObject {
    Q_OBJECT

private slots:
    // The set written for the target: the same decisions on every shipped scenario.
    void expressibleSetDecidesAlike() {
        const PolicyLoadResult loaded = parsePolicyText(kExpressible, "expressible.json");
        QVERIFY2(loaded.ok(), formatDiagnostics(loaded.diagnostics).c_str());
        std::string exported;
        const ImportResult back = reimport(*loaded.policies, exported);
        QVERIFY2(back.policies, (exported + formatDiagnostics(back.diagnostics)).c_str());
        QCOMPARE(back.policies->policies.size(), loaded.policies->policies.size());
        std::int64_t refused = 0;
        int scenarios = 0;
        for (const QString& name : shippedScenarios()) {
            const Scenario scenario = shipped(name);
            const DecisionText original = run(scenario, *loaded.policies);
            const DecisionText imported = run(scenario, *back.policies);
            QVERIFY2(original.text == imported.text, qPrintable(name));
            refused += original.refused;
            ++scenarios;
        }
        qInfo("%d scenarios, %lld refusals, decided alike", scenarios,
              static_cast<long long>(refused));
        QVERIFY(scenarios >= 20);
        QVERIFY2(refused > 1000, std::to_string(refused).c_str());  // the limits do bite
    }

    // Each shipped policy alone: exported and decided alike when the target can express it,
    // else refused with an error that names it.
    void shippedPolicies() {
        int policies = 0, expressed = 0;
        for (const QString& dir : {QString("resources/policies"), QString("scenarios/policies")}) {
            for (const QString& f : QDir(kRoot + dir).entryList({"*.json"}, QDir::Files)) {
                const PolicySet set = policyFile((dir + "/" + f).toStdString());
                for (const Policy& p : set.policies) {
                    PolicySet one = set;
                    one.policies = {p};
                    ++policies;
                    const ExportResult e = exportPolicySet(one, ExportTarget::EnvoyRatelimit);
                    if (!e.ok()) {
                        const bool named =
                            std::any_of(e.notes.begin(), e.notes.end(), [&](const ExportNote& n) {
                                return n.kind == ExportNote::Kind::Refused &&
                                       n.message.find("policy \"" + p.name + "\"") !=
                                           std::string::npos;
                            });
                        QVERIFY2(named, p.name.c_str());
                        continue;
                    }
                    ++expressed;
                    std::string exported;
                    const ImportResult back = reimport(one, exported);
                    QVERIFY2(back.policies, exported.c_str());
                    for (const QString& name : shippedScenarios()) {
                        const Scenario scenario = shipped(name);
                        QVERIFY2(run(scenario, one).text == run(scenario, *back.policies).text,
                                 qPrintable(name + " " + QString::fromStdString(p.name)));
                    }
                }
            }
        }
        QVERIFY(policies >= 10);
        // Only envoy-ratelimit-compatible.json: every other shipped policy uses a token bucket,
        // a window of another length, tiers, attributes or budgets, which the service cannot
        // express.
        QCOMPARE(expressed, 1);
    }

    // export(import(f)): the RLS reader takes it, and it imports to the same policies.
    void corpusReadBack() {
        const QString dir = kRoot + "tests/data/import/envoy-ratelimit/";
        int files = 0;
        for (const QString& f : QDir(dir).entryList({"*.yaml"}, QDir::Files)) {
            if (f.endsWith(".routes.yaml")) continue;
            const QString routes = dir + f.chopped(5) + ".routes.yaml";
            const ImportResult first = envoy_ratelimit::importEnvoyRatelimit(
                {(dir + f).toStdString()},
                QFile::exists(routes) ? routes.toStdString() : std::string());
            if (!first.policies) continue;
            ++files;
            const ExportResult e = exportPolicySet(*first.policies, ExportTarget::EnvoyRatelimit);
            QVERIFY2(e.ok(), qPrintable(f));
            const auto [rls, routeText] = splitEnvoyRatelimitExport(e.text);
            const envoy::RlsLoadResult read = envoy::parseRlsConfig({{"ratelimit.yaml", rls}});
            QVERIFY2(read.ok(), (rls + formatDiagnostics(read.diagnostics)).c_str());
            const ImportResult again = envoy_ratelimit::importEnvoyRatelimitText(
                {{"ratelimit.yaml", rls}}, envoy::RlsSource{"routes.yaml", routeText});
            QVERIFY2(again.policies, (e.text + formatDiagnostics(again.diagnostics)).c_str());
            QCOMPARE(again.policies->policies.size(), first.policies->policies.size());
        }
        QVERIFY(files >= 4);
    }
};

QTEST_GUILESS_MAIN(TestEnvoyRlsRoundtrip)
#include "tst_envoy_rls_roundtrip.moc"
