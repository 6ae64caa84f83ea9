#pragma once

// The path a policy is matched against, from a request-target or a proxy's copy of one
// (X-Original-URI, X-Forwarded-Uri). Proxies route on the normalised path, so the decision must
// see that same path: otherwise "/./login", "//login" or "/%6cogin" would reach the login
// location without matching the login policy.

#include <string>
#include <string_view>

namespace ratelab::serve {

/// Writes into `out` the path of `target` as nginx routes it: the query and fragment cut off,
/// percent-escapes decoded (those that decode to a byte above 0x7f, to '%', '?' or '#' stay
/// escaped, in upper case, so the path stays ASCII and normalises to itself), dot segments removed (RFC 3986 5.2.4, never above the root) and
/// runs of slashes merged. An absolute-form target ("http://host/x") gives its path; "*" stays
/// "*". Returns false, with the reason in *whyNot, for a target that is not a path, a malformed
/// escape, or one that decodes to a control character.
bool normalizedPath(std::string_view target, std::string& out, std::string_view* whyNot);

}  // namespace ratelab::serve
