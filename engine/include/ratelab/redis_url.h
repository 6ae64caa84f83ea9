#pragma once

// The one grammar of Redis store URLs, for policy files, `ratelab-cli --store` and
// makeRedisStore() alike:
//   redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]   HOST a name, an IPv4 address or a bracketed
//                                                 IPv6 address; PORT 1..65535 (6379); DB >= 0
//   unix:///ABSOLUTE/PATH[?db=N]                  a unix socket, at most 107 bytes of path
//   redis-sentinel://[[USER]:PASSWORD@]HOST[:PORT][,HOST[:PORT]]...]/MASTER_NAME[?db=N]
//                                                 the master that Redis Sentinels monitor under
//                                                 MASTER_NAME (letters, digits, '.', '_', '-'),
//                                                 asked of the sentinels listed (PORT 26379, at
//                                                 most 16 of them); the credentials and DB are
//                                                 the master's (sentinels are asked without AUTH)
// Refused: rediss:// (hiredis 0.14 has no TLS), other queries, fragments, spaces and control
// characters. Where credentials may appear is the caller's rule: a policy file refuses them
// (it is exported and committed); the CLI and makeRedisStore() accept them.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ratelab {

/// A sentinel of a redis-sentinel:// URL.
struct RedisSentinelAddress {
    std::string host;  ///< host name, IPv4 address or IPv6 address (without brackets)
    int port = 26379;
    friend bool operator==(const RedisSentinelAddress&, const RedisSentinelAddress&) = default;
};

/// A Redis server named by a store URL: one server, or for a redis-sentinel:// URL the master
/// the sentinels name (host and port are then unused until they name it).
struct RedisEndpoint {
    std::string host;  ///< host name, IPv4 address or IPv6 address (without brackets)
    int port = 6379;
    std::string unixPath;  ///< set for unix:///path URLs; host and port are unused then
    int database = 0;      ///< SELECTed after connecting (standalone servers only)
    std::string user;      ///< AUTH user (Redis 6 ACL); may be empty
    std::string password;  ///< AUTH password; empty: no AUTH
    /// redis-sentinel:// URLs: the name the sentinels monitor the master under, and the
    /// sentinels to ask (in order). Empty otherwise.
    std::string masterName;
    std::vector<RedisSentinelAddress> sentinels;

    bool isUnix() const { return !unixPath.empty(); }
    bool isSentinel() const { return !masterName.empty(); }
    /// "127.0.0.1:6379", "[::1]:6379", "unix:/run/redis.sock" or, for a Sentinel URL,
    /// "mymaster via 10.0.0.1:26379,10.0.0.2:26379": never the credentials.
    std::string name() const;
};

/// Parses a store URL. Nullopt on failure, with what is wrong in *error when `error` is not
/// null; the reason never repeats a password. Thread-safe.
std::optional<RedisEndpoint> parseRedisUrl(std::string_view url, std::string* error = nullptr);

/// `url` with its password replaced by "***" ("redis://app:***@cache:6379/0"), for every
/// message, log line or report that names a store URL. Thread-safe.
std::string redactRedisUrl(std::string_view url);

}  // namespace ratelab
