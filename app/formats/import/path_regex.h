#pragma once

// Path regular expressions (nginx `location ~`, HAProxy `path_reg`) as ratelab routes, where a
// route can say the same: an expression anchored at the start, made of literal text, whole
// segments of a character class without "/" ("[^/]+", "\d+", "[a-z0-9-]+"), alternatives of
// literal text ("(login|signup)"), and an end: "$" (an exact path or pattern), "/?$", ".*" or
// nothing (the paths that start so: a prefix). Anything else is not a route.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/import/import_common.h"

namespace ratelab::formats {

struct RegexRoutes {
    /// One policy `match` object per alternative ({"path_prefix": ...} or {"path_pattern":
    /// ...}); at most kMaxRegexAlternatives.
    std::vector<PolicyJson> matches;
    /// Where the routes differ from the expression, one sentence each ("\"[0-9]+\" becomes a
    /// whole segment of any text"), for a warning.
    std::vector<std::string> approximations;
};

inline constexpr std::size_t kMaxRegexAlternatives = 16;

/// The routes of `regex` (PCRE syntax; `caseless` for nginx's "~*" and HAProxy's "-i"), or
/// nullopt with the reason in `why` ("it is not anchored at the start (\"^\")").
std::optional<RegexRoutes> routesFromRegex(std::string_view regex, bool caseless, std::string& why);

/// A literal path as ratelab's exact route ({"path_pattern": path}), or nullopt when no pattern
/// can say it ("/", a "*" or an empty segment in the path, or not policy::isValidRoutePath(path)).
std::optional<PolicyJson> exactRoute(std::string_view path);

/// A literal path prefix as ratelab's prefix route. nginx and HAProxy compare prefixes byte by
/// byte ("/api" matches "/apis"), ratelab on a segment boundary ("/api" matches "/api" and
/// "/api/x"): `approximation` says so when that makes a difference (the prefix does not end in
/// "/"), and is left empty otherwise.
/// REQUIRES: policy::isValidRoutePath(prefix), or an empty prefix (which is "/").
PolicyJson prefixRoute(std::string_view prefix, std::string& approximation);

/// A route's text for messages: its prefix or its pattern.
std::string routeText(const PolicyJson& match);

/// A route's text for a policy name: letters, digits and "_", runs of anything else as one
/// "-" ("/api/v1/" gives "api-v1"); empty for "/".
std::string routeSlug(const PolicyJson& match);

/// A path the route matches: the prefix itself, or the pattern with "x" for each wildcard.
std::string samplePath(const PolicyJson& match);

}  // namespace ratelab::formats
