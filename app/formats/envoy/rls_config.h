#pragma once

// The configuration of Envoy's rate limit service as envoyproxy/ratelimit reads it: YAML, one
// domain per file, a tree of descriptors each matching one entry of a request's descriptor,
// and rate limits on the nodes. Read by `ratelab-cli serve --rls-config` (app/serve/rls) and
// `ratelab-cli validate`, and by the importer that turns it into ratelab policies.
//
// Every field of the original's format is read with its meaning; what the original's loader
// refuses is an error at FILE:LINE:COLUMN, every one of them at once. The ratelab extensions
// (docs/SERVE.md, "RLS configuration"): inside `rate_limit` a `ratelab:` block choosing an
// engine algorithm and its numbers; `rate_limits:` (a list) for several limits on one
// descriptor; `identity:` on a descriptor naming what its value is (a client address, an
// Authorization header) so that the engine's key rules apply. envoyproxy/ratelimit refuses
// any of them as an unknown key: a file that uses them is ratelab's only.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ratelab/diagnostic.h"
#include "ratelab/policy.h"

namespace ratelab::formats::envoy {

struct Position {
    int line = 0;  ///< 1-based; 0 when unknown
    int column = 0;
};

/// A rate limit's unit. Windows are fixed lengths from the Unix epoch, as in the original: a
/// month is 30 days, a year 365, a week starts on a Thursday (1970-01-01 was one).
enum class RateUnit : std::uint8_t { Second, Minute, Hour, Day, Week, Month, Year };
inline constexpr RateUnit kRateUnits[] = {RateUnit::Second, RateUnit::Minute, RateUnit::Hour,
                                          RateUnit::Day,    RateUnit::Week,   RateUnit::Month,
                                          RateUnit::Year};
/// Seconds in one unit: 1, 60, 3600, 86400, 604800, 2592000, 31536000.
std::int64_t unitSeconds(RateUnit unit);
/// "second", ..., "year".
std::string_view unitName(RateUnit unit);
/// A unit by name, in any letter case, as the original reads it; nullopt for anything else.
std::optional<RateUnit> parseRateUnit(std::string_view name);

/// What a descriptor entry's value is, when a node declares it (`identity:`): the engine then
/// keys on it by its own rules (engine/src/identity) instead of the text.
enum class Identity : std::uint8_t {
    None,
    /// A client address: IPv6 grouped by /64, each /64 counted against its /48 and /32 (the
    /// address budget), IPv4-mapped addresses as IPv4.
    RemoteAddress,
    /// An Authorization header: hashed (SHA-256), and budgeted per client address (the
    /// descriptor's remote_address entry), or service-wide without one.
    Authorization,
};
/// "remote_address", "authorization"; "" for None.
std::string_view identityName(Identity identity);

/// One limit. `policy` is the ratelab policy it runs as, numbers and header style (the key
/// and route fields are unused): the calendar-aligned fixed window of `requestsPerUnit` per
/// unit, or what a `ratelab:` block chose.
struct RateLimitSpec {
    Position at;
    RateUnit unit = RateUnit::Second;
    /// May be 0: every counted hit is over the limit.
    std::uint32_t requestsPerUnit = 0;
    std::string name;       ///< `name`; may be empty
    bool extended = false;  ///< a `ratelab:` block chose the algorithm
    Policy policy;
    /// The `ratelab:` block's on_store_error, when it writes one (with or without an
    /// algorithm); otherwise the service's rule applies.
    std::optional<StoreErrorRule> onStoreError;
};

/// The limits of a node: `rate_limit` (one), `rate_limits` (several, charged together), or
/// `unlimited`.
struct RateRule {
    Position at;
    bool unlimited = false;
    std::vector<RateLimitSpec> limits;  ///< empty iff unlimited
    /// Names of other rules this one removes from a request it matches together with them.
    std::vector<std::string> replaces;
    /// Whether `name` is the name of one of this rule's limits.
    bool named(std::string_view name) const;
};

struct DescriptorNode {
    Position at;
    std::string key;
    std::string value;
    /// `key`, or `key_value` when the value is not empty: what a request entry is matched
    /// against, and what errors and statistics call the node.
    std::string compositeKey;
    bool wildcard = false;  ///< compositeKey holds a '*'
    std::optional<RateRule> rule;
    bool shadowMode = false;
    bool quotaMode = false;
    bool detailedMetric = false;
    bool valueToMetric = false;
    bool shareThreshold = false;
    Identity identity = Identity::None;
    std::vector<DescriptorNode> children;
};

struct DomainConfig {
    std::string file;  ///< the file that declared it (the first one, when merged)
    Position at;       ///< of the `domain` value
    std::string domain;
    std::vector<DescriptorNode> descriptors;
};

/// A whole configuration: every domain of every file.
struct RlsConfig {
    std::vector<DomainConfig> domains;  ///< sorted by domain name
    /// Null when no file declares `domain`.
    const DomainConfig* find(std::string_view domain) const;
};

struct RlsLoadOptions {
    /// Several files may declare one domain, their descriptors merged (the original's
    /// MERGE_DOMAIN_CONFIG); otherwise that is an error.
    bool mergeDomains = false;
};

struct RlsLoadResult {
    std::optional<RlsConfig> config;      ///< set when there is no error (warnings allowed)
    std::vector<Diagnostic> diagnostics;  ///< every problem of every file, in file order
    bool unreadable = false;              ///< a file or the directory could not be read
    bool ok() const { return config.has_value(); }
};

/// One file's text and the name its diagnostics use.
struct RlsSource {
    std::string name;
    std::string text;
};

/// Reads a file, or every `*.yaml` and `*.yml` file of a directory (not its subdirectories,
/// not names starting with '.'), in name order, as one configuration. A directory without
/// such a file is unreadable. Thread-safe.
RlsLoadResult loadRlsConfig(const std::string& path, const RlsLoadOptions& options = {});

/// The same over texts in memory, in the order given. Thread-safe.
RlsLoadResult parseRlsConfig(const std::vector<RlsSource>& sources,
                             const RlsLoadOptions& options = {});

/// Whether a path names this format rather than a ratelab policy file: a directory, or a
/// name ending in .yaml or .yml.
bool isRlsConfigPath(const std::string& path);

/// The original's wildcard match of a config node's composite key against a request entry's
/// `key_value`: each '*' matches any run of characters (none included); no other character is
/// special. Thread-safe.
bool wildcardMatches(std::string_view pattern, std::string_view text);

}  // namespace ratelab::formats::envoy
