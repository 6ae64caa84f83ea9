#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ratelab {

/// A Redis server named by a store URL.
struct RedisEndpoint {
    std::string host;  ///< host name, IPv4 address or IPv6 address (without brackets)
    int port = 6379;
    std::string unixPath;  ///< set for unix:///path URLs; host and port are unused then
    int database = 0;
};

/// Parses "redis://HOST[:PORT][/DB]" (HOST a name, an IPv4 address or a bracketed IPv6 address)
/// or "unix:///absolute/path". Refuses credentials in the URL (policy files are exported and
/// committed), "rediss://" (hiredis 0.14 has no TLS), queries and fragments. On failure returns
/// nullopt and, when `whyNot` is given, says what is wrong. Thread-safe.
std::optional<RedisEndpoint> parseRedisUrl(std::string_view url, std::string* whyNot = nullptr);

}  // namespace ratelab
