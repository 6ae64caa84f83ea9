// envoyproxy/ratelimit's descriptors, with the route actions that build them, as policies.

#include "formats/import/envoy_ratelimit/envoy_rls_import.h"

#include <algorithm>
#include <set>

#include "formats/import/envoy_ratelimit/rls_descriptors.h"
#include "formats/import/path_regex.h"
#include "ratelab/policy_file.h"

namespace ratelab::formats::envoy_ratelimit {

using envoy::DescriptorNode;
using envoy::DomainConfig;
using envoy::RateLimitSpec;

namespace {

// Most request headers with skip_if_absent in one rate_limits entry whose presence and absence
// are imported as separate descriptors (2^N of them).
constexpr int kMaxOptionalHeaders = 4;

// What a descriptor key means when no route configuration says how Envoy builds it: the
// actions' own default keys; any other key is read as a request header of that name.
DescriptorEntry entryByName(const DescriptorNode& node) {
    DescriptorEntry e;
    e.key = node.key;
    if (node.key == "remote_address" || node.key == "masked_remote_address") {
        e.what = "the client address";
        return e;
    }
    for (const char* constant :
         {"generic_key", "header_match", "destination_cluster", "source_cluster", "query_match"}) {
        if (node.key == constant) {
            e.value = node.value;
            return e;
        }
    }
    e.part.kind = KeyPartSpec::Kind::Header;
    e.part.header = node.key;
    e.what = "header " + node.key;
    return e;
}

class Mapper {
public:
    Mapper(const envoy::RlsConfig& config, ImportLog& log) : config_(config), log_(log) {}

    std::optional<PolicyJson> map(const EnvoyRoutes* routes) {
        if (routes) {
            const DomainConfig* domain = chooseDomain(*routes);
            if (!domain) return std::nullopt;
            for (const EnvoyRoute& r : routes->routes)
                mapRoute(*domain, r, *routes);
            writeUses(routes->routes);
        } else {
            for (const DomainConfig& d : config_.domains)
                mapByName(d);
        }
        if (log_.hasErrors()) return std::nullopt;
        if (policies_.empty()) {
            log_.error(SourcePos{0, 0, 0},
                       routes ? "no rate limit: no descriptor the route actions build reaches a "
                                "limit of the configuration"
                              : "no rate limit: no descriptor of the configuration has a limit "
                                "that can be imported");
            return std::nullopt;
        }
        PolicyJson file{{"version", 1}};
        if (routes && !shared_) file["routing"] = "most_specific";
        file["policies"] = std::move(policies_);
        return file;
    }

private:
    int fileOf(const DomainConfig& d) const {
        const std::vector<std::string>& files = log_.files();
        auto it = std::find(files.begin(), files.end(), d.file);
        return it == files.end() ? 0 : static_cast<int>(it - files.begin());
    }
    SourcePos pos(const DomainConfig& d, envoy::Position p) const {
        return SourcePos{fileOf(d), p.line, p.column};
    }

    const DomainConfig* chooseDomain(const EnvoyRoutes& routes) {
        if (!routes.domain.empty()) {
            if (const DomainConfig* d = config_.find(routes.domain)) return d;
            log_.error(routes.domainAt, "the rate limit filter's domain \"" + routes.domain +
                                            "\" is not in the RLS configuration");
            return nullptr;
        }
        if (config_.domains.size() == 1) return &config_.domains.front();
        log_.error(SourcePos{static_cast<int>(log_.files().size()) - 1, 1, 1},
                   "the RLS configuration has several domains and the route configuration has "
                   "no rate limit filter (envoy.filters.http.ratelimit) naming one");
        return nullptr;
    }

    // The descriptors one rate_limits entry can send: every header with skip_if_absent sent
    // or not.
    std::vector<std::vector<DescriptorEntry>> descriptorsOf(const RateLimitEntry& e,
                                                            std::vector<std::string>& methods) {
        std::vector<DescriptorEntry> all;
        std::vector<std::size_t> optional;
        for (const Action& a : e.actions) {
            DescriptorEntry d;
            d.key = a.key;
            switch (a.kind) {
                case Action::Kind::RemoteAddress:
                case Action::Kind::MaskedRemoteAddress:
                    d.part.ipv4Prefix = a.ipv4Prefix;
                    d.part.ipv6Prefix = a.ipv6Prefix;
                    d.what = "the client address";
                    break;
                case Action::Kind::RequestHeaders:
                    d.part.kind = KeyPartSpec::Kind::Header;
                    d.part.header = a.header;
                    d.what = "header " + a.header;
                    if (a.skipIfAbsent) optional.push_back(all.size());
                    break;
                case Action::Kind::HeaderValueMatch:
                    if (!a.methods.empty()) methods = a.methods;
                    d.value = a.value;
                    break;
                default:
                    d.value = a.value;
                    break;
            }
            all.push_back(std::move(d));
        }
        if (optional.size() > static_cast<std::size_t>(kMaxOptionalHeaders)) {
            log_.warning(e.at, "more than " + std::to_string(kMaxOptionalHeaders) +
                                   " headers with skip_if_absent: the import reads only the "
                                   "descriptor with every header sent");
            optional.clear();
        }
        std::vector<std::vector<DescriptorEntry>> out;
        for (std::size_t mask = 0; mask < (std::size_t{1} << optional.size()); ++mask) {
            std::vector<DescriptorEntry> d;
            for (std::size_t i = 0; i < all.size(); ++i) {
                auto o = std::find(optional.begin(), optional.end(), i);
                if (o != optional.end() && (mask >> (o - optional.begin())) & 1) continue;
                d.push_back(all[i]);
            }
            out.push_back(std::move(d));
        }
        return out;
    }

