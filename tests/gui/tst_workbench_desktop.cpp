// What a desktop user expects of the workbench window (recent_files.cpp, window_layout.cpp,
// help_menu.cpp, locale_text.cpp): the recent files and the window's layout survive a restart on
// the same settings file; Help tells the version and opens the docs; numbers show in the user's
// locale while the files keep their dots. Undo and redo are tst_workbench_undo's.

#include <QAction>
#include <QDockWidget>
#include <QSplitter>

#include "fixtures/desktop_bench.h"
#include "gui/window/help_menu.h"

using namespace ratelab;
using namespace ratelab::gui;
using namespace ratelab::guitest;

class TestWorkbenchDesktop : public QObject {
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void recentFilesAndLayoutSurviveARestart();
    void aRecentFileThatIsGoneIsDropped();
    void recentListsKeepTheEightNewest();
    void recentLogsKeepTheirFormat();
    void helpShowsTheVersionAndOpensTheDocs();
    void germanLocaleShowsCommasWhileFilesKeepDots();

private:
    QTemporaryDir dir_;
    QString policy_;
    QString scenario_;
};

void TestWorkbenchDesktop::init() {
    QVERIFY(dir_.isValid());
    policy_ = writeFile(dir_, "window.json", policyJson("fixed_window", 10, 1.0, 1000));
    scenario_ = writeFile(dir_, "flood.json", attackScenarioJson("flood", 100, 30));
}

void TestWorkbenchDesktop::cleanup() {
    QLocale::setDefault(QLocale::c());
}
// A window on a settings file of its own: two policies and a scenario opened through the File
// menu, the window moved and resized, the policy dock moved to the right and the splitter
// dragged. Closed, and a new window made on the same file: the lists hold the files newest
// first, and the layout is back.
void TestWorkbenchDesktop::recentFilesAndLayoutSurviveARestart() {
    const QString iniPath = dir_.filePath("ratelab.ini");
    const QString other = writeFile(dir_, "other.json", policyJson("token_bucket", 50, 5.0));
    QByteArray state;
    QList<int> splitSizes;
    QRect geometry;
    {
        QSettings settings(iniPath, QSettings::IniFormat);
        Bench b(&settings);
        QVERIFY(!b.window.restoredLayout());
        b.window.setGeometry(40, 30, 720, 520);
        b.window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&b.window));
        b.openThroughMenu("openPolicyAction", other);
        b.openThroughMenu("openPolicyAction", policy_);
        b.openThroughMenu("openScenarioAction", scenario_);
        QVERIFY(b.ui.errors.isEmpty());

        auto* dock = b.window.findChild<QDockWidget*>("policyDock");
        b.window.addDockWidget(Qt::RightDockWidgetArea, dock);
        b.window.resizeDocks({dock}, {260}, Qt::Horizontal);
        QSplitter* split = b.window.splitter();
        const int total = split->sizes()[0] + split->sizes()[1];
        split->setSizes({total - 150, 150});
        QCoreApplication::processEvents();
        state = b.window.saveState(1);
        splitSizes = split->sizes();
        geometry = b.window.geometry();
        QVERIFY(b.window.close());
    }
    QSettings settings(iniPath, QSettings::IniFormat);
    Bench b(&settings);
    QVERIFY(b.window.restoredLayout());
    const QStringList policies{QFileInfo(policy_).absoluteFilePath(),
                               QFileInfo(other).absoluteFilePath()};
    QCOMPARE(b.window.recentFiles().files(RecentFiles::Kind::Policy), policies);
    QCOMPARE(b.window.recentFiles().files(RecentFiles::Kind::Scenario),
             QStringList{QFileInfo(scenario_).absoluteFilePath()});
    QVERIFY(b.window.recentFiles().files(RecentFiles::Kind::AccessLog).isEmpty());
    QCOMPARE(b.window.recentFilesMenu()->shownFiles(RecentFiles::Kind::Policy), policies);

    b.window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&b.window));
    QCoreApplication::processEvents();
    QCOMPARE(b.window.geometry(), geometry);
    auto* dock = b.window.findChild<QDockWidget*>("policyDock");
    QCOMPARE(b.window.dockWidgetArea(dock), Qt::RightDockWidgetArea);
    QCOMPARE(b.window.splitter()->sizes(), splitSizes);
    QCOMPARE(b.window.saveState(1), state);

    // Picking a recent file opens it.
    QAction* entry = b.window.recentFilesMenu()->actionFor(RecentFiles::Kind::Policy,
                                                           QFileInfo(other).absoluteFilePath());
    QVERIFY(entry);
    entry->trigger();
    QCOMPARE(b.policy().capacity, std::int64_t(50));
    QCOMPARE(b.window.recentFiles().files(RecentFiles::Kind::Policy).front(),
             QFileInfo(other).absoluteFilePath());
    QVERIFY(b.ui.errors.isEmpty());
}

