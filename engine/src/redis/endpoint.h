#pragma once

// Where a Redis server listens, parsed from the store's URLs.

#include <string>
#include <string_view>

namespace ratelab::redis {

struct Endpoint {
    std::string host;  ///< TCP host name or address (IPv6 without brackets); empty for a socket
    int port = 6379;
    std::string path;  ///< unix socket path; empty for TCP
    int db = 0;        ///< SELECTed after connecting (standalone servers only)
    std::string user;  ///< AUTH user (Redis 6 ACL); may be empty
    std::string password;

    bool isUnix() const { return !path.empty(); }
    /// "127.0.0.1:6379", "[::1]:6379" or "unix:/tmp/redis.sock": never the password.
    std::string name() const;
};

/// Parses "redis://[[user]:password@]host[:port][/db]" or "unix:///path/to/socket[?db=N]".
/// On failure returns false and says what is wrong in *error (the password is never quoted).
bool parseEndpoint(std::string_view url, Endpoint* out, std::string* error);

/// "host:port" as Redis Cluster writes node addresses (MOVED, CLUSTER SLOTS); IPv6 hosts may
/// come bracketed or not ("::1:7000" splits at the last colon).
bool parseHostPort(std::string_view text, std::string* host, int* port);

}  // namespace ratelab::redis
