// Exports from the workbench: File > Export to nginx, Envoy and HAProxy
// (app/gui/policy/target_export.cpp), with what the target approximates confirmed before anything is
// written and what it refuses shown as an error, and each chart's context menu saving the plot as
// PNG and its series as CSV (app/gui/plot/chart_export.cpp).

#include <QAction>
#include <QApplication>
#include <QContextMenuEvent>
#include <QDialog>
#include <QGraphicsView>
#include <QImage>
#include <QMenu>
#include <QMessageBox>
#include <QtTest>

#include <clocale>
#include <cstdio>
#include <string>

#include "gui/plot/chart_export.h"
#include "gui/plot/charts_panel.h"
#include "fixtures/nginx_fixture.h"
#include "fixtures/gui_fixture.h"
#include "gui/window/main_window.h"
#include "gui/plot/time_plot.h"
#include "formats/policy_export.h"
#include "gui/policy/target_export.h"
#include "fixtures/window_fixture.h"
#include "gui/session/workbench.h"

using namespace ratelab;
using namespace ratelab::gui;
using namespace ratelab::guitest;

namespace {

struct Bench : WindowBench {
    Bench() { window.resize(1280, 800); }

    // File > Export to > `target`, as the user picks it.
    void exportTo(const char* target) {
        QAction* action = window.findChild<QAction*>(QStringLiteral("exportTo-") + target);
        QVERIFY2(action, target);
        action->trigger();
    }
    // A chart's context-menu entry, as the user picks it.
    void chartAction(ChartKind kind, const char* name) {
        QAction* action = window.charts()->plot(kind)->findChild<QAction*>(name);
        QVERIFY2(action, name);
        action->trigger();
    }
};

QByteArray contents(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// What the engine's exporter makes of the workbench's policies.
QByteArray exported(Workbench& workbench, formats::ExportTarget target) {
    const std::string text = formats::exportPolicySet(workbench.document().policies(), target).text;
    return QByteArray(text.data(), static_cast<qsizetype>(text.size()));
}

// The German locale, for Qt (QLocale) and for the C library (printf's LC_NUMERIC), while alive.
class GermanLocale {
public:
    GermanLocale() : qt_(QLocale()), c_(std::setlocale(LC_NUMERIC, nullptr)) {
        QLocale::setDefault(QLocale(QLocale::German, QLocale::Germany));
        cApplied_ = std::setlocale(LC_NUMERIC, "de_DE.UTF-8") != nullptr;
    }
    ~GermanLocale() {
        QLocale::setDefault(qt_);
        std::setlocale(LC_NUMERIC, c_.c_str());
    }
    bool cApplied() const { return cApplied_; }

private:
    QLocale qt_;
    std::string c_;
    bool cApplied_ = false;
};

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
    void csvHoldsTheFullSeriesWithDots();
    void pngIsThePlotAsShown();
    void rightClickOffersBothEntries();

private:
    // Runs the flood scenario (20 samples of 1.5 s) to its end.
    void runToTheEnd(Bench& b);

    QTemporaryDir dir_;
    QString scenario_;
};

void TestWorkbenchExport::init() {
    QVERIFY(dir_.isValid());
    // Samples of 1.5 s: times and rates with a fractional part, where a comma could slip in.
    scenario_ = writeFile(
        dir_, "flood.json",
        attackScenarioJson("flood", 100, 30).replace("\"sample_ms\": 1000", "\"sample_ms\": 1500"));
}

void TestWorkbenchExport::runToTheEnd(Bench& b) {
    QVERIFY(
        b.workbench.openPolicy(writeFile(dir_, "bucket.json", policyJson("token_bucket", 10, 5))));
    QVERIFY(b.workbench.openScenario(scenario_));
    b.workbench.setSpeed(0);
    b.workbench.run();
    SimulationSession& session = b.workbench.session();
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Finished; }));
    QCOMPARE(b.workbench.series().size(), std::size_t(20));
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
    const formats::ExportTarget t = *formats::parseExportTarget(target.toStdString());
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

    if (t == formats::ExportTarget::Nginx) {
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
    const formats::ExportResult result =
        formats::exportPolicySet(b.workbench.document().policies(), formats::ExportTarget::Nginx);
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
        const formats::ExportNote& note = result.notes[static_cast<std::size_t>(i)];
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
    QCOMPARE(contents(out), exported(b.workbench, formats::ExportTarget::Nginx));
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
    QCOMPARE(contents(out), exported(b.workbench, formats::ExportTarget::Haproxy));
}

// Edited values with an error are not exported to any target: the error says why. Nor is an
// empty editor, before any policy was opened.
void TestWorkbenchExport::documentWithErrorsIsNotExported() {
    Bench b;
    b.ui.saveAnswer = dir_.filePath("empty.conf");
    b.exportTo("nginx");
    QCOMPARE(b.ui.errors.size(), 1);
    QCOMPARE(b.ui.errors[0].text, QString("Open a policy file first: there is nothing to export."));
    QVERIFY(!QFile::exists(b.ui.saveAnswer));
    b.ui.errors.clear();

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
    const formats::ExportResult result =
        formats::exportPolicySet(workbench.document().policies(), formats::ExportTarget::Nginx);
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
    QVERIFY(!workbench.exportTo(formats::ExportTarget::Nginx));
    QVERIFY(!QFile::exists(testing::kRoot + "resources/policies/default.nginx.conf"));
    QVERIFY2(shown.startsWith("confirmExportDialog\nnginx cannot express everything"),
             qPrintable(shown));
    for (const formats::ExportNote& note : result.notes) {
        const QString escaped = QString::fromStdString(note.message).toHtmlEscaped();
        QVERIFY2(shown.contains(escaped), qPrintable(shown));
    }
}

