// The QHttpServer adapter (app/qhttpserver/qhttpserver.cpp), over real HTTP on loopback:
// statuses, headers and bodies as a client sees them, and settles by the handler's status.
// Time is injected. (`ratelab-cli serve` has its own server and its own tests in tests/serve.)

#include <QHttpServer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QtTest>

#include "ratelab/memory_store.h"
#include "ratelab/qhttpserver.h"

using namespace ratelab;

namespace {

PolicySet twoAtOnce() {
    Policy p;
    p.name = "api";
    p.capacity = 2;
    p.refillPerSecond = 1.0;
    PolicySet set;
    set.policies.push_back(p);
    return set;
}

// A login limit of 5 per 15 minutes, charging `rule`.
PolicySet fivePerQuarterHour(ChargeRule rule) {
    Policy p;
    p.name = "login";
    p.capacity = 5;
    p.refillPerSecond = 5.0 / 900;
    p.charge.rule = rule;
    PolicySet set;
    set.policies.push_back(p);
    return set;
}

struct Reply {
    int status = 0;
    QByteArray body;
    QMap<QByteArray, QByteArray> headers;
};

Reply get(QNetworkAccessManager& network, const QString& url,
          const QList<QPair<QByteArray, QByteArray>>& headers = {}) {
    QNetworkRequest request{QUrl(url)};
    for (const auto& [name, value] : headers)
        request.setRawHeader(name, value);
    QNetworkReply* reply = network.get(request);
    QSignalSpy finished(reply, &QNetworkReply::finished);
    if (!reply->isFinished() && !finished.wait(10'000)) return {};
    Reply r;
    r.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    r.body = reply->readAll();
    for (const auto& [name, value] : reply->rawHeaderPairs())
        r.headers[name.toLower()] = value;
    reply->deleteLater();
    return r;
}

}  // namespace

class TestHttpLimiter : public QObject {
    Q_OBJECT

private slots:
    void routesAreGuardedOverRealHttp() {
        Nanos now = 0;
        const qhttpserver::HttpLimiter limiter(
            std::make_shared<const Limiter>(twoAtOnce(), makeMemoryStore({})),
            [&now] { return now; });
        QHttpServer server;
        server.route("/api", limiter.guard([](const QHttpServerRequest&) {
            return QHttpServerResponse("text/plain", "items\n");
        }));
        const quint16 port = server.listen(QHostAddress::LocalHost, 0);
        QVERIFY(port != 0);
        const QString url = QString("http://127.0.0.1:%1/api").arg(port);
        QNetworkAccessManager network;

        Reply first = get(network, url);
        QCOMPARE(first.status, 200);
        QCOMPARE(first.body, QByteArray("items\n"));
        QCOMPARE(first.headers.value("ratelimit-policy"), QByteArray("\"api\";q=2;w=2"));
        QCOMPARE(first.headers.value("ratelimit"), QByteArray("\"api\";r=1;t=1"));
        QCOMPARE(get(network, url).status, 200);

        Reply refused = get(network, url);
        QCOMPARE(refused.status, 429);
        QCOMPARE(refused.headers.value("retry-after"), QByteArray("1"));
        QCOMPARE(refused.headers.value("content-type"), QByteArray("application/problem+json"));
        const QJsonObject problem = QJsonDocument::fromJson(refused.body).object();
        QCOMPARE(problem.value("code").toString(), QString("rate_limited"));
        QCOMPARE(problem.value("status").toInt(), 429);

        now += kNanosPerSecond;  // one token back
        QCOMPARE(get(network, url).status, 200);
        QCOMPARE(get(network, url).status, 429);
    }

    // guard() settles each pass with its handler's status: under charge "failures", 100
    // successful sign-ins in a row leave the bucket full, then five 401s pass and the sixth is
    // refused; charging always, the sixth success is refused. The clock stands still: no
    // refill explains any of it.
    void guardSettlesWithTheHandlersStatus() {
        for (ChargeRule rule : {ChargeRule::Failures, ChargeRule::Always}) {
            const qhttpserver::HttpLimiter limiter(
                std::make_shared<const Limiter>(fivePerQuarterHour(rule), makeMemoryStore({})),
                [] { return Nanos(0); });
            QHttpServerResponder::StatusCode answer = QHttpServerResponder::StatusCode::Ok;
            QHttpServer server;
            server.route("/login", limiter.guard([&answer](const QHttpServerRequest&) {
                return QHttpServerResponse("text/plain", "", answer);
            }));
            const quint16 port = server.listen(QHostAddress::LocalHost, 0);
            QVERIFY(port != 0);
            const QString url = QString("http://127.0.0.1:%1/login").arg(port);
            QNetworkAccessManager network;
            if (rule == ChargeRule::Always) {
                for (int i = 0; i < 5; ++i)
                    QCOMPARE(get(network, url).status, 200);
                QCOMPARE(get(network, url).status, 429);
                continue;
            }
            for (int i = 0; i < 100; ++i) {
                const Reply r = get(network, url);
                QCOMPARE(r.status, 200);
                // Decided with the bucket full, and refunded before the next request.
                QCOMPARE(r.headers.value("ratelimit"), QByteArray("\"login\";r=4;t=180"));
            }
            answer = QHttpServerResponder::StatusCode::Unauthorized;
            for (int i = 0; i < 5; ++i)
                QCOMPARE(get(network, url).status, 401);
            const Reply sixth = get(network, url);
            QCOMPARE(sixth.status, 429);
            QCOMPARE(sixth.headers.value("retry-after"), QByteArray("180"));
        }
    }

    // A verified principal from an earlier layer keys the request; the peer does not matter.
    void principalsHaveBucketsOfTheirOwn() {
        const qhttpserver::HttpLimiter limiter(
            std::make_shared<const Limiter>(twoAtOnce(), makeMemoryStore({})),
            [] { return Nanos(0); },
            [](const QHttpServerRequest& r) { return r.value("x-test-user"); });
        QHttpServer server;
        server.route("/api", limiter.guard([](const QHttpServerRequest&) {
            return QHttpServerResponse("ok");
        }));
        const quint16 port = server.listen(QHostAddress::LocalHost, 0);
        const QString url = QString("http://127.0.0.1:%1/api").arg(port);
        QNetworkAccessManager network;
        for (int i = 0; i < 2; ++i)
            QCOMPARE(get(network, url, {{"X-Test-User", "alice"}}).status, 200);
        QCOMPARE(get(network, url, {{"X-Test-User", "alice"}}).status, 429);
        QCOMPARE(get(network, url, {{"X-Test-User", "bob"}}).status, 200);
    }
};

QTEST_GUILESS_MAIN(TestHttpLimiter)
#include "tst_http_limiter.moc"
