#pragma once

// grpc.health.v1.Health/Check, what Envoy's gRPC health checker and Kubernetes' grpc probe
// call. The whole server ("") and the rate limit service (by its full name, or "ratelimit" as
// envoyproxy/ratelimit registers it) are SERVING while the sidecar is ready, NOT_SERVING once it
// drains or while its store does not answer (the rule of /readyz); any other name is NOT_FOUND.

#include <functional>
#include <string>

#include "grpc/health/v1/health.grpc.pb.h"

namespace ratelab::serve {

class RlsMetrics;

/// Thread-safe, as grpc++ calls it from its threads.
class HealthService final : public grpc::health::v1::Health::CallbackService {
public:
    /// `unreadyReason` answers "" when ready, otherwise why not (thread-safe); both arguments
    /// must outlive the service.
    HealthService(std::function<std::string()> unreadyReason, RlsMetrics& metrics);

    grpc::ServerUnaryReactor* Check(grpc::CallbackServerContext* context,
                                    const grpc::health::v1::HealthCheckRequest* request,
                                    grpc::health::v1::HealthCheckResponse* response) override;

private:
    std::function<std::string()> unreadyReason_;
    RlsMetrics& metrics_;
};

}  // namespace ratelab::serve