// After a run, the traffic chart's CSV has the header t_s and the chart's series names, one
// row per sample, every value equal to RunSeries' value, and dots although the locale (Qt's
// and the C library's) writes commas.
void TestWorkbenchExport::csvHoldsTheFullSeriesWithDots() {
    GermanLocale german;
    QCOMPARE(QLocale().toString(1.5), QString("1,5"));
    if (german.cApplied()) {
        char buffer[16];
        std::snprintf(buffer, sizeof buffer, "%.1f", 1.5);
        QCOMPARE(QByteArray(buffer), QByteArray("1,5"));  // printf would write a comma
    }
    Bench b;
    runToTheEnd(b);
    if (QTest::currentTestFailed()) return;
    const RunSeries& series = b.workbench.series();
    std::vector<std::size_t> traffic;
    QStringList names;
    for (std::size_t i = 0; i < series.specs().size(); ++i) {
        if (series.specs()[i].chart != ChartKind::Traffic) continue;
        traffic.push_back(i);
        names << series.specs()[i].name;
    }
    QCOMPARE(names, QStringList({"legit allowed", "legit throttled", "attacker allowed",
                                 "attacker throttled"}));

    const QString out = dir_.filePath("traffic.csv");
    b.ui.saveAnswer = out;
    QSignalSpy saved(b.window.chartExport(), &ChartExport::saved);
    b.chartAction(ChartKind::Traffic, "saveSeriesCsvAction");
    QVERIFY(saved.wait(10000));
    QCOMPARE(saved.at(0).at(0).toString(), out);
    QCOMPARE(saved.at(0).at(1).toBool(), true);
    QVERIFY(b.ui.errors.isEmpty());

    const QStringList lines = QString::fromUtf8(contents(out)).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), static_cast<qsizetype>(series.size()) + 1);
    QCOMPARE(lines[0], "t_s," + names.join(','));
    const QLocale c = QLocale::c();  // reads dots only
    bool fractional = false;
    for (std::size_t k = 0; k < series.size(); ++k) {
        const QStringList fields = lines[static_cast<qsizetype>(k) + 1].split(',');
        QCOMPARE(fields.size(), names.size() + 1);
        bool ok = false;
        QCOMPARE(c.toDouble(fields[0], &ok), series.xs()[k]);
        QVERIFY2(ok, qPrintable(fields[0]));
        for (std::size_t j = 0; j < traffic.size(); ++j) {
            const QString& field = fields[static_cast<qsizetype>(j) + 1];
            QCOMPARE(c.toDouble(field, &ok), series.ys(traffic[j])[k]);
            QVERIFY2(ok, qPrintable(field));
            fractional = fractional || field.contains('.');
        }
    }
    QCOMPARE(lines[1].section(',', 0, 0), QString("1.5"));  // the first sample ends at 1.5 s
    QVERIFY(fractional);  // rates per 1.5 s: some have a fractional part, written with a dot
}

// The PNG is the plot widget as shown: it loads, at the plot's size.
void TestWorkbenchExport::pngIsThePlotAsShown() {
    Bench b;
    b.window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&b.window));
    runToTheEnd(b);
    if (QTest::currentTestFailed()) return;
    const QString out = dir_.filePath("keyspace.png");
    b.ui.saveAnswer = out;
    QSignalSpy saved(b.window.chartExport(), &ChartExport::saved);
    b.chartAction(ChartKind::Keyspace, "saveChartPngAction");
    QVERIFY(saved.wait(10000));
    QCOMPARE(saved.at(0).at(1).toBool(), true);
    QVERIFY(b.ui.errors.isEmpty());
    QImage image;
    QVERIFY(image.load(out, "PNG"));
    TimePlot* plot = b.window.charts()->plot(ChartKind::Keyspace);
    QCOMPARE(image.size(), plot->size() * plot->devicePixelRatio());
    QVERIFY(plot->width() > 100 && plot->height() > 100);

    // A file that cannot be written is an error and says where.
    b.ui.saveAnswer = dir_.filePath("missing/folder/keyspace.png");
    b.chartAction(ChartKind::Keyspace, "saveChartPngAction");
    QVERIFY(saved.wait(10000));
    QCOMPARE(saved.at(1).at(1).toBool(), false);
    QCOMPARE(b.ui.errors.size(), 1);
    QVERIFY2(b.ui.errors[0].text.contains("missing/folder/keyspace.png"),
             qPrintable(b.ui.errors[0].text));
}

// A right-click inside a chart opens a menu with both entries.
void TestWorkbenchExport::rightClickOffersBothEntries() {
    Bench b;
    b.window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&b.window));
    for (ChartKind kind : kChartKinds) {
        QWidget* viewport = b.window.charts()->plot(kind)->findChild<QGraphicsView*>()->viewport();
        QStringList entries;
        QObject scope;  // the check below never outlives this round
        QTimer::singleShot(0, &scope, [&entries] {
            if (auto* menu = qobject_cast<QMenu*>(QApplication::activePopupWidget())) {
                for (QAction* a : menu->actions())
                    entries << a->text();
                menu->close();
            }
        });
        const QPoint at = viewport->rect().center();
        QContextMenuEvent event(QContextMenuEvent::Mouse, at, viewport->mapToGlobal(at));
        QApplication::sendEvent(viewport, &event);
        QCOMPARE(entries, QStringList({"Save chart as PNG...", "Save series as CSV..."}));
    }
}

QTEST_MAIN(TestWorkbenchExport)
#include "tst_workbench_export.moc"
