#pragma once

// Traefik's dynamic configuration (the file provider's YAML or TOML): every rateLimit
// middleware a router uses becomes a token-bucket policy (average per period, burst) keyed by
// its sourceCriterion and matching the router's PathPrefix/Path/PathRegexp rules, in a set
// routed "most_specific" (one router serves a request; each router has its own buckets).

#include <string>
#include <string_view>
#include <vector>

#include "formats/envoy/yaml_tree.h"
#include "formats/import/import_common.h"
#include "formats/import/policy_import.h"

namespace ratelab::formats::traefik {

/// The files read into trees, the main file first (YAML, or TOML for a name ending ".toml").
/// Problems go to `log`; `unreadable` is set when a file cannot be opened.
struct TraefikConfig {
    std::vector<envoy::YamlNode> roots;  ///< roots[i] is file i of the log
    bool unreadable = false;
};
TraefikConfig readTraefikFiles(const std::vector<std::string>& files, ImportLog& log);

/// Parses `text` as file `name` (TOML when `toml`) into `config`.
void parseTraefikText(std::string_view text, const std::string& name, bool toml,
                      TraefikConfig& config, ImportLog& log);

/// The policy file (in the loader's fields; Traefik's semantics need no fitting), or nullopt when
/// the files have errors or no rate limit. Thread-safe.
std::optional<PolicyJson> mapTraefikConfig(const TraefikConfig& config, ImportLog& log);

/// importPolicies for Traefik: the files merged, as the file provider merges a directory.
ImportResult importTraefik(const std::vector<std::string>& files);

/// The same on text in memory (the fuzz harness, tests).
ImportResult importTraefikText(std::string_view text, const std::string& name, bool toml);

}  // namespace ratelab::formats::traefik
