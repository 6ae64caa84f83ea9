#pragma once

// nginx limit_req as ratelab policies: every limit_req in effect for each location (nginx's
// inheritance: a level with limit_req lines of its own inherits none) becomes a policy with
// nginx's leaky bucket matching that location, in a set routed "most_specific" (one location
// applies, as in nginx). docs/IMPORT.md says what each directive becomes.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/import/import_common.h"
#include "formats/import/nginx/nginx_config.h"
#include "formats/import/policy_import.h"

namespace ratelab::formats::nginx {

/// The policy file for a configuration read by readNginxConfig (or parseNginxText), in nginx's
/// semantics (fitNginxToEngine writes it in the loader's fields), or nullopt when it has errors
/// or no rate limit; problems go to `log`, and each policy's limit_req line to `origins` when
/// given. Thread-safe.
std::optional<PolicyJson> mapNginxConfig(const NginxConfig& config, ImportLog& log,
                                         std::vector<SourcePos>* origins = nullptr);

/// importPolicies for nginx: one main file.
ImportResult importNginx(const std::vector<std::string>& files);

/// The same on text in memory (fuzzing), includes not followed.
ImportResult importNginxText(std::string_view text, const std::string& name);

}  // namespace ratelab::formats::nginx
