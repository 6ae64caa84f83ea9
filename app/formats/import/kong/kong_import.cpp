// Kong's services, routes and rate-limiting plugins as policies.

#include "formats/import/kong/kong_import.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "formats/import/path_regex.h"
#include "policy/policy_names.h"
#include "ratelab/redis_url.h"

namespace ratelab::formats::kong {

using envoy::mapField;
using envoy::scalarText;
using envoy::YamlNode;

namespace {

struct Period {
    const char* name;
    std::int64_t ms;
};
// Kong's periods and their nominal lengths (its counters' TTLs). Every period is aligned to the
// UTC calendar; a month and a year are the engine's calendar units, not a fixed length.
constexpr Period kPeriods[] = {{"second", 1'000},        {"minute", 60'000},
                               {"hour", 3'600'000},      {"day", 86'400'000},
                               {"month", 2'592'000'000}, {"year", 31'536'000'000}};
constexpr std::int64_t kLongestFixedMs = 86'400'000;
// The largest limit carried over: the largest capacity the policy loader takes.
constexpr double kMaxLimit = 1e9;

// A reference to a service, route or consumer: its name or id, or a map with either.
std::string reference(const YamlNode* node) {
    if (!node) return {};
    if (node->isScalar()) return node->text;
    if (const YamlNode* name = mapField(node, "name")) return scalarText(name);
    return scalarText(mapField(node, "id"));
}

struct Plugin {
    const YamlNode* config = nullptr;
    SourcePos at;
    std::string service, route, consumer;  // scope, by name or id
};

struct Route {
    std::string name;
    std::string service;
    const YamlNode* node = nullptr;
    SourcePos at;
};

class Mapper {
public:
    Mapper(const YamlNode& root, ImportLog& log) : root_(root), log_(log) {}

    std::optional<PolicyJson> map() {
        if (!root_.isMap()) {
            log_.error(SourcePos{0, root_.at.line, root_.at.column},
                       "a declarative configuration is a map (_format_version, services, "
                       "routes, plugins)");
            return std::nullopt;
        }
        const YamlNode* version = mapField(&root_, "_format_version");
        if (!version || !version->isScalar()) {
            log_.error(SourcePos{0, 1, 1}, "no _format_version: Kong refuses the file");
            return std::nullopt;
        }
        legacyPaths_ = version->text == "1.1" || version->text == "2.1";
        if (!legacyPaths_ && version->text != "3.0") {
            log_.error(pos(*version), "_format_version \"" + version->text +
                                          "\": Kong reads \"1.1\", \"2.1\" or \"3.0\"");
            return std::nullopt;
        }
        readServices();
        readTopLevel();
        if (const YamlNode* consumers = mapField(&root_, "consumers");
            consumers && consumers->isSequence()) {
            for (const YamlNode& c : consumers->items) {
                Plugin scope;
                scope.consumer =
                    scalarText(mapField(&c, "username"), scalarText(mapField(&c, "id"), "?"));
                readPlugins(mapField(&c, "plugins"), scope);
            }
        }
        if (log_.hasErrors()) return std::nullopt;
        PolicyJson policies = PolicyJson::array();
        for (const Route& r : routes_) {
            const Plugin* p = chosenFor(r);
            if (p) writePolicies(r, *p, policies);
        }
        for (const auto& [key, p] : plugins_) {
            if (!uses_.count(&p))
                log_.warning(p.at, routes_.empty()
                                       ? "no route: Kong answers every request 404 before a "
                                         "plugin runs; not imported"
                                       : "every route this plugin could apply to has a "
                                         "rate-limiting plugin of its own or its service's; "
                                         "not imported");
        }
        if (log_.hasErrors()) return std::nullopt;
        if (policies.empty()) {
            log_.error(SourcePos{0, 0, 0},
                       "no rate limit: no rate-limiting plugin applies to a "
                       "route");
            return std::nullopt;
        }
        PolicyJson file{{"version", 1}, {"routing", "most_specific"}};
        if (!store_.is_null()) file["store"] = store_;
        file["policies"] = std::move(policies);
        return file;
    }

private:
    SourcePos pos(const YamlNode& n) const { return SourcePos{0, n.at.line, n.at.column}; }

