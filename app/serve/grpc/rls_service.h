#pragma once

// envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit on grpc++'s callback API: each
// call is read into the service's request, decided, and written back. On a store inside the
// process a call is decided on the thread that received it; on a store outside it the call is
// queued and decided with the calls received meanwhile, on the service's own threads
// (serve/grpc/rls_batcher.h), so that no grpc++ thread waits for a store round trip. The
// handler is an adapter only; what an answer says is the decider's.

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>

#include "envoy/service/ratelimit/v3/rls.grpc.pb.h"
#include "ratelab/limit.h"
#include "serve/grpc/rls_batcher.h"
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
    /// Decides requests[i] into out[i] at `now` with one store round trip for them all, every
    /// store call bounded by `storeTimeout` (nanoseconds; <= 0: none is sent, each limit is
    /// decided by its store-error rule). REQUIRES: out.size() >= requests.size().
    virtual void decideBatch(std::span<const rls::RlsRequest> requests, Nanos now,
                             Nanos storeTimeout, std::span<rls::RlsResult> out) = 0;
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

struct RlsServiceOptions {
    /// Decide calls in batches on the service's own threads rather than each on the grpc++
    /// thread that received it: for a store outside the process (storeLeavesProcess).
    bool batched = false;
    /// The batches' threads and the calls' store bound. REQUIRES: storeTimeout > 0 when batched.
    RlsBatcherOptions batcher;
};

/// Thread-safe, as grpc++ calls it from its threads.
class RlsService final : public envoy::service::ratelimit::v3::RateLimitService::CallbackService {
public:
    /// Every argument must outlive the service; `log` may be null. Batched calls still queued
    /// when the service is destroyed are decided and finished first.
    RlsService(RlsDecisions& decisions, const WallClock& clock, RlsMetrics& metrics,
               ServiceLog* log, const RlsServiceOptions& options = {});
    ~RlsService() override;

    grpc::ServerUnaryReactor* ShouldRateLimit(
        grpc::CallbackServerContext* context,
        const envoy::service::ratelimit::v3::RateLimitRequest* request,
        envoy::service::ratelimit::v3::RateLimitResponse* response) override;

private:
    // Writes the answer (or the refusal), counts the call and finishes it.
    void finish(const RlsQueuedCall& call, const grpc::Status& refusal, rls::RlsResult* result);
    void logRefusal(int code, const std::string& message, Nanos monotonicNow);

    RlsDecisions& decisions_;
    const WallClock& clock_;
    RlsMetrics& metrics_;
    ServiceLog* log_;
    std::atomic<Nanos> lastRefusalLog_{0};
    std::atomic<std::int64_t> unloggedRefusals_{0};
    std::unique_ptr<RlsBatcher> batcher_;  // null: each call decided where it was received
};

}  // namespace ratelab::serve
