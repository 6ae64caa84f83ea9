#pragma once

// envoyproxy/ratelimit's configuration as ratelab policies: the RLS YAML (read by
// formats/envoy, the reader `serve --rls-config` uses) and, when given, the Envoy route
// configuration whose rate_limits actions build the descriptors. Each descriptor path the
// actions can produce and the configuration limits becomes a policy on its route, keyed by the
// request parts its entries carry, with the service's calendar-aligned fixed window.

#include <optional>
#include <string>
#include <vector>

#include "formats/envoy/rls_config.h"
#include "formats/import/envoy_ratelimit/envoy_actions.h"
#include "formats/import/import_common.h"
#include "formats/import/policy_import.h"

namespace ratelab::formats::envoy_ratelimit {

/// What a directory holds for this import: its *.yaml and *.yml files but routes.yaml, in name
/// order, as the RLS configuration, and routes.yaml (when present) as the route configuration.
/// Thread-safe.
struct RatelimitFiles {
    std::vector<std::string> config;
    std::string actions;  ///< "" when the directory has no routes.yaml
};
inline constexpr std::string_view kRoutesFileName = "routes.yaml";
RatelimitFiles ratelimitDirectory(const std::string& directory);

/// The policy file for `config` (its files registered in `log` in the order the sources were
/// read, `routes` read from file `routesFile` of `log`, or null: descriptor keys mapped by their
/// names); nullopt when `log` holds errors.
std::optional<PolicyJson> mapEnvoyRatelimit(const envoy::RlsConfig& config,
                                            const EnvoyRoutes* routes, ImportLog& log);

/// The policy file for the texts: `config` read by the RLS reader, `actions` as the route
/// configuration. REQUIRES: `log` has the sources' names registered, config first, in order.
std::optional<PolicyJson> mapEnvoyRatelimitSources(const std::vector<envoy::RlsSource>& config,
                                                   const std::optional<envoy::RlsSource>& actions,
                                                   ImportLog& log);

/// Reads the configuration files (a directory expands as ratelimitDirectory says) and the
/// route configuration `actions` ("" for none: one file holding both, as the export's stream,
/// is split at its "---" line). Thread-safe.
ImportResult importEnvoyRatelimit(const std::vector<std::string>& files,
                                  const std::string& actions);

/// The same over texts in memory (tests, fuzzing). Thread-safe.
ImportResult importEnvoyRatelimitText(const std::vector<envoy::RlsSource>& config,
                                      const std::optional<envoy::RlsSource>& actions);

}  // namespace ratelab::formats::envoy_ratelimit
