#pragma once

// Kong's declarative configuration (kong.yml, YAML or JSON): every rate-limiting plugin becomes
// one fixed-window policy per period (second to month) on the routes it applies to, chosen as
// Kong chooses one plugin configuration per request (the route's, else its service's, else
// the global one), keyed by limit_by, in a set routed "most_specific".

#include <string>
#include <string_view>
#include <vector>

#include "formats/envoy/yaml_tree.h"
#include "formats/import/import_common.h"
#include "formats/import/policy_import.h"

namespace ratelab::formats::kong {

/// The policy file for the declarative configuration `root` (file 0 of `log`) in Kong's
/// semantics (in the loader's fields; none needs fitting), or nullopt when it has errors
/// or no rate limit. Thread-safe.
std::optional<PolicyJson> mapKongConfig(const envoy::YamlNode& root, ImportLog& log);

/// importPolicies for Kong: one declarative configuration file.
ImportResult importKong(const std::vector<std::string>& files);

/// The same on text in memory (tests).
ImportResult importKongText(std::string_view text, const std::string& name);

}  // namespace ratelab::formats::kong
