// ratelab-cli run and sweep as a user (or CI) runs them: exit codes 0/1/2/64/74, FILE:LINE:COLUMN
// errors, reports, validated policies, and silence when stderr is not a terminal. replay and fit:
// tst_cli_replay.

#include <QtTest>

#include <QProcess>
#include <QTemporaryDir>

#include "fixtures/cli_sim_fixture.h"

namespace {

using namespace ratelab::testing;

const QString kRoot = RATELAB_SOURCE_DIR;

}  // namespace

class TestCliSim : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(QFile::exists(cliPath())); }
    void malformedScenario_data();
    void malformedScenario();
    void badCommandLine_data();
    void badCommandLine();
    void scenarioWithMissingPolicy();
    void runExitCodes();
    void quietWhenNotATerminal();
    void reportsAreDeterministic();
    void validatedPolicy();
    void sweep();

private:
    QTemporaryDir dir_;
};

void TestCliSim::malformedScenario_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("what");
    QTest::newRow("syntax") << QByteArray(
                                   "{ \"name\": \"x\",\n  \"duration_s\": 5\n  \"actors\": [] }")
                            << ":3:10: error:"
                            << "syntax error";
    QTest::newRow("unknown key")
        << QByteArray(
               "{ \"name\": \"x\", \"duration_s\": 5, \"policy\": \"p.json\",\n"
               "  \"actors\": [ { \"name\": \"a\", \"arival\": {} } ] }")
        << ":2:30: error:"
        << "did you mean \"arrival\"?";
    QTest::newRow("wrong type")
        << QByteArray("{ \"name\": \"x\", \"duration_s\": \"long\",\n  \"actors\": [] }")
        << ":1:30: error:"
        << "expected a number, found a string";
    QTest::newRow("unknown metric")
        << QByteArray(
               "{ \"name\": \"x\", \"duration_s\": 5, \"actors\": [ { \"name\": \"a\",\n"
               "  \"arrival\": {\"kind\":\"constant\",\"rate_per_s\":1} } ],\n"
               "  \"expect\": [ { \"metric\": \"legit.alowed\", \"max\": 1 } ] }")
        << ":3:27: error:"
        << "did you mean \"legit.allowed\"?";
}

// A malformed scenario exits 2 and names FILE:LINE:COLUMN and what is wrong.
void TestCliSim::malformedScenario() {
    QFETCH(QByteArray, text);
    QFETCH(QString, where);
    QFETCH(QString, what);
    const QString path = dir_.filePath("bad.json");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(text);
    f.close();
    for (const char* command : {"run", "sweep"}) {
        QStringList args{command, path, "--policy", kRoot + "/resources/policies/default.json"};
        if (QString(command) == "sweep")
            args << "--vary"
                 << "capacity=1:2:1";
        CliRun r = runCli(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.startsWith(path + where), qPrintable(r.err));
        QVERIFY2(r.err.contains(what), qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
    }
}

void TestCliSim::badCommandLine_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message");
    const QString s = shippedScenarioPath("header-rotation");
    const QString policy = kRoot + "/resources/policies/default.json";
    const QString log = kRoot + "/tests/data/logs/sample_common.log";
    QTest::newRow("unknown option")
        << QStringList{"run", s, "--bogus"} << 64 << "Unknown option 'bogus'";
    QTest::newRow("missing scenario") << QStringList{"run"} << 64 << "missing SCENARIO.json";
    QTest::newRow("two scenarios") << QStringList{"run", s, s} << 64 << "unexpected argument";
    QTest::newRow("bad seed") << QStringList{"run", s, "--seed", "-3"} << 64 << "--seed \"-3\"";
    QTest::newRow("bad store") << QStringList{"run", s, "--store", "mongodb://x"} << 64
                               << "--store";
    QTest::newRow("missing policy file")
        << QStringList{"run", s, "--policy", "/nonexistent/p.json"} << 74
        << "/nonexistent/p.json: error: cannot open the file: No such file or directory";
    QTest::newRow("replay without policy")
        << QStringList{"replay", log} << 64 << "--policy P.json is required";
    QTest::newRow("replay, unknown format")
        << QStringList{"replay", log, "--policy", policy, "--format", "w3c"} << 64
        << "--format \"w3c\"";
    QTest::newRow("replay, missing log")
        << QStringList{"replay", "/nonexistent/access.log", "--policy", policy} << 74
        << "/nonexistent/access.log: error: cannot open the file: No such file or directory";
    QTest::newRow("replay, a directory")
        << QStringList{"replay", kRoot + "/tests/data/logs", "--policy", policy} << 74
        << "/tests/data/logs: error: is a directory";
    QTest::newRow("run, a directory")
        << QStringList{"run", kRoot + "/scenarios"} << 74 << "/scenarios: error: is a directory";
    QTest::newRow("replay, nginx without its format")
        << QStringList{"replay", log, "--policy", policy, "--format", "nginx"} << 64
        << "--format nginx needs --log-format";
    QTest::newRow("replay, json without a time field")
        << QStringList{"replay",   kRoot + "/tests/data/logs/iso-times.jsonl",
                       "--policy", policy,
                       "--field",  "client=client.ip"}
        << 64 << "--format json needs --field time=PATH";
    QTest::newRow("replay, stdin twice")
        << QStringList{"replay", "-", "-", "--policy", policy} << 64 << "standard input";
    QTest::newRow("replay, a binary file")
        << QStringList{"replay", kRoot + "/tests/data/logs/binary.log", "--policy", policy} << 2
        << "binary.log: error: binary data, not a text log";
    QTest::newRow("replay, rotated files newest first")
        << QStringList{"replay", kRoot + "/tests/data/logs/nginx-proxy.log.1.gz",
                       kRoot + "/tests/data/logs/nginx-proxy.log.2.gz", "--policy", policy}
        << 2 << "nginx-proxy.log.2.gz:1:1: error: this file starts at 2024-03-01T12:00:02Z, before";
    QTest::newRow("sweep without axis") << QStringList{"sweep", s} << 64 << "--vary";
    QTest::newRow("sweep, unknown field")
        << QStringList{"sweep", s, "--vary", "burst=1:2:1"} << 64 << "cannot vary \"burst\"";
    QTest::newRow("sweep, backwards range")
        << QStringList{"sweep", s, "--vary", "capacity=10:1:1"} << 64 << "FROM <= TO";
    QTest::newRow("sweep, unknown policy")
        << QStringList{"sweep", s, "--vary", "login.capacity=1:2:1"} << 64
        << "names policy \"login\"";
}

