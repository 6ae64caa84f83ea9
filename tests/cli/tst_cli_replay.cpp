// ratelab-cli replay and fit as a user (or CI) runs them: access logs replayed into reports and
// decisions (proxied keys as check derives them, standard input, the logged status settled), and
// logs fitted into scenarios, with their errors.

#include <QtTest>

#include <map>
#include <set>

#include <QProcess>
#include <QTemporaryDir>

#include "fixtures/cli_sim_fixture.h"

namespace {

using namespace ratelab::testing;

const QString kRoot = RATELAB_SOURCE_DIR;

}  // namespace

class TestCliReplay : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(QFile::exists(cliPath())); }
    void replay();
    void replayProxiedKeysMatchCheck();
    void replaySettlesWithTheLoggedStatus();
    void replayStandardInput();
    void fit();
    void fitChecksAndScale();
    void fitErrors_data();
    void fitErrors();

private:
    QTemporaryDir dir_;
};

void TestCliReplay::replay() {
    const QString decisions = dir_.filePath("decisions.csv"), report = dir_.filePath("replay.json");
    const QString log = kRoot + "/tests/data/logs/sample_combined.log";
    CliRun r = runCli({"replay", log, "--policy", kRoot + "/resources/policies/default.json",
                       "--decisions", decisions, "--json", report});
    QCOMPARE(r.exitCode, 0);
    // The detected format is named; every line not replayed is listed FILE:LINE:COLUMN.
    QVERIFY2(r.err.contains(log + ": format combined, detected"), qPrintable(r.err));
    QVERIFY(r.err.contains(log + ":7:6: warning: not replayed: cannot read the line as combined: "
                                 "no [time] field"));
    QVERIFY(r.err.contains(log + ":17:79: warning: replayed with damage: no quoted referer"));
    QVERIFY2(r.out.contains("16 lines (combined), 13 replayed (1 damaged), 3 unparsed, 0 out of "
                            "the reorder window, 9 clients (1 host names)"),
             qPrintable(r.out));
    const QList<QByteArray> rows = readFile(decisions).trimmed().split('\n');
    QCOMPARE(rows.size(), 14);
    QCOMPARE(rows[0], QByteArray("seq,ts_ms,key,allowed,remaining,retry_after_ms,file,line"));
    // Line 9 comes first (13:55:35 -0700); the key is the engine's, each row names its line.
    QCOMPARE(rows[1],
             QByteArray("0,971211335000,ip:198.51.100.7,true,19,0,") + log.toUtf8() + ",9");
    QVERIFY(rows[8].startsWith("7,971211338000,ip:198.51.100.7,true,"));  // written IPv4-mapped
    QVERIFY(rows[9].startsWith("8,971211339000,princ:"));                 // a host name
    nlohmann::ordered_json j = readJson(report);
    QCOMPARE(j["replay"]["format"], "combined");
    QCOMPARE(j["replay"]["format_detected"], true);
    QCOMPARE(j["replay"]["unparsed_lines"], nlohmann::json::array({7, 10, 15}));
    QCOMPARE(j["replay"]["damaged_at"], nlohmann::json::array({log.toStdString() + ":17:79"}));
    QCOMPARE(j["replay"]["start_epoch_ms"], 971211335000LL);
    QCOMPARE(j["requests"], 13);
    QCOMPARE(j["classes"]["log"]["offered"], 13);
}

