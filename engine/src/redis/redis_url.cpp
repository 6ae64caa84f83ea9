#include "ratelab/redis_url.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "ratelab/ip_address.h"

namespace ratelab {

namespace {

constexpr std::string_view kForm =
    "expected redis://HOST[:PORT][/DB], unix:///PATH or "
    "redis-sentinel://HOST[:PORT][,HOST[:PORT]]/MASTER_NAME";
constexpr std::string_view kSentinelForm =
    "expected redis-sentinel://HOST[:PORT][,HOST[:PORT]]/MASTER_NAME[?db=N]";
constexpr std::string_view kRedisScheme = "redis://";
constexpr std::string_view kSentinelScheme = "redis-sentinel://";
constexpr std::size_t kMaxSentinels = 16;
constexpr std::size_t kMaxMasterName = 256;

// Whole decimal number in [0, max], without sign or leading "+".
bool parseDecimal(std::string_view text, long long max, long long& out) {
    if (text.empty() || text.size() > 10) return false;
    long long value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return false;
        value = value * 10 + (c - '0');
    }
    if (value > max) return false;
    out = value;
    return true;
}

bool isHostName(std::string_view host) {
    if (host.empty() || host.size() > 253 || host.front() == '.' || host.front() == '-') {
        return false;
    }
    return std::all_of(host.begin(), host.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
    });
}

bool isMasterName(std::string_view name) {
    return std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
    });
}

std::optional<RedisEndpoint> fail(std::string* error, std::string why) {
    if (error) *error = std::move(why);
    return std::nullopt;
}

// "?db=N", the one query a unix or Sentinel URL takes. False when it is anything else.
bool parseDatabaseQuery(std::string_view query, int& database) {
    long long db = 0;
    if (!query.starts_with("db=") || !parseDecimal(query.substr(3), 2147483647, db)) return false;
    database = static_cast<int>(db);
    return true;
}

// HOST[:PORT] of a redis:// URL or of one sentinel: a host name, an IPv4 address or a bracketed
// IPv6 address; the port 1..65535, `defaultPort` when absent. Empty on success, else why not.
std::string parseAuthority(std::string_view authority, int defaultPort, std::string& hostOut,
                           int& portOut) {
    std::string_view host;
    std::string_view port;
    if (!authority.empty() && authority.front() == '[') {
        const std::size_t close = authority.find(']');
        if (close == std::string_view::npos) return "missing \"]\" after the IPv6 address";
        host = authority.substr(1, close - 1);
        const std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') return "expected \":PORT\" after \"]\"";
            port = after.substr(1);
            if (port.empty()) return "empty port after \":\"";
        }
        auto address = IpAddress::parse(host);
        if (!address || address->isV4()) {
            return "\"" + std::string(host) + "\" is not an IPv6 address";
        }
    } else {
        if (std::count(authority.begin(), authority.end(), ':') > 1) {
            return "an IPv6 address goes in brackets: [::1]:6379";
        }
        const std::size_t colon = authority.find(':');
        host = authority.substr(0, colon);
        if (colon != std::string_view::npos) {
            port = authority.substr(colon + 1);
            if (port.empty()) return "empty port after \":\"";
        }
        if (host.empty()) return "no host";
        const bool numeric = std::all_of(host.begin(), host.end(),
                                         [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
        if (numeric ? !IpAddress::parse(host) : !isHostName(host)) {
            return "\"" + std::string(host) + "\" is not a host name or an IPv4 address";
        }
    }
    hostOut = std::string(host);
    portOut = defaultPort;
    if (!port.empty()) {
        long long number = 0;
        if (!parseDecimal(port, 65535, number) || number == 0) {
            return "port \"" + std::string(port) + "\" is not a number from 1 to 65535";
        }
        portOut = static_cast<int>(number);
    }
    return {};
}

// USER:PASSWORD before the last '@' of `rest` (a password may hold '/' or '@'); `rest` is left
// with what follows it. False when the credentials lack their ':'.
bool takeCredentials(std::string_view& rest, RedisEndpoint& endpoint) {
    const std::size_t at = rest.rfind('@');
    if (at == std::string_view::npos) return true;
    const std::string_view credentials = rest.substr(0, at);
    const std::size_t colon = credentials.find(':');
    if (colon == std::string_view::npos) return false;
    endpoint.user = std::string(credentials.substr(0, colon));
    endpoint.password = std::string(credentials.substr(colon + 1));
    rest = rest.substr(at + 1);
    return true;
}

std::optional<RedisEndpoint> parseUnix(std::string_view rest, std::string* error) {
    RedisEndpoint endpoint;
    if (const std::size_t q = rest.find('?'); q != std::string_view::npos) {
        std::string_view query = rest.substr(q + 1);
        rest = rest.substr(0, q);
        if (!parseDatabaseQuery(query, endpoint.database)) {
            return fail(error, "a unix socket URL takes only \"?db=N\" after the path");
        }
    }
    if (rest.empty() || rest.front() != '/') {
        return fail(error, "a unix socket URL needs an absolute path: unix:///run/redis.sock");
    }
    if (rest.size() > 107) return fail(error, "the socket path is longer than 107 bytes");
    endpoint.unixPath = std::string(rest);
    return endpoint;
}

std::optional<RedisEndpoint> parseSentinel(std::string_view rest, std::string* error) {
    RedisEndpoint endpoint;
    if (!takeCredentials(rest, endpoint)) {
        return fail(error, "expected USER:PASSWORD@ or :PASSWORD@ before the sentinels");
    }
    if (const std::size_t q = rest.find('?'); q != std::string_view::npos) {
        if (!parseDatabaseQuery(rest.substr(q + 1), endpoint.database)) {
            return fail(error, "a Sentinel URL takes only \"?db=N\" after the master's name");
        }
        rest = rest.substr(0, q);
    }
    const std::size_t slash = rest.find('/');
    if (slash == std::string_view::npos || slash + 1 == rest.size()) {
        return fail(error, "no master name; " + std::string(kSentinelForm));
    }
    const std::string_view name = rest.substr(slash + 1);
    if (name.size() > kMaxMasterName || !isMasterName(name)) {
        return fail(error, "master name \"" + std::string(name.substr(0, kMaxMasterName)) +
                               "\" may hold only letters, digits, '.', '_' and '-' (at most " +
                               std::to_string(kMaxMasterName) + ")");
    }
    endpoint.masterName = std::string(name);
    std::string_view list = rest.substr(0, slash);
    for (;;) {
        const std::size_t comma = list.find(',');
        const std::string_view authority = list.substr(0, comma);
        if (authority.empty())
            return fail(error, "an empty sentinel address; " + std::string(kSentinelForm));
        RedisSentinelAddress sentinel;
        const std::string why = parseAuthority(authority, 26379, sentinel.host, sentinel.port);
        if (!why.empty()) return fail(error, "sentinel \"" + std::string(authority) + "\": " + why);
        if (std::find(endpoint.sentinels.begin(), endpoint.sentinels.end(), sentinel) !=
            endpoint.sentinels.end()) {
            return fail(error, "sentinel \"" + std::string(authority) + "\" is listed twice");
        }
        endpoint.sentinels.push_back(std::move(sentinel));
        if (endpoint.sentinels.size() > kMaxSentinels) {
            return fail(error, "more than " + std::to_string(kMaxSentinels) + " sentinels");
        }
        if (comma == std::string_view::npos) break;
        list = list.substr(comma + 1);
    }
    return endpoint;
}

std::string hostPortName(const std::string& host, int port) {
    if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
    return host + ":" + std::to_string(port);
}

}  // namespace

