// The shipped JSON Schema for scenarios (resources/schema/scenario.schema.json) and the loader
// (app/sim/scenario/scenario_file.cpp) agree: every shipped scenario and every valid fixture passes both;
// every malformed fixture is refused by the loader, at a place in the file, and by
// python3-jsonschema (draft-07) unless its fault lies in a rule across fields, which only the
// loader checks (the schema's description lists them).

#include <QtTest>

#include "ratelab/diagnostic.h"
#include "fixtures/schema_fixture.h"
#include "sim/scenario/scenario.h"

using namespace ratelab;
using Verdict = testing::SchemaVerdict;

namespace {

const char* const kSchema = "resources/schema/scenario.schema.json";
const char* const kMalformed = "tests/data/scenarios/malformed/";

// Files that must pass both: a new shipped scenario is covered without a new row.
QStringList validFiles() {
    return testing::jsonFilesIn({"scenarios/", "tests/data/scenarios/valid/"});
}

struct Row {
    const char* name;  // in tests/data/scenarios/malformed/, without ".json"
    Verdict schema;    // the checker's verdict; the loader refuses every one
};

const std::vector<Row>& malformed() {
    static const std::vector<Row> table = [] {
        std::vector<Row> t;
        auto add = [&t](Verdict v, std::initializer_list<const char*> names) {
            for (const char* n : names)
                t.push_back({n, v});
        };
        add(Verdict::Syntax, {"trailing-comma", "duplicate-key"});
        add(Verdict::Invalid, {"missing-name",
                               "missing-actors",
                               "no-actors",
                               "misspelt-top-key",
                               "duration-zero",
                               "duration-string",
                               "replicas-65",
                               "negative-seed",
                               "unknown-arrival-kind",
                               "rate-on-a-burst",
                               "burst-without-size",
                               "zero-rate",
                               "ramp-zero-to-zero",
                               "class-with-dot",
                               "count-zero",
                               "path-without-slash",
                               "authorization-in-headers",
                               "too-many-attributes",
                               "long-instance-template",
                               "unknown-peer-kind",
                               "address-on-a-pool",
                               "peer-number",
                               "proxy-without-via-proxy",
                               "via-proxy-without-proxy",
                               "via-proxy-without-peer",
                               "unknown-forwarded-header",
                               "unknown-failure",
                               "latency-on-an-outage",
                               "policy-change-with-from",
                               "policy-change-sets-nothing",
                               "policy-change-unknown-field",
                               "expectation-without-bounds",
                               "response-rate-above-one",
                               "response-rate-and-statuses",
                               "response-status-not-http",
                               "response-failure-status-with-statuses",
                               "response-failure-status-200",
                               "session-size-zero",
                               "gap-on-a-session"});
        // Rules across fields or values: valid to the schema, refused by the loader.
        add(Verdict::Valid,
            {"session-spans-unpaired", "empirical-gaps-all-zero", "duplicate-actor", "unknown-metric", "min-above-max", "stop-before-start",
             "outage-ends-before-it-starts", "replica-out-of-range", "pool-smaller-than-the-crowd",
             "cidr-host-bits", "ipv6-address-for-nat", "prefix-len-not-longer",
             "burst-longer-than-its-period", "astronomical-volume",
             "response-probabilities-short-of-one"});
        return t;
    }();
    return table;
}

QString malformedFile(const Row& r) {
    return QString(kMalformed) + r.name + ".json";
}

}  // namespace

class TestScenarioSchema : public QObject {
    Q_OBJECT

    std::map<QString, QJsonObject> python_;  // file -> the checker's verdict

private slots:
    void initTestCase() {
        QStringList files = validFiles();
        QVERIFY(files.size() >= 17);  // the shipped scenarios are found
        for (const Row& r : malformed())
            files << malformedFile(r);
        QString error;
        python_ = testing::judgeWithSchema(kSchema, files, error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(python_.size(), std::size_t(files.size()));
    }

    void validFilesPassBoth_data() {
        QTest::addColumn<QString>("file");
        for (const QString& f : validFiles())
            QTest::newRow(qPrintable(f)) << f;
    }
    void validFilesPassBoth() {
        QFETCH(QString, file);
        const QJsonObject& py = python_[file];
        QVERIFY2(py["verdict"].toString() == "valid", qPrintable(testing::describeJudgement(py)));
        sim::ScenarioLoadResult loaded =
            sim::loadScenarioFile(testing::sourcePath(file).toStdString());
        QVERIFY2(loaded.ok(), formatDiagnostics(loaded.diagnostics).c_str());
    }

    void malformedFilesAreRefused_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("schema");
        for (const Row& r : malformed())
            QTest::newRow(r.name) << malformedFile(r) << int(r.schema);
    }
    void malformedFilesAreRefused() {
        QFETCH(QString, file);
        QFETCH(int, schema);
        const QJsonObject& py = python_[file];
        QVERIFY2(
            py["verdict"].toString() == testing::schemaVerdictName(static_cast<Verdict>(schema)),
            qPrintable(testing::describeJudgement(py)));

        const std::string path = testing::sourcePath(file).toStdString();
        sim::ScenarioLoadResult loaded = sim::loadScenarioFile(path);
        QVERIFY(!loaded.ok());
        QVERIFY(!loaded.diagnostics.empty());
        const Diagnostic& first = loaded.diagnostics.front();
        QCOMPARE(first.file, path);
        QVERIFY2(first.line >= 1 && first.column >= 1, formatDiagnostic(first).c_str());
    }

    void tableCoversEveryMalformedFile() {
        QStringList listed;
        for (const Row& r : malformed())
            listed << malformedFile(r);
        listed.sort();
        QCOMPARE(listed, testing::jsonFilesIn({kMalformed}));
    }
};

QTEST_GUILESS_MAIN(TestScenarioSchema)
#include "tst_scenario_schema.moc"
