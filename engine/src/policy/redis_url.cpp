#include <algorithm>
#include <cctype>
#include <string>

#include "ratelab/ip_address.h"
#include "ratelab/redis_url.h"

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

}  // namespace

std::optional<RedisEndpoint> parseRedisUrl(std::string_view url, std::string* whyNot) {
    auto fail = [whyNot](std::string why) -> std::optional<RedisEndpoint> {
        if (whyNot) *whyNot = std::move(why);
        return std::nullopt;
    };
    if (url.find_first_of("?#") != std::string_view::npos) {
        return fail("queries and fragments are not supported; " + std::string(kForm));
    }
    if (std::any_of(url.begin(), url.end(),
                    [](char c) { return static_cast<unsigned char>(c) <= ' ' || c == 0x7f; })) {
        return fail("spaces and control characters are not allowed");
    }
    RedisEndpoint endpoint;
    if (url.substr(0, 7) == "unix://") {
        std::string_view path = url.substr(7);
        if (path.empty() || path.front() != '/') {
            return fail("a unix socket URL needs an absolute path: unix:///run/redis.sock");
        }
        if (path.size() > 107) return fail("the socket path is longer than 107 bytes");
        endpoint.unixPath = std::string(path);
        return endpoint;
    }
    if (url.substr(0, 9) == "rediss://") {
        return fail("TLS (rediss://) is not supported: hiredis 0.14 has no TLS");
    }
    if (url.substr(0, 8) != "redis://") return fail(std::string(kForm));
    std::string_view rest = url.substr(8);
    std::size_t slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    if (authority.find('@') != std::string_view::npos) {
        return fail(
            "credentials in the URL are refused: policy files are exported and "
            "committed; give the store its password another way");
    }
    std::string_view host;
    std::string_view port;
    if (!authority.empty() && authority.front() == '[') {
        std::size_t close = authority.find(']');
        if (close == std::string_view::npos) return fail("missing \"]\" after the IPv6 address");
        host = authority.substr(1, close - 1);
        std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') return fail("expected \":PORT\" after \"]\"");
            port = after.substr(1);
            if (port.empty()) return fail("empty port after \":\"");
        }
        auto address = IpAddress::parse(host);
        if (!address || address->isV4())
            return fail("\"" + std::string(host) + "\" is not an IPv6 address");
    } else {
        if (std::count(authority.begin(), authority.end(), ':') > 1) {
            return fail("an IPv6 address goes in brackets: redis://[::1]:6379");
        }
        std::size_t colon = authority.find(':');
        host = authority.substr(0, colon);
        if (colon != std::string_view::npos) {
            port = authority.substr(colon + 1);
            if (port.empty()) return fail("empty port after \":\"");
        }
        if (host.empty()) return fail("no host; " + std::string(kForm));
        bool numeric = std::all_of(host.begin(), host.end(),
                                   [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
        if (numeric ? !IpAddress::parse(host) : !isHostName(host)) {
            return fail("\"" + std::string(host) + "\" is not a host name or an IPv4 address");
        }
    }
    endpoint.host = std::string(host);
    long long number = 0;
    if (!port.empty()) {
        if (!parseDecimal(port, 65535, number) || number == 0) {
            return fail("port \"" + std::string(port) + "\" is not a number from 1 to 65535");
        }
        endpoint.port = static_cast<int>(number);
    }
    if (slash != std::string_view::npos) {
        std::string_view db = rest.substr(slash + 1);
        if (!db.empty()) {
            if (!parseDecimal(db, 2147483647, number)) {
                return fail("database \"" + std::string(db) + "\" is not a whole number");
            }
            endpoint.database = static_cast<int>(number);
        }
    }
    return endpoint;
}

}  // namespace ratelab
