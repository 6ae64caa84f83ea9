#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "ratelab/ip_address.h"

namespace ratelab {

/// One HTTP header line. Names compare case-insensitively; a name may repeat.
struct Header {
    std::string_view name;
    std::string_view value;
};

/// A request attribute an earlier layer has verified, e.g. {"plan", "premium"}.
struct Attribute {
    std::string_view name;
    std::string_view value;
};

/// The small view of a request the engine needs. Borrowed: it must outlive the call only.
struct RequestView {
    std::string_view method;             ///< "GET"
    std::string_view path;               ///< "/api/items", without the query
    std::span<const Header> headers;     ///< in arrival order
    const IpAddress* peer = nullptr;     ///< the TCP peer, when the server knows it
    std::string_view principal;          ///< a verified principal; empty when none
    std::span<const Attribute> attributes;
    std::int64_t cost = 0;               ///< weighted cost; 0 uses each policy's own cost
};

}  // namespace ratelab
