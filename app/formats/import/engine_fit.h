#pragma once

// The importers' policies in the fields the policy loader reads. A mapping writes what the
// product does; the field the engine does not read yet is several limits on one key charged all
// or none (nginx's "limits"). This is the only place that says what it becomes instead, each
// approximation a warning at the source line the policy came from. Routing ("most_specific"),
// key.when_missing, calendar windows, nginx's rate and HAProxy's rate counter ("haproxy_rate",
// count_refused, expire_ms) pass through as written.

#include <vector>

#include "formats/import/import_common.h"

namespace ratelab::formats {

/// `file` (an nginx mapping's policy file) rewritten in the loader's fields; `at[i]` is where
/// policy i came from (its limit_req line). REQUIRES: at.size() == file["policies"].size().
void fitNginxToEngine(PolicyJson& file, const std::vector<SourcePos>& at, ImportLog& log);

}  // namespace ratelab::formats