// A recent file deleted since: picking it says so, opens nothing, and drops it from the list
// (and from the settings file).
void TestWorkbenchDesktop::aRecentFileThatIsGoneIsDropped() {
    const QString iniPath = dir_.filePath("gone.ini");
    QSettings settings(iniPath, QSettings::IniFormat);
    Bench b(&settings);
    const QString gone = writeFile(dir_, "gone.json", policyJson("token_bucket", 50, 5.0));
    b.openThroughMenu("openPolicyAction", gone);
    b.openThroughMenu("openPolicyAction", policy_);
    QVERIFY(QFile::remove(gone));

    const QString absolute = QFileInfo(gone).absoluteFilePath();
    QAction* entry = b.window.recentFilesMenu()->actionFor(RecentFiles::Kind::Policy, absolute);
    QVERIFY(entry);
    entry->trigger();
    QCOMPARE(b.ui.errors.size(), 1);
    QVERIFY2(b.ui.errors[0].text.contains(absolute), qPrintable(b.ui.errors[0].text));
    QVERIFY(b.ui.errors[0].text.contains("no longer exists"));
    QCOMPARE(b.policy().capacity, std::int64_t(10));  // the editor keeps policy_
    QCOMPARE(b.window.recentFiles().files(RecentFiles::Kind::Policy),
             QStringList{QFileInfo(policy_).absoluteFilePath()});
    QCOMPARE(b.window.recentFilesMenu()->shownFiles(RecentFiles::Kind::Policy),
             QStringList{QFileInfo(policy_).absoluteFilePath()});
    QSettings reread(iniPath, QSettings::IniFormat);
    QCOMPARE(reread.value("recent/policies").toStringList(),
             QStringList{QFileInfo(policy_).absoluteFilePath()});
}

// Ten scenarios opened: the eight newest are kept, newest first; opening one again moves it to
// the front rather than listing it twice.
void TestWorkbenchDesktop::recentListsKeepTheEightNewest() {
    RecentFiles recent(nullptr);
    QStringList paths;
    for (int i = 0; i < 10; ++i) {
        paths << dir_.filePath(QStringLiteral("s%1.json").arg(i));
        recent.add(RecentFiles::Kind::Scenario, paths.back());
    }
    QStringList expected;
    for (int i = 9; i >= 2; --i)
        expected << paths[i];
    QCOMPARE(recent.files(RecentFiles::Kind::Scenario), expected);
    recent.add(RecentFiles::Kind::Scenario, paths[5]);
    expected.removeAll(paths[5]);
    expected.prepend(paths[5]);
    QCOMPARE(recent.files(RecentFiles::Kind::Scenario), expected);
    QCOMPARE(recent.files(RecentFiles::Kind::Scenario).size(), RecentFiles::kMaxRecent);
    recent.add(RecentFiles::Kind::Policy, ":/ratelab/resources/policies/default.json");
    QVERIFY(recent.files(RecentFiles::Kind::Policy).isEmpty());
}

// A recent access log keeps the format it was read in across a restart; read again as
// detected, or dropped from the list, it keeps none.
void TestWorkbenchDesktop::recentLogsKeepTheirFormat() {
    const QString iniPath = dir_.filePath("formats.ini");
    const QString edge = QFileInfo(dir_.filePath("edge.log")).absoluteFilePath();
    const QString plain = QFileInfo(dir_.filePath("plain.log")).absoluteFilePath();
    const LogFormatChoice nginx{"nginx",
                                "$remote_addr [$time_local] \"$request\" $status "
                                "$http_x_forwarded_for",
                                {}};
    const auto log = RecentFiles::Kind::AccessLog;
    {
        QSettings settings(iniPath, QSettings::IniFormat);
        RecentFiles recent(&settings);
        recent.add(log, edge, nginx);
        recent.add(log, plain);
    }
    QSettings settings(iniPath, QSettings::IniFormat);
    RecentFiles recent(&settings);
    QCOMPARE(recent.files(log), (QStringList{plain, edge}));
    QVERIFY(recent.logFormat(edge) == nginx);
    QVERIFY(recent.logFormat(plain) == LogFormatChoice{});

    recent.add(log, edge);
    QVERIFY(recent.logFormat(edge) == LogFormatChoice{});
    recent.add(log, edge, nginx);
    QVERIFY(recent.logFormat(edge) == nginx);
    recent.remove(log, edge);
    QVERIFY(recent.logFormat(edge) == LogFormatChoice{});
    QSettings reread(iniPath, QSettings::IniFormat);
    QVERIFY(reread.value("recent/accessLogFormats").toMap().isEmpty());
}

