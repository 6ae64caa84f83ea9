// `ratelab-cli rls-ask` against a rate limit service in this process: the answer as proto3 JSON
// and the exit codes a script reads (0 OK, 1 OVER_LIMIT, 2 a request refused as bad, here or by
// the service, 64 a wrong command line, 69 no service).

#include <QJsonArray>
#include <QtTest>

#include "fixtures/cli_fixture.h"
#include "fixtures/rls_fixture.h"

using namespace ratelab;
using namespace ratelab::testing;

class TestRlsAsk : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        server_ = std::make_unique<RlsSidecarUnderTest>(RlsFiles{{"rl.yaml", R"(domain: rl
descriptors:
  - key: key1
    value: value1
    rate_limit: {unit: minute, requests_per_unit: 2, name: per-key}
    descriptors:
      - key: sub
        value: a
        rate_limit: {unit: hour, requests_per_unit: 1}
)"}});
        QVERIFY2(server_->sidecar, server_->error.c_str());
        address_ = "127.0.0.1:" + QString::number(server_->port());
    }
    void cleanupTestCase() { server_.reset(); }

    // 2 a minute: OK with 1 left, OK with 0, then OVER_LIMIT (exit 1), each printed whole.
    void answersAndExitCodes() {
        const QStringList ask = {"rls-ask", "--grpc",       address_,     "--domain",
                                 "rl",      "--descriptor", "key1=value1"};
        CliRun run = runCli(ask);
        QCOMPARE(run.exitCode, 0);
        QJsonObject answer = run.json();
        QCOMPARE(answer.value("overallCode").toString(), QString("OK"));
        QJsonObject status = answer.value("statuses").toArray().at(0).toObject();
        QCOMPARE(status.value("code").toString(), QString("OK"));
        QCOMPARE(status.value("limitRemaining").toInt(), 1);
        const QJsonObject limit = status.value("currentLimit").toObject();
        QCOMPARE(limit.value("requestsPerUnit").toInt(), 2);
        QCOMPARE(limit.value("unit").toString(), QString("MINUTE"));
        QCOMPARE(limit.value("name").toString(), QString("per-key"));
        QCOMPARE(status.value("durationUntilReset").toString(), QString("20s"));
        QCOMPARE(answer.value("responseHeadersToAdd").toArray().at(0).toObject().value("value"),
                 QJsonValue("\"per-key\";q=2;w=60"));

        QCOMPARE(runCli(ask).exitCode, 0);
        run = runCli(ask);
        QCOMPARE(run.exitCode, 1);
        answer = run.json();
        QCOMPARE(answer.value("overallCode").toString(), QString("OVER_LIMIT"));
        status = answer.value("statuses").toArray().at(0).toObject();
        QCOMPARE(status.value("limitRemaining").toInt(), 0);  // printed though 0
    }

    // Several descriptors, several entries each, in order; the request's hits.
    void descriptorsAndHits() {
        const CliRun run =
            runCli({"rls-ask", "--grpc", address_, "--domain", "rl", "--descriptor",
                    "key1=value1,sub=a", "--descriptor", "unknown=x=y", "--hits-addend", "1"});
        QCOMPARE(run.exitCode, 0);
        const QJsonArray statuses = run.json().value("statuses").toArray();
        QCOMPARE(statuses.size(), 2);
        QCOMPARE(statuses.at(0).toObject().value("currentLimit").toObject().value("unit"),
                 QJsonValue("HOUR"));
        QCOMPARE(statuses.at(0).toObject().value("limitRemaining").toInt(), 0);
        QVERIFY(!statuses.at(1).toObject().contains("currentLimit"));
    }

    void refusals_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        QTest::newRow("entry without =") << QStringList{"--domain", "rl", "--descriptor", "key1"}
                                         << 2 << "--descriptor \"key1\": entry \"key1\"";
        QTest::newRow("empty key")
            << QStringList{"--domain", "rl", "--descriptor", "=v"} << 2 << "expected KEY=VALUE";
        // The command line takes no empty value (the service's refusal is tst_rls_grpc's).
        QTest::newRow("empty domain") << QStringList{"--domain", "", "--descriptor", "a=b"} << 64
                                      << "--domain needs a non-empty value";
        QTest::newRow("the service refuses no descriptors")
            << QStringList{"--domain", "rl"} << 2
            << "UNKNOWN: rate limit descriptor list must not be empty";
        QTest::newRow("hits not a number")
            << QStringList{"--domain", "rl", "--descriptor", "a=b", "--hits-addend", "-1"} << 64
            << "--hits-addend";
    }
    void refusals() {
        QFETCH(QStringList, arguments);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        const CliRun run = runCli(QStringList{"rls-ask", "--grpc", address_} + arguments);
        QCOMPARE(run.exitCode, exitCode);
        QVERIFY2(run.err.contains(message), qPrintable(run.err));
        QVERIFY(run.out.isEmpty());
    }

    // Nobody listening, or a listener that is not a gRPC server in time: 69.
    void unavailable() {
        std::uint16_t port;
        {  // a port nobody listens on: bound, then released
            const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
            socklen_t n = sizeof a;
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
            port = ntohs(a.sin_port);
            ::close(fd);
        }
        CliRun run = runCli({"rls-ask", "--grpc", "127.0.0.1:" + QString::number(port), "--domain",
                             "rl", "--descriptor", "a=b"});
        QCOMPARE(run.exitCode, 69);
        QVERIFY2(run.err.contains("UNAVAILABLE"), qPrintable(run.err));
        // The admin listener speaks HTTP/1.1, not gRPC: the call fails without an answer.
        run = runCli({"rls-ask", "--grpc", "127.0.0.1:" + QString::number(server_->adminPort()),
                      "--domain", "rl", "--descriptor", "a=b", "--timeout-ms", "1000"});
        QCOMPARE(run.exitCode, 69);
    }

private:
    std::unique_ptr<RlsSidecarUnderTest> server_;
    QString address_;
};

QTEST_GUILESS_MAIN(TestRlsAsk)
#include "tst_rls_ask.moc"