// A balancer's log replayed through a policy trusting it: each line's key is the key
// `ratelab-cli check` derives for the same peer and X-Forwarded-For.
void TestCliReplay::replayProxiedKeysMatchCheck() {
    const QString dir = kRoot + "/tests/data/logs/";
    const QString policy = dir + "proxied-default.json";
    const QString decisions = dir_.filePath("proxied.csv");
    CliRun r = runCli({"replay", dir + "nginx-proxy.log.2.gz", dir + "nginx-proxy.log.1.gz",
                       "--policy", policy, "--decisions", decisions, "--quiet"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    QList<QByteArray> rows = readFile(decisions).trimmed().split('\n');
    QCOMPARE(rows.size(), 41);
    rows.removeFirst();
    // The logged peer and forwarded-for of each (file, line).
    std::map<std::pair<std::string, int>, std::pair<QString, QString>> logged;
    for (const char* name : {"nginx-proxy.log.2.gz", "nginx-proxy.log.1.gz"}) {
        QProcess zcat;
        zcat.start("gzip", {"-dc", dir + name});
        QVERIFY(zcat.waitForFinished());
        int n = 0;
        for (const QByteArray& line : zcat.readAllStandardOutput().trimmed().split('\n')) {
            const QString text = QString::fromUtf8(line);
            const QString xff = text.section('"', -2, -2);
            logged[{(dir + name).toStdString(), ++n}] = {text.section(' ', 0, 0), xff};
        }
    }
    std::set<QString> distinct;
    for (const QByteArray& row : rows) {
        const QList<QByteArray> f = row.split(',');
        const auto& [peer, xff] = logged.at({f[6].toStdString(), f[7].toInt()});
        QStringList args{"check", "--policy", policy, "--peer", peer, "--path", "/"};
        if (xff != "-")
            args << "--header"
                 << "X-Forwarded-For: " + xff;
        CliRun c = runCli(args);
        QCOMPARE(c.exitCode, 0);
        const auto j = nlohmann::json::parse(c.out.toStdString());
        QCOMPARE(QString::fromStdString(j["policies"][0]["key"]), QString::fromUtf8(f[2]));
        distinct.insert(QString::fromUtf8(f[2]));
    }
    QCOMPARE(distinct.size(), std::size_t(6));
    QVERIFY(distinct.count("ip:198.51.100.7") == 1 && distinct.count("ip:2001:db8:1:2::/64") == 1);
}

// "-" reads standard input, gzip or not.
// tests/data/logs/login-401-storms.log: 48 sign-ins to POST /login, keyed by address, against
// 5 a bucket refilled at one per 25 s. 198.51.100.10 signs in every 10 s from 0 to 90 s with
// one 401 at 50 s; 198.51.100.30 signs in 8 times in 8 s from 500 s; 203.0.113.66 answers 401
// 20 times at one a second from 200 s and 10 times from 400 s. Charging every attempt, the
// first is refused at 70 and 90 s (2), the second from its 6th (3), the storms beyond 5 each
// (15 + 5). Charging failures, each 200 is refunded as the log says it was answered: the two
// users pass every time, the storms are refused exactly as before.
void TestCliReplay::replaySettlesWithTheLoggedStatus() {
    const QString log = kRoot + "/tests/data/logs/login-401-storms.log";
    struct Counts {
        int allowed = 0;
        int throttled = 0;
        std::map<std::string, int> refusedByKey;
    };
    auto replay = [&](const char* policy) {
        const QString name = QString("login-%1").arg(policy);
        const QString decisions = dir_.filePath(name + ".csv"),
                      report = dir_.filePath(name + ".json");
        CliRun r = runCli({"replay", log, "--policy", kRoot + "/tests/data/logs/" + name + ".json",
                           "--decisions", decisions, "--json", report, "--quiet"});
        Counts c;
        if (r.exitCode != 0) {
            qWarning("%s", qPrintable(r.err));
            return c;
        }
        const nlohmann::ordered_json j = readJson(report);
        c.allowed = j["classes"]["log"]["allowed"].get<int>();
        c.throttled = j["classes"]["log"]["throttled"].get<int>();
        QList<QByteArray> rows = readFile(decisions).trimmed().split('\n');
        rows.removeFirst();
        for (const QByteArray& row : rows) {
            const QList<QByteArray> fields = row.split(',');
            if (fields[3] == "false") c.refusedByKey[fields[2].toStdString()] += 1;
        }
        return c;
    };
    const Counts always = replay("always");
    QCOMPARE(always.allowed, 23);
    QCOMPARE(always.throttled, 25);
    QCOMPARE(always.refusedByKey,
             (std::map<std::string, int>{
                 {"ip:198.51.100.10", 2}, {"ip:198.51.100.30", 3}, {"ip:203.0.113.66", 20}}));
    const Counts failures = replay("failures");
    QCOMPARE(failures.allowed, 28);
    QCOMPARE(failures.throttled, 20);
    QCOMPARE(failures.refusedByKey, (std::map<std::string, int>{{"ip:203.0.113.66", 20}}));
    QCOMPARE(always.throttled - failures.throttled, 5);
}

void TestCliReplay::replayStandardInput() {
    QProcess p;
    p.setStandardInputFile(kRoot + "/tests/data/logs/nginx-proxy.log.2.gz");
    p.start(ratelab::testing::cliPath(),
            {"replay", "-", "--policy", kRoot + "/tests/data/logs/peer-fixed-window.json", "--json",
             "-", "--quiet"});
    QVERIFY(p.waitForFinished(60'000));
    QCOMPARE(p.exitCode(), 0);
    const auto j = nlohmann::json::parse(p.readAllStandardOutput().toStdString());
    QCOMPARE(j["replay"]["files"], nlohmann::json::array({"-"}));
    QCOMPARE(j["requests"], 20);
    QCOMPARE(j["scenario"], "stdin");
}

// fit writes a scenario that `run` accepts, naming the policy it was keyed by; rotated, gzipped
// and standard-input logs are read as replay reads them.
void TestCliReplay::fit() {
    const QString dir = kRoot + "/tests/data/logs/";
    const QString out = dir_.filePath("fitted.json");
    CliRun r = runCli({"fit", dir + "fit-shape.log.gz", "-o", out, "--policy",
                       dir + "fit-token-bucket.json", "--attacker-if", "rate>P97", "--top", "4"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("4127 requests of 47 clients over 120 s -> " + out + " (20 actors)"),
             qPrintable(r.out));
    QVERIFY2(r.out.contains("attacker          2 clients       1680 requests    2 actors"),
             qPrintable(r.out));
    nlohmann::ordered_json j = readJson(out);
    QCOMPARE(j["title"], "Fitted to fit-shape.log.gz (attacker if rate>P97)");
    QCOMPARE(j["duration_s"], 120.0);
    const QString policy = QString::fromStdString(j["policy"]);
    QVERIFY2(QFileInfo(QFileInfo(out).dir(), policy).canonicalFilePath() ==
                 QFileInfo(dir + "fit-token-bucket.json").canonicalFilePath(),
             qPrintable(policy));
    QCOMPARE(j["actors"][0]["identity"]["peer"]["address"], "203.0.113.5");
    CliRun run = runCli({"run", out, "--json", dir_.filePath("fitted-run.json"), "--quiet"});
    QCOMPARE(run.exitCode, 0);
    nlohmann::ordered_json report = readJson(dir_.filePath("fitted-run.json"));
    QCOMPARE(report["classes"]["attacker"]["offered"], 1680);

    // Two rotated files and standard input: the same reading as replay.
    CliRun rotated = runCli({"fit", dir + "nginx-proxy.log.2.gz", dir + "nginx-proxy.log.1.gz",
                             "-o", "-", "--policy", dir + "proxied-default.json", "--quiet"});
    QCOMPARE(rotated.exitCode, 0);
    const auto fitted = nlohmann::json::parse(rotated.out.toStdString());
    QCOMPARE(fitted["name"], "fit-nginx-proxy.log.2.gz");
    QCOMPARE(fitted["actors"].size(), std::size_t(6));  // the six clients behind the balancer
    // Standard input is read twice from a temporary file, removed after: the same scenario as
    // the file's but for the name.
    QProcess p;
    QTemporaryDir spool;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("TMPDIR", spool.path());
    p.setProcessEnvironment(env);
    p.setStandardInputFile(dir + "caddy.log");
    p.start(ratelab::testing::cliPath(), {"fit", "-", "-o", "-", "--quiet"});
    QVERIFY(p.waitForFinished(60'000));
    QCOMPARE(p.exitCode(), 0);
    const QByteArray caddy = p.readAllStandardOutput();
    nlohmann::json fromStdin = nlohmann::json::parse(caddy.toStdString());
    QCOMPARE(fromStdin["name"], "fit-stdin");
    QVERIFY(!caddy.contains("REDACTED"));  // the logged Authorization value
    QCOMPARE(QDir(spool.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries), QStringList());
    CliRun file = runCli({"fit", dir + "caddy.log", "-o", "-", "--quiet"});
    QCOMPARE(file.exitCode, 0);
    nlohmann::json fromFile = nlohmann::json::parse(file.out.toStdString());
    QCOMPARE(fromFile["actors"], fromStdin["actors"]);
    QCOMPARE(fromFile["duration_s"], fromStdin["duration_s"]);
}

// --check-policy replays the log and runs the fitted scenario under each policy given, and
// prints the two side by side per class, even with --quiet; --scale multiplies the crowds.
void TestCliReplay::fitChecksAndScale() {
    const QString dir = kRoot + "/tests/data/logs/";
    const QString out = dir_.filePath("site.json");
    CliRun r = runCli({"fit", dir + "bursty-site.log.gz", "-o", out, "--quiet", "--check-policy",
                       dir + "fidelity-token-bucket.json", "--check-policy",
                       dir + "fidelity-window-10s.json"});
    QCOMPARE(r.exitCode, 0);
    const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 6);  // per policy: a title, a header, the class
    QCOMPARE(lines[0], "under fidelity-token-bucket.json, replayed log / fitted scenario:");
    QVERIFY2(lines[1].contains("class") && lines[1].contains("throttled clients"),
             qPrintable(lines[1]));
    // The replay's figures are the log's; the fitted run's sit beside them.
    QVERIFY2(lines[2].startsWith("  legit      54859 / "), qPrintable(lines[2]));
    QVERIFY2(lines[2].contains("6968 / ") && lines[2].contains("1732 / 1732") &&
                 lines[2].contains("1149 / "),
             qPrintable(lines[2]));
    QCOMPARE(lines[3], "under fidelity-window-10s.json, replayed log / fitted scenario:");
    QVERIFY2(lines[5].contains("1949 / ") && lines[5].contains("261 / "), qPrintable(lines[5]));

    // Scaled ten times: each crowd ten times its clients; single clients stay single.
    const QString scaled = dir_.filePath("site-10.json");
    QCOMPARE(runCli({"fit", dir + "bursty-site.log.gz", "-o", scaled, "--quiet", "--scale", "10"})
                 .exitCode,
             0);
    const nlohmann::ordered_json once = readJson(out);
    const nlohmann::ordered_json ten = readJson(scaled);
    QCOMPARE(ten["actors"].size(), once["actors"].size());
    for (std::size_t i = 0; i < once["actors"].size(); ++i) {
        const auto& a = once["actors"][i];
        const int count = a.value("count", 1);
        QCOMPARE(ten["actors"][i].value("count", 1),
                 a["name"].get<std::string>().starts_with("crowd-") ? 10 * count : count);
        QCOMPARE(ten["actors"][i]["arrival"], a["arrival"]);
    }
}

void TestCliReplay::fitErrors_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message");
    const QString log = kRoot + "/tests/data/logs/fit-shape.log.gz";
    const QString out = QDir::temp().filePath("ratelab-fit-unused.json");
    QTest::newRow("no output") << QStringList{"fit", log} << 64
                               << "--output SCENARIO.json is required";
    QTest::newRow("no log") << QStringList{"fit", "-o", out} << 64 << "missing ACCESS.log";
    QTest::newRow("unknown option")
        << QStringList{"fit", log, "-o", out, "--bogus"} << 64 << "Unknown option 'bogus'";
    QTest::newRow("bad top") << QStringList{"fit", log, "-o", out, "--top", "many"} << 64
                             << "--top \"many\": expected a whole number from 0 to 10000";
    QTest::newRow("bad rule")
        << QStringList{"fit", log, "-o", out, "--attacker-if", "rate>P99.9 speed>3"} << 64
        << "--attacker-if 'rate>P99.9 speed>3': column 12: unknown term \"speed>3\"";
    QTest::newRow("ratio without status")
        << QStringList{"fit", log, "-o", out, "--attacker-if", "ratio>0.5"} << 64
        << "column 1: ratio compares the requests of a status";
    QTest::newRow("unknown format")
        << QStringList{"fit", log, "-o", out, "--format", "w3c"} << 64 << "--format \"w3c\"";
    QTest::newRow("missing log")
        << QStringList{"fit", "/nonexistent/access.log", "-o", out} << 74
        << "/nonexistent/access.log: error: cannot open the file: No such file or directory";
    QTest::newRow("binary log") << QStringList{"fit", kRoot + "/tests/data/logs/binary.log", "-o",
                                               out}
                                << 2 << "binary.log: error: binary data, not a text log";
    QTest::newRow("bad policy") << QStringList{"fit", log,        "-o",
                                               out,   "--policy", "/nonexistent/p.json"}
                                << 74 << "/nonexistent/p.json: error: cannot open the file";
    QTest::newRow("bad scale") << QStringList{"fit", log, "-o", out, "--scale", "0"} << 64
                               << "--scale \"0\": expected 0.001 to 1000";
    QTest::newRow("bad session gap")
        << QStringList{"fit", log, "-o", out, "--session-gap", "2h"} << 64
        << "--session-gap \"2h\": expected 0.001 to 3600 seconds";
    QTest::newRow("unknown model") << QStringList{"fit", log, "-o", out, "--model", "poisson"} << 64
                                   << "--model \"poisson\": expected session or empirical";
    QTest::newRow("missing check policy")
        << QStringList{"fit", log, "-o", out, "--check-policy", "/nonexistent/p.json"} << 74
        << "/nonexistent/p.json: error: cannot open the file";
    QTest::newRow("unwritable output") << QStringList{"fit", log, "-o", "/nonexistent/dir/s.json"}
                                       << 74 << "/nonexistent/dir/s.json: cannot write";
}

void TestCliReplay::fitErrors() {
    QFETCH(QStringList, arguments);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    CliRun r = runCli(arguments);
    QCOMPARE(r.exitCode, exitCode);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
    QVERIFY(!QFile::exists(QDir::temp().filePath("ratelab-fit-unused.json")));
}

QTEST_GUILESS_MAIN(TestCliReplay)
#include "tst_cli_replay.moc"
