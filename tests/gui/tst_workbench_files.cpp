// Files in the workbench (app/gui/session/workbench.cpp): the validated export, malformed policies
// and scenarios reported with line and column while nothing the user typed is lost, unsaved edits,
// saving, and access-log replay.

#include <QApplication>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QSpinBox>
#include <QTableWidget>
#include <QtTest>

#include "fixtures/cli_fixture.h"
#include "fixtures/file_fixture.h"
#include "fixtures/gui_fixture.h"
#include "fixtures/window_fixture.h"
#include "formats/import/policy_import.h"
#include "gui/policy/import_warnings_dialog.h"
#include "gui/policy/policy_editor.h"
#include "gui/session/workbench.h"
#include "gui/window/main_window.h"
#include "ratelab/policy_file.h"

using namespace ratelab;
using namespace ratelab::gui;
using namespace ratelab::guitest;

namespace {

struct Bench : WindowBench {
    Bench() { window.resize(1280, 800); }

    QSpinBox* capacity() { return window.policyEditor()->findChild<QSpinBox*>("capacitySpin"); }
};

// A policy file with one mistake; `line`/`column` say where the loader must point.
struct BadPolicy {
    const char* text;
    int line;
    int column;
    const char* words;  // part of the message
};

}  // namespace

class TestWorkbenchFiles : public QObject {
    Q_OBJECT

private slots:
    void init();
    void exportWritesAValidatedPolicy();
    void malformedPolicyNamesLineAndColumn_data();
    void malformedPolicyNamesLineAndColumn();
    void malformedScenarioNamesLineAndColumn();
    void theRealDialogShowsTheDiagnostic();
    void importLimits_data();
    void importLimits();
    void importWarningsPointAtTheirLines();
    void unsavedEditsAreNotDiscardedSilently();
    void saveWritesWhatTheEditorShows();
    void closingAsksAboutUnsavedEdits();
    void accessLogReplaysWithTheSameCharts();
    void theLogFormatIsAskedAndUsed();
    void fitAScenarioToALog();

private:
    QTemporaryDir dir_;
    QString policy_;
    QString scenario_;
};

void TestWorkbenchFiles::init() {
    QVERIFY(dir_.isValid());
    policy_ = writeFile(dir_, "window.json", policyJson("fixed_window", 10, 1.0, 1000));
    scenario_ = writeFile(dir_, "flood.json", attackScenarioJson("flood", 100, 30));
}

// The export replays the scenario with the edited policies and embeds the run: the file loads,
// carries the same request count and the expectation's actual value, and ratelab-cli
// validate accepts it.
void TestWorkbenchFiles::exportWritesAValidatedPolicy() {
    Bench b;
    QVERIFY(b.workbench.openPolicy(policy_));
    QVERIFY(b.workbench.openScenario(scenario_));
    b.workbench.setSpeed(0);
    b.workbench.run();
    SimulationSession& session = b.workbench.session();
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Finished; }));
    const std::int64_t requests = session.requests();
    QVERIFY(requests >= 3000);

    const QString out = dir_.filePath("validated.json");
    QSignalSpy done(&b.workbench, &Workbench::exportFinished);
    b.workbench.exportValidated(out);
    QVERIFY(done.wait(30000));
    QCOMPARE(done.at(0).at(1).toBool(), true);
    QVERIFY(b.ui.errors.isEmpty());

    PolicyLoadResult loaded = loadPolicyFile(out.toStdString());
    QVERIFY2(loaded.ok(), loaded.diagnostics.empty()
                              ? "no diagnostics"
                              : formatDiagnostic(loaded.diagnostics[0]).c_str());
    QVERIFY(loaded.policies->validation.has_value());
    const ValidationRecord& record = *loaded.policies->validation;
    QVERIFY(QString::fromStdString(record.generator).startsWith("ratelab "));
    QCOMPARE(record.runs.size(), std::size_t(1));
    const ValidationRun& run = record.runs[0];
    QCOMPARE(run.scenario, std::string("flood"));
    QCOMPARE(run.seed, std::uint64_t(11));
    QCOMPARE(run.requests, requests);
    QCOMPARE(run.pass, true);
    QCOMPARE(run.expectations.size(), std::size_t(1));
    QCOMPARE(run.expectations[0].metric, std::string("attacker.allowed_per_s"));
    QCOMPARE(run.expectations[0].actual, 10.0);  // the quota of 10 per one-second window
    QCOMPARE(loaded.policies->policies[0].capacity, std::int64_t(10));

    const testing::CliRun cli = testing::runCli({"validate", out});
    QVERIFY2(cli.exitCode == 0, qPrintable(cli.err));
}

