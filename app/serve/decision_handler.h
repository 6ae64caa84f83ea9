#pragma once

// The decision listener's handler: each request is decided with the running policies and
// answered in one of two ways.
//   origin  the request itself is decided, and answered "ok" (200) or refused (429, 412, 503
//           with problem+json): for trying a policy with curl. A pass is answered with the
//           status X-Ratelab-Respond asks for (200 without it) and settled with it, so that a
//           policy charging by outcome can be tried too.
//   auth    the request is a proxy's sub-request describing the client's request (nginx
//           auth_request, Traefik ForwardAuth, Envoy ext_authz, HAProxy): a pass is 200 with
//           the rate-limit headers and no body; a refusal carries its status, Retry-After, the
//           rate-limit headers and the problem+json body. The status is also in
//           X-Ratelab-Status, and with refuseAs403 the refusal travels as 403 (what nginx's
//           auth_request passes on) with the body in X-Ratelab-Problem, for nginx to map back.
//           Nothing is settled: the upstream's status never comes back here.

#include <memory>
#include <string>
#include <vector>

#include "ratelab/limiter.h"
#include "serve/http/http_server.h"

namespace ratelab::serve {

class PolicyRuntime;
class SidecarMetrics;
struct PolicyGeneration;

enum class ServeMode : std::uint8_t { Origin, Auth };

struct DecisionOptions {
    ServeMode mode = ServeMode::Origin;
    /// Auth mode: answer refusals with 403 (nginx auth_request turns any other status but 401
    /// into a 500).
    bool refuseAs403 = false;
};

/// Thread-safe as HttpHandler requires: per-loop state, indexed by the loop. On a store outside
/// the process (Redis) each loop decides the requests of its turn together (batches(),
/// handleBatch(): one store round trip for them all, sent with the other loops' and listeners'
/// through the runtime's batching store); on the memory store each request is decided at once.
class DecisionHandler final : public HttpHandler {
public:
    DecisionHandler(PolicyRuntime& runtime, SidecarMetrics& metrics, DecisionOptions options,
                    unsigned workers);
    ~DecisionHandler() override;

    void handle(const ServerRequest& request, Response& response) override;
    bool batches(unsigned worker) const override;
    void handleBatch(std::span<const ServerRequest> requests,
                     std::span<Response> responses) override;

private:
    struct Worker;
    /// What a request asks to be decided: its view (path normalised into `path`) and the
    /// status an origin-mode pass is answered with. False when it was answered 400 instead.
    bool describe(const ServerRequest& request, Response& response, std::string& path,
                  RequestView& view, int& answer);
    void answer(Worker& w, const PolicyGeneration& generation, const ServerRequest& request,
                Response& response, const Verdict& verdict, int answerStatus, Nanos latency);
    void answerUndescribed(const ServerRequest& request, Response& response, std::string_view why);

    PolicyRuntime& runtime_;
    SidecarMetrics& metrics_;
    const DecisionOptions options_;
    const bool batches_;
    std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace ratelab::serve
