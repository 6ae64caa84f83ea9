// ratelab-cli serve: the engine in front of a real HTTP server, so that a policy can be tried
// with curl: every path answers "ok" unless the policy refuses the request (429, 412 or 503 with
// a problem+json body); passes carry the policy's rate-limit headers too. Limit hits and store
// failures are logged as JSON lines on stderr.

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QHostAddress>
#include <QHttpServer>
#include <cstdio>

#include "cli/command.h"
#include "cli/sim_inputs.h"
#include "ratelab/json_log_observer.h"
#include "ratelab/qhttpserver.h"
#include "ratelab/store_factory.h"

namespace ratelab::cli {

namespace {

constexpr const char* kSynopsis = "serve --policy P.json [--listen HOST:PORT] [--quiet]";

// "127.0.0.1:8080", "[::1]:8080", "localhost:0" (0: any free port).
bool parseListen(const QString& text, QHostAddress& address, quint16& port) {
    const int colon = text.lastIndexOf(':');
    if (colon <= 0) return false;
    QString host = text.left(colon);
    if (host.startsWith('[') && host.endsWith(']')) host = host.mid(1, host.size() - 2);
    bool ok = false;
    const uint number = text.mid(colon + 1).toUInt(&ok);
    if (!ok || number > 65535) return false;
    port = static_cast<quint16>(number);
    if (host == "localhost") {
        address = QHostAddress(QHostAddress::LocalHost);
        return true;
    }
    return address.setAddress(host);
}

int serve(const QStringList& arguments) {
    QCommandLineParser parser;
    const QCommandLineOption policyOption("policy", "Policy file.", "P.json");
    const QCommandLineOption listenOption(
        "listen", "Address and port to listen on (default 127.0.0.1:8080; port 0: any free one).",
        "HOST:PORT", "127.0.0.1:8080");
    const QCommandLineOption quietOption("quiet", "Do not log limit hits and store failures.");
    parser.addOptions({policyOption, listenOption, quietOption});
    if (!parseCommandLine(parser, arguments, "serve", kSynopsis, 0)) return kBadInput;
    if (!parser.isSet(policyOption)) return badInput("serve", "--policy P.json is required");

    std::optional<PolicySet> policies = loadPolicy(parser.value(policyOption).toStdString());
    if (!policies) return kBadInput;
    QHostAddress address;
    quint16 port = 0;
    if (!parseListen(parser.value(listenOption), address, port)) {
        return badInput("serve", "--listen \"" + parser.value(listenOption).toStdString() +
                                     "\": expected HOST:PORT, e.g. 127.0.0.1:8080");
    }
    std::string error;
    std::shared_ptr<Store> store = makeStore(policies->store, &error);
    if (!store) return badInput("serve", "the policy's store: " + error);

    JsonLogObserver log([](std::string_view line) {
        std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
    });
    LimiterOptions options;
    if (!parser.isSet(quietOption)) options.observer = &log;
    const qt::HttpLimiter limiter(
        std::make_shared<const Limiter>(std::move(*policies), store, options));

    QHttpServer server;
    server.setMissingHandler(
        [&limiter](const QHttpServerRequest& request, QHttpServerResponder&& responder) {
            qt::HttpLimiter::respond(std::move(responder), limiter.decide(request), "ok\n",
                                     "text/plain");
        });
    const quint16 listening = server.listen(address, port);
    if (listening == 0) {
        return badInput("serve", "cannot listen on " + parser.value(listenOption).toStdString());
    }
    const QString host = address.protocol() == QAbstractSocket::IPv6Protocol
                             ? "[" + address.toString() + "]"
                             : address.toString();
    std::printf("listening on http://%s:%u\n", qPrintable(host), listening);
    std::fflush(stdout);
    return QCoreApplication::exec();
}

}  // namespace

RATELAB_CLI_COMMAND({"serve", kSynopsis,
                     "answer HTTP requests through a policy, to try it with curl", &serve});

}  // namespace ratelab::cli