// Usage errors exit 64, unreadable inputs 74; each message says what is wrong.
void TestCliSim::badCommandLine() {
    QFETCH(QStringList, arguments);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    CliRun r = runCli(arguments);
    QCOMPARE(r.exitCode, exitCode);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
}

// The scenario names a policy file that is not there: the error points at the scenario's line
// naming it, and the exit code says the file could not be read.
void TestCliSim::scenarioWithMissingPolicy() {
    const QString path = dir_.filePath("orphan.json");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(
        "{ \"name\": \"orphan\", \"duration_s\": 5,\n  \"policy\": \"gone.json\",\n"
        "  \"actors\": [ { \"name\": \"a\", \"arrival\": {\"kind\":\"constant\",\"rate_per_s\":1} "
        "} ] }");
    f.close();
    for (const char* command : {"run", "sweep"}) {
        QStringList args{command, path};
        if (QString(command) == "sweep")
            args << "--vary"
                 << "capacity=1:2:1";
        const CliRun r = runCli(args);
        QCOMPARE(r.exitCode, 74);
        QVERIFY2(r.err.startsWith(path + ":2:13: error: policy file \"gone.json\" (" +
                                  dir_.filePath("gone.json") +
                                  "): cannot open the file: No such file or directory"),
                 qPrintable(r.err));
    }
}

// 0 when every expectation holds, 1 when one fails.
void TestCliSim::runExitCodes() {
    CliRun pass = runCli({"run", shippedScenarioPath("header-rotation")});
    QCOMPARE(pass.exitCode, 0);
    QVERIFY(pass.out.contains("PASS attacker.allowed_per_s"));
    QVERIFY(pass.out.contains("3 of 3 expectations met"));
    CliRun fail = runCli({"run", shippedScenarioPath("header-rotation"), "--policy",
                          kRoot + "/tests/data/naive/header-rotation.json"});
    QCOMPARE(fail.exitCode, 1);
    QVERIFY(fail.out.contains("FAIL attacker.allowed_per_s = 200 (max 8)"));
    // Quiet, a failure still says which expectation, on stderr.
    CliRun quiet = runCli({"run", shippedScenarioPath("header-rotation"), "--quiet", "--policy",
                           kRoot + "/tests/data/naive/header-rotation.json"});
    QCOMPARE(quiet.exitCode, 1);
    QCOMPARE(quiet.out, QString());
    QCOMPARE(quiet.err, shippedScenarioPath("header-rotation") +
                            ": expectation failed: attacker.allowed_per_s = 200 (max 8)\n");
}

// stderr is a pipe here, not a terminal: no progress bar, and --quiet prints nothing at all.
void TestCliSim::quietWhenNotATerminal() {
    CliRun r = runCli({"run", shippedScenarioPath("page-load"), "--quiet"});
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.out, QString());
    QCOMPARE(r.err, QString());
    CliRun loud = runCli({"run", shippedScenarioPath("page-load")});
    QCOMPARE(loud.err, QString());
    QVERIFY(!loud.out.isEmpty());
}

