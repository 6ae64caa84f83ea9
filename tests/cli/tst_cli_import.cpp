// ratelab-cli import and KIND:PATH policies, through the binary: the policy file written loads
// with `validate`, warnings are FILE:LINE:COLUMN on stderr, exit 0 / 2 / 64 / 74, --help lists
// the kinds the importer reads, and a command taking --policy imports on the fly, printing the
// import's warnings once.

#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include "fixtures/cli_fixture.h"
#include "fixtures/policy_export_fixture.h"
#include "formats/import/policy_import.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

const QString kData = kRoot + "tests/data/import/";

// Every stderr line of a successful import is a warning at FILE:LINE:COLUMN.
bool allWarningsPlaced(const QString& err, const QString& file) {
    static const QRegularExpression placed(R"(^.+:\d+:\d+: warning: .+$)");
    for (const QString& line : err.split('\n', Qt::SkipEmptyParts)) {
        if (!line.startsWith(file) || !placed.match(line).hasMatch()) return false;
    }
    return true;
}

}  // namespace

class TestCliImport : public QObject {
    Q_OBJECT

private slots:
    void importWritesAValidPolicyFile_data() {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("policy");  // a policy name the import writes
        QTest::addColumn<int>("warnings");
        QTest::newRow("nginx per ip") << "nginx"
                                      << "nginx/basic-per-ip.conf"
                                      << "one.search" << 2;
        QTest::newRow("nginx api gateway") << "nginx"
                                           << "nginx/api-gateway.conf"
                                           << "per_key.v1" << 3;
        QTest::newRow("haproxy src") << "haproxy"
                                     << "haproxy/basic-src-rate.cfg"
                                     << "www" << 0;
        QTest::newRow("haproxy header") << "haproxy"
                                        << "haproxy/api-key-table.cfg"
                                        << "api_keys" << 2;
        QTest::newRow("envoy-ratelimit by name") << "envoy-ratelimit"
                                                 << "envoy-ratelimit/by-name.yaml"
                                                 << "generic_key_sender.x-user" << 7;
    }
    void importWritesAValidPolicyFile() {
        QFETCH(QString, kind);
        QFETCH(QString, file);
        QFETCH(QString, policy);
        QFETCH(int, warnings);
        QTemporaryDir dir;
        const QString out = dir.filePath("imported.json");
        const CliRun imported = runCli({"import", "--from", kind, kData + file, "-o", out});
        QCOMPARE(imported.exitCode, 0);
        QVERIFY(imported.out.isEmpty());
        QVERIFY2(allWarningsPlaced(imported.err, kData + file), qPrintable(imported.err));
        QCOMPARE(imported.err.count(": warning: "), warnings);
        const CliRun valid = runCli({"validate", out});
        QCOMPARE(valid.exitCode, 0);
        QVERIFY2(valid.out.contains("valid (0 errors"), qPrintable(valid.out + valid.err));
        QVERIFY2(readText(out).find("\"name\": \"" + policy.toStdString()) != std::string::npos,
                 readText(out).c_str());
        // Without -o the file goes to standard output, the same bytes.
        const CliRun toStdout = runCli({"import", "--from", kind, kData + file});
        QCOMPARE(toStdout.exitCode, 0);
        QCOMPARE(toStdout.out.toStdString(), readText(out));
    }

