// ratelab-cli diff and tune as a user runs them: diff against itself flips nothing; against
// another policy its per-class deltas are the differences of two separate `run` reports and
// the flips net to them; a log works too; exit codes follow B's expectations. tune's pick,
// written with -o, validates and meets every expectation when run; on a log,
// --keep-unthrottled 0.99 throttles at most 1% of its clients when the log is replayed.

#include <QtTest>

#include <QProcess>
#include <QTemporaryDir>
#include <nlohmann/json.hpp>

#include "fixtures/clients_log.h"
#include "fixtures/file_fixture.h"

namespace {

using ratelab::testing::readFile;
using ratelab::testing::writeFile;

const QString kRoot = RATELAB_SOURCE_DIR;
const QString kCli = QStringLiteral(RATELAB_CLI);  // $<TARGET_FILE:ratelab-cli>

struct Result {
    int exitCode = -1;
    QString out;
    QString err;
};

Result cli(const QStringList& arguments) {
    QProcess p;
    p.start(kCli, arguments);
    if (!p.waitForFinished(180'000)) qFatal("ratelab-cli did not finish");
    Result r;
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

QString scenario(const char* name) {
    return kRoot + "/scenarios/" + name + ".json";
}
QString policy(const char* relative) {
    return kRoot + "/" + relative;
}

nlohmann::json readJson(const QString& path) {
    return nlohmann::json::parse(readFile(path).toStdString());
}

// A log in `dir` as one file (NAME.log) and rotated in two, the older gzipped
// (NAME.log.2.gz NAME.log.1, oldest first). Returns {whole, older, newer}, or empty when gzip
// fails.
QStringList writeRotated(const QTemporaryDir& dir, const QString& name, const QByteArray& older,
                         const QByteArray& newer) {
    const QString whole = dir.filePath(name + ".log");
    writeFile(whole, older + newer);
    writeFile(whole + ".2", older);
    writeFile(whole + ".1", newer);
    QProcess gzip;
    gzip.start("gzip", {"-f", whole + ".2"});
    if (!gzip.waitForFinished() || gzip.exitCode() != 0) return {};
    return {whole, whole + ".2.gz", whole + ".1"};
}

const char* const kCounters[] = {"offered", "allowed",     "throttled",
                                 "refused", "failed_open", "failed_closed"};

}  // namespace

class TestCliDecide : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY2(QFile::exists(kCli), qPrintable(kCli)); }
    void diffAgainstItself();
    void diffDeltasAreTwoRuns_data();
    void diffDeltasAreTwoRuns();
    void diffOfALog();
    void diffOfRotatedLogs();
    void diffBadInput_data();
    void diffBadInput();
    void tunePicksACellThatHolds();
    void tuneALogToATolerance();
    void tuneReadsLogsAsReplayDoes();
    void tuneBadInput_data();
    void tuneBadInput();

private:
    QTemporaryDir dir_;
};

void TestCliDecide::diffAgainstItself() {
    const QString json = dir_.filePath("self.json");
    const QString flips = dir_.filePath("self-flips.csv");
    const QString s = scenario("header-rotation");
    const QString p = policy("resources/policies/default.json");
    const Result r =
        cli({"diff", s, "--policy", p, "--against", p, "--json", json, "--flips", flips});
    QCOMPARE(r.exitCode, cli({"run", s, "--policy", p, "--quiet"}).exitCode);
    QCOMPARE(readFile(flips), QByteArray("seq,ts_ms,actor,key,a,b\n"));
    const nlohmann::json j = readJson(json);
    for (auto& [name, c] : j["classes"].items()) {
        for (const char* counter : kCounters)
            QCOMPARE(c["delta"][counter].get<std::int64_t>(), std::int64_t(0));
        QCOMPARE(c["flips"]["allowed_to_throttled"].get<std::int64_t>(), std::int64_t(0));
        QCOMPARE(c["flips"]["throttled_to_allowed"].get<std::int64_t>(), std::int64_t(0));
    }
    QCOMPARE(j["collateral"]["instances"].get<std::int64_t>(), std::int64_t(0));
    QVERIFY2(r.out.contains("0 allowed under A and throttled under B, 0 the reverse"),
             qPrintable(r.out));
}

void TestCliDecide::diffDeltasAreTwoRuns_data() {
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<QString>("a");
    QTest::addColumn<QString>("b");
    QTest::newRow("nat-crowd") << scenario("nat-crowd")
                               << policy("scenarios/policies/nat-budget.json")
                               << policy("resources/policies/default.json");
    QTest::newRow("header-rotation")
        << scenario("header-rotation") << policy("resources/policies/default.json")
        << policy("scenarios/policies/token-bucket-100.json");
}

void TestCliDecide::diffDeltasAreTwoRuns() {
    QFETCH(QString, scenario);
    QFETCH(QString, a);
    QFETCH(QString, b);
    const QString ra = dir_.filePath("a.json");
    const QString rb = dir_.filePath("b.json");
    const QString rd = dir_.filePath("diff.json");
    const QString flips = dir_.filePath("flips.csv");
    QVERIFY(cli({"run", scenario, "--policy", a, "--json", ra, "--quiet"}).exitCode != 2);
    const int exitB = cli({"run", scenario, "--policy", b, "--json", rb, "--quiet"}).exitCode;
    const Result d =
        cli({"diff", scenario, "--policy", a, "--against", b, "--json", rd, "--flips", flips});
    QCOMPARE(d.exitCode, exitB);
    const nlohmann::json ja = readJson(ra);
    const nlohmann::json jb = readJson(rb);
    const nlohmann::json jd = readJson(rd);
    std::int64_t flipped = 0;
    for (auto& [name, c] : jd["classes"].items()) {
        for (const char* counter : kCounters) {
            const std::int64_t va = ja["classes"][name][counter];
            const std::int64_t vb = jb["classes"][name][counter];
            QCOMPARE(c["a"][counter].get<std::int64_t>(), va);
            QCOMPARE(c["b"][counter].get<std::int64_t>(), vb);
            QCOMPARE(c["delta"][counter].get<std::int64_t>(), vb - va);
        }
        QCOMPARE(c["b"]["throttled_instances"], jb["classes"][name]["throttled_instances"]);
        // Only allowed and throttled change between these policies: the flips net exactly.
        const std::int64_t out = c["flips"]["allowed_to_throttled"];
        const std::int64_t in = c["flips"]["throttled_to_allowed"];
        QCOMPARE(out - in, ja["classes"][name]["allowed"].get<std::int64_t>() -
                               jb["classes"][name]["allowed"].get<std::int64_t>());
        QCOMPARE(c["flips"].size(), std::size_t(2));
        flipped += out + in;
    }
    QVERIFY(flipped > 0);
    QCOMPARE(static_cast<std::int64_t>(readFile(flips).count('\n')), flipped + 1);
    QCOMPARE(jd["expectations"]["b"], jb["expectations"]);
    QCOMPARE(jd["expectations"]["a"], ja["expectations"]);
}

// Three clients; the strict policy throttles the one that sends three at once.
void TestCliDecide::diffOfALog() {
    const QString log = dir_.filePath("access.log");
    writeFile(log,
              "198.51.100.1 - - [10/Oct/2023:13:55:36 +0000] \"GET /a HTTP/1.1\" 200 1\n"
              "198.51.100.1 - - [10/Oct/2023:13:55:36 +0000] \"GET /a HTTP/1.1\" 200 1\n"
              "198.51.100.1 - - [10/Oct/2023:13:55:36 +0000] \"GET /a HTTP/1.1\" 200 1\n"
              "198.51.100.2 - - [10/Oct/2023:13:55:37 +0000] \"GET /a HTTP/1.1\" 200 1\n"
              "198.51.100.3 - - [10/Oct/2023:13:55:38 +0000] \"GET /a HTTP/1.1\" 200 1\n");
    const QString strict = dir_.filePath("strict.json");
    QByteArray text = readFile(policy("scenarios/policies/token-bucket-100.json"));
    text.replace("\"capacity\": 100", "\"capacity\": 2");
    writeFile(strict, text);
    const QString json = dir_.filePath("log-diff.json");
    const QString flips = dir_.filePath("log-flips.csv");
    const Result r =
        cli({"diff", log, "--policy", policy("scenarios/policies/token-bucket-100.json"),
             "--against", strict, "--json", json, "--flips", flips});
    QCOMPARE(r.exitCode, 0);  // a log has no expectations
    const nlohmann::json j = readJson(json);
    QCOMPARE(j["classes"]["log"]["flips"]["allowed_to_throttled"], 1);
    QCOMPARE(j["clients"]["changed"], 1);
    QCOMPARE(j["clients"]["top"][0]["client"], "198.51.100.1");
    QCOMPARE(j["replay"]["parsed"], 5);
    QCOMPARE(j["actors"][0]["instances"], 3);  // the clients, known once the stream is read
    const QList<QByteArray> rows = readFile(flips).trimmed().split('\n');
    QCOMPARE(rows.size(), 2);
    QVERIFY2(rows[1].startsWith("2,1696946136000,198.51.100.1,"), rows[1].constData());
    QVERIFY(rows[1].endsWith(",allowed,throttled"));
    QVERIFY2(r.out.contains("198.51.100.1"), qPrintable(r.out));
}

// A log rotated into two files (the older gzipped) compares as the one file it was: the same
// comparison and the same flips, with each flip's logged time.
void TestCliDecide::diffOfRotatedLogs() {
    QByteArray older, newer;
    for (int i = 0; i < 40; ++i) {
        QByteArray& part = i < 25 ? older : newer;
        part += "198.51.100." + QByteArray::number(1 + i % 3) +
                " - - [10/Oct/2023:13:55:" + QByteArray::number(10 + i / 10) +
                " +0000] \"GET /a HTTP/1.1\" 200 1\n";
    }
    const QStringList logs = writeRotated(dir_, "diff", older, newer);
    QCOMPARE(logs.size(), 3);
    const QString strict = dir_.filePath("strict-rotated.json");
    QByteArray text = readFile(policy("scenarios/policies/token-bucket-100.json"));
    text.replace("\"capacity\": 100", "\"capacity\": 3");
    writeFile(strict, text);
    const auto compare = [&](const QStringList& logs, const QString& name) {
        QStringList arguments{"diff"};
        arguments << logs << "--policy" << policy("scenarios/policies/token-bucket-100.json")
                  << "--against" << strict << "--json" << dir_.filePath(name + ".json") << "--flips"
                  << dir_.filePath(name + ".csv") << "--quiet";
        const Result r = cli(arguments);
        if (r.exitCode != 0) qWarning("%s", qPrintable(r.err));
        nlohmann::json j = readJson(dir_.filePath(name + ".json"));
        for (const char* differs : {"timing", "scenario"})  // the wall time, the first file
            j.erase(differs);
        j["replay"].erase("file");
        j["replay"].erase("files");
        return std::pair{j, readFile(dir_.filePath(name + ".csv"))};
    };
    const auto [rotated, rotatedFlips] = compare(logs.mid(1), "rotated");
    const auto [single, singleFlips] = compare({logs[0]}, "whole");
    QCOMPARE(rotated["replay"]["parsed"], 40);
    QVERIFY(rotated["classes"]["log"]["flips"]["allowed_to_throttled"].get<int>() > 0);
    QCOMPARE(rotated["actors"][0]["instances"], 3);
    QVERIFY2(rotated == single, nlohmann::json::diff(single, rotated).dump().c_str());
    QCOMPARE(rotatedFlips, singleFlips);
}

// Exit codes as every command has them: 64 for a wrong command line, 74 for a file that cannot
// be read, 2 for an input with errors.
void TestCliDecide::diffBadInput_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message");
    QTest::addColumn<int>("exitCode");
    const QString s = scenario("header-rotation");
    QTest::newRow("no B") << QStringList{"diff", s} << "--against B.json is required" << 64;
    QTest::newRow("missing B") << QStringList{"diff", s, "--against", "/nonexistent/b.json"}
                               << "/nonexistent/b.json" << 74;
    QTest::newRow("format on a scenario")
        << QStringList{"diff",     s,    "--against", policy("resources/policies/default.json"),
                       "--format", "csv"}
        << "--format applies to access logs" << 64;
    QTest::newRow("bad top") << QStringList{"diff",      s,
                                            "--against", policy("resources/policies/default.json"),
                                            "--top",     "-1"}
                             << "--top" << 64;
    QTest::newRow("two scenarios")
        << QStringList{"diff", s, s, "--against", policy("resources/policies/default.json")}
        << "several inputs must be logs" << 64;
    QTest::newRow("log without A") << QStringList{"diff", kRoot + "/README.md", "--against",
                                                  policy("resources/policies/default.json")}
                                   << "README.md" << 64;
    QTest::newRow("invalid B") << QStringList{"diff", s, "--against",
                                              policy("tests/data/policies/malformed/"
                                                     "store-password-inline.json")}
                               << "store-password-inline.json:" << 2;
}