void TestWorkbenchFiles::malformedPolicyNamesLineAndColumn_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("words");
    const QByteArray head =
        "{\n  \"version\": 1,\n  \"policies\": [\n    {\n      \"name\": \"api\",\n";
    QTest::newRow("wrong type") << head + "      \"capacity\": \"ten\"\n    }\n  ]\n}\n"
                                << 6 << 19 << "capacity";
    QTest::newRow("unknown key") << head + "      \"capacty\": 5\n    }\n  ]\n}\n"
                                 << 6 << 7 << "capacity";
    QTest::newRow("syntax") << head + "      \"capacity\": 5,\n    }\n  ]\n}\n" << 7 << 5 << "";
}

// A policy that does not load: the dialog names FILE:LINE:COLUMN and the problem, and the
// editor keeps the value the user typed, even though the user chose to discard it.
void TestWorkbenchFiles::malformedPolicyNamesLineAndColumn() {
    QFETCH(QByteArray, text);
    QFETCH(int, line);
    QFETCH(int, column);
    QFETCH(QString, words);
    Bench b;
    QVERIFY(b.workbench.openPolicy(policy_));
    b.capacity()->setValue(37);
    QVERIFY(b.workbench.document().isModified());

    const QString bad = writeFile(dir_, "bad.json", text);
    b.ui.unsavedAnswer = UserInteraction::UnsavedChoice::Discard;
    QVERIFY(!b.workbench.openPolicy(bad));
    QCOMPARE(b.ui.unsavedQuestions, 1);
    QCOMPARE(b.ui.errors.size(), 1);
    const QString message = b.ui.errors[0].text;
    const QString where = QStringLiteral("%1:%2:%3: error").arg(bad).arg(line).arg(column);
    QVERIFY2(message.contains(where), qPrintable(message));
    QVERIFY2(message.contains(words), qPrintable(message));

    QCOMPARE(b.capacity()->value(), 37);
    QCOMPARE(b.workbench.document().policies().policies[0].capacity, std::int64_t(37));
    QVERIFY(b.workbench.document().isModified());
    QCOMPARE(b.workbench.document().path(), policy_);
}

// File > Import limits...: the kind detected from the file, confirmed or overridden; the import's
// warnings shown; the policies in the editor as a new, unsaved set, or an error at
// FILE:LINE:COLUMN and the editor unchanged.
void TestWorkbenchFiles::importLimits_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("answer");   // the kind chooser's: empty accepts the detected one
    QTest::addColumn<int>("detected");     // the index the chooser was offered (-1: none)
    QTest::addColumn<QString>("policy");   // the first imported policy's name; empty: not loaded
    QTest::addColumn<QString>("message");  // in the warnings (loaded) or the error (not)
    const QString nginx = "nginx/basic-per-ip.conf";
    QTest::newRow("nginx detected") << nginx << "" << 0 << "one.search"
                                    << "basic-per-ip.conf:38:13: warning: nginx refuses with 503";
    QTest::newRow("overridden as haproxy") << nginx << "haproxy" << 0 << ""
                                           << "was not imported as haproxy";
    QTest::newRow("cancelled") << nginx << "-" << 0 << ""
                               << "";
    QTest::newRow("malformed") << "nginx/malformed-bad-rate.conf"
                               << "" << 0 << ""
                               << "malformed-bad-rate.conf:";
}

