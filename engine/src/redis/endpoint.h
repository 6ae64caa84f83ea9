#pragma once

// Where a Redis server listens: the store URLs' endpoints (ratelab/redis_url.h, the one URL
// grammar) and the "host:port" node addresses Redis Cluster answers with.

#include <string>
#include <string_view>

#include "ratelab/redis_url.h"

namespace ratelab::redis {

using Endpoint = RedisEndpoint;

/// "host:port" as Redis Cluster writes node addresses (MOVED, CLUSTER SLOTS); IPv6 hosts may
/// come bracketed or not ("::1:7000" splits at the last colon).
bool parseHostPort(std::string_view text, std::string* host, int* port);

}  // namespace ratelab::redis