void TestCliDecide::diffBadInput() {
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);
    QFETCH(int, exitCode);
    const Result r = cli(arguments);
    QCOMPARE(r.exitCode, exitCode);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
}

void TestCliDecide::tunePicksACellThatHolds() {
    const QString tuned = dir_.filePath("tuned.json");
    const QString json = dir_.filePath("tune.json");
    const QString s = scenario("replicas-shared");
    const Result r = cli({"tune", s, "--vary", "capacity=4:16:4", "--vary", "refill=1.25:5:3.75",
                          "-o", tuned, "--json", json});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("<- recommended"), qPrintable(r.out));
    const Result valid = cli({"validate", tuned});
    QCOMPARE(valid.exitCode, 0);
    QVERIFY2(valid.out.contains("0 errors, 0 warnings"), qPrintable(valid.out));
    const Result run = cli({"run", s, "--policy", tuned, "--quiet"});
    QCOMPARE(run.exitCode, 0);  // meets every expectation on its own
    const nlohmann::json policyFile = readJson(tuned);
    QCOMPARE(policyFile["validation"]["runs"][0]["scenario"], "replicas-shared");
    QCOMPARE(policyFile["validation"]["runs"][0]["pass"], true);
    const nlohmann::json j = readJson(json);
    const auto values = j["recommended"]["values"];
    QCOMPARE(policyFile["policies"][0]["capacity"].get<double>(), values[0].get<double>());
    QCOMPARE(policyFile["policies"][0]["refill_per_second"].get<double>(), values[1].get<double>());
    QCOMPARE(j["cells"].size(), std::size_t(8));
    QVERIFY(j["frontier"].size() >= 1);

    // No cell can meet the expectations: exit 1, nothing written.
    const QString none = dir_.filePath("none.json");
    QCOMPARE(cli({"tune", s, "--vary", "capacity=2:4:2", "-o", none, "--quiet"}).exitCode, 1);
    QVERIFY(!QFile::exists(none));
}