    void readPlugins(const YamlNode* list, Plugin scope) {
        if (!list) return;
        if (!list->isSequence()) {
            log_.error(pos(*list), "plugins: expected a list");
            return;
        }
        for (const YamlNode& p : list->items) {
            const std::string name = scalarText(mapField(&p, "name"));
            if (name == "rate-limiting-advanced")
                log_.warning(pos(p), "rate-limiting-advanced (Kong Enterprise) is not read");
            if (name != "rate-limiting") continue;
            if (const YamlNode* enabled = mapField(&p, "enabled");
                enabled && envoy::scalarBool(*enabled) == false)
                continue;
            Plugin plugin = scope;
            plugin.at = pos(p);
            plugin.config = mapField(&p, "config");
            if (const YamlNode* s = mapField(&p, "service")) plugin.service = reference(s);
            if (const YamlNode* r = mapField(&p, "route")) plugin.route = reference(r);
            if (const YamlNode* c = mapField(&p, "consumer")) plugin.consumer = reference(c);
            if (!plugin.config || !plugin.config->isMap()) {
                log_.error(plugin.at, "rate-limiting: no config map");
                continue;
            }
            if (!plugin.consumer.empty()) {
                log_.warning(plugin.at, "a plugin scoped to consumer \"" + plugin.consumer +
                                            "\" runs for the requests its authentication "
                                            "plugin identifies as that consumer; not imported");
                continue;
            }
            const std::string key = plugin.route + "\n" + plugin.service;
            if (plugins_.count(key)) {
                log_.error(plugin.at, "a second rate-limiting plugin on the same scope (also at " +
                                          lineRef(log_, plugins_[key].at) + ")");
                continue;
            }
            plugins_[key] = plugin;
            if (plugin.route.empty() && plugin.service.empty()) global_ = &plugins_[key];
        }
    }

    void readRoute(const YamlNode& node, const std::string& service) {
        Route r;
        r.node = &node;
        r.at = pos(node);
        r.name = scalarText(mapField(&node, "name"), scalarText(mapField(&node, "id")));
        r.service = service.empty() ? reference(mapField(&node, "service")) : service;
        if (r.name.empty()) r.name = "route" + std::to_string(routes_.size() + 1);
        Plugin scope;
        scope.route = r.name;
        readPlugins(mapField(&node, "plugins"), scope);
        routes_.push_back(std::move(r));
    }

    void readServices() {
        const YamlNode* services = mapField(&root_, "services");
        if (!services) return;
        if (!services->isSequence()) {
            log_.error(pos(*services), "services: expected a list");
            return;
        }
        for (const YamlNode& s : services->items) {
            const std::string name =
                scalarText(mapField(&s, "name"), scalarText(mapField(&s, "id")));
            Plugin scope;
            scope.service = name;
            readPlugins(mapField(&s, "plugins"), scope);
            if (const YamlNode* routes = mapField(&s, "routes"); routes && routes->isSequence()) {
                for (const YamlNode& r : routes->items)
                    readRoute(r, name);
            }
        }
    }

    void readTopLevel() {
        if (const YamlNode* routes = mapField(&root_, "routes"); routes && routes->isSequence()) {
            for (const YamlNode& r : routes->items)
                readRoute(r, "");
        }
        readPlugins(mapField(&root_, "plugins"), Plugin{});
    }

    // Kong runs one configuration per request: the route's, else its service's, else the
    // global one (the route+service scope counts as the route's).
    const Plugin* chosenFor(const Route& r) const {
        for (const auto& [key, p] : plugins_) {
            if (p.route == r.name && (p.service.empty() || p.service == r.service)) return &p;
        }
        for (const auto& [key, p] : plugins_) {
            if (p.route.empty() && !p.service.empty() && p.service == r.service) return &p;
        }
        return global_;
    }