void TestWorkbenchFiles::importLimits() {
    QFETCH(QString, file);
    QFETCH(QString, answer);
    QFETCH(int, detected);
    QFETCH(QString, policy);
    QFETCH(QString, message);
    Bench b;
    QVERIFY(b.workbench.openPolicy(policy_));
    const QString path = QStringLiteral(RATELAB_SOURCE_DIR) + "/tests/data/import/" + file;
    b.ui.importKindAnswer = answer;
    b.ui.openAnswer = path;  // File > Import limits... asks for the file, then the kind
    auto* action = b.window.findChild<QAction*>("importLimitsAction");
    QVERIFY(action);
    action->trigger();
    QCOMPARE(b.ui.importKindQuestions.size(), 1);
    QCOMPARE(b.ui.importKindQuestions[0].second, detected);
    if (policy.isEmpty()) {
        QCOMPARE(b.workbench.document().path(), policy_);
        QCOMPARE(b.workbench.document().policies().policies[0].name, std::string("api"));
        QCOMPARE(b.ui.errors.size(), message.isEmpty() ? 0 : 1);
        if (!message.isEmpty()) {
            QVERIFY2(b.ui.errors[0].text.contains(message), qPrintable(b.ui.errors[0].text));
            QVERIFY2(b.ui.errors[0].text.contains(QRegularExpression(R"(:\d+:\d+: error: )")),
                     qPrintable(b.ui.errors[0].text));
        }
        return;
    }
    QVERIFY(b.ui.errors.isEmpty());
    QCOMPARE(b.ui.importWarnings.size(), 1);
    QCOMPARE(b.ui.importWarnings[0].first, answer.isEmpty() ? QString("nginx") : answer);
    const QString warnings =
        QString::fromStdString(formatDiagnostics(b.ui.importWarnings[0].second));
    QVERIFY2(warnings.contains(message), qPrintable(warnings));
    QCOMPARE(b.workbench.document().path(), QString());
    QCOMPARE(QString::fromStdString(b.workbench.document().policies().policies[0].name), policy);
    QCOMPARE(b.workbench.document().policies().policies[0].capacity, std::int64_t(5));
    // The imported set is the editor's "as loaded": compare mode runs it as A.
    QVERIFY(b.workbench.compareWithLoaded());
    QVERIFY(b.workbench.isComparing());
}

// The real warnings dialog lists each warning and shows the configuration's lines around the
// selected one, that line marked.
void TestWorkbenchFiles::importWarningsPointAtTheirLines() {
    const QString path =
        QStringLiteral(RATELAB_SOURCE_DIR) + "/tests/data/import/nginx/basic-per-ip.conf";
    const formats::ImportResult imported =
        formats::importPolicies(formats::ImportKind::Nginx, {path.toStdString()});
    QVERIFY(imported.policies && imported.diagnostics.size() >= 2);
    gui::ImportWarningsDialog dialog("nginx", imported.diagnostics);
    auto* table = dialog.findChild<QTableWidget*>("importWarnings");
    QVERIFY(table);
    QCOMPARE(table->rowCount(), static_cast<int>(imported.diagnostics.size()));
    const QStringList lines = QString::fromUtf8(testing::readFile(path)).split('\n');
    for (int row = 0; row < table->rowCount(); ++row) {
        const Diagnostic& d = imported.diagnostics[row];
        QCOMPARE(table->item(row, 1)->text(), QString::fromStdString(d.message));
        QVERIFY(table->item(row, 0)->text().endsWith(
            QStringLiteral(":%1:%2").arg(d.line).arg(d.column)));
        dialog.showWarning(row);
        QCOMPARE(table->currentRow(), row);
        const QString marked = QStringLiteral("> %1| %2").arg(d.line).arg(lines[d.line - 1]);
        QVERIFY2(dialog.excerpt().contains(marked), qPrintable(dialog.excerpt()));
    }
    QCOMPARE(gui::sourceExcerpt(path, 2, 1),
             QStringLiteral("  1| %1\n> 2| %2\n  3| %3\n").arg(lines[0], lines[1], lines[2]));
    QVERIFY(gui::sourceExcerpt(path + ".missing", 3).contains("cannot be read"));
}

void TestWorkbenchFiles::malformedScenarioNamesLineAndColumn() {
    Bench b;
    QVERIFY(b.workbench.openPolicy(policy_));
    QVERIFY(b.workbench.openScenario(scenario_));
    QByteArray text = attackScenarioJson("broken", 100, 30);
    text.replace("\"rate_per_s\": 100", "\"rate_per_s\": -3");
    const int line = text.left(text.indexOf("-3")).count('\n') + 1;
    const int column =
        static_cast<int>(text.indexOf("-3") - text.lastIndexOf('\n', text.indexOf("-3")));
    const QString bad = writeFile(dir_, "broken.json", text);
    QVERIFY(!b.workbench.openScenario(bad));
    QCOMPARE(b.ui.errors.size(), 1);
    const QString where = QStringLiteral("%1:%2:%3: error").arg(bad).arg(line).arg(column);
    QVERIFY2(b.ui.errors[0].text.contains(where), qPrintable(b.ui.errors[0].text));
    QVERIFY(b.ui.errors[0].text.contains("rate_per_s"));
    QCOMPARE(b.workbench.scenario().name, std::string("flood"));  // the previous one stays
}