void TestCliDecide::tuneALogToATolerance() {
    const QString log = dir_.filePath("clients.csv");
    writeFile(log, QByteArray::fromStdString(ratelab::simtest::clientsLog()));
    const QString tuned = dir_.filePath("log-tuned.json");
    const QString json = dir_.filePath("log-tune.json");
    const Result r =
        cli({"tune", log, "--policy", policy("scenarios/policies/token-bucket-100.json"),
             "--keep-unthrottled", "0.99", "-o", tuned, "--json", json});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("to keep 99% of the clients unthrottled"), qPrintable(r.out));
    QCOMPARE(cli({"validate", tuned}).exitCode, 0);
    // Replayed with the tuned policy, at most 1% of the 200 clients are ever throttled.
    const QString report = dir_.filePath("log-replay.json");
    QCOMPARE(cli({"replay", log, "--policy", tuned, "--json", report, "--quiet"}).exitCode, 0);
    const nlohmann::json j = readJson(report);
    QCOMPARE(j["classes"]["log"]["instances"], 200);
    QVERIFY(j["classes"]["log"]["throttled_instances"].get<std::int64_t>() <= 2);
    QCOMPARE(readJson(json)["throttled_clients"], j["classes"]["log"]["throttled_instances"]);
}

// tune streams the log twice, as replay reads it: rotated files (the older gzipped) tune as the
// one file they were, and so does the log on standard input (kept for the second reading).
void TestCliDecide::tuneReadsLogsAsReplayDoes() {
    QByteArray older, newer;
    for (int i = 0; i < 300; ++i) {
        QByteArray& part = i < 180 ? older : newer;
        part += "198.51.100." + QByteArray::number(1 + (i * 7) % 40) +
                " - - [10/Oct/2023:13:" + QByteArray::number(10 + i / 60) + ":" +
                QByteArray::number(10 + i % 60 / 2) + " +0000] \"GET /a HTTP/1.1\" 200 1\n";
    }
    const QStringList logs = writeRotated(dir_, "tune", older, newer);
    QCOMPARE(logs.size(), 3);
    const QStringList tuning{"--policy",
                             policy("scenarios/policies/token-bucket-100.json"),
                             "--keep-unthrottled",
                             "0.9",
                             "--quiet",
                             "--json"};
    const auto tuned = [](const QString& path) {
        nlohmann::json j = readJson(path);
        j.erase("log");  // the first file's name
        return j;
    };
    QCOMPARE(
        cli(QStringList{"tune", logs[0]} + tuning + QStringList{dir_.filePath("w.json")}).exitCode,
        0);
    QCOMPARE(cli(QStringList{"tune"} + logs.mid(1) + tuning + QStringList{dir_.filePath("r.json")})
                 .exitCode,
             0);
    QProcess fromStdin;
    fromStdin.setStandardInputFile(logs[0]);
    fromStdin.start(kCli, QStringList{"tune", "-"} + tuning + QStringList{dir_.filePath("s.json")});
    QVERIFY(fromStdin.waitForFinished(60'000));
    QCOMPARE(fromStdin.exitCode(), 0);
    const nlohmann::json w = tuned(dir_.filePath("w.json"));
    QCOMPARE(w["clients"], 40);
    QVERIFY(w["chosen"]["capacity"].get<std::int64_t>() >= 1);
    QVERIFY2(tuned(dir_.filePath("r.json")) == w,
             nlohmann::json::diff(w, tuned(dir_.filePath("r.json"))).dump().c_str());
    QVERIFY2(tuned(dir_.filePath("s.json")) == w,
             nlohmann::json::diff(w, tuned(dir_.filePath("s.json"))).dump().c_str());
}

void TestCliDecide::tuneBadInput_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message");
    QTest::addColumn<int>("exitCode");
    const QString s = scenario("replicas-shared");
    const QString p = policy("scenarios/policies/token-bucket-100.json");
    QTest::newRow("no axis") << QStringList{"tune", s} << "--vary" << 64;
    QTest::newRow("unknown field")
        << QStringList{"tune", s, "--vary", "burst=1:2:1"} << "use capacity, refill" << 64;
    QTest::newRow("tolerance on a scenario")
        << QStringList{"tune", s, "--keep-unthrottled", "0.9"} << "applies to access logs" << 64;
    QTest::newRow("two scenarios") << QStringList{"tune", s, s, "--vary", "capacity=1:3:1"}
                                   << "several inputs must be logs" << 64;
    QTest::newRow("vary on a log")
        << QStringList{"tune", kRoot + "/README.md", "--vary", "capacity=1:2:1", "--policy", p}
        << "no classes to trade off" << 64;
    QTest::newRow("share out of range")
        << QStringList{"tune", kRoot + "/README.md", "--keep-unthrottled", "1.5", "--policy", p}
        << "above 0 and at most 1" << 64;
}

void TestCliDecide::tuneBadInput() {
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);
    QFETCH(int, exitCode);
    const Result r = cli(arguments);
    QCOMPARE(r.exitCode, exitCode);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
}

QTEST_GUILESS_MAIN(TestCliDecide)
#include "tst_cli_decide.moc"
