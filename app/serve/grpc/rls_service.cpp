#include "serve/grpc/rls_service.h"

#include <ctime>

#include "serve/admin/rls_metrics.h"
#include "serve/admin/service_log.h"
#include "serve/grpc/rls_messages.h"

namespace ratelab::serve {

namespace {

Nanos clockNow(clockid_t id) {
    timespec ts;
    clock_gettime(id, &ts);
    return static_cast<Nanos>(ts.tv_sec) * kNanosPerSecond + ts.tv_nsec;
}

class SystemWallClock final : public WallClock {
public:
    Nanos now() const override { return clockNow(CLOCK_REALTIME); }
};

// A client that sends only refused requests must not flood the log: one line a second at most,
// carrying how many went unlogged since the last.
constexpr Nanos kRefusalLogInterval = kNanosPerSecond;

}  // namespace

const WallClock& systemWallClock() {
    static const SystemWallClock clock;
    return clock;
}

RlsService::RlsService(RlsDecisions& decisions, const WallClock& clock, RlsMetrics& metrics,
                       ServiceLog* log)
    : decisions_(decisions), clock_(clock), metrics_(metrics), log_(log) {}

grpc::ServerUnaryReactor* RlsService::ShouldRateLimit(
    grpc::CallbackServerContext* context,
    const envoy::service::ratelimit::v3::RateLimitRequest* request,
    envoy::service::ratelimit::v3::RateLimitResponse* response) {
    const Nanos start = clockNow(CLOCK_MONOTONIC);
    // Reused by every call this thread takes, so that a call allocates only what grows.
    thread_local rls::RlsRequest decided;
    grpc::Status status;
    std::string why = readRlsRequest(*request, decided);
    if (!why.empty()) {
        status = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, why);
    } else {
        const rls::RlsResult result = decisions_.decide(decided, clock_.now());
        if (result.ok()) {
            writeRlsResponse(result.response, *response);
            metrics_.countAnswer(result.response.overall);
        } else {
            // rls::GrpcCode is numbered as grpc::StatusCode.
            status = grpc::Status(static_cast<grpc::StatusCode>(result.error.code),
                                  result.error.message);
        }
    }
    const Nanos end = clockNow(CLOCK_MONOTONIC);
    metrics_.countCall(RlsRpc::ShouldRateLimit, status.error_code(), end - start);
    if (!status.ok()) logRefusal(status.error_code(), status.error_message(), end);
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(status);
    return reactor;
}

void RlsService::logRefusal(int code, const std::string& message, Nanos monotonicNow) {
    if (!log_) return;
    Nanos last = lastRefusalLog_.load(std::memory_order_relaxed);
    if (last != 0 && monotonicNow - last < kRefusalLogInterval) {
        unloggedRefusals_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    if (!lastRefusalLog_.compare_exchange_strong(last, monotonicNow)) {
        unloggedRefusals_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    log_->write(LogLine("warn", "rls_refused")
                    .field("code", grpcCodeName(code))
                    .field("message", message)
                    .field("unlogged_before", unloggedRefusals_.exchange(0)));
}

}  // namespace ratelab::serve
