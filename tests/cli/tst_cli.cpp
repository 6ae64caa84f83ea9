// The shape every ratelab-cli command shares (app/cli/command_line.cpp): help and version, exit
// codes that tell a wrong command line (64) and an unreadable file (74) from an invalid one (2),
// "-" for standard input and output on every file argument, pipes and process substitutions,
// and several files to validate.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include "fixtures/cli_fixture.h"
#include "fixtures/file_fixture.h"

using ratelab::testing::CliRun;
using ratelab::testing::runCli;
using ratelab::testing::runCliInShell;

namespace {

using ratelab::testing::readFile;
using ratelab::testing::writeFile;

const QString kRoot = QStringLiteral(RATELAB_SOURCE_DIR "/");
const QString kPolicy = kRoot + "resources/policies/default.json";
const QString kLogin = kRoot + "resources/policies/login.json";
const QString kScenario = kRoot + "scenarios/page-load.json";

// Single quotes for bash.
QString quoted(const QString& text) {
    return "'" + QString(text).replace("'", "'\\''") + "'";
}

const QStringList kCommands = {"check",   "diff", "export", "fit",   "import", "replay",
                               "rls-ask", "run",  "serve",  "sweep", "tune",   "validate"};

// The long options a command's help lists ("  -o, --output FILE  ..." gives "output").
QStringList optionsOf(const QString& help) {
    QStringList names;
    static const QRegularExpression option(R"(^\s+(?:-\w, )?--([a-z][a-z-]*))");
    for (const QString& line : help.split('\n')) {
        const QRegularExpressionMatch m = option.match(line);
        if (m.hasMatch() && m.captured(1) != "help") names << m.captured(1);
    }
    return names;
}

}  // namespace

class TestCli : public QObject {
    Q_OBJECT

private slots:
    void versionAndHelp() {
        for (const char* flag : {"--version", "-V"}) {
            const CliRun version = runCli({flag});
            QCOMPARE(version.exitCode, 0);
            QCOMPARE(version.out, QString("ratelab-cli 0.1.0\n"));
        }
        const CliRun help = runCli({"--help"});
        QCOMPARE(help.exitCode, 0);
        for (const QString& command : kCommands)
            QVERIFY2(help.out.contains("  " + command + " "), qPrintable(command));
        // ... and no other: a new command joins kCommands, so its help and man page are tested.
        static const QRegularExpression listed(R"(^  ([a-z-]+) )",
                                               QRegularExpression::MultilineOption);
        QStringList names;
        for (const QRegularExpressionMatch& m : listed.globalMatch(help.out))
            names << m.captured(1);
        QCOMPARE(names, kCommands);
        QVERIFY(help.out.contains("64  the command line is wrong"));
        QCOMPARE(runCli({"help"}).out, help.out);
        // No command at all is a usage error, with the same text on stderr.
        const CliRun none = runCli({});
        QCOMPARE(none.exitCode, 64);
        QCOMPARE(none.err, help.out);
        const CliRun unknown = runCli({"frobnicate"});
        QCOMPARE(unknown.exitCode, 64);
        QVERIFY(unknown.err.startsWith("ratelab-cli: unknown command \"frobnicate\""));
        QCOMPARE(runCli({"help", "frobnicate"}).exitCode, 64);
    }

