#include "ratelab/qhttpserver.h"

#include <chrono>
#include <vector>

namespace ratelab::qhttpserver {

namespace {

std::string_view methodName(QHttpServerRequest::Method method) {
    using M = QHttpServerRequest::Method;
    switch (method) {
        case M::Get:
            return "GET";
        case M::Put:
            return "PUT";
        case M::Delete:
            return "DELETE";
        case M::Post:
            return "POST";
        case M::Head:
            return "HEAD";
        case M::Options:
            return "OPTIONS";
        case M::Patch:
            return "PATCH";
        case M::Connect:
            return "CONNECT";
        case M::Trace:
            return "TRACE";
        default:
            break;
    }
    return "";
}

std::optional<IpAddress> addressOf(const QHostAddress& host) {
    bool isV4 = false;
    const quint32 v4 = host.toIPv4Address(&isV4);
    if (isV4) return IpAddress::fromV4(v4);
    if (host.protocol() != QAbstractSocket::IPv6Protocol) return std::nullopt;
    const Q_IPV6ADDR v6 = host.toIPv6Address();
    std::array<std::uint8_t, 16> bytes;
    for (int i = 0; i < 16; ++i)
        bytes[static_cast<std::size_t>(i)] = v6[i];
    return IpAddress::fromBytes(bytes);
}

QHttpServerResponder::StatusCode statusCode(int status) {
    return static_cast<QHttpServerResponder::StatusCode>(status);
}

}  // namespace

HttpLimiter::HttpLimiter(std::shared_ptr<const Limiter> limiter, Clock clock,
                         PrincipalOf principalOf)
    : limiter_(std::move(limiter)), clock_(std::move(clock)), principalOf_(std::move(principalOf)) {
    if (!clock_) {
        clock_ = [] {
            return std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::steady_clock::now().time_since_epoch())
                .count();
        };
    }
}

Verdict HttpLimiter::decide(const QHttpServerRequest& request) const {
    // Everything the view borrows lives in this frame until decide() returns.
    const QList<QPair<QByteArray, QByteArray>> lines = request.headers();
    std::vector<Header> headers;
    headers.reserve(static_cast<std::size_t>(lines.size()));
    for (const auto& [name, value] : lines) {
        headers.push_back(
            Header{std::string_view(name.constData(), static_cast<std::size_t>(name.size())),
                   std::string_view(value.constData(), static_cast<std::size_t>(value.size()))});
    }
    const QByteArray path = request.url().path(QUrl::FullyEncoded).toUtf8();
    const QByteArray principal = principalOf_ ? principalOf_(request) : QByteArray();
    const std::optional<IpAddress> peer = addressOf(request.remoteAddress());

    RequestView view;
    view.method = methodName(request.method());
    view.path = std::string_view(path.constData(), static_cast<std::size_t>(path.size()));
    view.headers = headers;
    view.peer = peer ? &*peer : nullptr;
    view.principal =
        std::string_view(principal.constData(), static_cast<std::size_t>(principal.size()));
    return limiter_->decide(view, clock_());
}

void HttpLimiter::settle(const Verdict& verdict, int status) const {
    limiter_->settle(verdict.check, status, clock_());
}

QHttpServerResponse HttpLimiter::refusal(const Verdict& verdict) {
    QHttpServerResponse response(QByteArray::fromStdString(verdict.contentType),
                                 QByteArray::fromStdString(verdict.body),
                                 statusCode(verdict.status));
    addHeaders(response, verdict);
    return response;
}

void HttpLimiter::addHeaders(QHttpServerResponse& response, const Verdict& verdict) {
    for (const HttpHeader& h : verdict.headers) {
        response.addHeader(QByteArray::fromStdString(h.name), QByteArray::fromStdString(h.value));
    }
}

void HttpLimiter::respond(QHttpServerResponder&& responder, const Verdict& verdict,
                          const QByteArray& body, const QByteArray& mimeType) {
    const QByteArray content = verdict.allowed ? body : QByteArray::fromStdString(verdict.body);
    const QByteArray type =
        verdict.allowed ? mimeType : QByteArray::fromStdString(verdict.contentType);
    responder.writeStatusLine(statusCode(verdict.status));
    for (const HttpHeader& h : verdict.headers) {
        responder.writeHeader(QByteArray::fromStdString(h.name),
                              QByteArray::fromStdString(h.value));
    }
    responder.writeHeader("Content-Type", type);
    responder.writeHeader("Content-Length", QByteArray::number(content.size()));
    responder.writeBody(content);
}

}  // namespace ratelab::qhttpserver
