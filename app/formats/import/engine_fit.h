#pragma once

// The importers' policies in the fields the policy loader reads. A mapping writes what the
// product does: a set routed "most_specific" (one location's or route's limits apply, not every
// matching policy's), several limits on one key charged all or none ("limits"), what a request
// without the key's header gets (key.when_missing) and HAProxy's rate counter ("haproxy_rate",
// count_refused, expire_ms). The engine reads none of these fields yet; these functions, one
// per product, are the only place that says what each becomes instead, each approximation a
// warning at the source line the policy came from.

#include <vector>

#include "formats/import/import_common.h"

namespace ratelab::formats {

/// `file` (an nginx mapping's policy file) rewritten in the loader's fields; `at[i]` is where
/// policy i came from (its limit_req line). REQUIRES: at.size() == file["policies"].size().
void fitNginxToEngine(PolicyJson& file, const std::vector<SourcePos>& at, ImportLog& log);

/// `file` (an HAProxy mapping's policy file) rewritten in the loader's fields; `at[i]` is where
/// policy i came from (its deny rule). REQUIRES: at.size() == file["policies"].size().
void fitHaproxyToEngine(PolicyJson& file, const std::vector<SourcePos>& at, ImportLog& log);

/// `file` (a Traefik mapping's policy file) rewritten in the loader's fields; `at[i]` is where
/// policy i came from (its rateLimit middleware). REQUIRES: at.size() == file["policies"].size().
void fitTraefikToEngine(PolicyJson& file, const std::vector<SourcePos>& at, ImportLog& log);

/// `file` (a Kong mapping's policy file) rewritten in the loader's fields; `at[i]` is where
/// policy i came from (its plugin). REQUIRES: at.size() == file["policies"].size().
void fitKongToEngine(PolicyJson& file, const std::vector<SourcePos>& at, ImportLog& log);

/// `file` (an Envoy local rate limit mapping's policy file) rewritten in the loader's fields;
/// `at[i]` is where policy i came from (its filter or per-route configuration).
/// REQUIRES: at.size() == file["policies"].size().
void fitEnvoyLocalToEngine(PolicyJson& file, const std::vector<SourcePos>& at, ImportLog& log);

}  // namespace ratelab::formats
