// The import corpus: configurations in the shapes real sites use, and malformed ones, in
// tests/data/import/nginx/ and tests/data/import/haproxy/. Each has beside it NAME.expected:
// what the product's own check says of it (`nginx -t`, `haproxy -c`, run here on the file),
// every diagnostic of the import, and the policies written. A file the product refuses must be
// refused by the import too, at the line the product names.
//
// RATELAB_WRITE_IMPORT_EXPECTED=1 writes the .expected files from what the import does now
// (review them with git diff) and fails.

#include <QDir>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include "fixtures/import_fixture.h"
#include "fixtures/policy_export_fixture.h"
#include "formats/import/haproxy/haproxy_import.h"
#include "formats/import/nginx/nginx_import.h"
#include "formats/import/policy_import.h"

using namespace ratelab;
using namespace ratelab::formats;
using namespace ratelab::testing;

namespace {

const char* const kHaproxy = "/usr/sbin/haproxy";

// What the product's own check says: "ok", or "fails" with the line it names ("fails at 12"),
// or "fails" alone when it names none.
std::string productCheck(bool nginxKind, const QString& path) {
    QTemporaryDir prefix;
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    if (nginxKind) {
        p.start(kNginx,
                {"-t", "-p", prefix.path(), "-c", path, "-e", prefix.filePath("error.log")});
    } else {
        p.start(kHaproxy, {"-c", "-f", path});
    }
    if (!p.waitForFinished(60'000)) return "did not finish";
    const QString out = QString::fromUtf8(p.readAll());
    if (p.exitCode() == 0) return "ok";
    const QRegularExpression line(nginxKind ? QString(" in [^ ]+:(\\d+)\\n")
                                            : QString("parsing \\[[^:\\]]+:(\\d+)\\]"));
    const QRegularExpressionMatch m = line.match(out);
    return m.hasMatch() ? "fails at " + m.captured(1).toStdString() : "fails";
}

struct Imported {
    std::string text;        // diagnostics, then the policies
    std::string firstError;  // "LINE" of the first error with a line, or "none"
    bool errors = false;
};

Imported runImport(bool nginxKind, const QString& path, const QString& dir) {
    ImportLog log;
    std::optional<PolicyJson> file;
    if (nginxKind) {
        const nginx::NginxConfig config = nginx::readNginxConfig(path.toStdString(), log);
        file = nginx::mapNginxConfig(config, log);
    } else {
        const haproxy::HaproxyConfig config = haproxy::readHaproxyConfig({path.toStdString()}, log);
        file = haproxy::mapHaproxyConfig(config, log);
    }
    Imported out;
    const std::string root = dir.toStdString() + "/";
    for (const Diagnostic& d : log.take()) {
        std::string line = formatDiagnostic(d);
        for (std::size_t at; (at = line.find(root)) != std::string::npos;)
            line.erase(at, root.size());
        out.text += line + "\n";
        if (d.severity == Diagnostic::Severity::Error) {
            out.errors = true;
            if (out.firstError.empty() && d.line > 0) out.firstError = std::to_string(d.line);
        }
    }
    out.text += "--- policies\n";
    if (file) out.text += policyLines(*file);
    return out;
}

}  // namespace

class TestImportCorpus : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QVERIFY2(QFile::exists(kNginx), kNginx);
        QVERIFY2(QFile::exists(kHaproxy), kHaproxy);
    }

    void corpus_data() {
        QTest::addColumn<bool>("nginxKind");
        QTest::addColumn<QString>("file");
        int nginxFiles = 0, haproxyFiles = 0;
        const QString nginxDir = kRoot + "tests/data/import/nginx";
        QStringList nginxNames = QDir(nginxDir).entryList({"*.conf"}, QDir::Files);
        nginxNames << "sites/nginx.conf";
        for (const QString& f : nginxNames) {
            QTest::newRow(qPrintable("nginx/" + f)) << true << nginxDir + "/" + f;
            ++nginxFiles;
        }
        const QString haproxyDir = kRoot + "tests/data/import/haproxy";
        for (const QString& f : QDir(haproxyDir).entryList({"*.cfg"}, QDir::Files)) {
            QTest::newRow(qPrintable("haproxy/" + f)) << false << haproxyDir + "/" + f;
            ++haproxyFiles;
        }
        QVERIFY(nginxFiles >= 10);
        QVERIFY(haproxyFiles >= 10);
    }
    void corpus() {
        QFETCH(bool, nginxKind);
        QFETCH(QString, file);
        const QString dir =
            kRoot + (nginxKind ? "tests/data/import/nginx" : "tests/data/import/haproxy");
        const std::string check = productCheck(nginxKind, file);
        const Imported imported = runImport(nginxKind, file, dir);
        const std::string got =
            std::string(nginxKind ? "nginx -t: " : "haproxy -c: ") + check + "\n" + imported.text;
        const QString expectedPath = file + ".expected";
        if (std::getenv("RATELAB_WRITE_IMPORT_EXPECTED")) {
            writeFile(expectedPath, got);
            QFAIL("wrote the .expected file; review it with git diff");
        }
        QVERIFY2(QFile::exists(expectedPath), qPrintable(expectedPath));
        QCOMPARE(QString::fromStdString(got), QString::fromUtf8(readFile(expectedPath)));
        // The workbench can tell which product a file is for (the malformed and empty ones
        // too, as long as they say anything of rate limits).
        if (imported.text.find("no rate limit") == std::string::npos) {
            QCOMPARE(
                detectImportKind(file.toStdString(), readText(file)),
                std::optional<ImportKind>(nginxKind ? ImportKind::Nginx : ImportKind::Haproxy));
        }
        // Whatever the product refuses, the import refuses, at the same line.
        if (check != "ok") {
            QVERIFY2(imported.errors, check.c_str());
            if (check.rfind("fails at ", 0) == 0) QCOMPARE(imported.firstError, check.substr(9));
        }
    }
};

QTEST_GUILESS_MAIN(TestImportCorpus)
#include "tst_import_corpus.moc"