// With the real dialogs: the message box appears with the diagnostic, and the test closes it
// from a timer (it never blocks on a modal window).
void TestWorkbenchFiles::theRealDialogShowsTheDiagnostic() {
    DialogInteraction dialogs;
    Workbench workbench(dialogs);
    MainWindow window(workbench, dialogs);
    dialogs.setParent(&window);
    window.show();
    QVERIFY(workbench.openPolicy(policy_));
    const QString bad = writeFile(
        dir_, "bad.json",
        "{\n  \"version\": 1,\n  \"policies\": [ { \"name\": \"api\", \"cost\": 0 } ]\n}\n");
    QString shown;
    QTimer watcher;
    watcher.setInterval(20);
    connect(&watcher, &QTimer::timeout, this, [&] {
        if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
            shown = box->text() + "\n" + box->informativeText();
            box->accept();
            watcher.stop();
        }
    });
    watcher.start();
    QVERIFY(!workbench.openPolicy(bad));
    QVERIFY2(shown.contains(QStringLiteral("bad.json:3:")), qPrintable(shown));
    QVERIFY(shown.contains("cost"));
    QCOMPARE(workbench.document().path(), policy_);
}

void TestWorkbenchFiles::unsavedEditsAreNotDiscardedSilently() {
    Bench b;
    QVERIFY(b.workbench.openPolicy(policy_));
    b.capacity()->setValue(25);
    const QString other = writeFile(dir_, "other.json", policyJson("token_bucket", 50, 5.0));

    b.ui.unsavedAnswer = UserInteraction::UnsavedChoice::Cancel;
    QVERIFY(!b.workbench.openPolicy(other));
    QCOMPARE(b.ui.unsavedQuestions, 1);
    QCOMPARE(b.capacity()->value(), 25);
    QVERIFY(b.workbench.document().isModified());

    // Save: the edit goes to the file it came from, then the other file opens.
    b.ui.unsavedAnswer = UserInteraction::UnsavedChoice::Save;
    QVERIFY(b.workbench.openPolicy(other));
    QCOMPARE(b.ui.unsavedQuestions, 2);
    QCOMPARE(b.capacity()->value(), 50);
    PolicyLoadResult saved = loadPolicyFile(policy_.toStdString());
    QVERIFY(saved.ok());
    QCOMPARE(saved.policies->policies[0].capacity, std::int64_t(25));
    QVERIFY(b.ui.errors.isEmpty());
}

void TestWorkbenchFiles::saveWritesWhatTheEditorShows() {
    Bench b;
    QVERIFY(b.workbench.openPolicy(policy_));
    b.capacity()->setValue(64);
    const QString target = dir_.filePath("saved.json");
    QVERIFY(b.workbench.savePolicy(target));
    QVERIFY(!b.workbench.document().isModified());
    QCOMPARE(b.workbench.document().path(), target);
    PolicyLoadResult saved = loadPolicyFile(target.toStdString());
    QVERIFY(saved.ok());
    QCOMPARE(saved.policies->policies[0].capacity, std::int64_t(64));
    QCOMPARE(saved.policies->policies[0].algorithm, Algorithm::FixedWindow);
    // Saving again gives the same bytes (the canonical writer).
    QFile f(target);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray first = f.readAll();
    f.close();
    QVERIFY(b.workbench.savePolicy());
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), first);
}

void TestWorkbenchFiles::closingAsksAboutUnsavedEdits() {
    Bench b;
    b.window.show();
    QVERIFY(b.workbench.openPolicy(policy_));
    b.capacity()->setValue(12);
    b.ui.unsavedAnswer = UserInteraction::UnsavedChoice::Cancel;
    QVERIFY(!b.window.close());
    QVERIFY(b.window.isVisible());
    QCOMPARE(b.ui.unsavedQuestions, 1);
    b.ui.unsavedAnswer = UserInteraction::UnsavedChoice::Discard;
    QVERIFY(b.window.close());
}

