// nginx's limits per location, merged as nginx merges them, written as policies routed
// "most_specific".

#include "formats/import/nginx/nginx_import.h"

#include <algorithm>
#include <map>

#include "formats/import/engine_fit.h"
#include "formats/import/nginx/nginx_model.h"
#include "formats/import/path_regex.h"
#include "policy/policy_names.h"
#include "ratelab/ip_address.h"

namespace ratelab::formats::nginx {

namespace {

constexpr int kDefaultStatus = 503;  // nginx's limit_req_status
constexpr int kRatelabStatus = 429;  // what ratelab answers a refused request

// A route nginx sends requests to (a location, or a server when no location matches) with the
// limits nginx applies there.
struct Scope {
    const Level* level = nullptr;  // the location, or the server for its root
    const Level* server = nullptr;
    const Level* origin = nullptr;  // whose limit_req lines apply; null: none
    Setting<int> status;            // merged as nginx merges it: the innermost level's
    Setting<bool> dryRun;
    bool answersFirst = false;  // a `return` answers before limit_req runs
    bool serverRoot = false;
    bool regex = false;
    std::vector<PolicyJson> routes;       // empty: no route says it (warned)
    std::string path;                     // a path nginx sends to this scope
    std::vector<std::string> routeNotes;  // how the routes differ from the location
    bool emits = false;                   // gets policies of its own
};

// How specific a route is under "routing": "most_specific": an exact path before a pattern
// (more literal segments first) before a prefix (longer first), "/" last.
std::pair<int, int> specificity(const PolicyJson& match) {
    if (match.contains("path_pattern")) {
        const std::string p = match["path_pattern"].get<std::string>();
        if (p.find('*') == std::string::npos) return {3, static_cast<int>(p.size())};
        int literal = 0;
        for (std::size_t i = 0; i < p.size(); ++i) {
            if (p[i] == '/' && i + 1 < p.size() && p[i + 1] != '*') ++literal;
        }
        return {2, literal};
    }
    std::string p = match.value("path_prefix", "/");
    if (p.size() > 1 && p.back() == '/') p.pop_back();
    return p == "/" ? std::pair{0, 0} : std::pair{1, static_cast<int>(p.size())};
}

bool routeMatches(const PolicyJson& match, const std::string& path) {
    RouteMatch m;
    if (match.contains("path_pattern")) {
        m.pathPattern = match["path_pattern"].get<std::string>();
        m.pathPrefix.clear();
    } else {
        m.pathPrefix = match.value("path_prefix", "/");
    }
    return m.matches("GET", path);
}

std::string locationText(const Level& level) {
    if (level.kind == Level::Kind::Server) return "the server";
    switch (level.match) {
        case LocationMatch::Exact:
            return "location = " + level.uri;
        case LocationMatch::PrefixNoRegex:
            return "location ^~ " + level.uri;
        case LocationMatch::Regex:
            return "location ~ " + level.uri;
        case LocationMatch::RegexCaseless:
            return "location ~* " + level.uri;
        default:
            return "location " + level.uri;
    }
}

class Mapper {
public:
    Mapper(const NginxModel& model, ImportLog& log) : model_(model), log_(log) {}

    /// Where each policy map() wrote came from: its first limit_req line.
    const std::vector<SourcePos>& origins() const { return origins_; }