void TestCliSim::reportsAreDeterministic() {
    const QString a = dir_.filePath("a.json"), b = dir_.filePath("b.json");
    const QString c = dir_.filePath("c.json"), series = dir_.filePath("series.csv");
    QCOMPARE(
        runCli({"run", shippedScenarioPath("store-outage"), "--json", a, "--csv", series}).exitCode,
        0);
    QCOMPARE(runCli({"run", shippedScenarioPath("store-outage"), "--json", b, "--quiet"}).exitCode,
             0);
    QCOMPARE(
        runCli({"run", shippedScenarioPath("store-outage"), "--json", c, "--seed", "42"}).exitCode,
        0);
    nlohmann::ordered_json ja = readJson(a), jb = readJson(b), jc = readJson(c);
    QVERIFY(ja.contains("timing") && ja["timing"].contains("wall_s"));
    QVERIFY(ja["timing"]["requests_per_s"].get<double>() > 0);
    ja.erase("timing");
    jb.erase("timing");
    jc.erase("timing");
    QCOMPARE(ja.dump(), jb.dump());
    QVERIFY(ja.dump() != jc.dump());
    QCOMPARE(jc["seed"], 42);
    QCOMPARE(ja["store"]["errors"].get<std::int64_t>(),
             ja["classes"]["legit"]["failed_open"].get<std::int64_t>() +
                 ja["classes"]["attacker"]["failed_open"].get<std::int64_t>());
    const QList<QByteArray> rows = readFile(series).trimmed().split('\n');
    QCOMPARE(rows.size(), 61);
    const qsizetype errors = rows[0].split(',').indexOf("store.errors");
    QVERIFY(errors > 0);
    // The outage, 20 s to 30 s: store errors in exactly those ten samples.
    for (int i = 1; i <= 60; ++i) {
        const bool outage = i > 20 && i <= 30;
        QCOMPARE(rows[i].split(',')[errors] != "0", outage);
    }
}

// --validated-policy writes the policy with this run embedded as its validation record.
void TestCliSim::validatedPolicy() {
    const QString out = dir_.filePath("validated.json");
    CliRun r = runCli(
        {"run", shippedScenarioPath("header-rotation"), "--validated-policy", out, "--quiet"});
    QCOMPARE(r.exitCode, 0);
    nlohmann::ordered_json j = readJson(out);
    QCOMPARE(j["policies"][0]["name"], "api");
    const auto& run = j["validation"]["runs"][0];
    QCOMPARE(run["scenario"], "header-rotation");
    QCOMPARE(run["seed"], 7);
    QCOMPARE(run["pass"], true);
    QCOMPARE(run["expectations"].size(), std::size_t(3));
    QVERIFY(j["validation"]["generator"].get<std::string>().starts_with("ratelab "));
    // The validated file is a valid policy: validating it again adds to the same record.
    CliRun again = runCli({"run", shippedScenarioPath("page-load"), "--policy", out,
                           "--validated-policy", out, "--quiet"});
    QCOMPARE(again.exitCode, 0);
    QCOMPARE(readJson(out)["validation"]["runs"].size(), std::size_t(2));
}

void TestCliSim::sweep() {
    const QString out = dir_.filePath("sweep.csv");
    CliRun r = runCli({"sweep", shippedScenarioPath("replicas-shared"), "--vary", "capacity=4:16:4",
                       "--vary", "refill=1.25:5:3.75", "--csv", out});
    QCOMPARE(r.exitCode, 0);
    const QList<QByteArray> rows = readFile(out).trimmed().split('\n');
    QCOMPARE(rows.size(), 9);  // the header and 4 x 2 cells
    QCOMPARE(rows[0], QByteArray("capacity,refill,legit.throttled_fraction,legit.allowed_per_s,"
                                 "attacker.throttled_fraction,attacker.allowed_per_s,"
                                 "failed_expectations,pass,invalid"));
    QVERIFY(rows[1].startsWith("4,1.25,"));
    QVERIFY(rows[8].startsWith("16,5,"));
    // Page loads of 12 need a burst of 12: capacity 4 and 8 fail, 12 and 16 pass at refill 5.
    QVERIFY(rows[2].endsWith(",false,"));
    QVERIFY(rows[6].endsWith(",true,"));
    QVERIFY(rows[8].endsWith(",true,"));
    QVERIFY2(r.out.contains("best of"), qPrintable(r.out));
    // Threads do not change the results.
    const QString single = dir_.filePath("single.csv");
    QCOMPARE(runCli({"sweep", shippedScenarioPath("replicas-shared"), "--vary", "capacity=4:16:4",
                     "--vary", "refill=1.25:5:3.75", "--csv", single, "--threads", "1", "--quiet"})
                 .exitCode,
             0);
    QCOMPARE(readFile(single), readFile(out));
}

QTEST_GUILESS_MAIN(TestCliSim)
#include "tst_cli_sim.moc"
