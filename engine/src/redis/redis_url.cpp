#include "ratelab/redis_url.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "ratelab/ip_address.h"

namespace ratelab {

namespace {

constexpr std::string_view kForm = "expected redis://HOST[:PORT][/DB] or unix:///PATH";

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

std::optional<RedisEndpoint> fail(std::string* error, std::string why) {
    if (error) *error = std::move(why);
    return std::nullopt;
}

std::optional<RedisEndpoint> parseUnix(std::string_view rest, std::string* error) {
    RedisEndpoint endpoint;
    if (const std::size_t q = rest.find('?'); q != std::string_view::npos) {
        std::string_view query = rest.substr(q + 1);
        rest = rest.substr(0, q);
        long long db = 0;
        if (!query.starts_with("db=") || !parseDecimal(query.substr(3), 2147483647, db)) {
            return fail(error, "a unix socket URL takes only \"?db=N\" after the path");
        }
        endpoint.database = static_cast<int>(db);
    }
    if (rest.empty() || rest.front() != '/') {
        return fail(error, "a unix socket URL needs an absolute path: unix:///run/redis.sock");
    }
    if (rest.size() > 107) return fail(error, "the socket path is longer than 107 bytes");
    endpoint.unixPath = std::string(rest);
    return endpoint;
}

}  // namespace

std::string RedisEndpoint::name() const {
    if (isUnix()) return "unix:" + unixPath;
    if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
    return host + ":" + std::to_string(port);
}

std::string redactRedisUrl(std::string_view url) {
    // Credentials are where parseRedisUrl reads them: between "redis://" and the last '@'. A
    // unix socket URL has none, whatever its path holds.
    constexpr std::string_view kScheme = "redis://";
    if (!url.starts_with(kScheme)) return std::string(url);
    const std::size_t start = kScheme.size();
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
    if (url.starts_with("rediss://")) {
        return fail(error, "TLS (rediss://) is not supported: hiredis 0.14 has no TLS");
    }
    if (!url.starts_with("redis://")) return fail(error, std::string(kForm));
    if (url.find('?') != std::string_view::npos) {
        return fail(error, "queries are not supported; " + std::string(kForm));
    }
    RedisEndpoint endpoint;
    std::string_view rest = url.substr(8);
    // A password may hold '/' or '@': the host starts after the last '@'.
    if (const std::size_t at = rest.rfind('@'); at != std::string_view::npos) {
        const std::string_view credentials = rest.substr(0, at);
        const std::size_t colon = credentials.find(':');
        if (colon == std::string_view::npos) {
            return fail(error, "expected USER:PASSWORD@ or :PASSWORD@ before the host");
        }
        endpoint.user = std::string(credentials.substr(0, colon));
        endpoint.password = std::string(credentials.substr(colon + 1));
        rest = rest.substr(at + 1);
    }
    const std::size_t slash = rest.find('/');
    const std::string_view authority = rest.substr(0, slash);
    std::string_view host;
    std::string_view port;
    if (!authority.empty() && authority.front() == '[') {
        const std::size_t close = authority.find(']');
        if (close == std::string_view::npos) {
            return fail(error, "missing \"]\" after the IPv6 address");
        }
        host = authority.substr(1, close - 1);
        const std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') return fail(error, "expected \":PORT\" after \"]\"");
            port = after.substr(1);
            if (port.empty()) return fail(error, "empty port after \":\"");
        }
        auto address = IpAddress::parse(host);
        if (!address || address->isV4()) {
            return fail(error, "\"" + std::string(host) + "\" is not an IPv6 address");
        }
    } else {
        if (std::count(authority.begin(), authority.end(), ':') > 1) {
            return fail(error, "an IPv6 address goes in brackets: redis://[::1]:6379");
        }
        const std::size_t colon = authority.find(':');
        host = authority.substr(0, colon);
        if (colon != std::string_view::npos) {
            port = authority.substr(colon + 1);
            if (port.empty()) return fail(error, "empty port after \":\"");
        }
        if (host.empty()) return fail(error, "no host; " + std::string(kForm));
        const bool numeric = std::all_of(host.begin(), host.end(),
                                         [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
        if (numeric ? !IpAddress::parse(host) : !isHostName(host)) {
            return fail(error,
                        "\"" + std::string(host) + "\" is not a host name or an IPv4 address");
        }
    }
    endpoint.host = std::string(host);
    long long number = 0;
    if (!port.empty()) {
        if (!parseDecimal(port, 65535, number) || number == 0) {
            return fail(error,
                        "port \"" + std::string(port) + "\" is not a number from 1 to 65535");
        }
        endpoint.port = static_cast<int>(number);
    }
    if (slash != std::string_view::npos) {
        const std::string_view db = rest.substr(slash + 1);
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