    std::optional<PolicyJson> map() {
        if (model_.zones.empty()) {
            log_.error(SourcePos{0, 0, 0},
                       "no rate limit: the configuration declares no limit_req_zone");
            return std::nullopt;
        }
        for (const Zone& z : model_.zones) {
            if (!z.used)
                log_.warning(z.at, "zone \"" + z.name +
                                       "\" is declared but no limit_req uses it: not imported");
        }
        collectScopes();
        chooseEmitters();
        warnUnlimited();
        PolicyJson policies = PolicyJson::array();
        writePolicies(policies);
        warnSharedZones();
        if (policies.empty()) {
            if (!log_.hasErrors())
                log_.error(SourcePos{0, 0, 0},
                           "no rate limit: no limit_req applies to any location that can be "
                           "imported");
            return std::nullopt;
        }
        PolicyJson file{{"version", 1}, {"routing", "most_specific"}};
        if (PolicyJson proxies = trustedProxies(); !proxies.is_null())
            file["trusted_proxies"] = proxies;
        file["policies"] = std::move(policies);
        return file;
    }

private:
    void collectScopes() {
        const Level& http = model_.http;
        for (const Level& server : http.children) {
            Scope root;
            root.level = &server;
            root.server = &server;
            root.serverRoot = true;
            root.origin = !server.limits.empty() ? &server : !http.limits.empty() ? &http : nullptr;
            root.status = server.status.set ? server.status : http.status;
            root.dryRun = server.dryRun.set ? server.dryRun : http.dryRun;
            root.answersFirst = server.answersFirst;
            root.routes.push_back(PolicyJson{{"path_prefix", "/"}});
            root.path = "/";
            // With a `location /`, the server's own settings apply only through it.
            const bool coveredByRoot =
                std::any_of(server.children.begin(), server.children.end(), [](const Level& l) {
                    return (l.match == LocationMatch::Prefix ||
                            l.match == LocationMatch::PrefixNoRegex) &&
                           l.uri == "/";
                });
            const std::size_t rootIndex = scopes_.size();
            scopes_.push_back(root);
            addLocations(server, server, root);
            if (coveredByRoot) scopes_[rootIndex].routes.clear();
        }
    }

    void addLocations(const Level& level, const Level& server, const Scope& parent) {
        for (const Level& loc : level.children) {
            if (loc.match == LocationMatch::Named) {
                if (!loc.limits.empty())
                    log_.warning(loc.at, "named location " + loc.uri +
                                             " is reached only by internal redirects "
                                             "(try_files, error_page); its limits are not "
                                             "imported");
                continue;
            }
            Scope s;
            s.level = &loc;
            s.server = &server;
            s.origin = loc.limits.empty() ? parent.origin : &loc;
            s.status = loc.status.set ? loc.status : parent.status;
            s.dryRun = loc.dryRun.set ? loc.dryRun : parent.dryRun;
            s.answersFirst = loc.answersFirst || server.answersFirst;
            routesOf(loc, s);
            scopes_.push_back(s);
            addLocations(loc, server, s);
        }
    }

    void routesOf(const Level& loc, Scope& s) {
        // No route for a location whose own limits apply: they are not imported; for one that
        // inherits them, ratelab's other routes decide what its requests get.
        auto unroutable = [&](const std::string& what) {
            if (!s.origin || s.answersFirst) return;
            log_.warning(loc.uriAt,
                         what + (s.origin == &loc ? ": the location's limits are not imported"
                                                  : ": its requests get the policies of the "
                                                    "routes ratelab matches them to"));
        };
        std::string approximation;
        switch (loc.match) {
            case LocationMatch::Prefix:
            case LocationMatch::PrefixNoRegex:
                if (!policy::isValidRoutePath(loc.uri)) {
                    unroutable("no route says the prefix \"" + loc.uri + "\"");
                    return;
                }
                s.routes.push_back(prefixRoute(loc.uri, approximation));
                if (!approximation.empty()) s.routeNotes.push_back("nginx's " + approximation);
                break;
            case LocationMatch::Exact:
                if (std::optional<PolicyJson> exact = exactRoute(loc.uri)) {
                    s.routes.push_back(*exact);
                } else {
                    unroutable("no ratelab route matches exactly \"" + loc.uri + "\"");
                }
                break;
            case LocationMatch::Regex:
            case LocationMatch::RegexCaseless: {
                s.regex = true;
                std::string why;
                std::optional<RegexRoutes> routes =
                    routesFromRegex(loc.uri, loc.match == LocationMatch::RegexCaseless, why);
                if (!routes) {
                    unroutable("regex location \"" + loc.uri + "\": " + why);
                    return;
                }
                s.routes = routes->matches;
                for (const std::string& a : routes->approximations)
                    s.routeNotes.push_back("regex location \"" + loc.uri + "\": " + a);
                break;
            }
            default:
                return;
        }
        if (!s.routes.empty()) s.path = samplePath(s.routes.front());
    }

