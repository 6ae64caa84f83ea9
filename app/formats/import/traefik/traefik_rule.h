#pragma once

// Traefik's router rules (`Host(`a`) && PathPrefix(`/api`)`): the expression grammar, and the
// routes ratelab can say for it.

#include <string>
#include <string_view>
#include <vector>

#include "formats/import/import_common.h"

namespace ratelab::formats::traefik {

/// One matcher of a rule: `PathPrefix(`/api`)`, possibly negated.
struct Matcher {
    std::string name;  ///< as written (Traefik accepts PathPrefix, pathprefix, PATHPREFIX, ...)
    std::vector<std::string> args;
    bool negated = false;
};

/// A rule as alternatives (OR) of conjunctions (AND) of matchers: `a && (b || c)` is
/// {{a, b}, {a, c}}. Negation applies to single matchers only (`!(a || b)` is refused).
struct Rule {
    std::vector<std::vector<Matcher>> alternatives;
};

/// Parses `text`; false with the reason and the byte offset in `error` and `errorOffset`.
bool parseRule(std::string_view text, Rule& out, std::string& error, std::size_t& errorOffset);

/// The routes a rule's requests take, one per alternative and path matcher; what a route cannot
/// say (hosts, headers, queries, negations, regular expressions no pattern says) goes to
/// `notes`, one sentence each. Empty when no alternative can be routed.
std::vector<PolicyJson> routesOfRule(const Rule& rule, std::vector<std::string>& notes);

}  // namespace ratelab::formats::traefik