    void mapRoute(const DomainConfig& domain, const EnvoyRoute& r, const EnvoyRoutes& routes) {
        if (r.match.is_null()) return;
        warnUnreachable(r, routes);
        struct Found {
            DescriptorMatch match;
            const RateLimitEntry* entry;
            std::vector<std::string> methods;
            bool omitsHeaders;
        };
        std::vector<Found> found;
        for (const RateLimitEntry& e : r.limits) {
            std::vector<std::string> methods;
            const std::vector<std::vector<DescriptorEntry>> options = descriptorsOf(e, methods);
            for (const std::vector<DescriptorEntry>& d : options) {
                std::optional<DescriptorMatch> m =
                    matchDescriptor(domain.descriptors, d, fileOf(domain), log_);
                if (m) found.push_back({*m, &e, methods, d.size() < e.actions.size()});
            }
        }
        // replaces: a rule named N is dropped from a request that also matches a rule
        // replacing N; the import drops it from the route.
        std::set<std::string> replaced;
        for (const Found& f : found) {
            for (const std::string& n : f.match.node->rule->replaces) {
                replaced.insert(n);
                log_.warning(
                    pos(domain, f.match.node->rule->at),
                    "replaces \"" + n +
                        "\": the RLS drops that rule from a request "
                        "that also sends this descriptor; the import drops it from route \"" +
                        r.name + "\" altogether");
            }
        }
        std::size_t written = 0;
        std::size_t order = 0;
        for (const Found& f : found) {
            const envoy::RateRule& rule = *f.match.node->rule;
            if (std::any_of(replaced.begin(), replaced.end(),
                            [&](const std::string& n) { return rule.named(n); }))
                continue;
            if (f.omitsHeaders)
                log_.warning(f.entry->at,
                             "a descriptor without a header that has "
                             "skip_if_absent is sent only when the header is "
                             "absent; its policy applies to every request of the "
                             "route");
            PolicyJson match = r.match;
            if (!f.methods.empty() && !match.contains("methods")) match["methods"] = f.methods;
            if (!rule.unlimited) ++written;
            uses_.push_back(
                Use{&domain, f.match, &r, std::move(match), f.methods, f.entry->at, order++});
        }
        if (written > 1)
            log_.warning(r.at,
                         "the RLS counts every descriptor of a request, refused or not; "
                         "the engine charges the route's policies in order and stops at "
                         "the first that refuses, so the later ones do not count that "
                         "request");
    }

    // Whether route `inner` lies inside prefix route `outer` (a segment prefix without methods).
    static bool within(const PolicyJson& inner, const PolicyJson& outer) {
        if (inner == outer || !outer.contains("path_prefix") || outer.contains("methods"))
            return false;
        const std::string p = outer["path_prefix"].get<std::string>();
        const std::string path = inner.value("path_prefix", inner.value("path_pattern", ""));
        return path.starts_with(p) &&
               (p.ends_with("/") || path.size() == p.size() || path[p.size()] == '/');
    }

