// Round trips through other products' configurations: every shipped policy file that a target
// can express exactly (its export carries no approximation) is exported, imported back, and the
// imported set decides every request of every shipped scenario as the original does. Which
// pairs are exact is pinned, so an exporter or importer that starts or stops being exact is
// noticed.

#include <QtTest>

#include <QDir>
#include <QTemporaryDir>
#include <algorithm>
#include <cstdint>
#include <set>

#include "fixtures/file_fixture.h"
#include "fixtures/sim_fixture.h"
#include "formats/import/policy_import.h"
#include "formats/policy_export.h"
#include "sim/run/scenario_runner.h"

using namespace ratelab;
using namespace ratelab::sim;
using namespace ratelab::simtest;

namespace {

const QString kRoot = QStringLiteral(RATELAB_SOURCE_DIR);

// The importer that reads what an exporter writes.
formats::ImportKind readerOf(formats::ExportTarget target) {
    switch (target) {
        case formats::ExportTarget::Nginx:
            return formats::ImportKind::Nginx;
        case formats::ExportTarget::Haproxy:
            return formats::ImportKind::Haproxy;
        case formats::ExportTarget::Envoy:
            return formats::ImportKind::EnvoyLocal;
        case formats::ExportTarget::EnvoyRatelimit:
            return formats::ImportKind::EnvoyRatelimit;
    }
    return formats::ImportKind::Nginx;
}

// What a run decided, whoever decided it: a count and a hash of each decision's time, verdict
// and status. (Keys and header figures name the policies, which an import renames.)
struct Verdicts final : public DecisionSink {
    std::int64_t count = 0;
    std::uint64_t hash = 1469598103934665603ull;  // FNV-1a
    void onDecision(const DecisionRecord& d) override {
        const std::int64_t fields[] = {d.seq, d.at, d.allowed ? 1 : 0, d.status};
        for (const std::int64_t v : fields) {
            hash = (hash ^ static_cast<std::uint64_t>(v)) * 1099511628211ull;
        }
        ++count;
    }
    bool operator==(const Verdicts& o) const { return count == o.count && hash == o.hash; }
};

Verdicts verdicts(const Scenario& scenario, const PolicySet& policies) {
    Verdicts sink;
    RunnerOptions options;
    options.decisions = &sink;
    options.measureWallTime = false;
    ScenarioRunner runner(scenario, policies, options);
    runner.runToEnd();
    return sink;
}

QStringList shippedPolicyFiles() {
    QStringList out;
    for (const char* dir : {"resources/policies", "scenarios/policies"}) {
        for (const QString& f :
             QDir(kRoot + "/" + dir).entryList({"*.json"}, QDir::Files, QDir::Name))
            out << QString(dir) + "/" + f;
    }
    return out;
}

}  // namespace

class TestImportRoundTrip : public QObject {
    Q_OBJECT

private slots:
    // Every shipped policy against every target: exported, and where the export is exact,
    // imported back and run on every shipped scenario beside the original.
    void exactExportsImportBackToTheSameDecisions() {
        const std::set<std::string> expectedExact = {
            "resources/policies/nginx-compatible.json -> nginx",
            "resources/policies/haproxy-compatible.json -> haproxy",
            "resources/policies/envoy-ratelimit-compatible.json -> envoy-ratelimit",
        };
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        std::vector<Scenario> scenarios;
        QStringList scenarioNames;
        for (const QString& f :
             QDir(kRoot + "/scenarios").entryList({"*.json"}, QDir::Files, QDir::Name)) {
            Scenario scenario = shippedScenario(f.chopped(5).toStdString());
            // The minting scenarios fill their store within a second and then go on for
            // 10^7 requests: their first three seconds hold every regime (filling, full).
            if (f.contains("minting"))
                scenario.duration = std::min<Nanos>(scenario.duration, 3 * kNanosPerSecond);
            scenarios.push_back(std::move(scenario));
            scenarioNames << f;
        }
        QVERIFY(scenarios.size() >= 20);

        std::set<std::string> exact;
        for (const QString& file : shippedPolicyFiles()) {
            const PolicySet original = policyFile(file.toStdString());
            for (const formats::ExportTarget target : formats::kExportTargets) {
                const formats::ExportResult exported = formats::exportPolicySet(original, target);
                if (!exported.ok() || !exported.notes.empty()) continue;
                const std::string pair =
                    file.toStdString() + " -> " + std::string(formats::exportTargetName(target));
                exact.insert(pair);

                const QString path = tmp.path() + "/exported";
                testing::writeFile(path, exported.text);
                const formats::ImportResult back =
                    formats::importPolicies(readerOf(target), {path.toStdString()});
                QVERIFY2(back.policies,
                         (pair + ":\n" + formatDiagnostics(back.diagnostics)).c_str());
                for (std::size_t i = 0; i < scenarios.size(); ++i) {
                    const Verdicts want = verdicts(scenarios[i], original);
                    const Verdicts got = verdicts(scenarios[i], *back.policies);
                    QVERIFY2(want.count > 0, qPrintable(scenarioNames[int(i)]));
                    QVERIFY2(got == want, (pair + " on " + scenarioNames[int(i)].toStdString() +
                                           ": the imported set decides otherwise")
                                              .c_str());
                }
            }
        }
        QCOMPARE(exact, expectedExact);
    }
};

QTEST_GUILESS_MAIN(TestImportRoundTrip)
#include "tst_import_roundtrip.moc"