    // `help CMD` and `CMD --help` print the same text: usage, arguments, options, exit codes.
    void helpOfEachCommand_data() {
        QTest::addColumn<QString>("command");
        for (const QString& command : kCommands)
            QTest::newRow(qPrintable(command)) << command;
    }
    void helpOfEachCommand() {
        QFETCH(QString, command);
        const CliRun help = runCli({"help", command});
        QCOMPARE(help.exitCode, 0);
        QVERIFY2(help.out.startsWith("usage: ratelab-cli " + command + " "), qPrintable(help.out));
        QVERIFY(help.out.contains("\nOptions:\n"));
        QVERIFY(help.out.contains("  -h, --help "));
        QVERIFY(help.out.contains("\nExit status:\n  0   success\n"));
        QVERIFY(help.out.contains("  74  a file cannot be read or written"));
        const CliRun dashed = runCli({command, "--help"});
        QCOMPARE(dashed.exitCode, 0);
        QCOMPARE(dashed.out, help.out);
        QCOMPARE(runCli({command, "-h"}).out, help.out);

        // The man page documents the command and every option its help lists.
        const QString man = QString::fromUtf8(readFile(kRoot + "docs/ratelab-cli.1"));
        QVERIFY2(man.contains(".BI \"" + command + " "), qPrintable(command));
        const QStringList options = optionsOf(help.out);
        QVERIFY(!options.isEmpty());
        for (QString name : options) {
            QVERIFY2(man.contains("\\-\\-" + name.replace("-", "\\-")),
                     qPrintable(command + " --" + name + " is not in docs/ratelab-cli.1"));
        }
    }

