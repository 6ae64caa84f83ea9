// Envoy's route configuration: the virtual hosts, their routes and the rate_limits actions.

#include "formats/import/envoy_ratelimit/envoy_actions.h"

#include <algorithm>

#include "formats/import/path_regex.h"
#include "policy/policy_names.h"
#include "policy/policy_paths.h"

namespace ratelab::formats::envoy_ratelimit {

using envoy::mapField;
using envoy::scalarText;
using envoy::YamlNode;

namespace {

// The text a string matcher compares with, and how: "exact", "prefix", "regex"; "" otherwise.
// Reads both the deprecated fields (exact_match, safe_regex_match) and string_match.
std::pair<std::string, std::string> stringMatch(const YamlNode& matcher) {
    const YamlNode* m = mapField(&matcher, "string_match");
    const YamlNode* in = m ? m : &matcher;
    if (const YamlNode* e = mapField(in, m ? "exact" : "exact_match"))
        return {"exact", scalarText(e)};
    if (const YamlNode* p = mapField(in, m ? "prefix" : "prefix_match"))
        return {"prefix", scalarText(p)};
    if (const YamlNode* r = mapField(in, m ? "safe_regex" : "safe_regex_match"))
        return {"regex", scalarText(mapField(r, "regex"))};
    return {"", ""};
}

// The methods a `:method` matcher admits: "GET", or a regex "^(GET|HEAD)$"; empty when the
// matcher says something else.
std::vector<std::string> methodsOf(const YamlNode& matcher) {
    auto [how, value] = stringMatch(matcher);
    if (mapField(&matcher, "invert_match") &&
        envoy::scalarBool(*mapField(&matcher, "invert_match")))
        return {};
    if (how == "regex") {
        if (value.starts_with("^")) value.erase(0, 1);
        if (value.ends_with("$")) value.pop_back();
        if (value.starts_with("(") && value.ends_with(")"))
            value = value.substr(1, value.size() - 2);
    } else if (how != "exact") {
        return {};
    }
    std::vector<std::string> out;
    std::size_t start = 0;
    for (std::size_t bar; start <= value.size(); start = bar + 1) {
        bar = value.find('|', start);
        if (bar == std::string::npos) bar = value.size();
        std::string method = value.substr(start, bar - start);
        const bool letters =
            !method.empty() && method.size() <= 32 &&
            std::all_of(method.begin(), method.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
        if (!letters) return {};
        out.push_back(method);
    }
    return out;
}

class Reader {
public:
    Reader(int file, ImportLog& log) : file_(file), log_(log) {}

    EnvoyRoutes read(const YamlNode& root) {
        walk(root, 0);
        if (!sawVirtualHost_) {
            if (mapField(&root, "routes") || mapField(&root, "rate_limits")) {
                readVirtualHost(root);
            } else {
                log_.error(SourcePos{file_, 1, 1},
                           "no virtual_hosts, routes or rate_limits: not an Envoy route "
                           "configuration");
            }
        }
        return std::move(out_);
    }

private:
    SourcePos pos(const YamlNode& n) const { return SourcePos{file_, n.at.line, n.at.column}; }

    void walk(const YamlNode& node, int depth) {
        if (depth > envoy::kMaxYamlDepth) return;
        if (node.isSequence()) {
            for (const YamlNode& item : node.items)
                walk(item, depth + 1);
            return;
        }
        if (!node.isMap()) return;
        if (const YamlNode* d = mapField(&node, "domain");
            d && mapField(&node, "rate_limit_service")) {
            if (!out_.domain.empty() && out_.domain != scalarText(d))
                log_.warning(pos(*d), "a second rate limit filter with domain \"" + scalarText(d) +
                                          "\"; the import reads domain \"" + out_.domain + "\"");
            if (out_.domain.empty()) {
                out_.domain = scalarText(d);
                out_.domainAt = pos(*d);
            }
        }
        for (const auto& [k, v] : node.entries) {
            if (k.text == "virtual_hosts" && v.isSequence()) {
                sawVirtualHost_ = true;
                for (const YamlNode& host : v.items)
                    readVirtualHost(host);
            } else {
                walk(v, depth + 1);
            }
        }
    }

    void readVirtualHost(const YamlNode& host) {
        std::vector<RateLimitEntry> hostLimits = readRateLimits(mapField(&host, "rate_limits"));
        const YamlNode* routes = mapField(&host, "routes");
        if (!routes || !routes->isSequence()) {
            if (!hostLimits.empty()) {
                EnvoyRoute all;
                all.at = pos(host);
                all.name = "route" + std::to_string(out_.routes.size() + 1);
                all.match = PolicyJson{{"path_prefix", "/"}};
                all.limits = std::move(hostLimits);
                out_.routes.push_back(std::move(all));
            }
            return;
        }
        for (const YamlNode& r : routes->items) {
            EnvoyRoute route;
            route.at = pos(r);
            route.name = scalarText(mapField(&r, "name"));
            if (route.name.empty()) route.name = "route" + std::to_string(out_.routes.size() + 1);
            route.match = readMatch(mapField(&r, "match"), route);
            const YamlNode* action = mapField(&r, "route");
            route.cluster = scalarText(mapField(action, "cluster"));
            route.limits = readRateLimits(mapField(action, "rate_limits"));
            const YamlNode* include = mapField(action, "include_vh_rate_limits");
            if (route.limits.empty() || (include && envoy::scalarBool(*include).value_or(false)))
                route.limits.insert(route.limits.end(), hostLimits.begin(), hostLimits.end());
            out_.routes.push_back(std::move(route));
        }
    }

    PolicyJson readMatch(const YamlNode* match, const EnvoyRoute& route) {
        if (!match || !match->isMap()) {
            log_.error(route.at, "route \"" + route.name + "\": no match");
            return nullptr;
        }
        PolicyJson out;
        std::string approximation;
        if (const YamlNode* p = mapField(match, "prefix")) {
            const std::string prefix = scalarText(p);
            if (!prefix.empty() && !policy::isValidRoutePath(prefix)) {
                log_.warning(pos(*p), "prefix \"" + prefix + "\" is not a path: not carried");
                return nullptr;
            }
            out = prefixRoute(prefix, approximation);
            if (!approximation.empty()) log_.warning(pos(*p), "Envoy's " + approximation);
        } else if (const YamlNode* s = mapField(match, "path_separated_prefix")) {
            if (!policy::isValidRoutePath(scalarText(s))) {
                log_.warning(pos(*s),
                             "path_separated_prefix \"" + scalarText(s) + "\": not carried");
                return nullptr;
            }
            out = prefixRoute(scalarText(s), approximation);
        } else if (const YamlNode* x = mapField(match, "path")) {
            std::optional<PolicyJson> exact = exactRoute(scalarText(x));
            if (!exact) {
                log_.warning(pos(*x),
                             "path \"" + scalarText(x) + "\" cannot be a route: not carried");
                return nullptr;
            }
            out = *exact;
        } else if (const YamlNode* t =
                       mapField(mapField(mapField(match, "path_match_policy"), "typed_config"),
                                "path_template")) {
            // A URI template ("*" one segment, "**" any) is the engine's path pattern.
            std::string why;
            if (!policy::checkPathPattern(scalarText(t), &why)) {
                log_.warning(pos(*t),
                             "path_template \"" + scalarText(t) + "\": " + why + "; not carried");
                return nullptr;
            }
            out = PolicyJson{{"path_pattern", scalarText(t)}};
        } else if (const YamlNode* r = mapField(match, "safe_regex")) {
            // Envoy matches the whole path: the expression is anchored at both ends.
            std::string regex = scalarText(mapField(r, "regex"));
            if (regex.starts_with("^")) regex.erase(0, 1);
            if (!regex.ends_with("$")) regex += "$";
            std::string why;
            std::optional<RegexRoutes> routes = routesFromRegex("^" + regex, false, why);
            if (!routes || routes->matches.size() != 1) {
                log_.warning(pos(*r), "safe_regex \"" + scalarText(mapField(r, "regex")) + "\": " +
                                          (routes ? "several routes" : why) + "; not carried");
                return nullptr;
            }
            for (const std::string& a : routes->approximations)
                log_.warning(pos(*r), "safe_regex: " + a);
            out = routes->matches.front();
        } else {
            log_.warning(pos(*match), "route \"" + route.name +
                                          "\": only prefix, path, path_separated_prefix and "
                                          "safe_regex matches are carried; not carried");
            return nullptr;
        }
        if (const YamlNode* c = mapField(match, "case_sensitive");
            c && envoy::scalarBool(*c) == false)
            log_.warning(pos(*c), "case_sensitive false: the engine compares paths exactly");
        if (const YamlNode* headers = mapField(match, "headers");
            headers && headers->isSequence()) {
            for (const YamlNode& h : headers->items) {
                std::vector<std::string> methods;
                if (scalarText(mapField(&h, "name")) == ":method") methods = methodsOf(h);
                if (methods.empty()) {
                    log_.warning(pos(h), "route \"" + route.name + "\" matches header \"" +
                                             scalarText(mapField(&h, "name")) +
                                             "\", which a policy cannot: its policies apply "
                                             "whatever the header says");
                } else {
                    out["methods"] = methods;
                }
            }
        }
        for (const char* other : {"query_parameters", "grpc", "runtime_fraction", "tls_context"}) {
            if (const YamlNode* n = mapField(match, other))
                log_.warning(pos(*n), std::string("route match ") + other +
                                          " is not carried: the policies apply whatever it says");
        }
        return out;
    }

    std::vector<RateLimitEntry> readRateLimits(const YamlNode* list) {
        std::vector<RateLimitEntry> out;
        if (!list) return out;
        if (!list->isSequence()) {
            log_.error(pos(*list), "rate_limits: expected a list");
            return out;
        }
        for (const YamlNode& entry : list->items) {
            RateLimitEntry e;
            e.at = pos(entry);
            for (const char* ignored : {"stage", "disable_key", "limit", "hits_addend"}) {
                if (const YamlNode* n = mapField(&entry, ignored))
                    log_.warning(pos(*n), std::string(ignored) +
                                              " is not carried: the engine charges 1 per "
                                              "request with the configured limits");
            }
            const YamlNode* actions = mapField(&entry, "actions");
            if (!actions || !actions->isSequence() || actions->items.empty()) {
                log_.error(e.at, "a rate_limits entry needs a list of actions");
                continue;
            }
            bool ok = true;
            for (const YamlNode& a : actions->items)
                ok = readAction(a, e) && ok;
            if (ok) out.push_back(std::move(e));
        }
        return out;
    }

    // Appends the action `node` says; false (an error logged, or a warning for an action the
    // import cannot follow) when the entry cannot be imported.
    bool readAction(const YamlNode& node, RateLimitEntry& entry) {
        if (!node.isMap() || node.entries.size() != 1) {
            log_.error(pos(node), "an action is a map with one action, e.g. {remote_address: {}}");
            return false;
        }
        const std::string name = node.entries.front().key.text;
        const YamlNode& body = node.entries.front().value;
        Action a;
        a.at = pos(node);
        auto keyOr = [&](std::string fallback) {
            const std::string key = scalarText(mapField(&body, "descriptor_key"));
            return key.empty() ? fallback : key;
        };
        if (name == "remote_address") {
            a.kind = Action::Kind::RemoteAddress;
            a.key = "remote_address";
        } else if (name == "masked_remote_address") {
            a.kind = Action::Kind::MaskedRemoteAddress;
            a.key = "masked_remote_address";
            const std::optional<std::int64_t> v4 =
                mapField(&body, "v4_prefix_mask_len")
                    ? envoy::scalarInt(*mapField(&body, "v4_prefix_mask_len"))
                    : std::optional<std::int64_t>(32);
            const std::optional<std::int64_t> v6 =
                mapField(&body, "v6_prefix_mask_len")
                    ? envoy::scalarInt(*mapField(&body, "v6_prefix_mask_len"))
                    : std::optional<std::int64_t>(128);
            if (!v4 || *v4 < 1 || *v4 > 32 || !v6 || *v6 < 1 || *v6 > 128) {
                log_.error(a.at,
                           "masked_remote_address: v4_prefix_mask_len is 1 to 32 and "
                           "v6_prefix_mask_len 1 to 128");
                return false;
            }
            a.ipv4Prefix = static_cast<int>(*v4);
            a.ipv6Prefix = static_cast<int>(*v6);
        } else if (name == "request_headers") {
            a.kind = Action::Kind::RequestHeaders;
            a.header = scalarText(mapField(&body, "header_name"));
            a.key = scalarText(mapField(&body, "descriptor_key"));
            if (!isHeaderName(a.header) || a.key.empty()) {
                log_.error(a.at, "request_headers needs a header_name and a descriptor_key");
                return false;
            }
            if (const YamlNode* s = mapField(&body, "skip_if_absent"))
                a.skipIfAbsent = envoy::scalarBool(*s).value_or(false);
        } else if (name == "generic_key") {
            a.kind = Action::Kind::GenericKey;
            a.key = keyOr("generic_key");
            a.value = scalarText(mapField(&body, "descriptor_value"));
            if (a.value.empty()) {
                log_.error(a.at, "generic_key needs a descriptor_value");
                return false;
            }
        } else if (name == "header_value_match") {
            a.kind = Action::Kind::HeaderValueMatch;
            a.key = keyOr("header_match");
            a.value = scalarText(mapField(&body, "descriptor_value"));
            const YamlNode* headers = mapField(&body, "headers");
            if (a.value.empty() || !headers || !headers->isSequence() || headers->items.empty()) {
                log_.error(a.at, "header_value_match needs a descriptor_value and headers");
                return false;
            }
            const YamlNode* expect = mapField(&body, "expect_match");
            const bool expectMatch = !expect || envoy::scalarBool(*expect).value_or(true);
            for (const YamlNode& h : headers->items) {
                std::vector<std::string> methods;
                if (expectMatch && scalarText(mapField(&h, "name")) == ":method")
                    methods = methodsOf(h);
                if (methods.empty()) {
                    a.otherHeaders = true;
                } else {
                    a.methods = methods;
                }
            }
            if (a.otherHeaders)
                log_.warning(a.at,
                             "header_value_match: Envoy appends (" + a.key + ", " + a.value +
                                 ") only when the headers " +
                                 (expectMatch ? "match" : "do not match") +
                                 ", which a policy cannot check; the import takes it as always "
                                 "appended (the limit applies to every request of the route)");
        } else if (name == "destination_cluster") {
            a.kind = Action::Kind::DestinationCluster;
            a.key = "destination_cluster";
        } else if (name == "source_cluster") {
            a.kind = Action::Kind::SourceCluster;
            a.key = "source_cluster";
            log_.warning(a.at,
                         "source_cluster is Envoy's own --service-cluster, which the file does "
                         "not say; the import takes it as whichever value the RLS "
                         "configuration names");
        } else {
            log_.warning(a.at, "action " + name +
                                   " is not carried (the import reads remote_address, "
                                   "masked_remote_address, request_headers, generic_key, "
                                   "header_value_match, destination_cluster and source_cluster); "
                                   "this rate_limits entry is not imported");
            return false;
        }
        entry.actions.push_back(std::move(a));
        return true;
    }

    int file_;
    ImportLog& log_;
    EnvoyRoutes out_;
    bool sawVirtualHost_ = false;
};

}  // namespace

EnvoyRoutes readEnvoyRoutes(const YamlNode& root, int file, ImportLog& log) {
    EnvoyRoutes routes = Reader(file, log).read(root);
    for (EnvoyRoute& r : routes.routes) {
        for (RateLimitEntry& e : r.limits) {
            for (Action& a : e.actions) {
                if (a.kind == Action::Kind::DestinationCluster) {
                    a.value = r.cluster;
                    if (r.cluster.empty())
                        log.warning(a.at, "destination_cluster: route \"" + r.name +
                                              "\" names no single cluster; the import takes "
                                              "it as whichever value the RLS configuration names");
                }
            }
        }
    }
    return routes;
}

}  // namespace ratelab::formats::envoy_ratelimit