// A CSV access log with two unreadable lines: replayed like a scenario, the unreadable lines
// reported by number, every readable line decided.
void TestWorkbenchFiles::accessLogReplaysWithTheSameCharts() {
    QByteArray csv = "ts_ms,key\n";
    int readable = 0;
    for (int i = 0; i < 2000; ++i) {
        if (i == 5) csv += "not a line\n";
        if (i == 700) csv += "12x,198.51.100.1\n";
        csv += QByteArray::number(1'700'000'000'000LL + i * 5) + "," +
               (i % 4 == 0 ? "198.51.100.1" : "203.0.113.7") + "\n";
        ++readable;
    }
    const QString log = writeFile(dir_, "access.csv", csv);
    Bench b;
    QVERIFY(b.workbench.openPolicy(policy_));
    QSignalSpy opened(&b.workbench, &Workbench::accessLogOpened);
    b.workbench.openAccessLog(log);
    QVERIFY(opened.wait(30000));
    QCOMPARE(opened.at(0).at(1).toBool(), true);
    QVERIFY(b.workbench.scenarioNotes().contains("2 lines could not be parsed (lines 7, 703)"));
    QCOMPARE(QString::fromStdString(b.workbench.scenario().title), QString("Replay of access.csv"));

    b.workbench.setSpeed(0);
    b.workbench.run();
    SimulationSession& session = b.workbench.session();
    QVERIFY(waitForFrames(session, [&] { return session.state() == RunState::Finished; }));
    QCOMPARE(session.requests(), std::int64_t(readable));
    // 10 seconds of log at 200 lines per second: each second the busy client offers 150 and
    // gets its window's 10; the quiet one offers 50 and also gets 10.
    const RunSeries& series = b.workbench.series();
    QCOMPARE(series.specs()[0].name, QString("log allowed"));
    QCOMPARE(series.ys(0)[0], 20.0);
    QCOMPARE(series.ys(1)[0], 180.0);
    QVERIFY(b.ui.errors.isEmpty());
}

// File > Open access log... asks how the log is written: a JSON log with ISO-8601 times and its
// fields named by path opens as the CLI's `--field` reads it; an answer the parser refuses is
// an error before any reading; a cancelled question opens nothing.
void TestWorkbenchFiles::theLogFormatIsAskedAndUsed() {
    const QString log = QStringLiteral(RATELAB_SOURCE_DIR) + "/tests/data/logs/iso-times.jsonl";
    Bench b;
    QVERIFY(b.workbench.openPolicy(policy_));
    QAction* open = b.window.findChild<QAction*>("openAccessLogAction");
    QVERIFY(open);
    b.ui.openAnswer = log;
    QSignalSpy opened(&b.workbench, &Workbench::accessLogOpened);

    b.ui.logFormatAccepted = false;
    open->trigger();
    QCOMPARE(b.ui.logFormatQuestions, 1);
    QVERIFY(b.ui.errors.isEmpty());

    b.ui.logFormatAccepted = true;
    b.ui.logFormatAnswer = {"json", {}, "client=client.ip"};  // no time field
    open->trigger();
    QCOMPARE(b.ui.errors.size(), 1);
    QVERIFY2(b.ui.errors[0].text.startsWith(QDir::toNativeSeparators(log) + ": ") &&
                 b.ui.errors[0].text.contains("time=PATH"),
             qPrintable(b.ui.errors[0].text));
    b.ui.logFormatAnswer = {"json", {}, "client"};  // not ROLE=PATH
    open->trigger();
    QCOMPARE(b.ui.errors.size(), 2);
    QVERIFY2(b.ui.errors[1].text.contains("field \"client\": expected ROLE=PATH"),
             qPrintable(b.ui.errors[1].text));
    QCOMPARE(opened.count(), 0);  // nothing was read

    b.ui.logFormatAnswer = {
        "json", {}, "client=client.ip time=time method=req.method path=req.path"};
    open->trigger();
    QVERIFY(opened.wait(30000));
    QCOMPARE(opened.at(0).at(1).toBool(), true);
    QCOMPARE(b.ui.logFormatQuestions, 4);
    QCOMPARE(b.ui.errors.size(), 2);
    // Every one of the fixture's 25 lines read, as `ratelab-cli replay --field ...` reads them.
    const QString notes = b.workbench.scenarioNotes();
    QVERIFY2(notes.contains("(json client=client.ip time=time method=req.method path=req.path "
                            "format): 25 lines, 25 requests from 3 clients over 13 s."),
             qPrintable(notes));

    // Listed with the format it was read in, and opened that way again from File > Open
    // recent, without a question.
    const QString absolute = QFileInfo(log).absoluteFilePath();
    QVERIFY(b.window.recentFiles().logFormat(absolute) == b.ui.logFormatAnswer);
    QAction* entry = b.window.recentFilesMenu()->actionFor(RecentFiles::Kind::AccessLog, absolute);
    QVERIFY(entry);
    b.ui.logFormatAnswer = {};
    b.workbench.openPolicy(policy_);  // another document in between
    entry->trigger();
    QVERIFY(opened.wait(30000));
    QCOMPARE(opened.at(1).at(1).toBool(), true);
    QCOMPARE(b.ui.logFormatQuestions, 4);
    QCOMPARE(b.ui.errors.size(), 2);
    QVERIFY2(b.workbench.scenarioNotes().contains(
                 "(json client=client.ip time=time method=req.method path=req.path format)"),
             qPrintable(b.workbench.scenarioNotes()));
}

