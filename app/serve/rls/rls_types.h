#pragma once

// Envoy's rate limit service (envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit) in
// plain C++: what a call asks and what it is answered, without gRPC types. The transport
// (app/serve/rls's gRPC server) copies messages into these and back; the numbering of the enums
// is the proto's, so that it copies them as numbers.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ratelab/limit.h"

namespace ratelab::serve::rls {

/// One entry of a descriptor: Envoy's rate limit action wrote it (a header's value, the
/// client address, a generic key...).
struct RlsEntry {
    std::string key;
    std::string value;
};

struct RlsDescriptor {
    std::vector<RlsEntry> entries;
    /// The descriptor's own hits_addend when the request carries one (0 included: a check
    /// that charges nothing); otherwise the request's.
    std::optional<std::uint64_t> hitsAddend;
};

struct RlsRequest {
    std::string domain;
    std::vector<RlsDescriptor> descriptors;
    /// Hits each descriptor charges unless it says otherwise; 0 means 1.
    std::uint64_t hitsAddend = 0;
};

/// RateLimitResponse.Code.
enum class RlsCode : std::uint8_t { Unknown = 0, Ok = 1, OverLimit = 2 };

/// RateLimitResponse.RateLimit.Unit.
enum class RlsUnit : std::uint8_t {
    Unknown = 0,
    Second = 1,
    Minute = 2,
    Hour = 3,
    Day = 4,
    Month = 5,
    Year = 6,
    Week = 7,
};

/// RateLimitResponse.RateLimit: the limit a status answers for.
struct RlsLimit {
    std::uint32_t requestsPerUnit = 0;
    RlsUnit unit = RlsUnit::Unknown;
    std::string name;  ///< the rule's `name`; empty when it has none
    friend bool operator==(const RlsLimit&, const RlsLimit&) = default;
};

/// RateLimitResponse.DescriptorStatus: the answer for one descriptor of the request.
struct RlsStatus {
    RlsCode code = RlsCode::Ok;
    /// The limit that decided; unset when no rule applies (none matched, the rule is
    /// unlimited or replaced).
    std::optional<RlsLimit> currentLimit;
    /// Hits left in the window; 4294967295 for an unlimited rule; 0 when over or unset.
    std::uint32_t limitRemaining = 0;
    /// Until the limit's window ends (whole seconds for the original's windows), or for a
    /// ratelab algorithm until the request would pass (over) or the key is fresh again (ok).
    /// 0 when currentLimit is unset.
    Nanos durationUntilReset = 0;
};

struct RlsResponse {
    RlsCode overall = RlsCode::Ok;
    std::vector<RlsStatus> statuses;  ///< one per request descriptor, in order
    /// response_headers_to_add: the RateLimit and RateLimit-Policy fields (each limit's header
    /// style), and Retry-After when over.
    std::vector<std::pair<std::string, std::string>> headers;
};

/// The gRPC status codes a decision can end with (grpc's numbering).
enum class GrpcCode : std::uint8_t {
    Ok = 0,
    Unknown = 2,          ///< as the original answers every refusal of a call
    InvalidArgument = 3,  ///< a hits_addend beyond what a counter holds
    Unavailable = 14,     ///< the store could not be reached and the rule says to fail the call
};

/// Why a call got no response. The messages for an empty domain and an empty descriptor list
/// are the original's own.
struct RlsError {
    GrpcCode code = GrpcCode::Ok;
    std::string message;
};

/// A call's outcome: a response, or an error (then `response` is empty).
struct RlsResult {
    RlsError error;
    RlsResponse response;
    bool ok() const { return error.code == GrpcCode::Ok; }
};

}  // namespace ratelab::serve::rls
