// HAProxy checks the HAProxy exports: `haproxy -c` on the export of every shipped and valid
// policy, placed as its own comments say (the backends at the top level, the rules in a
// frontend), with no alert and no warning.

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "fixtures/policy_export_fixture.h"
#include "formats/policy_export.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

const char* const kHaproxy = "/usr/sbin/haproxy";

struct HaproxyCheck {
    int exitCode = -1;
    QString output;
};

// A whole configuration around an export: what the export leaves to its user (global,
// defaults with the timeouts HAProxy warns about, a frontend to hold the rules), the export's
// part "1." (backends) at the top level and its part "2." (rules) inside the frontend.
HaproxyCheck haproxyCheck(const std::string& exported) {
    const std::string marker = "# 2. ";
    const std::size_t rules = exported.find(marker);
    QTemporaryDir dir;
    std::string config =
        "global\n"
        "    log stderr local0\n"
        "defaults\n"
        "    mode http\n"
        "    timeout connect 1s\n"
        "    timeout client 1s\n"
        "    timeout server 1s\n\n";
    config += exported.substr(0, rules);
    config += "frontend ratelab_check\n    bind unix@" + dir.filePath("s").toStdString() + "\n";
    if (rules != std::string::npos) config += exported.substr(rules);
    writeFile(dir.filePath("haproxy.cfg"), config);
    QProcess haproxy;
    haproxy.setProcessChannelMode(QProcess::MergedChannels);
    haproxy.start(kHaproxy, {"-c", "-f", dir.filePath("haproxy.cfg")});
    HaproxyCheck check;
    if (!haproxy.waitForFinished(60'000)) return check;
    check.exitCode = haproxy.exitStatus() == QProcess::NormalExit ? haproxy.exitCode() : -2;
    check.output = QString::fromUtf8(haproxy.readAll());
    return check;
}

}  // namespace

class TestPolicyExportHaproxy : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY2(QFile::exists(kHaproxy), kHaproxy); }

    void everyHaproxyExportPassesHaproxyC_data() {
        QTest::addColumn<QString>("policy");
        for (const char* dir : {"resources/policies/", "tests/data/policies/valid/"}) {
            for (const QString& f : QDir(kRoot + dir).entryList({"*.json"}, QDir::Files)) {
                QTest::newRow(qPrintable(f)) << kRoot + dir + f;
            }
        }
    }
    void everyHaproxyExportPassesHaproxyC() {
        QFETCH(QString, policy);
        const formats::ExportResult result = formats::exportPolicySet(load(policy), formats::ExportTarget::Haproxy);
        if (!result.ok()) {
            // Refused: nothing to check with HAProxy, and the refusal must say why.
            QVERIFY(result.text.empty());
            QVERIFY(!result.notes.empty());
            return;
        }
        QVERIFY(result.text.find("# 2. ") != std::string::npos);
        const HaproxyCheck check = haproxyCheck(result.text);
        QVERIFY2(check.exitCode == 0, qPrintable(check.output));
        QVERIFY2(check.output.contains("Configuration file is valid"), qPrintable(check.output));
        QVERIFY2(!check.output.contains("[WARNING]") && !check.output.contains("[ALERT]"),
                 qPrintable(check.output));
    }
    void haproxyRejectsABrokenExport() {
        // The check above would catch a broken export: HAProxy refuses an unknown table type.
        const HaproxyCheck check = haproxyCheck(
            "backend ratelab_x\n    stick-table type ipv7 size 1000 expire 8s\n"
            "# 2. rules\n    http-request track-sc0 src table ratelab_x\n");
        QVERIFY(check.exitCode != 0);
        QVERIFY2(check.output.contains("ipv7"), qPrintable(check.output));
    }
};

QTEST_GUILESS_MAIN(TestPolicyExportHaproxy)
#include "tst_policy_export_haproxy.moc"
