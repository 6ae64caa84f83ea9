// `ratelab-cli serve --rls-config` as a process: signals reach the signal loop and not gRPC's
// own threads (SIGHUP reloads, keeping counters or refusing a broken file; SIGTERM drains and
// exits 0, and every call the service answered reached its client), and the command line's
// refusals with their exit codes.

#include <QtTest>
#include <atomic>
#include <csignal>
#include <thread>

#include "fixtures/cli_fixture.h"
#include "fixtures/rls_fixture.h"
#include "fixtures/serve_process.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

constexpr const char* kEdge = R"(domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: hour, requests_per_unit: 5}
)";

std::uint32_t remaining(RlsClient& client) {
    const auto a = client.ask("edge", {{{"remote_address", "198.51.100.7"}}});
    return a.status.ok() ? a.response.statuses(0).limit_remaining() : 999;
}

}  // namespace

class TestRlsServeCli : public QObject {
    Q_OBJECT

private slots:
    void sighupReloads() {
        QTemporaryDir dir;
        const std::string file = dir.filePath("edge.yaml").toStdString();
        writeText(file, kEdge);
        ServeProcess serve;
        QVERIFY(serve.startRls(dir.path().toStdString(), {}));
        QVERIFY(serve.waitForLog("\"event\":\"started\""));
        RlsClient client(serve.grpcPort);
        QCOMPARE(remaining(client), 4u);

        // A new domain beside: reloaded, the edge counter goes on.
        writeText(dir.filePath("api.yaml").toStdString(),
                  "domain: api\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, "
                  "requests_per_unit: 1}\n");
        serve.signal(SIGHUP);
        QVERIFY(serve.waitForLog(
            "\"event\":\"rls_reloaded\",\"trigger\":\"sighup\",\"generation\":2,\"kept\":"
            "\"edge\",\"fresh\":\"api\""));
        QCOMPARE(remaining(client), 3u);

        // A broken file: refused, said where, nothing changes.
        writeText(file, std::string(kEdge) + "    shadow: true\n");
        serve.signal(SIGHUP);
        QVERIFY(serve.waitForLog("\"event\":\"rls_reload_failed\",\"trigger\":\"sighup\""));
        QVERIFY(serve.log().find(file + ":5:5: error: config error, unknown key 'shadow'") !=
                std::string::npos);
        QCOMPARE(remaining(client), 2u);

        serve.signal(SIGTERM);
        QCOMPARE(serve.waitForExit(), 0);
    }

    // Calls keep coming through SIGTERM. Those that arrive once the listener stops are refused
    // (UNAVAILABLE, or CANCELLED for one sent as the server let go of its connection, before any
    // decision); every call the service decided was answered: the client counts as many OK
    // answers as the service's last log line counts calls.
    void sigtermDrains() {
        QTemporaryDir dir;
        writeText(dir.filePath("edge.yaml").toStdString(), kEdge);
        ServeProcess serve;
        QVERIFY(serve.startRls(dir.path().toStdString(), {}));
        RlsClient client(serve.grpcPort);
        std::atomic<bool> stop{false};
        std::atomic<int> ok{0}, refused{0}, other{0};
        std::thread caller([&] {
            while (!stop.load()) {
                const auto a = client.ask("edge", {{{"remote_address", "x"}}}, 0);
                if (a.status.ok()) {
                    ++ok;
                } else if (a.status.error_code() == grpc::StatusCode::UNAVAILABLE ||
                           a.status.error_code() == grpc::StatusCode::CANCELLED) {
                    ++refused;
                    std::this_thread::yield();
                } else {
                    ++other;
                }
            }
        });
        while (ok.load() < 20)
            std::this_thread::yield();
        serve.signal(SIGTERM);
        QVERIFY(serve.waitForLog("\"event\":\"draining\""));
        const int status = client.health("");
        QVERIFY2(status == 2 || status == -1, qPrintable(QString::number(status)));  // NOT_SERVING
        QCOMPARE(serve.waitForExit(), 0);
        stop = true;
        caller.join();
        QCOMPARE(other.load(), 0);
        QVERIFY(refused.load() > 0);
        const std::string log = serve.log();
        const std::size_t at = log.find("\"rls_calls\":");
        QVERIFY(at != std::string::npos);
        QCOMPARE(std::stoi(log.substr(at + 12)), ok.load());
    }

    void commandLineRefusals_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        QTest::newRow("nothing to serve") << QStringList{} << 64 << "give --policy, --rls-config";
        QTest::newRow("--grpc alone") << QStringList{"--grpc", "127.0.0.1:0"} << 64
                                      << "--grpc serves a rate limit configuration";
        QTest::newRow("--listen without a policy")
            << QStringList{"--rls-config", "CONFIG", "--listen", "127.0.0.1:0"} << 64
            << "--listen decides with a policy file";
        QTest::newRow("a bad --grpc")
            << QStringList{"--rls-config", "CONFIG", "--grpc", "x:y"} << 64 << "--grpc \"x:y\"";
        QTest::newRow("a bad --store")
            << QStringList{"--rls-config", "CONFIG", "--store", "mongodb://x"} << 64
            << "expected memory or a Redis URL";
        QTest::newRow("a configuration with errors")
            << QStringList{"--rls-config", "BROKEN", "--grpc", "127.0.0.1:0"} << 2
            << "broken.yaml:2:1: error:";
        QTest::newRow("no such path")
            << QStringList{"--rls-config", "/nonexistent/rls", "--grpc", "127.0.0.1:0"} << 74
            << "/nonexistent/rls";
    }
    void commandLineRefusals() {
        QFETCH(QStringList, arguments);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const QString config = dir.filePath("edge.yaml");
        const QString broken = dir.filePath("broken.yaml");
        writeText(config.toStdString(), kEdge);
        writeText(broken.toStdString(), "domain: b\nfoo: 1\n");
        arguments.replaceInStrings("CONFIG", config);
        arguments.replaceInStrings("BROKEN", broken);
        const CliRun run = runCli(QStringList{"serve"} + arguments, {}, 20'000);
        QCOMPARE(run.exitCode, exitCode);
        QVERIFY2(run.err.contains(message), qPrintable(run.err));
    }
};

QTEST_GUILESS_MAIN(TestRlsServeCli)
#include "tst_rls_serve_cli.moc"
