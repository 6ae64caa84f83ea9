#pragma once

// The admin listener: GET /metrics (Prometheus text), GET /healthz (the process answers),
// GET /readyz (200 only while the store answers and no drain has begun), POST /-/reload (reads
// the policy file and the rate limit configuration again). Everything else is 404, a wrong
// method 405.

#include <string>
#include <string_view>
#include <vector>

#include "serve/http/http_server.h"
#include "serve/policy_runtime.h"

namespace ratelab::serve {

/// What the admin endpoints ask of the running sidecar. Thread-safe.
class AdminActions {
public:
    virtual ~AdminActions() = default;
    virtual std::string metricsText() = 0;
    /// Empty when ready; otherwise why not.
    virtual std::string unreadyReason() = 0;
    /// Reads every configuration served again: one result each (the policy file's first).
    virtual std::vector<ReloadResult> reload(std::string_view trigger) = 0;
};

class AdminHandler final : public HttpHandler {
public:
    explicit AdminHandler(AdminActions& actions) : actions_(actions) {}
    void handle(const ServerRequest& request, Response& response) override;

private:
    AdminActions& actions_;
};

/// The JSON answer of POST /-/reload for one configuration: {"reloaded":true,"config":"policy",
/// "generation":2,"kept":[...],"fresh":[...],"diagnostics":["FILE:LINE:COLUMN: ..."]} or
/// {"reloaded":false,...,"error":...}; for several, {"reloaded":ALL,"results":[...]}.
std::string reloadResultJson(const std::vector<ReloadResult>& results);

}  // namespace ratelab::serve
