// The shipped JSON Schema (resources/schema/policy.schema.json) and the loader agree: on every
// shipped policy and every corpus file, python3-jsonschema (draft-07) and the loader's syntax
// and schema levels give the same verdict. Semantic errors are outside the schema by design:
// such files are "valid" to the schema and fail only the loader's semantic level.

#include <QtTest>
#include <map>

#include "fixtures/schema_fixture.h"
#include "ratelab/policy_file.h"

using namespace ratelab;
using Verdict = testing::SchemaVerdict;

namespace {

struct Row {
    const char* file;  // relative to the source root
    Verdict verdict;
    bool semanticError;  // SchemaValid files: whether the loader's semantic level fails
};

const std::vector<Row>& rows() {
    static const std::vector<Row> table = [] {
        std::vector<Row> t;
        auto add = [&t](Verdict v, bool semantic, std::initializer_list<const char*> files) {
            for (const char* f : files)
                t.push_back({f, v, semantic});
        };
        add(Verdict::Valid, false,
            {"resources/policies/default.json",
             "resources/policies/login.json",
             "resources/policies/tiers.json",
             "resources/policies/nginx-compatible.json",
             "resources/policies/haproxy-compatible.json",
             "resources/policies/envoy-ratelimit-compatible.json",
             "tests/data/policies/valid/minimal.json",
             "tests/data/policies/valid/everything.json",
             "tests/data/policies/valid/integral-doubles.json",
             "tests/data/policies/valid/unix-socket.json",
             "tests/data/policies/valid/redis-auth.json",
             "tests/data/policies/valid/redis-auth-file.json",
             "tests/data/policies/valid/with-validation.json",
             "tests/data/policies/valid/nginx-features.json",
             "tests/data/policies/valid/envoy-features.json",
             "tests/data/policies/valid/haproxy-features.json",
             "tests/data/policies/valid/haproxy-rate.json",
             "tests/data/policies/valid/charge-by-outcome.json",
             "tests/data/policies/valid/calendar-windows.json",
             "tests/data/policies/valid/when-missing.json",
             "tests/data/policies/valid/most-specific.json"});
        add(Verdict::Syntax, false,
            {"tests/data/policies/malformed/truncated.json",
             "tests/data/policies/malformed/trailing-comma.json",
             "tests/data/policies/malformed/duplicate-key.json",
             "tests/data/policies/malformed/invalid-utf8.json",
             "tests/data/policies/malformed/bare-word.json",
             "tests/data/policies/malformed/comment.json",
             "tests/data/policies/malformed/empty.json",
             "tests/data/policies/malformed/single-quotes.json",
             "tests/data/policies/malformed/number-overflow.json",
             "tests/data/policies/malformed/leading-zero.json"});
        add(Verdict::Invalid, false,
            {"tests/data/policies/malformed/failure-status-twice.json",
             "tests/data/policies/malformed/wrong-type-capacity.json",
             "tests/data/policies/malformed/misspelt-key.json",
             "tests/data/policies/malformed/misspelt-top-key.json",
             "tests/data/policies/malformed/missing-version.json",
             "tests/data/policies/malformed/version-2.json",
             "tests/data/policies/malformed/missing-name.json",
             "tests/data/policies/malformed/bad-algorithm.json",
             "tests/data/policies/malformed/negative-capacity.json",
             "tests/data/policies/malformed/refill-zero.json",
             "tests/data/policies/malformed/window-zero.json",
             "tests/data/policies/malformed/ipv4-prefix-33.json",
             "tests/data/policies/malformed/ipv6-prefix-0.json",
             "tests/data/policies/malformed/fractional-capacity.json",
             "tests/data/policies/malformed/redis-without-url.json",
             "tests/data/policies/malformed/header-source-without-name.json",
             "tests/data/policies/malformed/prefix-and-pattern.json",
             "tests/data/policies/malformed/lowercase-method.json",
             "tests/data/policies/malformed/bad-policy-name.json",
             "tests/data/policies/malformed/empty-policies.json",
             "tests/data/policies/malformed/delay-without-leaky-bucket.json",
             "tests/data/policies/malformed/tiers-without-limits.json",
             "tests/data/policies/malformed/store-timeout-too-long.json",
             "tests/data/policies/malformed/memory-store-with-url.json",
             "tests/data/policies/malformed/url-and-urls.json",
             "tests/data/policies/malformed/nodelay-and-delay.json",
             "tests/data/policies/malformed/zero-capacity-token-bucket.json",
             "tests/data/policies/malformed/parts-without-composite.json",
             "tests/data/policies/malformed/null-prefix-without-pattern.json",
             "tests/data/policies/malformed/validation-negative-seed.json",
             "tests/data/policies/malformed/tier-name-with-space.json",
             "tests/data/policies/malformed/namespace-with-braces.json",
             "tests/data/policies/malformed/unknown-key-part.json",
             "tests/data/policies/malformed/bad-mode.json",
             "tests/data/policies/malformed/nodelay-string.json",
             "tests/data/policies/malformed/store-password-inline.json",
             "tests/data/policies/malformed/store-password-env-and-file.json",
             "tests/data/policies/malformed/store-username-without-password.json",
             "tests/data/policies/malformed/store-password-env-bad-name.json",
             "tests/data/policies/malformed/store-password-file-relative.json",
             "tests/data/policies/malformed/memory-store-with-password.json",
             "tests/data/policies/malformed/calendar-on-token-bucket.json",
             "tests/data/policies/malformed/calendar-unit-with-window.json",
             "tests/data/policies/malformed/calendar-unit-without-align.json",
             "tests/data/policies/malformed/when-missing-on-default.json",
             "tests/data/policies/malformed/routing-unknown.json",
             "tests/data/policies/malformed/expire-without-haproxy-rate.json"});
        add(Verdict::Valid, true,
            {"tests/data/policies/malformed/cidr-host-bits.json",
             "tests/data/policies/malformed/cidr-bad-length.json",
             "tests/data/policies/malformed/duplicate-policy-names.json",
             "tests/data/policies/malformed/cost-over-capacity.json",
             "tests/data/policies/malformed/redis-url-credentials.json",
             "tests/data/policies/malformed/redis-url-bad-port.json",
             "tests/data/policies/malformed/slot-ttl-below-refill.json",
             "tests/data/policies/malformed/charge-on-sliding-log.json",
             "tests/data/policies/malformed/refill-time-beyond-90-days.json",
             "tests/data/policies/malformed/token-period-beyond-90-days.json",
             "tests/data/policies/malformed/default-tier-missing.json",
             "tests/data/policies/malformed/pattern-partial-star.json",
             "tests/data/policies/malformed/pattern-two-double-stars.json",
             "tests/data/policies/malformed/sliding-window-beyond-90-days.json",
             "tests/data/policies/malformed/window-beyond-90-days.json",
             "tests/data/policies/malformed/haproxy-period-too-long.json"});
        return t;
    }();
    return table;
}

}  // namespace

