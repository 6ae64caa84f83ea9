#pragma once

// envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit on grpc++'s callback API: each
// call is read into the service's request, decided, and written back on the thread that
// received it, which no call holds longer than its store calls are bounded (the store timeout).
// The handler is an adapter only; what an answer says is the decider's.

#include <atomic>
#include <cstdint>

#include "envoy/service/ratelimit/v3/rls.grpc.pb.h"
#include "ratelab/limit.h"
#include "serve/rls/rls_types.h"

namespace ratelab::serve {

class RlsMetrics;
class ServiceLog;

namespace rls {
class RlsDecider;
}

/// What the gRPC listener asks of the rate limit service: serve/rls's decider, or a test's
/// wrapper around it (tests hold calls at a gate). Thread-safe.
class RlsDecisions {
public:
    virtual ~RlsDecisions() = default;
    /// Decides `request` at Unix time `now` (nanoseconds): an answer, or why there is none.
    virtual rls::RlsResult decide(const rls::RlsRequest& request, Nanos now) = 0;
    /// The decider underneath, which a reload builds the next one from; null when none.
    virtual const rls::RlsDecider* decider() const = 0;
};

/// Where the decisions' Unix time comes from. Thread-safe.
class WallClock {
public:
    virtual ~WallClock() = default;
    /// Nanoseconds since the Unix epoch.
    virtual Nanos now() const = 0;
};

/// CLOCK_REALTIME.
const WallClock& systemWallClock();

/// Thread-safe, as grpc++ calls it from its threads.
class RlsService final : public envoy::service::ratelimit::v3::RateLimitService::CallbackService {
public:
    /// Every argument must outlive the service; `log` may be null.
    RlsService(RlsDecisions& decisions, const WallClock& clock, RlsMetrics& metrics,
               ServiceLog* log);

    grpc::ServerUnaryReactor* ShouldRateLimit(
        grpc::CallbackServerContext* context,
        const envoy::service::ratelimit::v3::RateLimitRequest* request,
        envoy::service::ratelimit::v3::RateLimitResponse* response) override;

private:
    void logRefusal(int code, const std::string& message, Nanos monotonicNow);

    RlsDecisions& decisions_;
    const WallClock& clock_;
    RlsMetrics& metrics_;
    ServiceLog* log_;
    std::atomic<Nanos> lastRefusalLog_{0};
    std::atomic<std::int64_t> unloggedRefusals_{0};
};

}  // namespace ratelab::serve
