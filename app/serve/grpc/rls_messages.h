#pragma once

// The gRPC messages of Envoy's rate limit service and the service's own request and answer
// types, each way. The one place that knows proto enums, Duration and field presence.

#include <string>

#include "envoy/service/ratelimit/v3/rls.pb.h"
#include "serve/rls/rls_types.h"

namespace ratelab::serve {

/// Reads a ShouldRateLimit request into `out`, reusing its buffers. Returns an empty string, or
/// why the request cannot be decided as sent (a limit override): the call's INVALID_ARGUMENT.
/// An empty domain or descriptor list is the service's to refuse, not this reader's.
std::string readRlsRequest(const envoy::service::ratelimit::v3::RateLimitRequest& message,
                           rls::RlsRequest& out);

/// Writes an answer into `out` (cleared first): the codes, each status's limit, remaining hits
/// and time to reset (a Duration, set with the limit), and the headers to add.
void writeRlsResponse(const rls::RlsResponse& response,
                      envoy::service::ratelimit::v3::RateLimitResponse& out);

}  // namespace ratelab::serve