// Help > About shows the version and where the README and docs/ are; Help > Documentation
// hands the docs folder to the desktop (recorded here, never launched).
void TestWorkbenchDesktop::helpShowsTheVersionAndOpensTheDocs() {
    QCoreApplication::setApplicationVersion("9.8.7");
    Bench b;
    b.action("aboutAction")->trigger();
    QCOMPARE(b.ui.information.size(), 1);
    QCOMPARE(b.ui.information[0].title, QString("About ratelab"));
    const QString text = b.ui.information[0].text;
    QVERIFY2(text.startsWith("ratelab 9.8.7\n"), qPrintable(text));
    // The test runs in the build tree: the source tree's README and docs/ are found.
    QVERIFY(QFileInfo(readmeFile()).isFile());
    QCOMPARE(QFileInfo(readmeFile()).fileName(), QString("README.md"));
    QVERIFY(QFileInfo(docsFolder() + "/ARCHITECTURE.md").isFile());
    QVERIFY2(text.contains(QDir::toNativeSeparators(readmeFile())), qPrintable(text));
    QVERIFY2(text.contains(QDir::toNativeSeparators(docsFolder())), qPrintable(text));

    b.action("documentationAction")->trigger();
    QCOMPARE(b.ui.openedUrls, QList<QUrl>{QUrl::fromLocalFile(docsFolder())});
    QVERIFY(b.ui.errors.isEmpty());
}

// Under German: the actor table groups thousands with a dot and writes decimals with a comma,
// the refill spin box takes "2,5", and the saved policy file still says 2.5. The C library's
// LC_NUMERIC is German too where that locale is installed, so printf would write commas.
void TestWorkbenchDesktop::germanLocaleShowsCommasWhileFilesKeepDots() {
    QLocale::setDefault(QLocale(QLocale::German, QLocale::Germany));
    const std::string cNumeric = std::setlocale(LC_NUMERIC, nullptr);
    const bool cGerman = std::setlocale(LC_NUMERIC, "de_DE.UTF-8") != nullptr;
    struct RestoreC {
        std::string name;
        ~RestoreC() { std::setlocale(LC_NUMERIC, name.c_str()); }
    } restore{cNumeric};

    Bench b;
    QVERIFY(b.workbench.openPolicy(
        writeFile(dir_, "bucket.json", policyJson("token_bucket", 10, 1.0))));
    QVERIFY(b.workbench.openScenario(scenario_));
    typeInto(b.refill(), "2,5");
    QCOMPARE(b.policy().refillPerSecond, 2.5);
    QCOMPARE(b.refill()->text(), QString("2,500 /s"));

    b.workbench.setSpeed(0);
    b.workbench.run();
    QVERIFY(waitForFrames(b.workbench.session(),
                          [&] { return b.workbench.session().state() == RunState::Finished; }));
    ActorTableModel& actors = b.workbench.actors();
    int flood = -1;
    for (int r = 0; r < actors.rowCount(); ++r) {
        if (actors.data(actors.index(r, ActorTableModel::Actor)).toString() == "flood") flood = r;
    }
    QVERIFY(flood >= 0);
    // 100 a second for 30 s.
    QCOMPARE(actors.data(actors.index(flood, ActorTableModel::Offered)).toString(),
             QString("3.000"));
    const double percent =
        actors.data(actors.index(flood, ActorTableModel::AllowedPercent), Qt::UserRole).toDouble();
    QVERIFY(percent > 1 && percent < 10);  // 10 + 2.5 a second of 3,000
    QString expected = QString::number(percent, 'f', 1);
    expected.replace('.', ',');
    QCOMPARE(actors.data(actors.index(flood, ActorTableModel::AllowedPercent)).toString(),
             expected);

    const QString saved = dir_.filePath("saved.json");
    QVERIFY(b.workbench.savePolicy(saved));
    QFile file(saved);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray text = file.readAll();
    QVERIFY2(text.contains("\"refill_per_second\": 2.5"), text.constData());
    QVERIFY(!text.contains("2,5"));
    if (!cGerman) qWarning("de_DE.UTF-8 is not installed: only Qt's locale was German");
    QVERIFY(b.ui.errors.isEmpty());
}

QTEST_MAIN(TestWorkbenchDesktop)
#include "tst_workbench_desktop.moc"