    // The scopes with policies whose routes ratelab picks for `path`: the most specific that
    // match.
    std::vector<const Scope*> chosenFor(const std::string& path) const {
        std::vector<const Scope*> best;
        std::pair<int, int> bestRank{-1, -1};
        for (const Scope& s : scopes_) {
            if (!s.emits) continue;
            for (const PolicyJson& r : s.routes) {
                if (!routeMatches(r, path)) continue;
                const std::pair<int, int> rank = specificity(r);
                if (rank > bestRank) {
                    best.clear();
                    bestRank = rank;
                }
                if (rank == bestRank) best.push_back(&s);
            }
        }
        return best;
    }

    // A scope with limit_req lines of its own gets policies; one that inherits them gets
    // copies only where ratelab's routing would otherwise pick another scope's policies for it.
    void chooseEmitters() {
        for (Scope& s : scopes_) {
            const bool limited = s.origin && !s.answersFirst && !s.routes.empty();
            s.emits = limited && (s.origin == s.level || s.serverRoot);
        }
        for (bool changed = true; changed;) {
            changed = false;
            for (Scope& s : scopes_) {
                if (s.emits || !s.origin || s.answersFirst || s.routes.empty()) continue;
                bool same = !s.regex;
                if (same) {
                    const std::vector<const Scope*> chosen = chosenFor(s.path);
                    same = !chosen.empty() &&
                           std::all_of(chosen.begin(), chosen.end(), [&s](const Scope* c) {
                               return c->origin == s.origin && c->dryRun.value == s.dryRun.value &&
                                      c->status.value == s.status.value;
                           });
                }
                if (!same) {
                    s.emits = true;
                    changed = true;
                }
            }
        }
    }

    // Where nginx limits nothing (no limit_req in effect, or a `return` first) but ratelab's
    // routing would charge another scope's policies.
    void warnUnlimited() {
        for (const Scope& s : scopes_) {
            if (s.emits || s.routes.empty() || s.serverRoot) continue;
            if (s.origin && !s.answersFirst) continue;
            const std::vector<const Scope*> chosen = chosenFor(s.path);
            if (chosen.empty()) continue;
            const Scope& c = *chosen.front();
            log_.warning(s.level->at,
                         "nginx limits no request of " + locationText(*s.level) +
                             (s.answersFirst ? " (`return` answers before limit_req runs)"
                                             : " (no limit_req is in effect there)") +
                             "; ratelab's most specific route for \"" + s.path + "\" is " +
                             locationText(*c.level) + " (" + lineRef(log_, c.level->at) +
                             "), whose limits it charges");
        }
    }

    PolicyJson limitFields(const Zone& z, const LimitReq& l) const {
        PolicyJson f{{"algorithm", "leaky_bucket"}, {"capacity", l.burst}};
        if (z.perMinute && z.count % 60 != 0) {
            f["refill_per_second"] = static_cast<double>(z.count) / 60.0;
        } else if (z.perMinute) {
            f["refill_per_second"] = z.count / 60;
        } else {
            f["refill_per_second"] = z.count;
        }
        if (l.nodelay) {
            f["nodelay"] = true;
        } else if (l.delay > 0) {
            f["delay"] = l.delay;
        }
        return f;
    }

