#include "redis/endpoint.h"

#include <charconv>

namespace ratelab::redis {

namespace {

bool parseNumber(std::string_view text, int low, int high, int* out) {
    int value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < low || value > high)
        return false;
    *out = value;
    return true;
}

constexpr int kMaxDb = 1 << 20;

// The URL with any credentials masked, for error messages.
std::string redacted(std::string_view url) {
    const std::size_t scheme = url.find("://");
    const std::size_t at = url.rfind('@');
    if (scheme == std::string_view::npos || at == std::string_view::npos || at < scheme)
        return std::string(url);
    return std::string(url.substr(0, scheme + 3)) + "***" + std::string(url.substr(at));
}

}  // namespace

std::string Endpoint::name() const {
    if (isUnix()) return "unix:" + path;
    if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
    return host + ":" + std::to_string(port);
}

bool parseHostPort(std::string_view text, std::string* host, int* port) {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0) return false;
    std::string_view h = text.substr(0, colon);
    if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
    if (h.empty() || !parseNumber(text.substr(colon + 1), 1, 65535, port)) return false;
    host->assign(h);
    return true;
}

bool parseEndpoint(std::string_view url, Endpoint* out, std::string* error) {
    Endpoint e;
    auto fail = [&](std::string_view what) {
        *error = "redis URL '" + redacted(url) + "': " + std::string(what);
        return false;
    };
    constexpr std::string_view kUnix = "unix://";
    constexpr std::string_view kRedis = "redis://";
    if (url.starts_with(kUnix)) {
        std::string_view rest = url.substr(kUnix.size());
        if (const std::size_t q = rest.find('?'); q != std::string_view::npos) {
            std::string_view query = rest.substr(q + 1);
            rest = rest.substr(0, q);
            if (!query.starts_with("db=") || !parseNumber(query.substr(3), 0, kMaxDb, &e.db))
                return fail("expected '?db=N' after the socket path");
        }
        if (!rest.starts_with('/')) return fail("expected an absolute socket path (unix:///path)");
        e.path.assign(rest);
        *out = std::move(e);
        return true;
    }
    if (!url.starts_with(kRedis))
        return fail("expected redis://host:port[/db] or unix:///path/to/socket");
    std::string_view rest = url.substr(kRedis.size());
    if (const std::size_t at = rest.rfind('@'); at != std::string_view::npos) {
        std::string_view credentials = rest.substr(0, at);
        rest = rest.substr(at + 1);
        const std::size_t colon = credentials.find(':');
        if (colon == std::string_view::npos) return fail("expected user:password@ before the host");
        e.user.assign(credentials.substr(0, colon));
        e.password.assign(credentials.substr(colon + 1));
    }
    if (const std::size_t slash = rest.find('/'); slash != std::string_view::npos) {
        std::string_view db = rest.substr(slash + 1);
        rest = rest.substr(0, slash);
        if (!db.empty() && !parseNumber(db, 0, kMaxDb, &e.db))
            return fail("the database after '/' must be a number from 0");
    }
    if (rest.starts_with('[')) {
        const std::size_t close = rest.find(']');
        if (close == std::string_view::npos) return fail("unclosed '[' in the host");
        e.host.assign(rest.substr(1, close - 1));
        rest = rest.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':' || !parseNumber(rest.substr(1), 1, 65535, &e.port))
                return fail("the port must be a number from 1 to 65535");
        }
    } else {
        const std::size_t colon = rest.find(':');
        e.host.assign(rest.substr(0, colon));
        if (colon != std::string_view::npos &&
            !parseNumber(rest.substr(colon + 1), 1, 65535, &e.port))
            return fail("the port must be a number from 1 to 65535");
    }
    if (e.host.empty()) return fail("missing host");
    *out = std::move(e);
    return true;
}

}  // namespace ratelab::redis
