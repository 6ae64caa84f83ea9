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
                       ServiceLog* log, const RlsServiceOptions& options)
    : decisions_(decisions), clock_(clock), metrics_(metrics), log_(log) {
    if (options.batched) {
        batcher_ = std::make_unique<RlsBatcher>(
            decisions, clock,
            [this](const RlsQueuedCall& call, rls::RlsResult& result) {
                finish(call, grpc::Status::OK, &result);
            },
            options.batcher);
    }
}

RlsService::~RlsService() = default;

grpc::ServerUnaryReactor* RlsService::ShouldRateLimit(
    grpc::CallbackServerContext* context,
    const envoy::service::ratelimit::v3::RateLimitRequest* request,
    envoy::service::ratelimit::v3::RateLimitResponse* response) {
    const RlsQueuedCall call{context->DefaultReactor(), response, clockNow(CLOCK_MONOTONIC)};
    if (batcher_) {
        rls::RlsRequest decided;
        std::string why = readRlsRequest(*request, decided);
        if (why.empty()) {
            // Finished by a batcher thread, possibly before this returns (grpc++ keeps a
            // Finish that comes before the call is bound to its reactor).
            batcher_->add(std::move(decided), call);
        } else {
            finish(call, grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, why), nullptr);
        }
        return call.reactor;
    }
    // Reused by every call this thread takes, so that a call allocates only what grows.
    thread_local rls::RlsRequest decided;
    std::string why = readRlsRequest(*request, decided);
    if (!why.empty()) {
        finish(call, grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, why), nullptr);
    } else {
        rls::RlsResult result = decisions_.decide(decided, clock_.now());
        finish(call, grpc::Status::OK, &result);
    }
    return call.reactor;
}

void RlsService::finish(const RlsQueuedCall& call, const grpc::Status& refusal,
                        rls::RlsResult* result) {
    grpc::Status status = refusal;
    if (result && result->ok()) {
        writeRlsResponse(result->response, *call.response);
        metrics_.countAnswer(result->response.overall);
    } else if (result) {
        // rls::GrpcCode is numbered as grpc::StatusCode.
        status = grpc::Status(static_cast<grpc::StatusCode>(result->error.code),
                              std::move(result->error.message));
    }
    const Nanos end = clockNow(CLOCK_MONOTONIC);
    metrics_.countCall(RlsRpc::ShouldRateLimit, status.error_code(), end - call.received);
    if (!status.ok()) logRefusal(status.error_code(), status.error_message(), end);
    call.reactor->Finish(status);
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
