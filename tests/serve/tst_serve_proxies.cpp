// Real proxies in front of `ratelab-cli serve --mode auth`, each with the configuration shipped
// in resources/deploy/: nginx with auth_request, HAProxy with the Lua action. Through each, a
// client's first requests pass with the rate-limit fields, then get 429 with Retry-After and
// problem+json, keyed by the client named in X-Forwarded-For behind the trusted proxy.

#include <QtTest>

#include "fixtures/nginx_fixture.h"
#include "fixtures/serve_process.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

const QString kDeploy = RATELAB_SOURCE_DIR "/resources/deploy";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

std::string headerOf(const std::string& head, const std::string& name) {
    std::string lower = head;
    for (char& c : lower)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::size_t at = lower.find("\r\n" + name + ": ");
    if (at == std::string::npos) return {};
    const std::size_t start = at + name.size() + 4;
    return head.substr(start, head.find("\r\n", start) - start);
}

std::uint16_t freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t length = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &length);
    ::close(fd);
    return ntohs(a.sin_port);
}

// HAProxy as a daemon of the test's own: the launcher exits once the listeners are bound, and
// the pid file names the process to stop.
class LiveHaproxy {
public:
    bool start(const std::string& config) {
        writeText(dir_.filePath("haproxy.cfg").toStdString(), config);
        QProcess launcher;
        launcher.setProcessChannelMode(QProcess::ForwardedChannels);
        launcher.start("/usr/sbin/haproxy", {"-f", dir_.filePath("haproxy.cfg"), "-D", "-p",
                                             dir_.filePath("haproxy.pid")});
        if (!launcher.waitForFinished(30'000) || launcher.exitCode() != 0) return false;
        pid_ = QString::fromStdString(readText(dir_.filePath("haproxy.pid")))
                   .trimmed()
                   .section('\n', 0, 0)
                   .toInt();
        return pid_ > 0;
    }
    ~LiveHaproxy() {
        if (pid_ > 0) ::kill(pid_, SIGTERM);  // our own daemon, by its pid
    }
    QString path(const QString& name) const { return dir_.filePath(name); }

private:
    QTemporaryDir dir_;
    pid_t pid_ = 0;
};

}  // namespace

class TestServeProxies : public QObject {
    Q_OBJECT

private slots:
    void nginxAuthRequest() {
        QTemporaryDir dir;
        const std::string policy = dir.filePath("policy.json").toStdString();
        writeText(policy, policyText({{"api", "/", 3}}, "127.0.0.1/32"));
        ServeProcess serve;
        QVERIFY(serve.start(policy, {"--mode", "auth", "--refusal-status", "403"}));

        // The shipped snippets, with the address of this test's ratelab.
        const std::string upstream = dir.filePath("ratelab-upstream.conf").toStdString();
        writeText(upstream, replaced(readText(kDeploy + "/nginx/ratelab-upstream.conf"),
                                     "127.0.0.1:8081", "127.0.0.1:" + std::to_string(serve.port)));
        const std::string backend = dir.filePath("backend.sock").toStdString();
        LiveNginx nginx;
        QVERIFY(nginx.start(
            "    include " + upstream + ";\n    server { listen unix:" + backend +
                ";\n        location / { return 200 \"backend\\n\"; } }\n",
            "        include " + (kDeploy + "/nginx/ratelab-server.conf").toStdString() +
                ";\n        location / {\n            include " +
                (kDeploy + "/nginx/ratelab-protect.conf").toStdString() +
                ";\n            proxy_pass http://unix:" + backend + ":;\n        }\n"));

        for (int i = 0; i < 3; ++i) {
            const LiveNginx::Response r = nginx.get("GET", "/api/items", "203.0.113.7");
            QCOMPARE(r.status, 200);
            QCOMPARE(r.body, std::string("backend\n"));
            QCOMPARE(headerOf(r.head, "ratelimit-policy"), std::string("\"api\";q=3;w=3000"));
            QCOMPARE(headerOf(r.head, "ratelimit"),
                     "\"api\";r=" + std::to_string(2 - i) + ";t=" + std::to_string(1000 * (i + 1)));
        }
        const LiveNginx::Response refused = nginx.get("GET", "/api/items", "203.0.113.7");
        QCOMPARE(refused.status, 429);
        QCOMPARE(headerOf(refused.head, "retry-after"), std::string("1000"));
        QCOMPARE(headerOf(refused.head, "ratelimit"), std::string("\"api\";r=0;t=1000"));
        QCOMPARE(headerOf(refused.head, "content-type"), std::string("application/problem+json"));
        QVERIFY(refused.body.find("\"code\":\"rate_limited\"") != std::string::npos);
        // Another client behind the same nginx: its own bucket.
        QCOMPARE(nginx.get("GET", "/api/items", "203.0.113.8").status, 200);

        const std::string metrics = adminRequest(serve.adminPort, "GET", "/metrics").body;
        QVERIFY(metrics.find("ratelab_decisions_total{policy=\"api\",outcome=\"passed\"} 4\n") !=
                std::string::npos);
        QVERIFY(metrics.find("ratelab_decisions_total{policy=\"api\",outcome=\"throttled\"} 1\n") !=
                std::string::npos);
    }

    void haproxyLuaAction() {
        QTemporaryDir dir;
        const std::string policy = dir.filePath("policy.json").toStdString();
        writeText(policy, policyText({{"api", "/", 3}}, "127.0.0.0/8"));
        ServeProcess serve;
        QVERIFY(serve.start(policy, {"--mode", "auth"}));

        LiveHaproxy haproxy;
        const std::uint16_t port = freePort();
        const std::string app = haproxy.path("app.sock").toStdString();
        std::string config = readText(kDeploy + "/haproxy/haproxy.cfg");
        config = replaced(config, "/usr/share/ratelab/deploy", kDeploy.toStdString());
        config = replaced(config, "127.0.0.1:8081", "127.0.0.1:" + std::to_string(serve.port));
        config = replaced(config, "bind :80", "bind 127.0.0.1:" + std::to_string(port));
        config = replaced(config, "server app 127.0.0.1:3000", "server app unix@" + app);
        config +=
            "\nlisten app\n    bind unix@" + app +
            "\n    http-request return status 200 content-type text/plain string \"backend\\n\"\n";
        QVERIFY(haproxy.start(config));

        auto ask = [&](const std::string& client) {
            RawClient c(port);
            c.send(get("/api/items", "X-Forwarded-For: " + client + "\r\n"));
            return c.read(10'000);
        };
        for (int i = 0; i < 3; ++i) {
            const HttpAnswer a = ask("203.0.113.7");
            QCOMPARE(a.status, 200);
            QCOMPARE(a.body, std::string("backend\n"));
            QCOMPARE(a.header("ratelimit-policy"), std::string("\"api\";q=3;w=3000"));
        }
        const HttpAnswer refused = ask("203.0.113.7");
        QCOMPARE(refused.status, 429);
        QCOMPARE(refused.header("retry-after"), std::string("1000"));
        QCOMPARE(refused.header("ratelimit"), std::string("\"api\";r=0;t=1000"));
        QCOMPARE(refused.header("content-type"), std::string("application/problem+json"));
        QVERIFY(refused.body.find("\"code\":\"rate_limited\"") != std::string::npos);
        QCOMPARE(ask("203.0.113.8").status, 200);
    }
};

QTEST_GUILESS_MAIN(TestServeProxies)
#include "tst_serve_proxies.moc"
