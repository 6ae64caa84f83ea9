#include "serve/decision_handler.h"

#include <ctime>

#include "json/json_text.h"
#include "serve/admin/service_metrics.h"
#include "serve/http/request_target.h"
#include "serve/policy_runtime.h"
#include "serve/service_store.h"

namespace ratelab::serve {

namespace {

Nanos monotonicNow() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<Nanos>(ts.tv_sec) * kNanosPerSecond + ts.tv_nsec;
}

char lower(char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool named(const Header& h, std::string_view lowerName) {
    if (h.name.size() != lowerName.size()) return false;
    for (std::size_t i = 0; i < lowerName.size(); ++i) {
        if (lower(h.name[i]) != lowerName[i]) return false;
    }
    return true;
}

// The original request a proxy's sub-request describes: nginx's X-Original-* first, then the
// X-Forwarded-* of Traefik; without either (Envoy ext_authz), the sub-request's own line.
struct Original {
    std::string_view method;
    std::string_view target;
};

Original originalOf(const ParsedRequest& http) {
    std::string_view nginxMethod, nginxUri, forwardedMethod, forwardedUri;
    for (const Header& h : http.headers) {
        if (h.name.size() < 14) continue;  // the shortest is x-original-uri
        if (named(h, "x-original-uri")) {
            nginxUri = h.value;
        } else if (named(h, "x-original-method")) {
            nginxMethod = h.value;
        } else if (named(h, "x-forwarded-uri")) {
            forwardedUri = h.value;
        } else if (named(h, "x-forwarded-method")) {
            forwardedMethod = h.value;
        }
    }
    if (!nginxUri.empty()) return {nginxMethod.empty() ? http.method : nginxMethod, nginxUri};
    if (!forwardedUri.empty()) {
        return {forwardedMethod.empty() ? http.method : forwardedMethod, forwardedUri};
    }
    return {http.method, http.target};
}

// Origin mode: the status a caller asks the pass to be answered with (X-Ratelab-Respond), so
// that a policy charging by outcome can be tried with curl; 200 when none is asked, 0 when the
// header is not a status from 200 to 599.
int askedStatus(const ParsedRequest& http) {
    for (const Header& h : http.headers) {
        if (!named(h, "x-ratelab-respond")) continue;
        const std::string_view v = h.value;
        if (v.size() != 3 || v[0] < '2' || v[0] > '5' || v[1] < '0' || v[1] > '9' || v[2] < '0' ||
            v[2] > '9') {
            return 0;
        }
        return (v[0] - '0') * 100 + (v[1] - '0') * 10 + (v[2] - '0');
    }
    return 200;
}

}  // namespace

struct DecisionHandler::Worker {
    explicit Worker(const PolicyRuntime& runtime) : generation(runtime) {}
    GenerationReader generation;
    Verdict verdict;
    std::string path;
    char status[4] = {};
    // A turn's requests (handleBatch), reused from turn to turn.
    std::vector<std::string> paths;
    std::vector<RequestView> views;
    std::vector<Nanos> times;
    std::vector<Verdict> verdicts;
    std::vector<std::size_t> decided;  ///< views[k] is request decided[k] of the batch
    std::vector<int> answers;
};

DecisionHandler::DecisionHandler(PolicyRuntime& runtime, SidecarMetrics& metrics,
                                 DecisionOptions options, unsigned workers)
    : runtime_(runtime)
    , metrics_(metrics)
    , options_(options)
    , batches_(storeLeavesProcess(runtime.store())) {
    for (unsigned i = 0; i < workers; ++i)
        workers_.push_back(std::make_unique<Worker>(runtime));
}

DecisionHandler::~DecisionHandler() = default;

bool DecisionHandler::batches(unsigned) const {
    return batches_;
}

void DecisionHandler::answerUndescribed(const ServerRequest& request, Response& response,
                                        std::string_view why) {
    std::string body = "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,";
    body += "\"code\":\"request_undescribed\",\"detail\":";
    json::appendJsonString(body, std::string(why) + ": no request to decide");
    body += "}";
    response.start(400);
    response.header("X-Ratelab-Status", "400");
    response.finish("application/problem+json", body);
    metrics_.countRequest(request.worker, 400, 0);
}

bool DecisionHandler::describe(const ServerRequest& request, Response& response,
                               std::string& path, RequestView& view, int& answerStatus) {
    const Original original = options_.mode == ServeMode::Auth
                                  ? originalOf(request.http)
                                  : Original{request.http.method, request.http.target};
    std::string_view whyNot;
    if (!normalizedPath(original.target, path, &whyNot)) {
        answerUndescribed(request, response, whyNot);
        return false;
    }
    answerStatus = options_.mode == ServeMode::Origin ? askedStatus(request.http) : 200;
    if (answerStatus == 0) {
        answerUndescribed(request, response, "X-Ratelab-Respond is not a status from 200 to 599");
        return false;
    }
    view = RequestView{};
    view.method = original.method;
    view.path = path;
    view.headers = request.http.headers;
    view.peer = request.peer;
    return true;
}

void DecisionHandler::handle(const ServerRequest& request, Response& response) {
    Worker& w = *workers_[request.worker];
    const PolicyGeneration& generation = w.generation.get();
    RequestView view;
    int answerStatus = 0;
    if (!describe(request, response, w.path, view, answerStatus)) return;
    const Nanos started = monotonicNow();
    generation.limiter->decide(view, request.now, w.verdict);
    const Nanos latency = monotonicNow() - started;
    answer(w, generation, request, response, w.verdict, answerStatus, latency);
}

void DecisionHandler::handleBatch(std::span<const ServerRequest> requests,
                                  std::span<Response> responses) {
    Worker& w = *workers_[requests[0].worker];
    const PolicyGeneration& generation = w.generation.get();
    const std::size_t n = requests.size();
    // Sized first: the views point into these strings.
    if (w.paths.size() < n) w.paths.resize(n);
    if (w.answers.size() < n) w.answers.resize(n);
    w.views.clear();
    w.times.clear();
    w.decided.clear();
    for (std::size_t i = 0; i < n; ++i) {
        RequestView view;
        if (!describe(requests[i], responses[i], w.paths[i], view, w.answers[i])) continue;
        w.views.push_back(view);
        w.times.push_back(requests[i].now);
        w.decided.push_back(i);
    }
    const std::size_t m = w.views.size();
    if (m == 0) return;
    if (w.verdicts.size() < m) w.verdicts.resize(m);
    const Nanos started = monotonicNow();
    generation.limiter->decideBatch(w.views, w.times, std::span(w.verdicts).first(m));
    // Each request waited for the whole batch: that is its time to decide.
    const Nanos latency = monotonicNow() - started;
    for (std::size_t k = 0; k < m; ++k) {
        const std::size_t i = w.decided[k];
        answer(w, generation, requests[i], responses[i], w.verdicts[k], w.answers[i], latency);
    }
}

void DecisionHandler::answer(Worker& w, const PolicyGeneration& generation,
                             const ServerRequest& request, Response& response, const Verdict& v,
                             int answerStatus, Nanos latency) {
    const Check& check = v.check;
    for (const PolicyResult& r : check.policies()) {
        metrics_.countDecision(request.worker, generation.metricSlots[r.policy], r.outcome);
    }
    if (const PolicyResult* refusal = check.refusal()) {
        metrics_.countRefusal(request.worker, generation.metricSlots[refusal->policy]);
    }
    // Origin mode answers the pass itself, so it knows the status to settle with; auth mode
    // answers before the upstream does and never learns it (docs/SERVE.md).
    const bool origin = options_.mode == ServeMode::Origin;
    if (origin && v.allowed) generation.limiter->settle(check, answerStatus, request.now);
    metrics_.countRequest(request.worker, v.status, latency);

    const bool travelAs403 = !v.allowed && options_.mode == ServeMode::Auth && options_.refuseAs403;
    response.start(travelAs403 ? 403 : origin && v.allowed ? answerStatus : v.status);
    for (const HttpHeader& h : v.headers)
        response.header(h.name, h.value);
    if (options_.mode == ServeMode::Auth) {
        const int s = v.status;
        w.status[0] = static_cast<char>('0' + s / 100 % 10);
        w.status[1] = static_cast<char>('0' + s / 10 % 10);
        w.status[2] = static_cast<char>('0' + s % 10);
        response.header("X-Ratelab-Status", std::string_view(w.status, 3));
        if (travelAs403) response.header("X-Ratelab-Problem", v.body);
    }
    if (v.allowed && !origin) {
        response.finish("", "");
    } else if (v.allowed) {
        response.finish("text/plain",
                        answerStatus == 200 ? "ok\n" : "answered as X-Ratelab-Respond asked\n");
    } else {
        response.finish(v.contentType, v.body);
    }
}

}  // namespace ratelab::serve