    std::vector<PolicyJson> routesOf(const Route& r) {
        std::vector<PolicyJson> out;
        std::vector<std::string> methods;
        if (const YamlNode* m = mapField(r.node, "methods"); m && m->isSequence()) {
            for (const YamlNode& item : m->items) {
                const bool letters = !item.text.empty() && item.text.size() <= 32 &&
                                     std::all_of(item.text.begin(), item.text.end(),
                                                 [](char c) { return c >= 'A' && c <= 'Z'; });
                if (letters) methods.push_back(item.text);
            }
        }
        for (const char* other : {"hosts", "headers", "snis", "sources", "destinations"}) {
            if (const YamlNode* n = mapField(r.node, other))
                log_.warning(pos(*n), std::string("route \"") + r.name + "\": " + other +
                                          " are not carried: the policies apply whatever they "
                                          "say");
        }
        const YamlNode* paths = mapField(r.node, "paths");
        if (!paths || !paths->isSequence() || paths->items.empty()) {
            out.push_back(PolicyJson{{"path_prefix", "/"}});
        } else {
            for (const YamlNode& p : paths->items) {
                std::string path = p.text;
                const bool plain = path.find_first_not_of(
                                       "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789.-_~/%") == std::string::npos;
                const bool regex = path.starts_with("~") || (legacyPaths_ && !plain);
                if (path.starts_with("~")) path.erase(0, 1);
                const bool routable = std::all_of(path.begin(), path.end(), policy::isRouteChar);
                if (!routable || (!regex && !path.starts_with("/"))) {
                    log_.warning(pos(p), "path \"" + p.text + "\" is not carried");
                    continue;
                }
                if (regex) {
                    std::string why;
                    std::optional<RegexRoutes> routes = routesFromRegex("^" + path, false, why);
                    if (!routes) {
                        log_.warning(pos(p),
                                     "regex path \"" + p.text + "\": " + why + "; not carried");
                        continue;
                    }
                    for (const std::string& a : routes->approximations)
                        log_.warning(pos(p), "regex path \"" + p.text + "\": " + a);
                    out.insert(out.end(), routes->matches.begin(), routes->matches.end());
                } else {
                    std::string approximation;
                    out.push_back(prefixRoute(path, approximation));
                    if (!approximation.empty()) log_.warning(pos(p), "Kong's " + approximation);
                }
            }
        }
        if (!methods.empty()) {
            for (PolicyJson& m : out)
                m["methods"] = methods;
        }
        return out;
    }

    PolicyJson keyOf(const YamlNode& config, const Plugin& p) {
        const std::string by = scalarText(mapField(&config, "limit_by"), "consumer");
        if (by == "ip") return wholeAddressKey();
        if (by == "header") {
            const std::string header = scalarText(mapField(&config, "header_name"));
            if (header.empty()) {
                log_.error(p.at, "limit_by header needs header_name");
                return nullptr;
            }
            if (!isHeaderName(header)) {
                log_.error(p.at, "header_name \"" + header + "\" is not a header name");
                return nullptr;
            }
            return PolicyJson{{"source", "header"}, {"header", header}, {"when_missing", "peer"}};
        }
        if (by == "service") return PolicyJson{{"source", "composite"}, {"parts", {"route"}}};
        if (by == "consumer" || by == "credential") {
            log_.warning(p.at, "limit_by " + by +
                                   " keys by the consumer Kong's authentication plugin "
                                   "identifies, else the client address; the import keys by "
                                   "the verified principal, else the Authorization header, "
                                   "else the client address");
            return PolicyJson{{"source", "default"}};
        }
        if (by == "path") {
            log_.warning(p.at,
                         "limit_by path counts the requests for config.path in one "
                         "bucket and every other request by its client address; the "
                         "import keys every request by its client address");
            return wholeAddressKey();
        }
        log_.error(p.at, "limit_by \"" + by +
                             "\": one of consumer, credential, ip, service, header, path");
        return nullptr;
    }

