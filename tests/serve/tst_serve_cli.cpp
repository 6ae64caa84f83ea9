// `ratelab-cli serve` as a process: /metrics read by a real Prometheus parser, reloads on
// SIGHUP and POST /-/reload that keep buckets and refuse broken files, the JSON log, a drain
// on SIGTERM that loses no answer, Redis AUTH from the environment, and the command line's
// refusals.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>
#include <atomic>
#include <csignal>
#include <random>
#include <thread>

#include "fixtures/redis_fixture.h"
#include "fixtures/serve_process.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

// Parses an exposition with python3-prometheus-client (Debian's, hence /usr/bin/python3) and
// returns {"name{label=value,...}": value}, labels sorted.
QJsonObject parsedMetrics(const std::string& text) {
    static const char* const kParse =
        "import json, sys\n"
        "from prometheus_client.parser import text_string_to_metric_families\n"
        "out = {}\n"
        "for family in text_string_to_metric_families(sys.stdin.read()):\n"
        "    for s in family.samples:\n"
        "        labels = ','.join('%s=%s' % kv for kv in sorted(s.labels.items()))\n"
        "        out['%s{%s}' % (s.name, labels)] = s.value\n"
        "print(json.dumps(out))\n";
    QProcess python;
    python.start("/usr/bin/python3", {"-c", kParse});
    if (!python.waitForStarted(10'000)) return {};
    python.write(QByteArray::fromStdString(text));
    python.closeWriteChannel();
    if (!python.waitForFinished(30'000) || python.exitCode() != 0) {
        qWarning("%s", python.readAllStandardError().constData());
        return {};
    }
    return QJsonDocument::fromJson(python.readAllStandardOutput()).object();
}

double sample(const QJsonObject& metrics, const QString& key) {
    if (!metrics.contains(key)) {
        qWarning("no sample %s", qPrintable(key));
        return -1;
    }
    return metrics.value(key).toDouble();
}

HttpAnswer from(std::uint16_t port, const std::string& path) {
    RawClient c(port);
    c.send(get(path));
    return c.read();
}

// A policy on Redis logging in as `user` with the password in RATELAB_REDIS_PASSWORD: "open"
// fails open on transport errors, "closed" denies; both allow 2 requests per peer.
std::string redisPolicyText(const std::string& url, const std::string& user) {
    auto policy = [](const char* name, const char* onStoreError) {
        return std::string("    { \"name\": \"") + name + "\", \"match\": { \"path_prefix\": \"/" +
               name +
               "\" }, \"capacity\": 2, \"refill_per_second\": 0.001, \"key\": { \"source\": "
               "\"peer\" }, \"on_store_error\": \"" +
               onStoreError + "\" }";
    };
    return "{\n  \"version\": 1,\n  \"store\": { \"kind\": \"redis\", \"url\": \"" + url +
           "\", \"username\": \"" + user +
           "\", \"password_env\": \"RATELAB_REDIS_PASSWORD\" },\n  \"policies\": [\n" +
           policy("open", "fail_open_on_transport") + ",\n" + policy("closed", "deny") +
           "\n  ]\n}\n";
}

}  // namespace

class TestServeCli : public QObject {
    Q_OBJECT

private slots:
    // Every request sent is counted once, by the status it got and by each matching policy's
    // outcome (passes too), and every outcome of the engine is listed for every policy.
    void metricsCountWhatWasSent() {
        QTemporaryDir dir;
        const std::string policy = dir.filePath("policy.json").toStdString();
        writeText(policy, policyText({{"api", "/api", 5}, {"login", "/login", 2}}));
        ServeProcess serve;
        QVERIFY(serve.start(policy, {"--mode", "origin"}));
        int ok = 0, limited = 0;
        for (int i = 0; i < 8; ++i)
            (from(serve.port, "/api/x").status == 200 ? ok : limited)++;
        for (int i = 0; i < 3; ++i)
            (from(serve.port, "/login").status == 200 ? ok : limited)++;
        for (int i = 0; i < 2; ++i)
            (from(serve.port, "/free").status == 200 ? ok : limited)++;
        QCOMPARE(ok, 5 + 2 + 2);
        QCOMPARE(limited, 3 + 1);

        const HttpAnswer scrape = adminRequest(serve.adminPort, "GET", "/metrics");
        QCOMPARE(scrape.status, 200);
        QVERIFY(scrape.header("content-type").starts_with("text/plain; version=0.0.4"));
        const QJsonObject m = parsedMetrics(scrape.body);
        QVERIFY(!m.isEmpty());
        QCOMPARE(sample(m, "ratelab_decisions_total{outcome=passed,policy=api}"), 5.0);
        QCOMPARE(sample(m, "ratelab_decisions_total{outcome=throttled,policy=api}"), 3.0);
        QCOMPARE(sample(m, "ratelab_decisions_total{outcome=passed,policy=login}"), 2.0);
        QCOMPARE(sample(m, "ratelab_decisions_total{outcome=throttled,policy=login}"), 1.0);
        QCOMPARE(sample(m, "ratelab_refusals_total{policy=api}"), 3.0);
        QCOMPARE(sample(m, "ratelab_refusals_total{policy=login}"), 1.0);
        QCOMPARE(sample(m, "ratelab_fail_open_total{policy=api}"), 0.0);
        QCOMPARE(sample(m, "ratelab_requests_total{status=200}"), 9.0);
        QCOMPARE(sample(m, "ratelab_requests_total{status=429}"), 4.0);
        QCOMPARE(sample(m, "ratelab_decision_duration_seconds_count{}"), 13.0);
        QCOMPARE(sample(m, "ratelab_decision_duration_seconds_bucket{le=+Inf}"), 13.0);
        QCOMPARE(sample(m, "ratelab_connections_accepted_total{listener=decisions}"), 13.0);
        QCOMPARE(sample(m, "ratelab_store_buckets{store=memory}"), 2.0);
        QCOMPARE(sample(m, "ratelab_policies{}"), 2.0);
        QCOMPARE(sample(m, "ratelab_ready{}"), 1.0);
        QCOMPARE(sample(m, "ratelab_store_errors_total{class=transport,policy=api}"), 0.0);
        QCOMPARE(sample(m, "ratelab_policy_reloads_total{result=success}"), 1.0);
        QVERIFY(m.contains("ratelab_build_info{version=" RATELAB_VERSION "}"));
        int outcomes = 0;
        for (const QString& key : m.keys())
            outcomes += key.startsWith("ratelab_decisions_total{") && key.endsWith("policy=api}");
        QCOMPARE(outcomes, int(kPolicyOutcomeCount));

        QCOMPARE(adminRequest(serve.adminPort, "GET", "/healthz").status, 200);
        QCOMPARE(adminRequest(serve.adminPort, "GET", "/readyz").status, 200);
        QCOMPARE(adminRequest(serve.adminPort, "GET", "/nothing").status, 404);
        QCOMPARE(adminRequest(serve.adminPort, "POST", "/metrics").status, 405);
        QCOMPARE(adminRequest(serve.adminPort, "GET", "/-/reload").status, 405);
    }

    // A reload that changes another policy keeps a client at its limit limited; a broken file
    // is refused with its FILE:LINE:COLUMN and the running policies stay.
    void reloadKeepsBucketsAndRefusesBrokenFiles() {
        QTemporaryDir dir;
        const std::string policy = dir.filePath("policy.json").toStdString();
        writeText(policy, policyText({{"api", "/api", 2}, {"login", "/login", 1}}));
        ServeProcess serve;
        QVERIFY(serve.start(policy, {}));
        QCOMPARE(from(serve.port, "/api").status, 200);
        QCOMPARE(from(serve.port, "/api").status, 200);
        QCOMPARE(from(serve.port, "/api").status, 429);

        // SIGHUP with login's capacity raised: api keeps its state, login's numbers change.
        writeText(policy, policyText({{"api", "/api", 2}, {"login", "/login", 3}}));
        serve.signal(SIGHUP);
        QVERIFY(serve.waitForLog(
            "\"event\":\"policy_reloaded\",\"trigger\":\"sighup\",\"generation\":2"));
        QCOMPARE(from(serve.port, "/api").status, 429);
        for (int i = 0; i < 3; ++i)
            QCOMPARE(from(serve.port, "/login").status, 200);
        QCOMPARE(from(serve.port, "/login").status, 429);

        // A broken file: POST /-/reload says where, the log too, and nothing changes.
        writeText(policy,
                  "{\n  \"version\": 1,\n  \"policies\": [ { \"name\": \"api\", \"capacity\": -4 } "
                  "]\n}\n");
        const HttpAnswer refused = adminRequest(serve.adminPort, "POST", "/-/reload");
        QCOMPARE(refused.status, 422);
        const QJsonObject body =
            QJsonDocument::fromJson(QByteArray::fromStdString(refused.body)).object();
        QCOMPARE(body.value("reloaded").toBool(true), false);
        QCOMPARE(body.value("generation").toInt(), 2);
        const QString first = body.value("diagnostics").toArray().first().toString();
        QVERIFY2(first.startsWith(QString::fromStdString(policy) + ":3:"), qPrintable(first));
        QVERIFY(serve.waitForLog("\"event\":\"policy_reload_failed\""));
        QVERIFY(serve.log().find(
                    "\"level\":\"error\",\"event\":\"policy_diagnostic\",\"diagnostic\":\"" +
                    policy + ":3:") != std::string::npos);
        QCOMPARE(from(serve.port, "/api").status, 429);
        QCOMPARE(from(serve.port, "/login").status, 429);

        // A changed store block needs a restart: refused too.
        std::string otherStore = policyText({{"api", "/api", 2}, {"login", "/login", 3}});
        otherStore.replace(otherStore.find("\"memory\""), 8, "\"memory\", \"max_buckets\": 5");
        writeText(policy, otherStore);
        const HttpAnswer store = adminRequest(serve.adminPort, "POST", "/-/reload");
        QCOMPARE(store.status, 422);
        QVERIFY(store.body.find("store block changed") != std::string::npos);

        // Fixed again: accepted, and api is still at its limit.
        writeText(policy, policyText({{"api", "/api", 2}, {"login", "/login", 3}}));
        const HttpAnswer accepted = adminRequest(serve.adminPort, "POST", "/-/reload");
        QCOMPARE(accepted.status, 200);
        QVERIFY(accepted.body.find("\"kept\":[\"api\",\"login\"]") != std::string::npos);
        QCOMPARE(from(serve.port, "/api").status, 429);
        const QJsonObject m = parsedMetrics(adminRequest(serve.adminPort, "GET", "/metrics").body);
        QCOMPARE(sample(m, "ratelab_policy_reloads_total{result=success}"), 3.0);
        QCOMPARE(sample(m, "ratelab_policy_reloads_total{result=failure}"), 2.0);
    }

    // SIGTERM while clients keep sending: every request sent gets its whole answer (the last
    // one on each connection says Connection: close), readiness goes false, and the process
    // exits 0 having cut nothing.
    void sigtermDuringLoadLosesNoAnswer() {
        QTemporaryDir dir;
        const std::string policy = dir.filePath("policy.json").toStdString();
        writeText(policy, policyText({{"api", "/", 1'000'000}}));
        ServeProcess serve;
        QVERIFY(serve.start(policy, {}));
        constexpr int kClients = 8;
        std::atomic<int> total{0};
        std::atomic<int> lost{0};
        std::atomic<int> closedAnswers{0};
        std::vector<std::thread> clients;
        for (int t = 0; t < kClients; ++t) {
            clients.emplace_back([&, port = serve.port] {
                RawClient c(port);
                for (int i = 0; i < 1'000'000; ++i) {
                    if (!c.send(get("/x/" + std::to_string(i)))) {
                        ++lost;
                        return;
                    }
                    const HttpAnswer a = c.read(10'000);
                    if (a.status != 200) {
                        ++lost;
                        return;
                    }
                    ++total;
                    if (a.header("connection") == "close") {
                        ++closedAnswers;
                        return;
                    }
                }
            });
        }
        while (total.load() < 2000)
            std::this_thread::yield();
        serve.signal(SIGTERM);
        for (std::thread& t : clients)
            t.join();
        QCOMPARE(lost.load(), 0);
        QCOMPARE(closedAnswers.load(), kClients);
        QCOMPARE(serve.waitForExit(), 0);
        QVERIFY(
            serve.log().find("\"event\":\"stopped\",\"requests\":" + std::to_string(total.load()) +
                             ",\"connections_cut\":0") != std::string::npos);
    }

    // What the command refuses, with a message that says what is wrong: a wrong command line
    // exits 64, a port it cannot listen on 74 (as every ratelab-cli command does).
    void badCommandLines_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("message");
        QTest::newRow("listen") << QStringList{"--listen", "nowhere"} << 64
                                << "--listen \"nowhere\": expected HOST:PORT";
        QTest::newRow("listen v6") << QStringList{"--listen", "::1:80"} << 64 << "in brackets";
        QTest::newRow("mode") << QStringList{"--mode", "proxy"} << 64 << "expected origin or auth";
        QTest::newRow("refusal status")
            << QStringList{"--refusal-status", "418"} << 64 << "expected decided or 403";
        QTest::newRow("threads") << QStringList{"--threads", "0"} << 64
                                 << "--threads \"0\": expected a whole number";
        QTest::newRow("port taken")
            << QStringList{"--listen", "PORT"} << 74 << "cannot listen on 127.0.0.1:";
    }
    void badCommandLines() {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const std::string policy = dir.filePath("policy.json").toStdString();
        writeText(policy, policyText({{"api", "/", 5}}));
        // A port already taken by a listener of ours: "PORT" stands for it.
        const int taken = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        QCOMPARE(::bind(taken, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        QCOMPARE(::listen(taken, 1), 0);
        socklen_t length = sizeof a;
        getsockname(taken, reinterpret_cast<sockaddr*>(&a), &length);
        args.replaceInStrings("PORT", "127.0.0.1:" + QString::number(ntohs(a.sin_port)));
        QProcess serve;
        serve.start(kRatelabCli,
                    QStringList{"serve", "--policy", QString::fromStdString(policy)} + args);
        QVERIFY(serve.waitForFinished(20'000));
        ::close(taken);
        QCOMPARE(serve.exitCode(), code);
        const QString err = QString::fromUtf8(serve.readAllStandardError());
        QVERIFY2(err.contains(message), qPrintable(err));
    }

    // Redis AUTH through the policy's password_env, against a redis-server whose default user
    // is off: the right password decides on Redis (2 pass, then 429); a wrong one is a store
    // refusal for every policy (503, whatever on_store_error says: the server answered, so
    // failing open would only hide the mistake), not ready, counted by class and logged with
    // Redis' own reason; an unset variable stops the start naming it. The password is in no
    // answer, log line, metric or output.
    void redisAuthFromTheEnvironment() {
        const std::string password = "serve-" + std::to_string(std::random_device()()) + "-pw";
        const std::string wrong = "wrong-" + std::to_string(std::random_device()()) + "-pw";
        RedisServer redis;
        RedisServer::Options options;
        options.tcp = true;
        options.extraArgs = {"--user", "default",      "off", "--user", "ratelab",
                             "on",     ">" + password, "~*",  "&*",     "+@all"};
        std::string error;
        QVERIFY2(redis.start(options, &error), error.c_str());
        QTemporaryDir dir;
        const std::string policy = dir.filePath("policy.json").toStdString();
        writeText(policy, redisPolicyText(redis.url(), "ratelab"));
        std::string seen;  // everything the sidecar said, to search for the passwords

        {
            ServeProcess serve;
            serve.environment.insert("RATELAB_REDIS_PASSWORD", QString::fromStdString(password));
            QVERIFY(serve.start(policy, {"--mode", "origin"}));
            QCOMPARE(adminRequest(serve.adminPort, "GET", "/readyz").status, 200);
            for (const char* path : {"/open", "/closed"}) {
                QCOMPARE(from(serve.port, path).status, 200);
                QCOMPARE(from(serve.port, path).status, 200);
                const HttpAnswer limited = from(serve.port, path);
                QCOMPARE(limited.status, 429);
                QVERIFY(!limited.header("retry-after").empty());
                seen += limited.body;
            }
            const HttpAnswer scrape = adminRequest(serve.adminPort, "GET", "/metrics");
            const QJsonObject m = parsedMetrics(scrape.body);
            QCOMPARE(sample(m, "ratelab_decisions_total{outcome=passed,policy=open}"), 2.0);
            QCOMPARE(sample(m, "ratelab_decisions_total{outcome=throttled,policy=closed}"), 1.0);
            QCOMPARE(sample(m, "ratelab_store_errors_total{class=refused,policy=open}"), 0.0);
            serve.signal(SIGTERM);
            QCOMPARE(serve.waitForExit(), 0);
            seen += scrape.body + serve.log() + serve.output();
        }
        // The buckets are Redis' own: the sidecar is gone, the counters are still there.
        QVERIFY(redis.running());

        {
            ServeProcess serve;
            serve.environment.insert("RATELAB_REDIS_PASSWORD", QString::fromStdString(wrong));
            QVERIFY(serve.start(policy, {"--mode", "origin"}));
            const HttpAnswer ready = adminRequest(serve.adminPort, "GET", "/readyz");
            QCOMPARE(ready.status, 503);
            QVERIFY2(ready.body.find("WRONGPASS") != std::string::npos, ready.body.c_str());
            for (const char* path : {"/open", "/closed"}) {
                const HttpAnswer refused = from(serve.port, path);
                QCOMPARE(refused.status, 503);
                seen += refused.body;
            }
            const HttpAnswer scrape = adminRequest(serve.adminPort, "GET", "/metrics");
            const QJsonObject m = parsedMetrics(scrape.body);
            QCOMPARE(sample(m, "ratelab_decisions_total{outcome=store_refused,policy=open}"), 1.0);
            QCOMPARE(sample(m, "ratelab_decisions_total{outcome=store_refused,policy=closed}"),
                     1.0);
            QCOMPARE(sample(m, "ratelab_store_errors_total{class=refused,policy=open}"), 1.0);
            QCOMPARE(sample(m, "ratelab_fail_open_total{policy=open}"), 0.0);
            QVERIFY(serve.waitForLog("AUTH failed: WRONGPASS"));
            serve.signal(SIGTERM);
            QCOMPARE(serve.waitForExit(), 0);
            seen += ready.body + scrape.body + serve.log() + serve.output();
        }

        QProcess unset;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.remove("RATELAB_REDIS_PASSWORD");
        unset.setProcessEnvironment(environment);
        unset.start(kRatelabCli, {"serve", "--policy", QString::fromStdString(policy), "--listen",
                                  "127.0.0.1:0"});
        QVERIFY(unset.waitForFinished(20'000));
        QCOMPARE(unset.exitCode(), 2);
        const std::string err = unset.readAllStandardError().toStdString();
        QVERIFY2(err.find(policy + ": error: store.password_env: the environment variable "
                                   "RATELAB_REDIS_PASSWORD is not set") != std::string::npos,
                 err.c_str());

        QVERIFY(!seen.empty());
        QVERIFY2(seen.find(password) == std::string::npos, "the password was repeated");
        QVERIFY2(seen.find(wrong) == std::string::npos, "the wrong password was repeated");
    }

    // A policy file with errors stops the start with FILE:LINE:COLUMN.
    void aBrokenPolicyFileStopsTheStart() {
        QTemporaryDir dir;
        const std::string policy = dir.filePath("policy.json").toStdString();
        writeText(policy, "{ \"version\": 1, \"policies\": [ { \"name\": 7 } ] }\n");
        QProcess serve;
        serve.start(kRatelabCli, {"serve", "--policy", QString::fromStdString(policy)});
        QVERIFY(serve.waitForFinished(20'000));
        QCOMPARE(serve.exitCode(), 2);
        const QString err = QString::fromUtf8(serve.readAllStandardError());
        QVERIFY2(err.contains(QString::fromStdString(policy) + ":1:"), qPrintable(err));
        // One that cannot be read is an I/O failure, told apart by its exit code.
        QProcess missing;
        missing.start(kRatelabCli, {"serve", "--policy", dir.filePath("absent.json")});
        QVERIFY(missing.waitForFinished(20'000));
        QCOMPARE(missing.exitCode(), 74);
        QVERIFY(QString::fromUtf8(missing.readAllStandardError())
                    .contains("absent.json: error: cannot open the file: No such file"));
    }
};

QTEST_GUILESS_MAIN(TestServeCli)
#include "tst_serve_cli.moc"
