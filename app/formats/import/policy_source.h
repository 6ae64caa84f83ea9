#pragma once

// A policy argument as every command and the service take it: a policy file's path, or
// "KIND:PATH" to import another product's configuration on the fly (`--policy nginx:PATH`).
// envoy-ratelimit takes "envoy-ratelimit:CONFIG.yaml+ROUTES.yaml" (the RLS configuration and
// the Envoy route configuration with the rate_limits actions), or a directory holding the RLS
// configuration files and routes.yaml.

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "formats/import/policy_import.h"
#include "ratelab/policy_file.h"

namespace ratelab::formats {

/// The kind and path of a "KIND:PATH" argument, KIND an importKindName; nullopt for anything
/// else (a policy file's path, which may hold ':' itself). Thread-safe.
std::optional<std::pair<ImportKind, std::string>> splitImportArgument(std::string_view argument);

/// Loads `argument`: "KIND:PATH" imported (the import's warnings and errors as the load's
/// diagnostics, `unreadable` when PATH cannot be read), else the policy file at that path, as
/// loadPolicyFile. An imported set has no source map (its positions are the import's files).
/// Thread-safe.
PolicyLoadResult loadPolicySource(const std::string& argument,
                                  const PolicyCheckOptions& options = {});

}  // namespace ratelab::formats