class TestPolicySchema : public QObject {
    Q_OBJECT

    std::map<QString, QJsonObject> python_;  // file -> the checker's verdict

private slots:
    void initTestCase() {
        QStringList files;
        for (const Row& r : rows())
            files << r.file;
        QString error;
        python_ = testing::judgeWithSchema("resources/schema/policy.schema.json", files, error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(python_.size(), rows().size());
    }

    void schemaAndLoaderAgree_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("verdict");
        QTest::addColumn<bool>("semanticError");
        for (const Row& r : rows()) {
            QTest::newRow(r.file) << QString(r.file) << int(r.verdict) << r.semanticError;
        }
    }
    void schemaAndLoaderAgree() {
        QFETCH(QString, file);
        QFETCH(int, verdict);
        QFETCH(bool, semanticError);
        const Verdict expected = static_cast<Verdict>(verdict);

        PolicyLoadResult loaded = loadPolicyFile(testing::sourcePath(file).toStdString());
        Verdict loader = !loaded.passed(CheckLevel::Syntax)   ? Verdict::Syntax
                         : !loaded.passed(CheckLevel::Schema) ? Verdict::Invalid
                                                              : Verdict::Valid;
        QCOMPARE(testing::schemaVerdictName(loader), testing::schemaVerdictName(expected));

        const QJsonObject& py = python_[file];
        QVERIFY2(py["verdict"].toString() == testing::schemaVerdictName(expected),
                 qPrintable(testing::describeJudgement(py)));

        if (expected == Verdict::Valid) {
            QCOMPARE(loaded.passed(CheckLevel::Semantics), !semanticError);
            QCOMPARE(loaded.ok(), !semanticError);
        } else {
            QVERIFY(!loaded.ok());
        }
    }

    void tableCoversEveryFile() {
        QStringList listed;
        for (const Row& r : rows())
            listed << r.file;
        listed.sort();
        QCOMPARE(listed, testing::jsonFilesIn({"resources/policies/", "tests/data/policies/valid/",
                                               "tests/data/policies/malformed/"}));
    }
};

QTEST_GUILESS_MAIN(TestPolicySchema)
#include "tst_policy_schema.moc"
