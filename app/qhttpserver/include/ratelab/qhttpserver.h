#pragma once

// The engine in front of a Qt 6.4 QHttpServer: a request becomes a RequestView, a verdict
// becomes a response. The only Qt-dependent piece of the engine's surface, in its own library
// (ratelab::qhttpserver), so that services without Qt never see it. Written against the 6.4 API
// (route(), setMissingHandler() with QHttpServerResponder&&); Qt 6.8 reworked it, and a port
// touches this folder only.

#include <QHttpServerRequest>
#include <QHttpServerResponder>
#include <QHttpServerResponse>
#include <functional>
#include <memory>

#include "ratelab/limiter.h"

namespace ratelab::qhttpserver {

/// Decides QHttpServer requests with a Limiter. Thread-safe as the Limiter is.
class HttpLimiter {
public:
    /// Nanoseconds on the clock the limiter decides on.
    using Clock = std::function<Nanos()>;
    /// The verified principal of a request (from an earlier authentication layer), or empty.
    using PrincipalOf = std::function<QByteArray(const QHttpServerRequest&)>;

    /// `clock` defaults to steady_clock (build `limiter` with LimiterOptions::unixTimeAtZero =
    /// unixTimeOfMonotonicZero() when a policy uses calendar windows). REQUIRES: limiter !=
    /// nullptr.
    explicit HttpLimiter(std::shared_ptr<const Limiter> limiter, Clock clock = {},
                         PrincipalOf principalOf = {});

    /// Decides one request: its method, path, headers and TCP peer.
    Verdict decide(const QHttpServerRequest& request) const;

    /// The response a refused verdict sends: its status, headers and problem+json body.
    static QHttpServerResponse refusal(const Verdict& verdict);
    /// Adds a verdict's rate-limit headers (on passes too) to a response.
    static void addHeaders(QHttpServerResponse& response, const Verdict& verdict);
    /// Answers through a responder, as QHttpServer's missing handler must: the refusal, or, when
    /// the verdict passes, `body` (of `mimeType`) with the verdict's headers and status 200.
    static void respond(QHttpServerResponder&& responder, const Verdict& verdict,
                        const QByteArray& body, const QByteArray& mimeType);

    /// Applies the status a passed request was answered with to what its decision charged
    /// (Limiter::settle), for the policies that charge by outcome (`charge` "failures" or
    /// "successes", a `penalty`); nothing for the others. guard() calls it once the handler
    /// has answered; a service answering through respond() calls it once it knows the status.
    void settle(const Verdict& verdict, int status) const;

    /// Wraps a route handler `QHttpServerResponse(const QHttpServerRequest&)`: refused requests
    /// get refusal(), passed ones the handler's response with the headers added, and are
    /// settled with its status. The headers are the decision's, before the settle.
    /// The HttpLimiter must outlive the server's routes.
    template <class Handler>
    auto guard(Handler handler) const {
        return [this, handler = std::move(handler)](const QHttpServerRequest& request) {
            const Verdict verdict = decide(request);
            if (!verdict.allowed) return refusal(verdict);
            QHttpServerResponse response = handler(request);
            settle(verdict, static_cast<int>(response.statusCode()));
            addHeaders(response, verdict);
            return response;
        };
    }

private:
    std::shared_ptr<const Limiter> limiter_;
    Clock clock_;
    PrincipalOf principalOf_;
};

}  // namespace ratelab::qhttpserver