    void writePolicies(PolicyJson& out) {
        std::map<std::string, int> written;  // one policy for identical scopes of two servers
        const Level* firstServer = nullptr;
        for (const Scope& s : scopes_) {
            if (!s.emits) continue;
            const Level& origin = *s.origin;
            // The origin's limits, grouped by key (limits of one key: one policy's "limits").
            std::vector<std::vector<const LimitReq*>> groups;
            for (const LimitReq& l : origin.limits) {
                const Zone& z = model_.zones[l.zone];
                if (!z.key) continue;
                auto same = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
                    return model_.zones[g.front()->zone].key->signature == z.key->signature;
                });
                if (same == groups.end()) {
                    groups.push_back({&l});
                } else {
                    same->push_back(&l);
                }
            }
            if (groups.empty()) continue;
            if (groups.size() > 1) warnSeparateKeys(origin, groups);
            warnStatus(s);
            bool wroteAny = false;
            for (const PolicyJson& route : s.routes) {
                for (const auto& group : groups) {
                    std::string name;
                    const PolicyJson body = policyFor(s, route, group, name);
                    const std::string id =
                        body.dump(-1, ' ', false, PolicyJson::error_handler_t::replace);
                    if (written.count(id)) continue;
                    written[id] = 1;
                    PolicyJson policy{{"name", names_.unique(name)}};
                    policy.update(body);
                    for (const LimitReq* l : group) {
                        ++zoneUses_[l->zone].count;
                        zoneUses_[l->zone].lines.push_back(l->at);
                    }
                    out.push_back(std::move(policy));
                    origins_.push_back(group.front()->at);
                    wroteAny = true;
                }
            }
            if (!wroteAny) continue;
            for (const std::string& note : s.routeNotes)
                log_.warning(s.level->uriAt, note);
            if (!firstServer) firstServer = s.server;
            if (s.server != firstServer && !warnedServers_.count(s.server)) {
                warnedServers_[s.server] = 1;
                log_.warning(s.server->at,
                             "ratelab does not tell server blocks apart" +
                                 std::string(s.server->serverNames.empty()
                                                 ? ""
                                                 : " (server_name " + s.server->serverNames + ")") +
                                 ": this server's limits apply to requests for every host, "
                                 "beside those of the server at " +
                                 lineRef(log_, firstServer->at));
            }
        }
    }

    // A policy without its name, and the name it wants (`name`).
    PolicyJson policyFor(const Scope& s, const PolicyJson& route,
                         const std::vector<const LimitReq*>& group, std::string& name) const {
        const Zone& first = model_.zones[group.front()->zone];
        name.clear();
        for (const LimitReq* l : group)
            name += (name.empty() ? "" : "-") + model_.zones[l->zone].name;
        const std::string slug = routeSlug(route);
        if (!slug.empty()) name += "." + slug;
        PolicyJson policy{{"match", route}};
        if (group.size() == 1) {
            policy.update(limitFields(first, *group.front()));
        } else {
            PolicyJson limits = PolicyJson::array();
            for (const LimitReq* l : group) {
                PolicyJson limit{{"name", model_.zones[l->zone].name}};
                limit.update(limitFields(model_.zones[l->zone], *l));
                limits.push_back(std::move(limit));
            }
            policy["limits"] = std::move(limits);
        }
        policy["key"] = first.key->key;
        policy["budget"] = PolicyJson{{"enabled", false}};
        policy["mode"] = s.dryRun.value ? "shadow" : "enforce";
        policy["headers"] = "none";
        if (!first.key->bypassCidrs.empty())
            policy["bypass"] = PolicyJson{{"cidrs", first.key->bypassCidrs}};
        return policy;
    }

    void warnSeparateKeys(const Level& origin,
                          const std::vector<std::vector<const LimitReq*>>& groups) {
        if (warnedSeparate_.count(&origin)) return;
        warnedSeparate_[&origin] = 1;
        std::string what;
        for (const auto& g : groups) {
            const Zone& z = model_.zones[g.front()->zone];
            what += (what.empty() ? "" : "; ") + std::string("zone ") + z.name + ": " +
                    z.key->description;
        }
        log_.warning(groups[1].front()->at,
                     "nginx charges none of these limits when one refuses a request; their "
                     "keys differ (" +
                         what +
                         "), so they become separate policies, and a request one refuses "
                         "stays charged by the policies before it");
    }

    void warnStatus(const Scope& s) {
        const int status = s.status.set ? s.status.value : kDefaultStatus;
        if (status == kRatelabStatus) return;
        const SourcePos at = s.status.set ? s.status.at : s.origin->limits.front().at;
        log_.warning(at, "nginx refuses with " + std::to_string(status) +
                             (s.status.set ? "" : " (limit_req_status's default)") +
                             "; ratelab refuses with 429 (the decisions are the same)");
    }

