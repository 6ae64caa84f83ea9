#include "serve/admin/admin_handler.h"

#include "json/json_text.h"

namespace ratelab::serve {

namespace {

void appendList(std::string& out, const std::vector<std::string>& items) {
    out += '[';
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += ',';
        json::appendJsonString(out, items[i]);
    }
    out += ']';
}

void answer(Response& response, int status, std::string_view type, std::string_view body) {
    response.start(status);
    response.header("Cache-Control", "no-store");
    response.finish(type, body);
}

void appendResult(std::string& out, const ReloadResult& result) {
    out += result.ok ? "{\"reloaded\":true" : "{\"reloaded\":false";
    out += ",\"config\":";
    json::appendJsonString(out, result.config);
    out += ",\"generation\":";
    json::appendInt(out, static_cast<std::int64_t>(result.generation));
    if (!result.ok) {
        out += ",\"error\":";
        json::appendJsonString(out, result.error);
    } else {
        out += ",\"kept\":";
        appendList(out, result.kept);
        out += ",\"fresh\":";
        appendList(out, result.fresh);
    }
    std::vector<std::string> diagnostics;
    for (const Diagnostic& d : result.diagnostics)
        diagnostics.push_back(formatDiagnostic(d));
    out += ",\"diagnostics\":";
    appendList(out, diagnostics);
    out += "}";
}

}  // namespace

std::string reloadResultJson(const std::vector<ReloadResult>& results) {
    std::string out;
    if (results.size() == 1) {
        appendResult(out, results.front());
    } else {
        bool ok = true;
        for (const ReloadResult& r : results)
            ok = ok && r.ok;
        out += ok ? "{\"reloaded\":true,\"results\":[" : "{\"reloaded\":false,\"results\":[";
        for (std::size_t i = 0; i < results.size(); ++i) {
            if (i > 0) out += ',';
            appendResult(out, results[i]);
        }
        out += "]}";
    }
    out += '\n';
    return out;
}

void AdminHandler::handle(const ServerRequest& request, Response& response) {
    const std::string_view target = request.http.target;
    const std::string_view path = target.substr(0, target.find('?'));
    const std::string_view method = request.http.method;
    const bool get = method == "GET" || method == "HEAD";
    if (path == "/metrics" || path == "/healthz" || path == "/readyz") {
        if (!get) {
            response.start(405);
            response.header("Allow", "GET, HEAD");
            response.finish("", "");
            return;
        }
        if (path == "/metrics") {
            answer(response, 200, "text/plain; version=0.0.4; charset=utf-8",
                   actions_.metricsText());
        } else if (path == "/healthz") {
            answer(response, 200, "text/plain", "ok\n");
        } else {
            const std::string why = actions_.unreadyReason();
            if (why.empty()) {
                answer(response, 200, "text/plain", "ready\n");
            } else {
                answer(response, 503, "text/plain", "not ready: " + why + "\n");
            }
        }
        return;
    }
    if (path == "/-/reload") {
        if (method != "POST" && method != "PUT") {
            response.start(405);
            response.header("Allow", "POST, PUT");
            response.finish("", "");
            return;
        }
        const std::vector<ReloadResult> results = actions_.reload("admin");
        bool ok = true;
        for (const ReloadResult& r : results)
            ok = ok && r.ok;
        answer(response, ok ? 200 : 422, "application/json", reloadResultJson(results));
        return;
    }
    answer(response, 404, "text/plain", "not found: /metrics, /healthz, /readyz, POST /-/reload\n");
}

}  // namespace ratelab::serve