std::string RedisEndpoint::name() const {
    if (isUnix()) return "unix:" + unixPath;
    if (isSentinel()) {
        std::string text = masterName + " via ";
        for (std::size_t i = 0; i < sentinels.size(); ++i)
            text += (i ? "," : "") + hostPortName(sentinels[i].host, sentinels[i].port);
        return text;
    }
    return hostPortName(host, port);
}

std::string redactRedisUrl(std::string_view url) {
    // Credentials are where parseRedisUrl reads them: between the scheme and the last '@'. A
    // unix socket URL has none, whatever its path holds.
    std::size_t start = 0;
    if (url.starts_with(kRedisScheme)) {
        start = kRedisScheme.size();
    } else if (url.starts_with(kSentinelScheme)) {
        start = kSentinelScheme.size();
    } else {
        return std::string(url);
    }
    const std::size_t at = url.rfind('@');
    if (at == std::string_view::npos || at < start) return std::string(url);
    const std::string_view userinfo = url.substr(start, at - start);
    const std::size_t colon = userinfo.find(':');
    if (colon == std::string_view::npos || colon + 1 == userinfo.size()) {
        return std::string(url);  // no password to hide; none is made up
    }
    return std::string(url.substr(0, start + colon)) + ":***" + std::string(url.substr(at));
}

std::optional<RedisEndpoint> parseRedisUrl(std::string_view url, std::string* error) {
    if (std::any_of(url.begin(), url.end(),
                    [](char c) { return static_cast<unsigned char>(c) <= ' ' || c == 0x7f; })) {
        return fail(error, "spaces and control characters are not allowed");
    }
    if (url.find('#') != std::string_view::npos) {
        return fail(error, "fragments are not supported; " + std::string(kForm));
    }
    if (url.starts_with("unix://")) return parseUnix(url.substr(7), error);
    if (url.starts_with(kSentinelScheme)) {
        return parseSentinel(url.substr(kSentinelScheme.size()), error);
    }
    if (url.starts_with("rediss://")) {
        return fail(error, "TLS (rediss://) is not supported: hiredis 0.14 has no TLS");
    }
    if (!url.starts_with(kRedisScheme)) return fail(error, std::string(kForm));
    if (url.find('?') != std::string_view::npos) {
        return fail(error, "queries are not supported; " + std::string(kForm));
    }
    RedisEndpoint endpoint;
    std::string_view rest = url.substr(kRedisScheme.size());
    if (!takeCredentials(rest, endpoint)) {
        return fail(error, "expected USER:PASSWORD@ or :PASSWORD@ before the host");
    }
    const std::size_t slash = rest.find('/');
    const std::string why =
        parseAuthority(rest.substr(0, slash), 6379, endpoint.host, endpoint.port);
    if (!why.empty()) {
        return fail(error, why == "no host" ? "no host; " + std::string(kForm) : why);
    }
    if (slash != std::string_view::npos) {
        const std::string_view db = rest.substr(slash + 1);
        long long number = 0;
        if (!db.empty()) {
            if (!parseDecimal(db, 2147483647, number)) {
                return fail(error, "database \"" + std::string(db) + "\" is not a whole number");
            }
            endpoint.database = static_cast<int>(number);
        }
    }
    return endpoint;
}

}  // namespace ratelab