    void warnSharedZones() {
        for (const auto& [zone, uses] : zoneUses_) {
            if (uses.count < 2) continue;
            std::string lines;
            std::vector<std::string> seen;
            for (const SourcePos& at : uses.lines) {
                const std::string ref = lineRef(log_, at);
                if (std::find(seen.begin(), seen.end(), ref) != seen.end()) continue;
                seen.push_back(ref);
                lines += (lines.empty() ? "" : ", ") + ref;
            }
            log_.warning(model_.zones[zone].at,
                         "zone \"" + model_.zones[zone].name + "\" is charged by " +
                             std::to_string(uses.count) + " policies (limit_req at " + lines +
                             "): nginx keeps one state per key for all of them, each ratelab "
                             "policy keeps its own");
        }
    }

    PolicyJson trustedProxies() {
        if (model_.realIpFrom.empty()) return nullptr;
        PolicyJson cidrs = PolicyJson::array();
        for (const std::string& from : model_.realIpFrom) {
            if (from == "unix:") {
                log_.warning(model_.realIpAt,
                             "set_real_ip_from unix: trusts clients of a unix socket, which "
                             "ratelab does not see; not carried over");
                continue;
            }
            const std::optional<Cidr> cidr = Cidr::parse(from);
            if (!cidr) {
                log_.error(model_.realIpAt, "set_real_ip_from \"" + from +
                                                "\" is not an address or a CIDR (nginx -t "
                                                "refuses it too)");
                continue;
            }
            cidrs.push_back(cidr->toString());  // the network, host bits cleared
        }
        std::string header = model_.realIpHeader.empty() ? "X-Real-IP" : model_.realIpHeader;
        std::string lower;
        for (char c : header)
            lower.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c);
        if (lower != "x-real-ip" && lower != "x-forwarded-for") {
            log_.warning(model_.realIpHeaderAt.line ? model_.realIpHeaderAt : model_.realIpAt,
                         "real_ip_header " + header +
                             ": ratelab reads the client address from X-Forwarded-For, "
                             "X-Real-IP or Forwarded only; not carried over");
            return nullptr;
        }
        if (cidrs.empty()) return nullptr;
        return PolicyJson{{"cidrs", cidrs}, {"header", lower}};
    }

    struct ZoneUses {
        int count = 0;
        std::vector<SourcePos> lines;
    };

    const NginxModel& model_;
    ImportLog& log_;
    std::vector<Scope> scopes_;
    std::vector<SourcePos> origins_;
    PolicyNames names_;
    std::map<int, ZoneUses> zoneUses_;
    std::map<const Level*, int> warnedServers_;
    std::map<const Level*, int> warnedSeparate_;
};

}  // namespace

std::optional<PolicyJson> mapNginxConfig(const NginxConfig& config, ImportLog& log,
                                         std::vector<SourcePos>* origins) {
    if (log.hasErrors()) return std::nullopt;
    const NginxModel model = readNginxModel(config, log);
    if (log.hasErrors()) return std::nullopt;
    Mapper mapper(model, log);
    std::optional<PolicyJson> file = mapper.map();
    if (log.hasErrors()) return std::nullopt;
    if (origins) *origins = mapper.origins();
    return file;
}

namespace {

ImportResult finishNginx(const NginxConfig& config, ImportLog& log, bool unreadable) {
    std::vector<SourcePos> origins;
    std::optional<PolicyJson> file = mapNginxConfig(config, log, &origins);
    if (file) fitNginxToEngine(*file, origins, log);
    return finishImport(log, file, unreadable);
}

}  // namespace

ImportResult importNginx(const std::vector<std::string>& files) {
    ImportLog log;
    if (files.size() != 1) {
        log.addFile(files.empty() ? "" : files[1]);
        log.error(SourcePos{0, 0, 0},
                  "nginx reads one main configuration file (the others through include)");
        return finishImport(log, std::nullopt, false);
    }
    const NginxConfig config = readNginxConfig(files.front(), log);
    return finishNginx(config, log, config.unreadable);
}

ImportResult importNginxText(std::string_view text, const std::string& name) {
    ImportLog log;
    const NginxConfig config = parseNginxText(text, name, "", log);
    return finishNginx(config, log, false);
}

}  // namespace ratelab::formats::nginx
