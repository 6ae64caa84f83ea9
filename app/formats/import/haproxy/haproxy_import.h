#pragma once

// HAProxy stick-table rate limits as ratelab policies: each `http-request deny|tarpit ... if
// { sc_http_req_rate(N) gt X }` (and the scN_/src_ forms, ge, named ACLs) together with the
// track-sc rule that counts for it becomes a policy with HAProxy's own rate counter
// ("haproxy_rate"), keyed as the tracked sample, matching the paths its conditions name, in
// rule order. docs/IMPORT.md says what each keyword becomes.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/import/haproxy/haproxy_config.h"
#include "formats/import/haproxy/haproxy_model.h"
#include "formats/import/import_common.h"
#include "formats/import/policy_import.h"

namespace ratelab::formats::haproxy {

/// The policy file for a configuration read by readHaproxyConfig, in HAProxy's semantics (the
/// haproxy_rate algorithm), or nullopt when it has errors or no rate limit; problems go to
/// `log`. Thread-safe.
std::optional<PolicyJson> mapHaproxyConfig(const HaproxyConfig& config, ImportLog& log);

/// importPolicies for HAProxy: the files in order, as `haproxy -f A -f B`.
ImportResult importHaproxy(const std::vector<std::string>& files);

/// The same on text in memory (fuzzing).
ImportResult importHaproxyText(std::string_view text, const std::string& name);

/// The key a track-sc rule's sample gives in `table`, as a ratelab key; nullopt, with a
/// warning, when no ratelab key says it.
std::optional<PolicyJson> trackedKey(const Sample& sample, SourcePos at, const Table& table,
                                     ImportLog& log);

}  // namespace ratelab::formats::haproxy
