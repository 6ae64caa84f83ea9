#pragma once

// Route paths of a policy: pattern rules and their translation to regular expressions for the
// exports. The matching itself is RouteMatch::matches (engine/src/policy/policy.cpp).

#include <string>
#include <string_view>

#include "ratelab/policy.h"

namespace ratelab::policy {

/// A pattern is one or more non-empty "/"-separated segments; "*" (one segment) and "**" (any
/// number of segments) stand alone in their segment, and "**" appears at most once (each more
/// would multiply the matching work per request). On failure says why in `whyNot`.
bool checkPathPattern(std::string_view pattern, std::string* whyNot);

/// Whether the route is the whole site ("/" prefix, no pattern).
bool matchesEveryPath(const RouteMatch& match);

/// A regular expression (PCRE and RE2 alike) matching the paths `match` matches, anchored at
/// both ends. Literal characters other than [A-Za-z0-9/_-] are written as \xHH, so the result
/// needs no quoting in nginx, HAProxy or YAML. `allowQuery` accepts a trailing "?query", for
/// targets that match the raw request target (Envoy's :path).
std::string pathRegex(const RouteMatch& match, bool allowQuery);

/// The route as a user reads it: the prefix, or the pattern.
std::string_view routeText(const RouteMatch& match);

}  // namespace ratelab::policy