    void readStore(const YamlNode& config, const Plugin& p) {
        const std::string policy = scalarText(mapField(&config, "policy"), "local");
        if (policy == "cluster")
            log_.warning(p.at,
                         "policy cluster (database rows, not in DB-less mode) is read as "
                         "local");
        if (policy != "redis") return;
        const YamlNode* redis = mapField(&config, "redis");
        auto value = [&](const char* nested, const char* flat) {
            const std::string v = scalarText(mapField(redis, nested));
            return v.empty() ? scalarText(mapField(&config, flat)) : v;
        };
        const std::string host = value("host", "redis_host");
        const std::string port = value("port", "redis_port");
        const std::string database = value("database", "redis_database");
        if (host.empty()) {
            log_.error(p.at, "policy redis needs redis.host");
            return;
        }
        if (!value("password", "redis_password").empty())
            log_.warning(p.at,
                         "the Redis password is not carried over (credentials stay out "
                         "of policy files): set store.password_env");
        if (value("ssl", "redis_ssl") == "true")
            log_.warning(p.at, "Redis over TLS is not carried over");
        const std::string url = "redis://" + host + ":" + (port.empty() ? "6379" : port) + "/" +
                                (database.empty() ? "0" : database);
        std::string why;
        if (!parseRedisUrl(url, &why)) {
            log_.error(p.at,
                       "redis: host, port and database do not make a Redis address (" + why + ")");
            return;
        }
        const PolicyJson store{{"kind", "redis"}, {"url", url}};
        if (store_.is_null()) {
            store_ = store;
        } else if (store_ != store) {
            log_.warning(p.at,
                         "ratelab has one store for a policy set; this plugin's Redis is "
                         "not " +
                             store_["url"].get<std::string>() + ", and is not used");
        }
    }

    void writePolicies(const Route& r, const Plugin& p, PolicyJson& policies) {
        const YamlNode& config = *p.config;
        ++uses_[&p];
        const PolicyJson key = keyOf(config, p);
        if (key.is_null()) return;
        readStore(config, p);
        const std::vector<PolicyJson> routes = routesOf(r);
        if (routes.empty()) return;
        const bool redis = scalarText(mapField(&config, "policy"), "local") == "redis";
        const bool faultTolerant = envoy::scalarBool(mapField(&config, "fault_tolerant")
                                                         ? *mapField(&config, "fault_tolerant")
                                                         : YamlNode{})
                                       .value_or(true);
        if (const std::string code = scalarText(mapField(&config, "error_code"), "429");
            code != "429")
            log_.warning(p.at, "Kong refuses with " + code +
                                   "; ratelab refuses with 429 (the decisions are the same)");
        if (routes.size() > 1 || uses_[&p] > 1)
            log_.warning(p.at,
                         "Kong counts the requests of every route this plugin applies "
                         "to together; the import writes a policy per route, each with "
                         "its own counters");
        int periods = 0;
        for (const Period& period : kPeriods) {
            const YamlNode* limit = mapField(&config, period.name);
            if (!limit || limit->isNull()) continue;
            const auto type = envoy::scalarType(*limit);
            if (type != envoy::ScalarType::Int && type != envoy::ScalarType::Float) {
                log_.error(pos(*limit), std::string(period.name) + ": expected a number, not \"" +
                                            envoy::printed(*limit) + "\"");
                continue;
            }
            // Integers as YAML reads them (0x, 0o, '_'); floats by strtod, which never throws.
            const double value = type == envoy::ScalarType::Int
                                     ? static_cast<double>(envoy::scalarInt(*limit).value_or(-1))
                                     : std::strtod(limit->text.c_str(), nullptr);
            if (!(value > 0) || !(value <= kMaxLimit)) {
                log_.error(pos(*limit), std::string(period.name) +
                                            ": the limit must be above 0 and at most " +
                                            std::to_string(static_cast<std::int64_t>(kMaxLimit)));
                continue;
            }
            ++periods;
            const bool calendarUnit = period.ms > kLongestFixedMs;
            if (calendarUnit)
                log_.warning(pos(*limit),
                             std::string(period.name) + ": Kong's counter expires " +
                                 std::to_string(period.ms / 86'400'000) +
                                 " days after it is created, so a longer " + period.name +
                                 " starts counting again before it ends; the engine counts the "
                                 "whole calendar " +
                                 period.name);
            if (!redis)
                log_.warning(pos(*limit),
                             "policy local counts a request only when every period lets it "
                             "through; the engine's fixed window counts refused requests too");
            for (const PolicyJson& route : routes) {
                PolicyJson policy{
                    {"name",
                     names_.unique(r.name + (routes.size() > 1 ? "." + routeSlug(route) : "") +
                                   "." + period.name)},
                    {"match", route},
                    {"algorithm", "fixed_window"},
                    {"capacity", static_cast<std::int64_t>(std::ceil(value))},
                    {"align", "calendar"},
                    {"key", key},
                    {"budget", PolicyJson{{"enabled", false}}},
                    {"on_store_error", faultTolerant ? "fail_open_on_transport" : "deny"},
                    {"mode", "enforce"}};
                if (calendarUnit) {
                    policy["calendar_unit"] = period.name;
                } else {
                    policy["window_ms"] = period.ms;
                }
                if (envoy::scalarBool(mapField(&config, "hide_client_headers")
                                          ? *mapField(&config, "hide_client_headers")
                                          : YamlNode{})
                        .value_or(false))
                    policy["headers"] = "none";
                policies.push_back(std::move(policy));
            }
        }
        if (periods == 0 && !log_.hasErrors())
            log_.error(p.at,
                       "rate-limiting: no period (second, minute, hour, day, month, year) "
                       "that can be imported");
        if (periods > 1)
            log_.warning(p.at,
                         redis ? "Kong (policy redis) counts every request in every period, "
                                 "refused ones too; the import writes one policy per period, "
                                 "in order, and the engine stops at the first that refuses, so "
                                 "the later periods do not count that request"
                               : "Kong checks every period and counts a request in all of them "
                                 "only when none is exhausted; the import writes one policy per "
                                 "period, in order, and a request a later one refuses stays "
                                 "counted by the earlier");
    }

