// The envoy-ratelimit corpus: RLS configurations in tests/data/import/envoy-ratelimit/, each
// with, when the case needs it, NAME.routes.yaml (the Envoy route configuration whose actions
// build the descriptors), good and malformed. Beside each, NAME.expected: what the RLS reader
// `serve --rls-config` uses says of the configuration (there is no Envoy here to ask), every
// diagnostic of the import, and the policies written. A configuration the reader refuses is
// refused by the import too, at the same line.
//
// RATELAB_WRITE_IMPORT_EXPECTED=1 writes the .expected files from what the import does now
// (review them with git diff) and fails.

#include <QDir>
#include <QtTest>

#include "fixtures/file_fixture.h"
#include "fixtures/import_fixture.h"
#include "fixtures/policy_export_fixture.h"
#include "formats/envoy/rls_config.h"
#include "formats/import/envoy_ratelimit/envoy_rls_import.h"
#include "formats/import/policy_import.h"

using namespace ratelab;
using namespace ratelab::formats;
using namespace ratelab::testing;

namespace {

const QString kDir = kRoot + "tests/data/import/envoy-ratelimit";

// "ok", or "fails at LINE" (the first error's line).
std::string readerCheck(const QString& file) {
    const envoy::RlsLoadResult loaded = envoy::loadRlsConfig(file.toStdString());
    if (loaded.ok()) return "ok";
    for (const Diagnostic& d : loaded.diagnostics) {
        if (d.severity == Diagnostic::Severity::Error) return "fails at " + std::to_string(d.line);
    }
    return "fails";
}

}  // namespace

class TestEnvoyRlsCorpus : public QObject {
    Q_OBJECT

private slots:
    void corpus_data() {
        QTest::addColumn<QString>("name");
        int files = 0;
        for (const QString& f : QDir(kDir).entryList({"*.yaml"}, QDir::Files)) {
            if (f.endsWith(".routes.yaml")) continue;
            QTest::newRow(qPrintable(f)) << f.chopped(5);
            ++files;
        }
        QVERIFY(files >= 8);
    }
    void corpus() {
        QFETCH(QString, name);
        const QString config = kDir + "/" + name + ".yaml";
        const QString routes = kDir + "/" + name + ".routes.yaml";
        std::vector<envoy::RlsSource> sources{{(name + ".yaml").toStdString(), readText(config)}};
        std::optional<envoy::RlsSource> actions;
        ImportLog log;
        log.addFile(sources.front().name);
        if (QFile::exists(routes)) {
            actions = envoy::RlsSource{(name + ".routes.yaml").toStdString(), readText(routes)};
            log.addFile(actions->name);
        }
        const std::optional<PolicyJson> file =
            envoy_ratelimit::mapEnvoyRatelimitSources(sources, actions, log);
        std::string firstError;
        std::string got = "rls reader: " + readerCheck(config) + "\n";
        for (const Diagnostic& d : log.take()) {
            got += formatDiagnostic(d) + "\n";
            if (d.severity == Diagnostic::Severity::Error && firstError.empty() &&
                d.file == sources.front().name)
                firstError = std::to_string(d.line);
        }
        got += "--- policies\n";
        if (file) got += policyLines(*file);
        const QString expectedPath = config + ".expected";
        if (std::getenv("RATELAB_WRITE_IMPORT_EXPECTED")) {
            writeFile(expectedPath, got);
            QFAIL("wrote the .expected file; review it with git diff");
        }
        QVERIFY2(QFile::exists(expectedPath), qPrintable(expectedPath));
        QCOMPARE(QString::fromStdString(got), QString::fromUtf8(readFile(expectedPath)));
        // A file that imports is one the policy loader takes; the whole import agrees.
        const ImportResult whole = importPolicies(
            ImportKind::EnvoyRatelimit, {config.toStdString()},
            ImportOptions{QFile::exists(routes) ? routes.toStdString() : std::string()});
        QCOMPARE(whole.policies.has_value(), file.has_value());
        if (file) {
            QCOMPARE(detectImportKind(config.toStdString(), readText(config)),
                     std::optional(ImportKind::EnvoyRatelimit));
        }
        const std::string check = readerCheck(config);
        if (check != "ok") {
            QVERIFY2(!file, check.c_str());
            if (check.rfind("fails at ", 0) == 0) QCOMPARE(firstError, check.substr(9));
        }
    }
};

QTEST_GUILESS_MAIN(TestEnvoyRlsCorpus)
#include "tst_envoy_rls_corpus.moc"
