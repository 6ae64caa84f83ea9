// envoyproxy/ratelimit: the service's YAML (one descriptor tree per policy, under a
// generic_key naming the policy) and the Envoy route configuration whose rate_limits actions
// send those descriptors, as one YAML stream of two documents.

#include <algorithm>

#include "formats/envoy/rls_config.h"
#include "formats/export/export_common.h"
#include "formats/export/export_targets.h"
#include "policy/policy_paths.h"

namespace ratelab::formats {

namespace {

constexpr std::string_view kDomain = "ratelab";

std::string quoted(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

// A route as Envoy matches it, with the segment-boundary prefix of the engine: "/api/" is
// Envoy's prefix, "/api" its path_separated_prefix ("/api" and "/api/..." only).
std::string routeMatch(const RouteMatch& m) {
    std::string out;
    if (!m.pathPattern.empty()) {
        if (m.pathPattern.find('*') == std::string::npos) {
            out = "path: " + quoted(m.pathPattern);
        } else {
            // Envoy's URI templates say the engine's patterns: "*" one segment, "**" any.
            out =
                "path_match_policy: {name: envoy.path.match.uri_template.uri_template_matcher, "
                "typed_config: {\"@type\": type.googleapis.com/envoy.extensions.path.match."
                "uri_template.v3.UriTemplateMatchConfig, path_template: " +
                quoted(m.pathPattern) + "}}";
        }
    } else if (m.pathPrefix == "/" || m.pathPrefix.ends_with("/")) {
        out = "prefix: " + quoted(m.pathPrefix);
    } else {
        out = "path_separated_prefix: " + quoted(m.pathPrefix);
    }
    if (!m.methods.empty()) {
        std::string methods;
        for (const std::string& x : m.methods)
            methods += (methods.empty() ? "" : "|") + x;
        out += ", headers: [{name: \":method\", string_match: {safe_regex: {regex: \"^(" + methods +
               ")$\"}}}]";
    }
    return "{" + out + "}";
}

// Whether policy route `outer` admits every request of route `inner` (prefix routes only;
// patterns are compared as equal routes).
bool covers(const RouteMatch& outer, const RouteMatch& inner) {
    if (outer == inner) return true;
    if (!outer.pathPattern.empty()) return false;
    if (!outer.methods.empty()) {
        if (inner.methods.empty()) return false;
        for (const std::string& m : inner.methods) {
            if (std::find(outer.methods.begin(), outer.methods.end(), m) == outer.methods.end())
                return false;
        }
    }
    // The text every path of `inner` starts with: its prefix, or its pattern up to the first
    // wildcard segment; `outer`'s prefix must end on a segment boundary inside it.
    const std::string& p = outer.pathPrefix;
    std::string literal = inner.pathPattern.empty() ? inner.pathPrefix : inner.pathPattern;
    if (const std::size_t star = literal.find('*'); star != std::string::npos) literal.resize(star);
    return literal.starts_with(p) &&
           (p.ends_with("/") || literal.size() == p.size() || literal[p.size()] == '/');
}

// A path of route `r` (wildcards written "x") and a method it takes.
bool matchesSampleOf(const RouteMatch& policy, const RouteMatch& r) {
    std::string path = r.pathPattern.empty() ? r.pathPrefix : r.pathPattern;
    std::replace(path.begin(), path.end(), '*', 'x');
    return policy.matches(r.methods.empty() ? "GET" : r.methods.front(), path);
}

// Longer paths first, patterns before prefixes of the same length, method routes before the
// route without: the order in which Envoy's first match finds the most specific route.
bool moreSpecific(const RouteMatch& a, const RouteMatch& b) {
    const std::string& pa = a.pathPattern.empty() ? a.pathPrefix : a.pathPattern;
    const std::string& pb = b.pathPattern.empty() ? b.pathPrefix : b.pathPattern;
    if (pa.size() != pb.size()) return pa.size() > pb.size();
    if (a.pathPattern.empty() != b.pathPattern.empty()) return !a.pathPattern.empty();
    return !a.methods.empty() && b.methods.empty();
}

struct Written {
    std::string actions;  // one rate_limits entry
    std::string tree;     // the policy's descriptor tree, as a list item at indent 2
};

class EnvoyRatelimitExport final : public Exporter {
public:
    explicit EnvoyRatelimitExport(const PolicySet& set)
        : Exporter(ExportTarget::EnvoyRatelimit, set), written_(set.policies.size()) {}

private:
    std::size_t checkSet() override {
        for (const Policy& p : set_.policies) {
            if (std::find(routes_.begin(), routes_.end(), p.match) == routes_.end())
                routes_.push_back(p.match);
        }
        std::stable_sort(routes_.begin(), routes_.end(), moreSpecific);
        if (!set_.trustedProxies.cidrs.empty())
            notes_.approximateSet("/trusted_proxies",
                                  "Envoy sends the client address its connection manager "
                                  "derives: configure its X-Forwarded-For trust "
                                  "(xff_num_trusted_hops or original_ip_detection_extensions) "
                                  "for the trusted proxies");
        return set_.policies.size();
    }

    void writePolicy(std::size_t i) override {
        const Policy& p = set_.policies[i];
        std::vector<std::string> comments =
            commonChecks(set_, i, notes_,
                         {KeyPart::Kind::Route, KeyPart::Kind::Peer, KeyPart::Kind::Method,
                          KeyPart::Kind::Header});
        if (p.algorithm != Algorithm::FixedWindow) {
            notes_.refuse(i, "/algorithm",
                          "it uses " + std::string(algorithmName(p.algorithm)) +
                              "; the rate limit service counts fixed windows only");
            return;
        }
        if (!p.bypass.cidrs.empty())
            notes_.refuse(i, "/bypass/cidrs",
                          "it exempts address ranges, which the service cannot; give them a "
                          "route without rate_limits instead");
        const RequestNumbers n = requestNumbers(p);
        std::optional<envoy::RateUnit> unit;
        for (envoy::RateUnit u : envoy::kRateUnits) {
            if (envoy::unitSeconds(u) * 1000 == n.windowMs) unit = u;
        }
        if (!unit || p.calendarUnit != CalendarUnit::None) {
            notes_.refuse(i, "/window_ms",
                          "its window is " + std::to_string(n.windowMs) +
                              " ms; the service's windows are a second, minute, hour, day, "
                              "week, 30 days or 365 days from the Unix epoch");
            return;
        }
        if (p.align != WindowAlign::Calendar)
            comments.push_back(notes_.approximate(
                i, "/align",
                "its windows start at each key's first request; the service's start on the "
                "Unix epoch, the same for every key"));
        std::string actions =
            "                - generic_key: {descriptor_value: " + quoted(p.name) + "}\n";
        std::vector<std::string> keys;
        auto peer = [&] {
            actions += "                - masked_remote_address: {v4_prefix_mask_len: " +
                       std::to_string(p.key.ipv4Prefix) +
                       ", v6_prefix_mask_len: " + std::to_string(p.key.ipv6Prefix) + "}\n";
            keys.push_back("masked_remote_address");
        };
        auto header = [&](const std::string& name) {
            actions += "                - request_headers: {header_name: " + quoted(name) +
                       ", descriptor_key: " + quoted(name) + "}\n";
            keys.push_back(name);
        };
        switch (p.key.source) {
            case KeySource::Default:
            case KeySource::Peer:
                peer();
                break;
            case KeySource::Header:
                header(p.key.header);
                break;
            case KeySource::Composite:
                for (const KeyPart& part : p.key.parts) {
                    if (part.kind == KeyPart::Kind::Peer) peer();
                    if (part.kind == KeyPart::Kind::Header) header(part.name);
                    if (part.kind == KeyPart::Kind::Method) header(":method");
                }
                break;
            case KeySource::Principal:
                return;
        }
        if ((p.key.source == KeySource::Header || p.key.source == KeySource::Composite) &&
            p.key.whenMissing != WhenMissing::Skip && !keys.empty())
            comments.push_back(notes_.approximate(
                i, "/key/when_missing",
                "Envoy sends no descriptor for a request without the key's header, so the "
                "service does not count it; the engine " +
                    std::string(p.key.whenMissing == WhenMissing::Refuse
                                    ? "refuses it (412)"
                                    : "counts it by its address or in one shared bucket")));
        std::string tree = "  - key: generic_key\n    value: " + quoted(p.name) + "\n";
        std::string indent = "    ";
        for (const std::string& k : keys) {
            tree += indent + "descriptors:\n" + indent + "  - key: " + quoted(k) + "\n";
            indent += "    ";
        }
        if (p.mode == PolicyMode::Shadow) tree += indent + "shadow_mode: true\n";
        tree += indent + "rate_limit: {unit: " + std::string(envoy::unitName(*unit)) +
                ", requests_per_unit: " + std::to_string(n.atOnce) + "}\n";
        if (set_.routing == Routing::All) {
            for (const RouteMatch& r : routes_) {
                if (!covers(p.match, r) && matchesSampleOf(p.match, r))
                    comments.push_back(notes_.approximate(
                        i, "/match",
                        "Envoy sends the requests of route " + std::string(policy::routeText(r)) +
                            " that this policy also matches to that route, which does not "
                            "send this policy's descriptor: they are not counted"));
            }
        }
        std::string comment = "  # Policy " + p.name + ": " + describe(p) + "\n";
        for (const std::string& c : comments)
            comment += commentLines("  #   approximated: ", c, "  #     ");
        written_[i] = Written{"              - actions:\n" + actions, comment + tree};
    }

    std::string text() const override {
        std::string rls = preamble(
            "envoyproxy/ratelimit's configuration (this document) and, after the \"---\" line, "
            "the HTTP connection manager's filters and route configuration whose rate_limits "
            "actions send the descriptors it limits. `ratelab-cli export -o DIR` writes them "
            "as DIR/ratelimit.yaml (for the service's runtime directory) and DIR/routes.yaml; "
            "`ratelab-cli import --from envoy-ratelimit DIR` reads them back. The routes send "
            "to a cluster named \"backend\": name yours.",
            "Not expressible in the rate limit service: algorithms other than the fixed "
            "window, windows other than its units, budgets, verified principals and "
            "attributes, response header styles (Envoy's X-RateLimit headers are its own), "
            "on_store_error and store_timeout_ms (Envoy's failure_mode_deny decides).");
        rls += "domain: " + std::string(kDomain) + "\ndescriptors:\n";
        for (const Written& w : written_)
            rls += w.tree;

        const std::vector<RouteMatch>& routes = routes_;
        std::string out = rls + "---\n";
        out += "# The HTTP connection manager's http_filters and route_config (Envoy v3).\n";
        out += "http_filters:\n";
        out += "  - name: envoy.filters.http.ratelimit\n    typed_config:\n";
        out +=
            "      \"@type\": type.googleapis.com/envoy.extensions.filters.http.ratelimit."
            "v3.RateLimit\n";
        out += "      domain: " + std::string(kDomain) + "\n";
        out += "      rate_limit_service:\n";
        out += "        grpc_service: {envoy_grpc: {cluster_name: ratelimit}}\n";
        out += "        transport_api_version: V3\n";
        out += "  - name: envoy.filters.http.router\n";
        out +=
            "    typed_config: {\"@type\": type.googleapis.com/envoy.extensions.filters.http."
            "router.v3.Router}\n";
        out += "route_config:\n  name: ratelab\n  virtual_hosts:\n";
        out += "    - name: ratelab\n      domains: [\"*\"]\n      routes:\n";
        bool everyPath = false;
        for (const RouteMatch& r : routes) {
            out += "        - match: " + routeMatch(r) + "\n";
            out += "          route:\n            cluster: backend\n";
            std::string limits;
            for (std::size_t i = 0; i < set_.policies.size(); ++i) {
                const RouteMatch& m = set_.policies[i].match;
                const bool applies = set_.routing == Routing::MostSpecific ? m == r : covers(m, r);
                if (applies) limits += written_[i].actions;
            }
            if (!limits.empty()) out += "            rate_limits:\n" + limits;
            if (policy::matchesEveryPath(r) && r.methods.empty()) everyPath = true;
        }
        if (!everyPath)
            out +=
                "        - match: {prefix: \"/\"}\n          route:\n            cluster: "
                "backend\n";
        return out;
    }

    std::vector<Written> written_;
    std::vector<RouteMatch> routes_;  // one per distinct policy route, most specific first
};

}  // namespace

ExportResult exportEnvoyRatelimit(const PolicySet& set) {
    return EnvoyRatelimitExport(set).run();
}

std::pair<std::string, std::string> splitEnvoyRatelimitExport(const std::string& text) {
    const std::size_t at = text.find("\n---\n");
    if (at == std::string::npos) return {text, ""};
    return {text.substr(0, at + 1), text.substr(at + 5)};
}

}  // namespace ratelab::formats