    // The RLS counts a descriptor in one counter whichever route sent it: the uses of one
    // descriptor on several routes become one policy on the route that holds the others
    // (the set's routing then "all"), else one policy per route (warned).
    void writeUses(const std::vector<EnvoyRoute>& routes) {
        std::vector<std::vector<const Use*>> groups;
        for (const Use& u : uses_) {
            auto same = [&](const std::vector<const Use*>& g) {
                const Use& o = *g.front();
                return o.match.node == u.match.node && o.match.parts == u.match.parts &&
                       o.actionMethods == u.actionMethods;
            };
            auto it = std::find_if(groups.begin(), groups.end(), same);
            if (it == groups.end()) {
                groups.push_back({&u});
            } else {
                it->push_back(&u);
            }
        }
        struct Placed {
            const Use* use;
            std::string prefix;
            const std::vector<const Use*>* group;
        };
        std::vector<Placed> placed;
        for (const std::vector<const Use*>& g : groups) {
            const Use* cover = nullptr;
            for (const Use* c : g) {
                if (std::all_of(g.begin(), g.end(), [&](const Use* o) {
                        return o->policyMatch == c->policyMatch ||
                               within(o->policyMatch, c->policyMatch);
                    }))
                    cover = c;
            }
            std::set<const EnvoyRoute*> distinct;
            for (const Use* u : g)
                distinct.insert(u->route);
            if (distinct.size() == 1) {
                placed.push_back({g.front(), g.front()->route->name, &g});
            } else if (cover) {
                shared_ = true;
                placed.push_back({cover, "", &g});
            } else {
                std::string names;
                for (const EnvoyRoute* r : distinct)
                    names += (names.empty() ? "\"" : ", \"") + r->name + "\"";
                for (const Use* u : g) {
                    log_.warning(u->at, "the RLS counts this descriptor of routes " + names +
                                            " in one counter; no route of them holds the "
                                            "others, so the import counts each route apart");
                    placed.push_back({u, u->route->name, &g});
                }
            }
        }
        // A shared policy after those its routes charge before it (the engine charges in file
        // order, and stops at the first that refuses).
        auto latest = [](const Placed& p) {
            std::size_t order = p.use->order;
            for (const Use* u : *p.group)
                order = std::max(order, u->order);
            return order;
        };
        std::stable_sort(placed.begin(), placed.end(),
                         [&](const Placed& a, const Placed& b) { return latest(a) < latest(b); });
        // Under most_specific, a route that sends nothing inside one that sends descriptors is
        // charged by the latter's policies (the engine knows no route without a policy).
        for (const EnvoyRoute& quiet : routes) {
            if (shared_) break;
            const bool sends = std::any_of(uses_.begin(), uses_.end(),
                                           [&](const Use& u) { return u.route == &quiet; });
            if (sends || quiet.match.is_null()) continue;
            for (const Placed& p : placed) {
                if (within(quiet.match, p.use->policyMatch)) {
                    log_.warning(quiet.at, "route \"" + quiet.name +
                                               "\" sends no descriptor the configuration limits; "
                                               "the engine charges its requests with the "
                                               "policies of route \"" +
                                               p.use->route->name + "\"");
                    break;
                }
            }
        }
        for (const Placed& p : placed) {
            if (shared_) {
                for (const EnvoyRoute& other : routes) {
                    const bool sends =
                        std::any_of(p.group->begin(), p.group->end(),
                                    [&](const Use* u) { return u->route == &other; });
                    if (!sends && !other.match.is_null() && within(other.match, p.use->policyMatch))
                        log_.warning(p.use->at,
                                     "route \"" + other.name + "\" (" + lineRef(log_, other.at) +
                                         ") does not send this descriptor; the engine (routing "
                                         "all, as the descriptors shared by routes need) charges "
                                         "its requests too");
                }
            }
            writePolicies(*p.use->domain, p.use->match, p.prefix, p.use->policyMatch, p.use->at);
        }
    }

    // Envoy takes a virtual host's first matching route; the engine charges the policies of
    // the most specific one.
    void warnUnreachable(const EnvoyRoute& r, const EnvoyRoutes& routes) {
        if (!r.match.contains("path_prefix")) return;
        const std::string mine = r.match["path_prefix"].get<std::string>();
        for (const EnvoyRoute& earlier : routes.routes) {
            if (&earlier == &r) return;
            if (earlier.match.is_null() || !earlier.match.contains("path_prefix") ||
                earlier.match.contains("methods"))
                continue;
            const std::string theirs = earlier.match["path_prefix"].get<std::string>();
            if (mine.starts_with(theirs) && mine != theirs) {
                log_.warning(r.at, "Envoy never reaches route \"" + r.name + "\": route \"" +
                                       earlier.name + "\" (" + lineRef(log_, earlier.at) +
                                       ") matches its requests first; the engine charges the "
                                       "most specific route's policies");
                return;
            }
        }
    }

    void mapByName(const DomainConfig& d) {
        std::vector<const DescriptorNode*> path;
        walkByName(d, d.descriptors, path);
    }