    // 2: a file that is not KIND's (nothing written), 74: one that cannot be opened, 64: the
    // command line.
    void exitCodes_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        QTest::newRow("unbalanced brace")
            << QStringList{"--from", "nginx", kData + "nginx/malformed-unbalanced.conf"} << 2
            << kData + "nginx/malformed-unbalanced.conf:";
        QTest::newRow("haproxy quote")
            << QStringList{"--from", "haproxy", kData + "haproxy/malformed-quote.cfg"} << 2
            << kData + "haproxy/malformed-quote.cfg:";
        QTest::newRow("no limit at all")
            << QStringList{"--from", "haproxy", kData + "haproxy/no-limits.cfg"} << 2
            << "error: no rate limit";
        QTest::newRow("missing file") << QStringList{"--from", "nginx", "/nonexistent/nginx.conf"}
                                      << 74 << "/nonexistent/nginx.conf: error: cannot open";
        QTest::newRow("unknown kind")
            << QStringList{"--from", "caddy", kData + "nginx/basic-per-ip.conf"} << 64
            << "unknown kind \"caddy\"; use one of nginx, haproxy, traefik, kong, "
               "envoy-ratelimit, envoy-local";
        QTest::newRow("no kind") << QStringList{kData + "nginx/basic-per-ip.conf"} << 64
                                 << "--from KIND is required";
        QTest::newRow("no file") << QStringList{"--from", "nginx"} << 64 << "FILE";
        QTest::newRow("envoy-ratelimit unknown key")
            << QStringList{"--from", "envoy-ratelimit",
                           kData + "envoy-ratelimit/malformed-unknown-key.yaml"}
            << 2 << kData + "envoy-ratelimit/malformed-unknown-key.yaml:4:5: error:";
        QTest::newRow("envoy-ratelimit bad action")
            << QStringList{"--from", "envoy-ratelimit",
                           kData + "envoy-ratelimit/malformed-action.yaml", "--envoy-actions",
                           kData + "envoy-ratelimit/malformed-action.routes.yaml"}
            << 2 << kData + "envoy-ratelimit/malformed-action.routes.yaml:10:19: error:";
        QTest::newRow("envoy-ratelimit missing actions")
            << QStringList{"--from", "envoy-ratelimit", kData + "envoy-ratelimit/per-address.yaml",
                           "--envoy-actions", "/nonexistent/routes.yaml"}
            << 74 << "/nonexistent/routes.yaml";
        QTest::newRow("actions for another kind")
            << QStringList{"--from", "nginx", kData + "nginx/basic-per-ip.conf", "--envoy-actions",
                           kData + "envoy-ratelimit/per-address.routes.yaml"}
            << 64 << "--envoy-actions is read only with --from envoy-ratelimit";
    }
    void exitCodes() {
        QFETCH(QStringList, arguments);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const QString out = dir.filePath("out.json");
        const CliRun run = runCli(QStringList{"import"} + arguments + QStringList{"-o", out});
        QCOMPARE(run.exitCode, exitCode);
        QVERIFY2(run.err.contains(message), qPrintable(run.err));
        QVERIFY(!QFile::exists(out));
        if (exitCode == 2) {
            static const QRegularExpression placed(R"(:\d+:\d+: error: |: error: no rate limit)");
            QVERIFY2(placed.match(run.err).hasMatch(), qPrintable(run.err));
        }
    }

    // --help names the kinds from the importer's one list.
    void helpListsTheKinds() {
        const CliRun help = runCli({"import", "--help"});
        QCOMPARE(help.exitCode, 0);
        QStringList names;
        for (formats::ImportKind kind : formats::importKinds())
            names << QString::fromUtf8(formats::importKindName(kind).data(),
                                       formats::importKindName(kind).size());
        QCOMPARE(names, QStringList({"nginx", "haproxy", "traefik", "kong", "envoy-ratelimit",
                                     "envoy-local"}));
        QVERIFY2(
            help.out.simplified().contains("--from KIND The product: " + names.join(", ") + "."),
            qPrintable(help.out));
        QVERIFY(help.out.simplified().contains("(KIND: " + names.join(", ") + ")"));
    }

    // KIND:PATH wherever --policy is taken: the same decisions as the written file, the
    // import's warnings once.
    void policyKindPath() {
        const QString conf = kData + "nginx/basic-per-ip.conf";
        QTemporaryDir dir;
        const QString written = dir.filePath("p.json");
        QCOMPARE(runCli({"import", "--from", "nginx", conf, "-o", written}).exitCode, 0);
        const QStringList request = {"--peer", "192.0.2.1", "--path", "/search/x"};
        const CliRun onTheFly = runCli(QStringList{"check", "--policy", "nginx:" + conf} + request);
        QCOMPARE(onTheFly.exitCode, 0);
        const CliRun fromFile = runCli(QStringList{"check", "--policy", written} + request);
        QCOMPARE(fromFile.exitCode, 0);
        QCOMPARE(onTheFly.out, fromFile.out);
        QVERIFY2(onTheFly.out.contains("\"one.search\""), qPrintable(onTheFly.out));
        QCOMPARE(onTheFly.err.count("warning: nginx refuses with 503"), 1);
        QVERIFY(allWarningsPlaced(onTheFly.err, conf));

        // validate and export read policies in the same place.
        const CliRun valid =
            runCli({"validate", "haproxy:" + kData + "haproxy/basic-src-rate.cfg"});
        QCOMPARE(valid.exitCode, 0);
        const CliRun exported =
            runCli({"export", "--to", "nginx", "nginx:" + kData + "nginx/basic-per-ip.conf"});
        QCOMPARE(exported.exitCode, 0);
        QVERIFY(exported.out.contains("limit_req_zone"));

        // envoy-ratelimit:CONFIG+ROUTES: the RLS configuration with the route actions.
        const QString rls = kData + "envoy-ratelimit/per-address.yaml+" + kData +
                            "envoy-ratelimit/per-address.routes.yaml";
        const CliRun login = runCli({"check", "--policy", "envoy-ratelimit:" + rls, "--peer",
                                     "192.0.2.1", "--path", "/login/form"});
        QCOMPARE(login.exitCode, 0);
        QVERIFY2(login.out.contains("login.generic_key_login.remote_address"),
                 qPrintable(login.out));

        // An import that cannot be read: the import's exit codes.
        const CliRun missing = runCli({"check", "--policy", "nginx:/nonexistent/nginx.conf"});
        QCOMPARE(missing.exitCode, 74);
        const CliRun broken =
            runCli({"check", "--policy", "nginx:" + kData + "nginx/malformed-unbalanced.conf"});
        QCOMPARE(broken.exitCode, 2);
        // A name before ':' that is no kind is part of a path.
        const CliRun path = runCli({"check", "--policy", "caddy:/nonexistent.json"});
        QCOMPARE(path.exitCode, 74);
        QVERIFY2(path.err.contains("caddy:/nonexistent.json"), qPrintable(path.err));
    }
};

QTEST_GUILESS_MAIN(TestCliImport)
#include "tst_cli_import.moc"