    const YamlNode& root_;
    ImportLog& log_;
    bool legacyPaths_ = false;
    std::vector<Route> routes_;
    std::map<std::string, Plugin> plugins_;  // by "route\nservice"
    const Plugin* global_ = nullptr;
    std::map<const Plugin*, int> uses_;  // routes a plugin applies to, so far
    PolicyJson store_;
    PolicyNames names_;
};

ImportResult finishKong(const envoy::YamlNode& root, ImportLog& log, bool unreadable) {
    const std::optional<PolicyJson> file =
        unreadable || log.hasErrors() ? std::nullopt : mapKongConfig(root, log);
    return finishImport(log, file, unreadable);
}

envoy::YamlNode parse(std::string_view text, ImportLog& log) {
    envoy::YamlParseResult parsed = envoy::parseYaml(text);
    if (!parsed.ok)
        log.error(SourcePos{0, parsed.errorAt.line, parsed.errorAt.column}, parsed.error);
    return std::move(parsed.root);
}

}  // namespace

std::optional<PolicyJson> mapKongConfig(const envoy::YamlNode& root, ImportLog& log) {
    if (log.hasErrors()) return std::nullopt;
    Mapper mapper(root, log);
    std::optional<PolicyJson> file = mapper.map();
    if (log.hasErrors()) return std::nullopt;
    return file;
}

ImportResult importKong(const std::vector<std::string>& files) {
    ImportLog log;
    ImportResult failed;
    const std::optional<std::string> text =
        readSingleImportFile(files, "Kong reads one declarative configuration file", log, failed);
    if (!text) return failed;
    const envoy::YamlNode root = parse(*text, log);
    return finishKong(root, log, false);
}

ImportResult importKongText(std::string_view text, const std::string& name) {
    ImportLog log;
    log.addFile(name);
    const envoy::YamlNode root = parse(text, log);
    return finishKong(root, log, false);
}

}  // namespace ratelab::formats::kong
