#pragma once

// The three exporters, and the pieces of the nginx export that tests check on their own.

#include <string>
#include <utility>
#include <vector>

#include "formats/policy_export.h"

namespace ratelab::formats {

ExportResult exportNginx(const PolicySet& set);
ExportResult exportEnvoy(const PolicySet& set);
ExportResult exportHaproxy(const PolicySet& set);
ExportResult exportEnvoyRatelimit(const PolicySet& set);

/// An envoy-ratelimit export's two documents: the service's YAML and the route configuration.
std::pair<std::string, std::string> splitEnvoyRatelimitExport(const std::string& text);

/// One line of an nginx `map`: a regular expression (without nginx's "~") and the value, which
/// may use the expression's captures ($1, ...).
struct NginxMapEntry {
    std::string pattern;
    std::string value;
};

/// The entries of `map $remote_addr $var { ... default $remote_addr; }` that turn nginx's text
/// of the client address into one key per address group, grouped as the engine groups them:
/// IPv4 (and IPv4-mapped IPv6) to /ipv4Prefix, IPv6 to /ipv6Prefix, except ::/64 (loopback and
/// such), which is never grouped. Relies on nginx writing IPv6 addresses as RFC 5952 text
/// (ngx_inet6_ntop). The keys are the groups' leading fields written out ("2001:db8:0:0::/64"),
/// one text per group. REQUIRES: ipv4Prefix a multiple of 8, ipv6Prefix a multiple of 16.
std::vector<NginxMapEntry> nginxAddressMap(int ipv4Prefix, int ipv6Prefix);

/// nginx's limit_req rate for `milliPerSecond` thousandths of a request per second: exact
/// ("10r/s", "30r/m") when nginx can write it, else the nearest rate nginx can (ties to the
/// lower) when that is at most 1% faster, else the fastest one not faster; "" when even 1r/m
/// is faster by more than 1%. `applied` is nginx's own number for the returned rate,
/// rate * 1000 / (1 or 60) in its integer arithmetic.
std::string nginxRate(long long milliPerSecond, long long& applied);

}  // namespace ratelab::formats
