// A Qt service that links the installed ratelab::qhttpserver: a QHttpServer on loopback whose
// route the engine guards, asked three times under a limit of two.
#include <ratelab/memory_store.h>
#include <ratelab/qhttpserver.h>

#include <QCoreApplication>
#include <QEventLoop>
#include <QHttpServer>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QTimer>
#include <cstdio>
#include <memory>

#include "limit_of_two.h"

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    // A clock that stands still: the third request finds the bucket empty.
    const ratelab::qhttpserver::HttpLimiter limiter(
        std::make_shared<const ratelab::Limiter>(limitOfTwo(), ratelab::makeMemoryStore()),
        [] { return ratelab::Nanos{0}; });

    QHttpServer server;
    server.route("/api", limiter.guard([](const QHttpServerRequest&) {
        return QHttpServerResponse("text/plain", "ok\n");
    }));
    const quint16 port = server.listen(QHostAddress::LocalHost, 0);
    if (port == 0) {
        std::printf("cannot listen on 127.0.0.1\n");
        return 1;
    }

    QNetworkAccessManager network;
    const QUrl url(QString("http://127.0.0.1:%1/api").arg(port));
    int statuses[3] = {};
    for (int& status : statuses) {
        QNetworkReply* reply = network.get(QNetworkRequest(url));
        QEventLoop loop;
        QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
        QTimer::singleShot(10'000, &loop, &QEventLoop::quit);  // gives up on a server that hangs
        loop.exec();
        status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        reply->deleteLater();
    }
    std::printf("statuses: %d %d %d\n", statuses[0], statuses[1], statuses[2]);
    return statuses[0] == 200 && statuses[1] == 200 && statuses[2] == 429 ? 0 : 1;
}