    void walkByName(const DomainConfig& d, const std::vector<DescriptorNode>& nodes,
                    std::vector<const DescriptorNode*>& path) {
        for (const DescriptorNode& n : nodes) {
            const DescriptorEntry e = entryByName(n);
            if (e.part.kind == KeyPartSpec::Kind::Header && !isHeaderName(n.key)) {
                log_.warning(pos(d, n.at), "descriptor key \"" + n.key +
                                               "\" is neither an action's key nor a header "
                                               "name: not imported, nor the descriptors under it");
                continue;
            }
            if (!e.value) {
                log_.warning(pos(d, n.at),
                             "descriptor key \"" + n.key + "\" is read as " + e.what +
                                 " (no route configuration says which action builds it)");
            } else if (n.key == "destination_cluster" || n.key == "source_cluster") {
                log_.warning(pos(d, n.at), n.key + " is read as a constant every request sends");
            }
            path.push_back(&n);
            std::vector<DescriptorEntry> entries;
            for (const DescriptorNode* p : path)
                entries.push_back(entryByName(*p));
            if (n.rule) {
                std::optional<DescriptorMatch> m =
                    matchDescriptor(d.descriptors, entries, fileOf(d), log_);
                if (m && m->node == &n) {
                    const std::string prefix = config_.domains.size() > 1 ? d.domain : "";
                    writePolicies(d, *m, prefix, PolicyJson{{"path_prefix", "/"}}, pos(d, n.at));
                }
            }
            walkByName(d, n.children, path);
            path.pop_back();
        }
    }

    // The policies of the rule `m` reaches; how many were written.
    std::size_t writePolicies(const DomainConfig& d, const DescriptorMatch& m,
                              const std::string& prefix, const PolicyJson& match, SourcePos at) {
        const DescriptorNode& node = *m.node;
        const envoy::RateRule& rule = *node.rule;
        if (rule.unlimited) {
            log_.warning(pos(d, rule.at),
                         "unlimited: the RLS never counts these requests; no policy");
            return 0;
        }
        if (node.quotaMode)
            log_.warning(pos(d, node.at),
                         "quota_mode: the RLS refuses a request only when every quota "
                         "descriptor of it is over; imported as an ordinary limit");
        if (node.identity != envoy::Identity::None)
            log_.warning(pos(d, node.at), "identity (a ratelab extension) is not carried");
        std::string name = prefix;
        for (const DescriptorNode* p : m.path)
            name += (name.empty() ? "" : ".") + p->compositeKey;
        const PolicyJson key = keyFor(m.parts, at, log_);
        std::size_t written = 0;
        for (const RateLimitSpec& spec : rule.limits) {
            const std::string id =
                name + (rule.limits.size() > 1 && !spec.name.empty() ? "." + spec.name : "");
            if (!written_.insert(id + match.dump() + key.dump()).second) continue;
            PolicyJson p{{"name", names_.unique(id)}, {"match", match}};
            if (spec.extended) {
                log_.warning(pos(d, spec.at),
                             "a ratelab: block (a ratelab extension envoyproxy/ratelimit "
                             "refuses) chooses the algorithm");
                limitFields(spec.policy, p);
            } else {
                p["algorithm"] = "fixed_window";
                p["capacity"] = std::max<std::int64_t>(1, spec.policy.capacity);
                if (spec.policy.capacity == 0)
                    log_.warning(pos(d, spec.at),
                                 "requests_per_unit 0: the RLS refuses every request; the "
                                 "engine's smallest fixed window admits 1 per window");
                p["window_ms"] = spec.policy.windowMs;
                p["align"] = "calendar";
            }
            p["key"] = key;
            p["budget"] = PolicyJson{{"enabled", false}};
            if (node.shadowMode) p["mode"] = "shadow";
            policies_.push_back(std::move(p));
            ++written;
        }
        return written;
    }

    // A ratelab: block's numbers, as the policy writer writes them.
    static void limitFields(const Policy& policy, PolicyJson& out) {
        PolicySet one;
        one.policies.push_back(policy);
        const PolicyJson saved = PolicyJson::parse(savePolicyText(one))["policies"][0];
        for (const char* f :
             {"algorithm", "capacity", "refill_per_second", "window_ms", "align", "calendar_unit",
              "delay", "nodelay", "cost", "count_refused", "expire_ms"}) {
            if (saved.contains(f) && !saved[f].is_null()) out[f] = saved[f];
        }
    }

    // One descriptor a route sends and the rule it reaches, before the policies are written.
    struct Use {
        const DomainConfig* domain;
        DescriptorMatch match;
        const EnvoyRoute* route;
        PolicyJson policyMatch;
        std::vector<std::string> actionMethods;  // a :method header_value_match's
        SourcePos at;
        std::size_t order;  // among the descriptors of its route
    };

    const envoy::RlsConfig& config_;
    ImportLog& log_;
    std::vector<Use> uses_;
    bool shared_ = false;  // a policy stands for several routes: routing "all"
    PolicyJson policies_ = PolicyJson::array();
    PolicyNames names_;
    std::set<std::string> written_;
};

}  // namespace

std::optional<PolicyJson> mapEnvoyRatelimit(const envoy::RlsConfig& config,
                                            const EnvoyRoutes* routes, ImportLog& log) {
    if (log.hasErrors()) return std::nullopt;
    std::optional<PolicyJson> file = Mapper(config, log).map(routes);
    if (log.hasErrors()) return std::nullopt;
    return file;
}

}  // namespace ratelab::formats::envoy_ratelimit