    // 0 valid, 2 invalid, 64 a wrong command line, 74 a file that cannot be read or written.
    void exitCodes_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        const QString invalid = kRoot + "tests/data/policies/malformed/cost-over-capacity.json";
        QTest::newRow("valid") << QStringList{"validate", kPolicy} << 0 << "valid (0 errors";
        QTest::newRow("invalid") << QStringList{"validate", invalid} << 2 << "invalid (";
        QTest::newRow("missing file")
            << QStringList{"validate", "/nonexistent/p.json"} << 74
            << "/nonexistent/p.json: error: cannot open the file: No such file or directory";
        QTest::newRow("directory") << QStringList{"validate", kRoot + "resources"} << 74
                                   << "resources: error: is a directory";
        QTest::newRow("rls config")
            << QStringList{"validate", kRoot + "tests/fuzz/corpus/rls_config/example-config.yaml"}
            << 0 << "valid (Envoy rate limit service configuration, 1 domain; 0 errors";
        QTest::newRow("rls config refused")
            << QStringList{"validate", kRoot + "tests/fuzz/corpus/rls_config/refused.yaml"} << 2
            << "refused.yaml:4:5: error: config error, unknown key 'ratelimit'; did you mean "
               "'rate_limit'?";
        QTest::newRow("rls directory")
            << QStringList{"validate", kRoot + "tests/fuzz/corpus/rls_config"} << 2
            << "bad-yaml.yaml:1:4: error: error loading config file: illegal EOF in scalar";
        QTest::newRow("unknown option")
            << QStringList{"validate", "--strict", kPolicy} << 64 << "Unknown option 'strict'";
        QTest::newRow("no file") << QStringList{"validate"} << 64 << "missing P.json";
        QTest::newRow("option twice")
            << QStringList{"export", "--to", "nginx", "--to", "envoy", kPolicy} << 64
            << "--to is given more than once";
        QTest::newRow("required option")
            << QStringList{"export", kPolicy} << 64 << "--to TARGET is required";
        QTest::newRow("unknown target")
            << QStringList{"export", "--to", "caddy", kPolicy} << 64 << "unknown target \"caddy\"";
        QTest::newRow("refused export")
            << QStringList{"export", "--to", "nginx", kRoot + "resources/policies/tiers.json"} << 2
            << "nothing exported";
        QTest::newRow("unwritable output")
            << QStringList{"export", "--to", "nginx", "-o", "/nonexistent/dir/out.conf", kPolicy}
            << 74 << "ratelab-cli export: /nonexistent/dir/out.conf: cannot write: ";
        QTest::newRow("run, unwritable report")
            << QStringList{"run", kScenario, "--json", "/nonexistent/dir/r.json"} << 74
            << "ratelab-cli run: /nonexistent/dir/r.json: cannot write: ";
        QTest::newRow("two outputs on stdout")
            << QStringList{"run", kScenario, "--json", "-", "--csv", "-"} << 64
            << "standard output (-) can take one output only";
        QTest::newRow("two inputs on stdin")
            << QStringList{"validate", "-", "--previous", "-"} << 64
            << "standard input (-) can be read by one argument only";
    }
    void exitCodes() {
        QFETCH(QStringList, arguments);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        const CliRun run = runCli(arguments);
        QCOMPARE(run.exitCode, exitCode);
        QVERIFY2((run.out + run.err).contains(message), qPrintable(run.out + run.err));
        if (exitCode == 64) {
            QVERIFY2(run.err.contains("Try 'ratelab-cli help " + arguments.front() + "'."),
                     qPrintable(run.err));
        }
    }

    // "-" is standard input for every file argument.
    void dashReadsStandardInput() {
        const QByteArray policy = readFile(kPolicy);
        const CliRun validate = runCli({"validate", "-"}, policy);
        QCOMPARE(validate.exitCode, 0);
        QCOMPARE(validate.out, QString("<stdin>: valid (0 errors, 0 warnings)\n"));
        // Diagnostics name standard input "<stdin>", with line and column.
        const CliRun broken =
            runCli({"validate", "-"}, "{\n  \"version\": 1,\n  \"policies\": 3\n}\n");
        QCOMPARE(broken.exitCode, 2);
        QVERIFY2(broken.out.startsWith("<stdin>:3:15: error: expected an array"),
                 qPrintable(broken.out));

        const CliRun exported = runCli({"export", "--to", "nginx", "-"}, policy);
        QCOMPARE(exported.exitCode, 0);
        QCOMPARE(exported.out, runCli({"export", "--to", "nginx", kPolicy}).out);
        QVERIFY(exported.err.contains("<stdin>:30:19: warning: nginx: "));

        const CliRun checked = runCli({"check", "--policy", "-", "--peer", "198.51.100.7"}, policy);
        QCOMPARE(checked.exitCode, 0);
        QCOMPARE(checked.json().value("status").toInt(), 200);

        // The previous version from standard input enables the lints that compare versions.
        QTemporaryDir dir;
        const QString now = dir.filePath("now.json");
        writeFile(now, QByteArray(policy)
                           .replace("\"window_ms\": 60000", "\"window_ms\": 1000")
                           .replace("\"algorithm\": \"token_bucket\"",
                                    "\"algorithm\": \"fixed_window\""));
        const CliRun compared = runCli({"validate", now, "--previous", "-"}, policy);
        QVERIFY2(
            compared.out.contains("warning: algorithm changed from token_bucket to fixed_window"),
            qPrintable(compared.out + compared.err));

        // A scenario from standard input names its policy relative to the working directory;
        // --policy overrides it here.
        const CliRun run =
            runCli({"run", "-", "--policy", kPolicy, "--json", "-"}, readFile(kScenario));
        QCOMPARE(run.exitCode, 0);
        const QJsonObject report = run.json();
        QCOMPARE(report.value("scenario").toString(), QString("page-load"));
        QCOMPARE(report.value("requests").toInt(), 9000);

        const CliRun replay = runCli({"replay", "-", "--policy", kPolicy, "--decisions", "-"},
                                     readFile(kRoot + "tests/data/logs/sample_common.log"));
        QCOMPARE(replay.exitCode, 0);
        QVERIFY2(
            replay.out.startsWith("seq,ts_ms,key,allowed,remaining,retry_after_ms,file,line\n0,"),
            qPrintable(replay.out.left(200)));
    }

    // "-" is standard output for every output, and never a file named "-".
    void dashWritesStandardOutput() {
        QTemporaryDir dir;
        const auto inDir = [&](const QString& arguments) {
            return runCliInShell("cd " + quoted(dir.path()) + " && \"$CLI\" " + arguments);
        };
        const CliRun exported = inDir("export --to haproxy -o - " + quoted(kPolicy));
        QCOMPARE(exported.exitCode, 0);
        QCOMPARE(exported.out.toUtf8(),
                 readFile(kRoot + "tests/data/policies/exports/default.haproxy.golden"));
        const CliRun csv = inDir("run " + quoted(kScenario) + " --csv -");
        QCOMPARE(csv.exitCode, 0);
        QVERIFY2(csv.out.startsWith("t_s,"), qPrintable(csv.out.left(200)));
        const CliRun validated = inDir("run " + quoted(kScenario) + " --validated-policy -");
        QCOMPARE(validated.exitCode, 0);
        QVERIFY(validated.out.contains("\"validation\": {"));
        const CliRun sweep = inDir("sweep " + quoted(kScenario) +
                                   " --vary capacity=10:20:10 --threads 1 --quiet --csv -");
        QCOMPARE(sweep.exitCode, 0);
        QCOMPARE(sweep.out.count('\n'), 3);  // the header and two cells
        QVERIFY(!QFile::exists(dir.filePath("-")));
    }

    // Pipes and process substitutions are read to their end, never sized by seeking.
    void pipesAndProcessSubstitutions() {
        const CliRun devStdin = runCliInShell("\"$CLI\" validate /dev/stdin < " + quoted(kPolicy));
        QCOMPARE(devStdin.exitCode, 0);
        QCOMPARE(devStdin.out, QString("/dev/stdin: valid (0 errors, 0 warnings)\n"));
        const CliRun piped =
            runCliInShell("cat " + quoted(kPolicy) + " | \"$CLI\" validate /dev/stdin");
        QCOMPARE(piped.exitCode, 0);
        const CliRun substituted = runCliInShell("\"$CLI\" validate --previous <(cat " +
                                                 quoted(kLogin) + ") " + quoted(kLogin));
        QCOMPARE(substituted.exitCode, 0);
        QVERIFY2(substituted.out.endsWith("login.json: valid (0 errors, 0 warnings)\n"),
                 qPrintable(substituted.out + substituted.err));
        const CliRun scenario =
            runCliInShell("\"$CLI\" run <(cat " + quoted(kScenario) + ") --policy " +
                          quoted(kPolicy) + " --quiet --json /dev/stdout");
        QCOMPARE(scenario.exitCode, 0);
        QCOMPARE(scenario.json().value("requests").toInt(), 9000);
    }

    // Several files: each reported in turn; the exit status is the worst (74 over 2 over 0).
    void validateSeveralFiles() {
        const QString invalid = kRoot + "tests/data/policies/malformed/cost-over-capacity.json";
        const CliRun two = runCli({"validate", kPolicy, kLogin});
        QCOMPARE(two.exitCode, 0);
        QCOMPARE(two.out, kPolicy + ": valid (0 errors, 0 warnings)\n" + kLogin +
                              ": valid (0 errors, 0 warnings)\n");
        const CliRun mixed = runCli({"validate", invalid, kPolicy});
        QCOMPARE(mixed.exitCode, 2);
        QVERIFY(mixed.out.contains(invalid + ": invalid (1 error, 0 warnings)\n"));
        QVERIFY(mixed.out.endsWith(kPolicy + ": valid (0 errors, 0 warnings)\n"));
        const CliRun unreadable = runCli({"validate", invalid, "/nonexistent/p.json", kPolicy});
        QCOMPARE(unreadable.exitCode, 74);
        QVERIFY(unreadable.out.contains("/nonexistent/p.json: unreadable (1 error, 0 warnings)\n"));
        QVERIFY(unreadable.out.endsWith(kPolicy + ": valid (0 errors, 0 warnings)\n"));

        const CliRun json = runCli({"validate", "--json", invalid, kPolicy});
        QCOMPARE(json.exitCode, 2);
        const QJsonArray files = QJsonDocument::fromJson(json.out.toUtf8()).array();
        QCOMPARE(files.size(), 2);
        QCOMPARE(files[0].toObject().value("file").toString(), invalid);
        QCOMPARE(files[0].toObject().value("valid").toBool(), false);
        QCOMPARE(files[1].toObject().value("valid").toBool(), true);
        // One file keeps the one object it always printed.
        QCOMPARE(runCli({"validate", "--json", kPolicy}).json().value("valid").toBool(), true);
    }

    // The CLI writes what the library exports, byte for byte, and prints the approximations
    // with their FILE:LINE:COLUMN.
    // Numbers in files never follow the locale. QCoreApplication adopts LC_ALL from the
    // environment, and printf's %g then writes "1,25" under de_DE: the CSV of sweep and run, the
    // text report and an nginx export must be byte for byte what the C locale gives.
    void numbersIgnoreTheLocale_data() {
        QTest::addColumn<QString>("arguments");
        QTest::addColumn<bool>("timed");  // the last line carries wall-clock timing
        const QString replicas = quoted(kRoot + "scenarios/replicas-shared.json");
        const QString pageLoad = quoted(kScenario);
        QTest::newRow("sweep --csv") << "sweep " + replicas + " --policy " + quoted(kPolicy) +
                                            " --vary capacity=4:8:4 --vary refill=1.25:2.5:1.25"
                                            " --csv - --quiet"
                                     << false;
        QTest::newRow("run --csv") << "run " + pageLoad + " --csv - --quiet" << false;
        QTest::newRow("run report") << "run " + pageLoad << true;
        QTest::newRow("export nginx")
            << "export " + quoted(kRoot + "resources/policies/nginx-compatible.json") +
                   " --to nginx"
            << false;
    }
    void numbersIgnoreTheLocale() {
        QFETCH(QString, arguments);
        QFETCH(bool, timed);
        // The comma locale must really be in effect, or this shows nothing.
        const CliRun point = runCliInShell("LC_ALL=de_DE.UTF-8 locale decimal_point");
        QVERIFY2(point.out == ",\n" && point.err.isEmpty(),
                 "de_DE.UTF-8 is not installed (scripts/setup-debian.sh generates it)");
        const CliRun c = runCliInShell("LC_ALL=C $CLI " + arguments);
        const CliRun de = runCliInShell("LC_ALL=de_DE.UTF-8 $CLI " + arguments);
        QCOMPARE(de.exitCode, c.exitCode);
        QVERIFY(c.exitCode == 0 || c.exitCode == 1);
        QVERIFY(c.out.count('\n') > 1);
        auto untimed = [timed](QString out) {
            if (timed) out.truncate(out.lastIndexOf('\n', -2) + 1);
            return out;
        };
        QCOMPARE(untimed(de.out), untimed(c.out));
        if (arguments.startsWith("sweep")) {
            // And it parses: every row has the header's fields, refill reads back as 1.25.
            const QStringList rows = de.out.trimmed().split('\n');
            const qsizetype fields = rows.front().split(',').size();
            for (const QString& row : rows)
                QCOMPARE(row.split(',').size(), fields);
            QCOMPARE(rows.at(1).split(',').at(1), QString("1.25"));
        }
    }

    void exportWritesTheSameAsTheLibrary() {
        QTemporaryDir dir;
        const CliRun run =
            runCli({"export", kPolicy, "--to", "haproxy", "-o", dir.filePath("out.cfg")});
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(readFile(dir.filePath("out.cfg")),
                 readFile(kRoot + "tests/data/policies/exports/default.haproxy.golden"));
        QVERIFY(
            run.err.contains("resources/policies/default.json:30:19: warning: haproxy: policy "
                             "\"api\": the default chain"));
        const CliRun refused = runCli({"export", kRoot + "resources/policies/tiers.json", "--to",
                                       "nginx", "-o", dir.filePath("tiers.conf")});
        QCOMPARE(refused.exitCode, 2);
        QVERIFY(!QFile::exists(dir.filePath("tiers.conf")));
        QVERIFY2(refused.err.contains("resources/policies/tiers.json:30:19: error: nginx: policy "
                                      "\"api-plans\": it keys on the verified principal"),
                 qPrintable(refused.err));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
