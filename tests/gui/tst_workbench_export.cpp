// Exports from the workbench: File > Export to nginx, Envoy and HAProxy
// (app/gui/target_export.cpp), with what the target approximates confirmed before anything is
// written and what it refuses shown as an error.

#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QMessageBox>
#include <QtTest>

#include <string>

#include "engine/nginx_fixture.h"
#include "gui_fixture.h"
#include "main_window.h"
#include "ratelab/policy_export.h"
#include "target_export.h"
#include "workbench.h"

using namespace ratelab;
using namespace ratelab::gui;
using namespace ratelab::guitest;

namespace {

struct Bench {
    Bench() : workbench(ui), window(workbench, ui) { window.resize(1280, 800); }
    RecordingInteraction ui;
    Workbench workbench;
    MainWindow window;

    // File > Export to > `target`, as the user picks it.
    void exportTo(const char* target) {
        QAction* action = window.findChild<QAction*>(QStringLiteral("exportTo-") + target);
        QVERIFY2(action, target);
        action->trigger();
    }
};

QByteArray contents(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// What the engine's exporter makes of the workbench's policies.
QByteArray exported(Workbench& workbench, ExportTarget target) {
    const std::string text = exportPolicySet(workbench.document().policies(), target).text;
    return QByteArray(text.data(), static_cast<qsizetype>(text.size()));
}

}  // namespace

class TestWorkbenchExport : public QObject {
    Q_OBJECT

private slots:
    void init();
    void exportWritesWhatTheEngineExports_data();
    void exportWritesWhatTheEngineExports();
    void approximationsAreConfirmedBeforeWriting();
    void refusedExportWritesNothing();
    void documentWithErrorsIsNotExported();
    void theRealDialogListsTheApproximations();

private:
    QTemporaryDir dir_;
};

void TestWorkbenchExport::init() {
    QVERIFY(dir_.isValid());
}

// The file holds, byte for byte, what the engine's exporter returns for the document's
// policies (what `ratelab-cli export` writes too); nginx's own `nginx -t` accepts the nginx
// one. The confirmation is asked exactly when the exporter has approximations to report.
void TestWorkbenchExport::exportWritesWhatTheEngineExports_data() {
    QTest::addColumn<QString>("policy");
    QTest::addColumn<QString>("target");
    QTest::addColumn<bool>("approximated");
    const QString shipped = testing::kRoot + "resources/policies/";
    QTest::newRow("default.nginx") << shipped + "default.json"
                                   << "nginx" << true;
    QTest::newRow("default.envoy") << shipped + "default.json"
                                   << "envoy" << true;
    QTest::newRow("default.haproxy") << shipped + "default.json"
                                     << "haproxy" << true;
    // Reproduced exactly by nginx: nothing to confirm.
    QTest::newRow("nginx-compatible.nginx") << shipped + "nginx-compatible.json"
                                            << "nginx" << false;
}

void TestWorkbenchExport::exportWritesWhatTheEngineExports() {
    QFETCH(QString, policy);
    QFETCH(QString, target);
    QFETCH(bool, approximated);
    Bench b;
    QVERIFY(b.workbench.openPolicy(policy));
    b.ui.exportAnswer = true;
    b.ui.saveAnswer = dir_.filePath("out-" + target);
    b.exportTo(qPrintable(target));

    QVERIFY2(b.ui.errors.isEmpty(), qPrintable(b.ui.errors.value(0).text));
    const ExportTarget t = *parseExportTarget(target.toStdString());
    const QByteArray expected = exported(b.workbench, t);
    QVERIFY(!expected.isEmpty());
    QCOMPARE(contents(b.ui.saveAnswer), expected);
    QCOMPARE(b.ui.exportQuestions.size(), approximated ? 1 : 0);
    if (approximated) QCOMPARE(b.ui.exportQuestions[0].target, exportTargetTitle(t));
    // Proposed beside the policy file, named for the target.
    const QString stem = QFileInfo(policy).completeBaseName();
    const QString suffix = target == "nginx"   ? ".nginx.conf"
                           : target == "envoy" ? ".envoy.yaml"
                                               : ".haproxy.cfg";
    QCOMPARE(b.ui.saveSuggested, QFileInfo(policy).absoluteDir().filePath(stem + suffix));

    if (t == ExportTarget::Nginx) {
        const testing::NginxCheck check = testing::nginxTest(expected.toStdString());
        QVERIFY2(check.exitCode == 0, qPrintable(check.output));
        QVERIFY2(check.output.contains("test is successful"), qPrintable(check.output));
    }
}

// nginx carries a token bucket over as limit_req with burst and nodelay: an approximation. The
// user sees each note (what, where, how) and nothing is written until they confirm; a cancel
// asks for no file at all.
void TestWorkbenchExport::approximationsAreConfirmedBeforeWriting() {
    Bench b;
    QVERIFY(
        b.workbench.openPolicy(writeFile(dir_, "bucket.json", policyJson("token_bucket", 10, 5))));
    const ExportResult result =
        exportPolicySet(b.workbench.document().policies(), ExportTarget::Nginx);
    QVERIFY(result.ok());
    QVERIFY(!result.notes.empty());
    const QString out = dir_.filePath("bucket.nginx.conf");
    b.ui.saveAnswer = out;

    b.ui.exportAnswer = false;
    b.exportTo("nginx");
    QCOMPARE(b.ui.exportQuestions.size(), 1);
    QCOMPARE(b.ui.exportQuestions[0].target, QString("nginx"));
    const QStringList& notes = b.ui.exportQuestions[0].notes;
    QCOMPARE(notes.size(), static_cast<qsizetype>(result.notes.size()));
    for (qsizetype i = 0; i < notes.size(); ++i) {
        const ExportNote& note = result.notes[static_cast<std::size_t>(i)];
        QCOMPARE(notes[i], QString("bucket.json: warning: %1 (at %2)")
                               .arg(QString::fromStdString(note.message),
                                    QString::fromStdString(note.pointer)));
    }
    QVERIFY(!QFile::exists(out));
    QCOMPARE(b.ui.saveQuestions, 0);
    QVERIFY(b.ui.errors.isEmpty());

    b.ui.exportAnswer = true;
    b.exportTo("nginx");
    QCOMPARE(b.ui.exportQuestions.size(), 2);
    QCOMPARE(b.ui.saveQuestions, 1);
    QCOMPARE(contents(out), exported(b.workbench, ExportTarget::Nginx));
    QVERIFY(b.ui.errors.isEmpty());
}

// A sliding window would admit up to twice its quota under nginx's limit_req: nginx refuses
// it. The reason is shown as an error; no question is asked and nothing is written. HAProxy's
// period counter approximates the same policy, so that export goes ahead.
void TestWorkbenchExport::refusedExportWritesNothing() {
    Bench b;
    QVERIFY(b.workbench.openPolicy(
        writeFile(dir_, "sliding.json", policyJson("sliding_window", 10, 1))));
    const QString out = dir_.filePath("sliding.conf");
    b.ui.saveAnswer = out;
    b.ui.exportAnswer = true;
    b.exportTo("nginx");
    QVERIFY(!QFile::exists(out));
    QCOMPARE(b.ui.errors.size(), 1);
    QCOMPARE(b.ui.errors[0].title, QString("Cannot export to nginx"));
    const QString& text = b.ui.errors[0].text;
    QVERIFY2(text.contains("nginx cannot express this policy set; nothing was exported."),
             qPrintable(text));
    QVERIFY2(text.contains("sliding.json: error: nginx: "), qPrintable(text));
    QVERIFY2(text.contains("up to twice the quota"), qPrintable(text));
    QVERIFY2(text.contains("(at /policies/0/algorithm)"), qPrintable(text));
    QCOMPARE(b.ui.exportQuestions.size(), 0);
    QCOMPARE(b.ui.saveQuestions, 0);

    b.exportTo("haproxy");
    QCOMPARE(b.ui.errors.size(), 1);
    QCOMPARE(contents(out), exported(b.workbench, ExportTarget::Haproxy));
}

// Edited values with an error are not exported to any target: the error says why.
void TestWorkbenchExport::documentWithErrorsIsNotExported() {
    Bench b;
    QVERIFY(
        b.workbench.openPolicy(writeFile(dir_, "bucket.json", policyJson("token_bucket", 10, 5))));
    Policy edited = b.workbench.document().policies().policies[0];
    edited.cost = edited.capacity + 5;  // a request that can never pass
    b.workbench.document().setPolicy(0, edited);
    QVERIFY(b.workbench.document().hasErrors());
    const QString out = dir_.filePath("never.conf");
    b.ui.saveAnswer = out;
    b.ui.exportAnswer = true;
    for (const char* target : {"nginx", "envoy", "haproxy"})
        b.exportTo(target);
    QVERIFY(!QFile::exists(out));
    QCOMPARE(b.ui.errors.size(), 3);
    QCOMPARE(b.ui.errors[1].title, QString("Cannot export to Envoy"));
    for (const auto& error : b.ui.errors) {
        QVERIFY2(error.text.startsWith("The policy set has errors; nothing was exported."),
                 qPrintable(error.text));
        QVERIFY2(error.text.contains("bucket.json: error: "), qPrintable(error.text));
        QVERIFY2(error.text.contains("/policies/0/cost"), qPrintable(error.text));
    }
    QCOMPARE(b.ui.exportQuestions.size(), 0);
    QCOMPARE(b.ui.saveQuestions, 0);
}

// The real confirmation dialog names the target and lists every note; its Cancel writes nothing.
void TestWorkbenchExport::theRealDialogListsTheApproximations() {
    DialogInteraction dialogs;
    Workbench workbench(dialogs);
    MainWindow window(workbench, dialogs);
    dialogs.setParent(&window);
    window.show();
    QVERIFY(workbench.openPolicy(testing::kRoot + "resources/policies/default.json"));
    const ExportResult result =
        exportPolicySet(workbench.document().policies(), ExportTarget::Nginx);
    QVERIFY(!result.notes.empty());
    QString shown;
    QTimer watcher;
    watcher.setInterval(20);
    connect(&watcher, &QTimer::timeout, this, [&] {
        QWidget* modal = QApplication::activeModalWidget();
        if (auto* box = qobject_cast<QMessageBox*>(modal)) {
            shown = box->objectName() + "\n" + box->text() + "\n" + box->informativeText();
            box->reject();
        } else if (auto* other = qobject_cast<QDialog*>(modal)) {
            shown = other->metaObject()->className();  // not the question: a failure below
            other->reject();
        }
    });
    watcher.start();
    QVERIFY(!workbench.exportTo(ExportTarget::Nginx));
    QVERIFY(!QFile::exists(testing::kRoot + "resources/policies/default.nginx.conf"));
    QVERIFY2(shown.startsWith("confirmExportDialog\nnginx cannot express everything"),
             qPrintable(shown));
    for (const ExportNote& note : result.notes) {
        const QString escaped = QString::fromStdString(note.message).toHtmlEscaped();
        QVERIFY2(shown.contains(escaped), qPrintable(shown));
    }
}

QTEST_MAIN(TestWorkbenchExport)
#include "tst_workbench_export.moc"
