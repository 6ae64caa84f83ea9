#pragma once

// Envoy's local rate limit filter (envoy.filters.http.local_ratelimit) in an Envoy bootstrap
// or listener YAML: each HTTP connection manager's filter-level token bucket becomes one policy
// for its whole listener, and each route's or virtual host's typed_per_filter_config bucket one
// policy for that route, in a set routed "most_specific" (a route's own configuration replaces
// the listener's). Envoy refills its bucket continuously (tokens_per_fill per fill_interval),
// which is the engine's token bucket exactly; what is not carried over is warned at its line.

#include <string>
#include <string_view>
#include <vector>

#include "formats/envoy/yaml_tree.h"
#include "formats/import/import_common.h"
#include "formats/import/policy_import.h"

namespace ratelab::formats::envoy_local {

/// The policy file for the Envoy configuration `root` (file 0 of `log`), or nullopt when it
/// has errors or no enabled local rate limit. Thread-safe.
std::optional<PolicyJson> mapEnvoyLocalConfig(const envoy::YamlNode& root, ImportLog& log);

/// importPolicies for envoy-local: one Envoy YAML file.
ImportResult importEnvoyLocal(const std::vector<std::string>& files);

/// The same on text in memory (tests, fuzzing).
ImportResult importEnvoyLocalText(std::string_view text, const std::string& name);

}  // namespace ratelab::formats::envoy_local
