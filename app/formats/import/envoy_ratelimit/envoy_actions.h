#pragma once

// The Envoy side of the rate limit service: the route configuration whose `rate_limits` actions
// build the descriptors a request sends (virtual hosts, their routes' `match`, each RateLimit
// entry's actions), read with positions from a route configuration, an HTTP connection
// manager's `route_config` or a whole bootstrap file. Only what decides which descriptors a
// request sends is kept; the rest of the file is skipped silently.

#include <cstdint>
#include <string>
#include <vector>

#include "formats/envoy/yaml_tree.h"
#include "formats/import/import_common.h"

namespace ratelab::formats::envoy_ratelimit {

/// One action of a RateLimit entry: the descriptor entry it appends.
struct Action {
    enum class Kind : std::uint8_t {
        RemoteAddress,        ///< (remote_address, the client address)
        MaskedRemoteAddress,  ///< (masked_remote_address, the client's network at v4/v6)
        RequestHeaders,       ///< (descriptor_key, the header's value)
        GenericKey,           ///< (descriptor_key or generic_key, descriptor_value)
        HeaderValueMatch,     ///< (descriptor_key or header_match, descriptor_value) if matched
        DestinationCluster,   ///< (destination_cluster, the route's cluster)
        SourceCluster,        ///< (source_cluster, Envoy's own cluster name)
    };
    Kind kind = Kind::GenericKey;
    SourcePos at;
    std::string key;     ///< the descriptor entry's key
    std::string value;   ///< constant kinds: the entry's value ("" when unknown: source_cluster)
    std::string header;  ///< RequestHeaders: the header's name
    bool skipIfAbsent = false;  ///< RequestHeaders: a missing header omits the entry
    int ipv4Prefix = 32;        ///< MaskedRemoteAddress
    int ipv6Prefix = 128;
    /// HeaderValueMatch: the methods a `:method` matcher admits (empty: no such matcher), and
    /// whether another header is matched (which a policy cannot check).
    std::vector<std::string> methods;
    bool otherHeaders = false;
};

/// One RateLimit entry: at most one descriptor per request.
struct RateLimitEntry {
    SourcePos at;
    std::vector<Action> actions;
};

/// A route of a virtual host, with the RateLimit entries that apply to it.
struct EnvoyRoute {
    SourcePos at;
    std::string name;  ///< the route's `name`, else "route<N>"
    PolicyJson match;  ///< the policy `match` object, null when not carried
    std::string cluster;
    std::vector<RateLimitEntry> limits;
};

struct EnvoyRoutes {
    std::vector<EnvoyRoute> routes;  ///< in file order (Envoy takes the first that matches)
    std::string domain;  ///< the HTTP rate limit filter's `domain`, when the file has one
    SourcePos domainAt;
};

/// Reads the route configuration in `root` (file `file` of `log`), every problem into `log`.
/// Thread-safe (no shared state).
EnvoyRoutes readEnvoyRoutes(const envoy::YamlNode& root, int file, ImportLog& log);

}  // namespace ratelab::formats::envoy_ratelimit
