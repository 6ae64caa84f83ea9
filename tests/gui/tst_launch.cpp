// The ratelab executable (app/gui/main.cpp, launch_options.cpp): the screenshot mode used for
// the docs, headless, and command-line errors.

#include <QImage>
#include <QProcess>
#include <QtTest>

#include "fixtures/gui_fixture.h"
#include "gui/window/launch_options.h"

using namespace ratelab::gui;
using namespace ratelab::guitest;

class TestLaunch : public QObject {
    Q_OBJECT

private slots:
    void screenshotOfARunningScenario();
    void badCompareFileStillEndsTheScreenshotRun();
    void badOptionsExitWithTwo_data();
    void badOptionsExitWithTwo();
    void helpAndVersionNeedNoDisplay_data();
    void helpAndVersionNeedNoDisplay();
    void parsesOptions();
};

// `ratelab --scenario S --policy P --run --speed 20 --screenshot OUT --quit-after 1.5`: exits
// 0 and leaves a PNG of the window at the requested size, with the charts drawn (not blank).
void TestLaunch::screenshotOfARunningScenario() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString policy = writeFile(dir, "p.json", policyJson("token_bucket", 20, 5.0));
    const QString scenario = writeFile(dir, "s.json", attackScenarioJson("flood", 200, 60));
    const QString out = dir.filePath("shot.png");
    QProcess app;
    app.start(RATELAB_GUI_EXE,
              {"--scenario", scenario, "--policy", policy, "--run", "--speed", "20", "--screenshot",
               out, "--quit-after", "1.5", "--size", "1200x800"});
    QVERIFY(app.waitForFinished(60000));
    QVERIFY2(app.exitStatus() == QProcess::NormalExit && app.exitCode() == 0,
             app.readAllStandardError().constData());
    QImage shot(out);
    QVERIFY(!shot.isNull());
    QCOMPARE(shot.size(), QSize(1200, 800));
    // A drawn window has many colours; a blank or failed grab has one or two.
    QSet<QRgb> colours;
    for (int y = 0; y < shot.height(); y += 7) {
        for (int x = 0; x < shot.width(); x += 7)
            colours.insert(shot.pixel(x, y));
    }
    QVERIFY2(colours.size() > 50, qPrintable(QString::number(colours.size())));
}

// `--compare bad.json` in screenshot mode: the error's modal dialog does not hold the run
// open; the picture is taken and the program ends on time.
void TestLaunch::badCompareFileStillEndsTheScreenshotRun() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString policy = writeFile(dir, "p.json", policyJson("token_bucket", 20, 5.0));
    const QString scenario = writeFile(dir, "s.json", attackScenarioJson("flood", 200, 60));
    const QString bad =
        writeFile(dir, "bad.json", R"({ "version": 1, "policies": [ { "capacity": "x" } ] })");
    const QString out = dir.filePath("shot.png");
    QProcess app;
    app.start(RATELAB_GUI_EXE, {"--scenario", scenario, "--policy", policy, "--compare", bad,
                                "--run", "--screenshot", out, "--quit-after", "1"});
    QVERIFY(app.waitForFinished(30000));
    QVERIFY2(app.exitStatus() == QProcess::NormalExit && app.exitCode() == 0,
             app.readAllStandardError().constData());
    QVERIFY(!QImage(out).isNull());
}

void TestLaunch::badOptionsExitWithTwo_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message");
    QTest::newRow("speed out of range") << QStringList{"--speed", "5000"} << "--speed";
    QTest::newRow("store") << QStringList{"--store", "mongodb://x"} << "--store";
    QTest::newRow("unknown option") << QStringList{"--frobnicate"} << "frobnicate";
    QTest::newRow("size") << QStringList{"--size", "10x10"} << "--size";
    QTest::newRow("compare without a file") << QStringList{"--compare"} << "compare";
}

void TestLaunch::badOptionsExitWithTwo() {
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);
    QProcess app;
    app.start(RATELAB_GUI_EXE, arguments);
    QVERIFY(app.waitForFinished(30000));
    QCOMPARE(app.exitCode(), 2);
    const QString err = QString::fromLocal8Bit(app.readAllStandardError());
    QVERIFY2(err.contains(message), qPrintable(err));
}

void TestLaunch::helpAndVersionNeedNoDisplay_data() {
    QTest::addColumn<QString>("option");
    QTest::addColumn<QString>("text");
    QTest::newRow("--help") << "--help" << "--scenario <S>";
    QTest::newRow("-h") << "-h" << "Usage:";
    QTest::newRow("--version") << "--version" << "ratelab " RATELAB_VERSION;
    QTest::newRow("-v") << "-v" << "ratelab " RATELAB_VERSION;
}

// Help and the version are answered on a machine without a display: no DISPLAY, no
// WAYLAND_DISPLAY and no QT_QPA_PLATFORM (which this suite's own environment sets to offscreen).
void TestLaunch::helpAndVersionNeedNoDisplay() {
    QFETCH(QString, option);
    QFETCH(QString, text);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* name : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"})
        env.remove(name);
    QProcess app;
    app.setProcessEnvironment(env);
    app.start(RATELAB_GUI_EXE, {option});
    QVERIFY(app.waitForFinished(30000));
    const QString out = QString::fromLocal8Bit(app.readAllStandardOutput());
    QVERIFY2(app.exitStatus() == QProcess::NormalExit && app.exitCode() == 0,
             app.readAllStandardError().constData());
    QVERIFY2(out.contains(text), qPrintable(out));
}

void TestLaunch::parsesOptions() {
    QString error;
    auto o =
        parseLaunchOptions({"ratelab", "--scenario", "s.json", "--policy", "p.json", "--run",
                            "--speed", "max", "--store", "redis://127.0.0.1:6390/2", "--screenshot",
                            "x.png", "--quit-after", "2.5", "--compare", "b.json"},
                           error);
    QVERIFY2(o.has_value(), qPrintable(error));
    QCOMPARE(o->scenario, QString("s.json"));
    QCOMPARE(o->policy, QString("p.json"));
    QCOMPARE(o->compare, QString("b.json"));
    QVERIFY(o->run);
    QCOMPARE(o->speed, 0.0);
    QCOMPARE(o->store, QString("redis://127.0.0.1:6390/2"));
    QCOMPARE(o->screenshot, QString("x.png"));
    QCOMPARE(o->quitAfterSeconds.value_or(-1), 2.5);
    QCOMPARE(o->size, QSize(1600, 1000));
    auto d = parseLaunchOptions({"ratelab"}, error);
    QVERIFY(d.has_value());
    QCOMPARE(d->speed, 1.0);
    QVERIFY(!d->run);
    QVERIFY(!d->quitAfterSeconds.has_value());
    QVERIFY(d->compare.isEmpty());
}

QTEST_MAIN(TestLaunch)
#include "tst_launch.moc"
