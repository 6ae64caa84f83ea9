#pragma once

// Trusted-proxy resolution: who the client is when the TCP peer is one of our own proxies.
// A forwarded header is written by whoever sent the request, so it is read only when the
// direct peer is a configured trusted proxy, and then only from the right: each proxy appends
// the address it saw, so the entries nearest the client are the forgeable ones.

#include <cstdint>
#include <optional>
#include <string_view>

#include "ratelab/ip_address.h"
#include "ratelab/policy.h"
#include "ratelab/request.h"

namespace ratelab::identity {

/// The client address after trusted-proxy resolution.
struct ClientAddress {
    enum class Status : std::uint8_t {
        None,       ///< no peer, and no forwarded header from a trusted proxy
        Ok,         ///< `address` is the client
        Malformed,  ///< a trusted proxy sent a forwarded header that does not parse: fail closed
    };
    Status status = Status::None;
    IpAddress address;
};

/// How a forwarded header is read.
enum class ForwardedSyntax : std::uint8_t {
    List,     ///< X-Forwarded-For: comma-separated addresses, appended per hop
    Rfc7239,  ///< Forwarded: elements of `for=` / `by=` / ... pairs, appended per hop
    Single,   ///< X-Real-IP and the like: exactly one address, set by the proxy
};

/// "x-forwarded-for" reads as a list, "forwarded" as RFC 7239, any other name as one address.
ForwardedSyntax forwardedSyntaxFor(std::string_view headerName);

/// Elements kept while walking a chain from the right. A longer run of trusted hops than this
/// fails closed (no deployment has 64 proxies; only a forger writes that many).
inline constexpr int kMaxForwardedHops = 64;

/// One X-Forwarded-For or X-Real-IP entry: "198.51.100.7", "2001:db8::1", "[2001:db8::1]",
/// and, as some load balancers append them, "198.51.100.7:4711" and "[2001:db8::1]:443".
/// `element` is already trimmed. Returns nullopt for anything else ("unknown", garbage).
std::optional<IpAddress> parseForwardedNode(std::string_view element);

/// The `for=` address of one RFC 7239 element (`for=192.0.2.60;proto=http;by=203.0.113.43`,
/// `for="[2001:db8:cafe::17]:4711"`). Returns nullopt when `for` is missing, repeated, "unknown",
/// an obfuscated identifier ("_hidden"), or when the element's syntax is broken.
std::optional<IpAddress> parseForwardedElement(std::string_view element);

/// The client of `request`: the direct peer, unless it is inside `proxies.cidrs`; then the
/// forwarded header (repeated lines concatenated in order) is walked right to left, trusted
/// hops skipped, and the first untrusted hop is the client (the leftmost when all are trusted).
/// A trusted peer that sent no such header is itself the client. Allocates nothing.
ClientAddress resolveClient(const RequestView& request, const TrustedProxies& proxies);

}  // namespace ratelab::identity