// File > Fit a scenario to a log: parsed and fitted off the GUI thread with a progress bar,
// keyed by the edited policy, written where the user chose and opened.
void TestWorkbenchFiles::fitAScenarioToALog() {
    const QString logs = QStringLiteral(RATELAB_SOURCE_DIR) + "/tests/data/logs/";
    const QString out = dir_.filePath("fitted.json");
    Bench b;
    QVERIFY(b.workbench.openPolicy(logs + "fit-token-bucket.json"));
    b.ui.openAnswer = logs + "fit-shape.log.gz";
    b.ui.saveAnswer = out;
    QSignalSpy progress(&b.workbench, &Workbench::accessLogProgress);
    QSignalSpy fitted(&b.workbench, &Workbench::fitFinished);
    QAction* action = nullptr;
    for (QAction* a : b.window.findChildren<QAction*>()) {
        if (a->text() == "&Fit a scenario to a log...") action = a;
    }
    QVERIFY(action);
    action->trigger();  // returns at once: the work is on a pool thread
    QCOMPARE(fitted.count(), 0);
    QVERIFY(fitted.wait(60000));
    QCOMPARE(fitted.at(0).at(0).toString(), out);
    QCOMPARE(fitted.at(0).at(1).toBool(), true);
    QVERIFY(b.ui.errors.isEmpty());
    // The bar saw the whole file read.
    QVERIFY(progress.count() >= 1);
    QCOMPARE(progress.last().at(0).toDouble(), 1.0);
    QProgressBar* bar = b.window.findChild<QProgressBar*>("logProgress");
    QVERIFY(bar);
    QCOMPARE(bar->value(), 1000);
    QVERIFY(bar->isHidden());  // shown while parsing only
    // The fitted scenario is open: 47 clients keyed behind the balancer, 10 of them actors of
    // their own and the rest in crowds, over the log's two minutes, naming the policy.
    QCOMPARE(b.workbench.scenarioPath(), out);
    const sim::Scenario& s = b.workbench.scenario();
    QCOMPARE(QString::fromStdString(s.title), QString("Fitted to fit-shape.log.gz (all legit)"));
    QCOMPARE(s.actors.size(), std::size_t(26));
    QCOMPARE(s.duration, 120 * kNanosPerSecond);
    QCOMPARE(QString::fromStdString(s.policy),
             QDir(dir_.path()).relativeFilePath(logs + "fit-token-bucket.json"));
    QCOMPARE(s.actors[0].identity.peer.address.toString(), "203.0.113.5");
    // Before it was kept, the user saw how it limits against the log under the policy in use.
    QCOMPARE(b.ui.fitQuestions.size(), 1);
    QCOMPARE(b.ui.fitQuestions[0].first, QString("fit-shape.log.gz"));
    QCOMPARE(b.ui.fitQuestions[0].second.size(), 1);
    const QString row = b.ui.fitQuestions[0].second[0];
    QVERIFY2(row.startsWith("legit: requests ") && row.contains("clients 47 / 47"),
             qPrintable(row));

    // Declined after seeing the figures: nothing is written, the open scenario stays.
    b.ui.fitAnswer = false;
    b.ui.saveAnswer = dir_.filePath("declined.json");
    action->trigger();
    QVERIFY(fitted.wait(60000));
    QCOMPARE(fitted.last().at(1).toBool(), false);
    QCOMPARE(b.ui.fitQuestions.size(), 2);
    QVERIFY(!QFile::exists(dir_.filePath("declined.json")));
    QCOMPARE(b.workbench.scenarioPath(), out);
    b.ui.fitAnswer = true;

    // A log that cannot be read is reported, and nothing is written.
    b.ui.openAnswer = logs + "binary.log";
    b.ui.saveAnswer = dir_.filePath("never.json");
    action->trigger();
    QVERIFY(fitted.wait(60000));
    QCOMPARE(fitted.last().at(1).toBool(), false);
    QCOMPARE(b.ui.errors.size(), 1);
    QVERIFY(b.ui.errors[0].text.contains("binary data, not a text log"));
    QVERIFY(!QFile::exists(dir_.filePath("never.json")));
}

QTEST_MAIN(TestWorkbenchFiles)
#include "tst_workbench_files.moc"
