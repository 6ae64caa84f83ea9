#include "serve/grpc/health_service.h"

#include <ctime>

#include "serve/admin/rls_metrics.h"

namespace ratelab::serve {

namespace {

Nanos monotonicNow() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<Nanos>(ts.tv_sec) * kNanosPerSecond + ts.tv_nsec;
}

bool served(const std::string& service) {
    return service.empty() || service == "envoy.service.ratelimit.v3.RateLimitService" ||
           service == "ratelimit";
}

}  // namespace

HealthService::HealthService(std::function<std::string()> unreadyReason, RlsMetrics& metrics)
    : unreadyReason_(std::move(unreadyReason)), metrics_(metrics) {}

grpc::ServerUnaryReactor* HealthService::Check(grpc::CallbackServerContext* context,
                                               const grpc::health::v1::HealthCheckRequest* request,
                                               grpc::health::v1::HealthCheckResponse* response) {
    using grpc::health::v1::HealthCheckResponse;
    const Nanos start = monotonicNow();
    grpc::Status status;
    if (!served(request->service())) {
        status = grpc::Status(grpc::StatusCode::NOT_FOUND,
                              "unknown service \"" + request->service() +
                                  "\"; served: \"\", envoy.service.ratelimit.v3.RateLimitService");
    } else {
        response->set_status(unreadyReason_().empty() ? HealthCheckResponse::SERVING
                                                      : HealthCheckResponse::NOT_SERVING);
    }
    metrics_.countCall(RlsRpc::HealthCheck, status.error_code(), monotonicNow() - start);
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(status);
    return reactor;
}

}  // namespace ratelab::serve
