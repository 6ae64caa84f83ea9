// Traefik's routers and rateLimit middlewares as policies: read (YAML with yaml-cpp, TOML with
// toml++, both into the positioned tree of envoy/yaml_tree.h), then mapped.

#include "formats/import/traefik/traefik_import.h"

#include <cmath>
#include <map>

#include <toml++/toml.h>

#include "formats/import/path_regex.h"
#include "formats/import/traefik/traefik_rule.h"
#include "ratelab/ip_address.h"

namespace ratelab::formats::traefik {

using envoy::mapField;
using envoy::YamlNode;

namespace {

constexpr std::int64_t kNanosPerSecondTraefik = 1'000'000'000;
constexpr int kMaxChainDepth = 16;
constexpr std::int64_t kMaxBurst = 1'000'000'000;
constexpr double kMaxRatePerSecond = 1e9;

// A TOML node as the YAML tree's node, at its position.
YamlNode fromToml(const toml::node& node) {
    YamlNode out;
    out.at = envoy::YamlMark{static_cast<int>(node.source().begin.line),
                             static_cast<int>(node.source().begin.column)};
    if (const toml::table* t = node.as_table()) {
        out.kind = YamlNode::Kind::Map;
        for (const auto& [key, value] : *t) {
            YamlNode k;
            k.kind = YamlNode::Kind::Scalar;
            k.text = std::string(key.str());
            k.quoted = true;
            k.at = envoy::YamlMark{static_cast<int>(key.source().begin.line),
                                   static_cast<int>(key.source().begin.column)};
            out.entries.emplace_back(std::move(k), fromToml(value));
        }
    } else if (const toml::array* a = node.as_array()) {
        out.kind = YamlNode::Kind::Sequence;
        for (const toml::node& item : *a)
            out.items.push_back(fromToml(item));
    } else {
        out.kind = YamlNode::Kind::Scalar;
        if (const auto* s = node.as_string()) {
            out.text = s->get();
            out.quoted = true;
        } else if (const auto* i = node.as_integer()) {
            out.text = std::to_string(i->get());
        } else if (const auto* f = node.as_floating_point()) {
            out.text = std::to_string(f->get());
        } else if (const auto* b = node.as_boolean()) {
            out.text = b->get() ? "true" : "false";
        } else {
            out.quoted = true;  // dates and times: text, never a number
        }
    }
    return out;
}

// Go's time.ParseDuration, as Traefik's paerser reads `period` (a bare integer: seconds).
std::optional<std::int64_t> parseDuration(const YamlNode& node) {
    if (envoy::scalarType(node) == envoy::ScalarType::Int) {
        const std::optional<std::int64_t> seconds = envoy::scalarInt(node);
        if (!seconds || std::abs(*seconds) > INT64_MAX / kNanosPerSecondTraefik)
            return std::nullopt;
        return *seconds * kNanosPerSecondTraefik;
    }
    std::string_view s = node.text;
    if (!s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos) {
        if (s.size() > 12) return std::nullopt;
        return std::stoll(std::string(s)) * kNanosPerSecondTraefik;
    }
    bool negative = false;
    if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
        negative = s.front() == '-';
        s.remove_prefix(1);
    }
    if (s == "0") return 0;
    if (s.empty()) return std::nullopt;
    long double total = 0;
    while (!s.empty()) {
        std::size_t digits = 0;
        while (digits < s.size() &&
               (std::isdigit(static_cast<unsigned char>(s[digits])) || s[digits] == '.'))
            ++digits;
        if (digits == 0) return std::nullopt;
        const std::string number(s.substr(0, digits));
        if (std::count(number.begin(), number.end(), '.') > 1 || number == ".") return std::nullopt;
        s.remove_prefix(digits);
        std::size_t unitLength = 0;
        while (unitLength < s.size() && !std::isdigit(static_cast<unsigned char>(s[unitLength])) &&
               s[unitLength] != '.')
            ++unitLength;
        const std::string_view unit = s.substr(0, unitLength);
        s.remove_prefix(unitLength);
        long double scale = 0;
        if (unit == "ns")
            scale = 1;
        else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs")
            scale = 1e3L;
        else if (unit == "ms")
            scale = 1e6L;
        else if (unit == "s")
            scale = 1e9L;
        else if (unit == "m")
            scale = 60e9L;
        else if (unit == "h")
            scale = 3600e9L;
        else
            return std::nullopt;
        total += std::stold(number) * scale;
        if (total > static_cast<long double>(INT64_MAX)) return std::nullopt;
    }
    const auto ns = static_cast<std::int64_t>(total);
    return negative ? -ns : ns;
}

struct RateLimit {
    std::string name;
    SourcePos at;
    std::int64_t average = 0;
    std::int64_t periodNs = kNanosPerSecondTraefik;
    std::int64_t burst = 1;
    PolicyJson key;
    bool valid = true;
    bool used = false;
};

struct Middleware {
    SourcePos at;
    std::optional<RateLimit> rateLimit;
    std::vector<std::pair<std::string, SourcePos>> chain;  // a chain middleware's list
    bool isChain = false;
};

class Mapper {
public:
    Mapper(const TraefikConfig& config, ImportLog& log) : config_(config), log_(log) {}

    std::optional<PolicyJson> map() {
        for (std::size_t f = 0; f < config_.roots.size(); ++f)
            readMiddlewares(static_cast<int>(f));
        PolicyJson policies = PolicyJson::array();
        for (std::size_t f = 0; f < config_.roots.size(); ++f)
            readRouters(static_cast<int>(f), policies);
        if (log_.hasErrors()) return std::nullopt;
        for (const auto& [name, m] : middlewares_) {
            if (m.rateLimit && m.rateLimit->valid && !m.rateLimit->used && m.rateLimit->average > 0)
                log_.warning(m.at,
                             "middleware \"" + name + "\" is not used by any router: not imported");
        }
        if (policies.empty()) {
            log_.error(SourcePos{0, 0, 0},
                       "no rate limit: no router uses a rateLimit middleware with an average "
                       "above 0");
            return std::nullopt;
        }
        PolicyJson file{{"version", 1}, {"routing", "most_specific"}};
        if (!trusted_.is_null()) file["trusted_proxies"] = trusted_;
        file["policies"] = std::move(policies);
        return file;
    }

private:
    SourcePos pos(int file, const YamlNode& node) const {
        return SourcePos{file, node.at.line, node.at.column};
    }

    const YamlNode* http(int file) const { return mapField(&config_.roots[file], "http"); }

    std::optional<std::int64_t> wholeNumber(int file, const YamlNode* node, const char* what) {
        if (!node) return std::nullopt;
        if (envoy::scalarType(*node) != envoy::ScalarType::Int || !envoy::scalarInt(*node)) {
            log_.error(pos(file, *node), std::string(what) + ": expected a whole number, not \"" +
                                             envoy::printed(*node) + "\"");
            return std::nullopt;
        }
        return envoy::scalarInt(*node);
    }

    void readMiddlewares(int file) {
        const YamlNode* list = mapField(http(file), "middlewares");
        if (!list) return;
        if (!list->isMap()) {
            log_.error(pos(file, *list), "http.middlewares: expected a map of middlewares");
            return;
        }
        for (const auto& [k, v] : list->entries) {
            Middleware m;
            m.at = pos(file, k);
            if (const YamlNode* rl = mapField(&v, "rateLimit")) {
                m.rateLimit = readRateLimit(file, k.text, *rl);
            } else if (const YamlNode* chain = mapField(&v, "chain")) {
                m.isChain = true;
                const YamlNode* names = mapField(chain, "middlewares");
                if (names && names->isSequence()) {
                    for (const YamlNode& n : names->items)
                        m.chain.emplace_back(n.text, pos(file, n));
                }
            }
            if (middlewares_.count(k.text)) {
                log_.error(m.at, "middleware \"" + k.text + "\" is defined twice (also at " +
                                     lineRef(log_, middlewares_[k.text].at) + ")");
                continue;
            }
            middlewares_[k.text] = std::move(m);
        }
    }

    RateLimit readRateLimit(int file, const std::string& name, const YamlNode& node) {
        RateLimit r;
        r.name = name;
        r.at = pos(file, node);
        if (!node.isMap()) {
            log_.error(r.at, "rateLimit: expected a map (average, period, burst, sourceCriterion)");
            r.valid = false;
            return r;
        }
        if (auto average = wholeNumber(file, mapField(&node, "average"), "average"))
            r.average = *average;
        if (auto burst = wholeNumber(file, mapField(&node, "burst"), "burst"))
            r.burst = std::max<std::int64_t>(1, *burst);
        if (const YamlNode* period = mapField(&node, "period")) {
            const std::optional<std::int64_t> ns = parseDuration(*period);
            if (!ns) {
                log_.error(pos(file, *period), "period: \"" + envoy::printed(*period) +
                                                   "\" is not a duration (10s, 1m, 500ms, or "
                                                   "whole seconds)");
            } else if (*ns < 0) {
                log_.error(pos(file, *period),
                           "period: a negative period; Traefik does not "
                           "build the middleware");
            } else if (*ns > 0) {
                r.periodNs = *ns;
            }
        }
        // The policy loader's bounds: a capacity of at most 1e9, a rate of at most 1e9/s.
        if (r.burst > kMaxBurst) {
            log_.error(pos(file, *mapField(&node, "burst")),
                       "burst: at most " + std::to_string(kMaxBurst) + " is carried over");
        }
        if (r.average > 0 &&
            static_cast<double>(r.average) * 1e9 / static_cast<double>(r.periodNs) >
                kMaxRatePerSecond) {
            log_.error(r.at, "average / period: at most " +
                                 std::to_string(static_cast<std::int64_t>(kMaxRatePerSecond)) +
                                 " a second is carried over");
        }
        if (const YamlNode* redis = mapField(&node, "redis")) {
            log_.warning(pos(file, *redis),
                         "rateLimit.redis keeps one bucket per middleware and source in Redis, "
                         "shared by every router and Traefik instance; the import keeps one "
                         "per router in ratelab's store");
        }
        r.key = wholeAddressKey();
        if (const YamlNode* criterion = mapField(&node, "sourceCriterion"))
            readCriterion(file, *criterion, r);
        r.valid = !log_.hasErrors();
        if (r.average <= 0 && r.valid)
            log_.warning(r.at, "average " + std::to_string(r.average) +
                                   ": Traefik does not limit at all; not imported");
        return r;
    }

    void readCriterion(int file, const YamlNode& node, RateLimit& r) {
        const YamlNode* strategy = mapField(&node, "ipStrategy");
        const YamlNode* header = mapField(&node, "requestHeaderName");
        const YamlNode* host = mapField(&node, "requestHost");
        const int given = (strategy != nullptr) + (header != nullptr) +
                          (host != nullptr && envoy::scalarBool(*host).value_or(false));
        if (given > 1) {
            log_.error(pos(file, node),
                       "sourceCriterion: at most one of ipStrategy, "
                       "requestHeaderName and requestHost");
            return;
        }
        if (header) {
            if (!isHeaderName(header->text)) {
                log_.error(pos(file, *header), "requestHeaderName: \"" + envoy::printed(*header) +
                                                   "\" is not a header name");
                return;
            }
            r.key = PolicyJson{
                {"source", "header"}, {"header", header->text}, {"when_missing", "shared"}};
        } else if (host && envoy::scalarBool(*host).value_or(false)) {
            r.key = PolicyJson{{"source", "header"}, {"header", "host"}};
        } else if (strategy) {
            if (const YamlNode* subnet = mapField(strategy, "ipv6Subnet")) {
                if (auto bits = wholeNumber(file, subnet, "ipv6Subnet");
                    bits && *bits >= 1 && *bits <= 128)
                    r.key["ipv6_prefix"] = *bits;
            }
            const YamlNode* depth = mapField(strategy, "depth");
            const YamlNode* excluded = mapField(strategy, "excludedIPs");
            if (depth && wholeNumber(file, depth, "depth").value_or(0) > 0) {
                log_.warning(pos(file, *depth),
                             "ipStrategy.depth takes the client address at that depth of "
                             "X-Forwarded-For from the right; ratelab reads it right to left "
                             "past trusted_proxies, whose addresses the configuration does not "
                             "give: the import keys by the peer address (set trusted_proxies "
                             "to your proxies)");
            } else if (excluded && excluded->isSequence()) {
                PolicyJson cidrs = PolicyJson::array();
                for (const YamlNode& ip : excluded->items) {
                    const std::optional<Cidr> cidr =
                        ip.isScalar() ? Cidr::parse(ip.text) : std::nullopt;
                    if (!cidr) {
                        log_.error(pos(file, ip), "excludedIPs: \"" + envoy::printed(ip) +
                                                      "\" is not an address or a CIDR");
                        continue;
                    }
                    cidrs.push_back(cidr->toString());  // the network, host bits cleared
                }
                const PolicyJson proxies{{"cidrs", cidrs}, {"header", "x-forwarded-for"}};
                if (trusted_.is_null()) {
                    trusted_ = proxies;
                } else if (trusted_ != proxies) {
                    log_.warning(pos(file, *excluded),
                                 "ratelab trusts one list of proxies for every policy; these "
                                 "excludedIPs differ from the first ones read, and are not "
                                 "carried over");
                }
                log_.warning(pos(file, *excluded),
                             "ipStrategy.excludedIPs skips these addresses in X-Forwarded-For "
                             "(read only from the entry point's trusted peers); the import "
                             "trusts them as proxies (trusted_proxies), which reads the header "
                             "only when the peer is one of them");
            }
        }
    }

    void readRouters(int file, PolicyJson& policies) {
        const YamlNode* routers = mapField(http(file), "routers");
        if (!routers) return;
        if (!routers->isMap()) {
            log_.error(pos(file, *routers), "http.routers: expected a map of routers");
            return;
        }
        for (const auto& [k, v] : routers->entries) {
            const YamlNode* names = mapField(&v, "middlewares");
            if (!names) continue;
            std::vector<const RateLimit*> limits;
            if (names->isSequence()) {
                for (const YamlNode& n : names->items)
                    collect(n.text, pos(file, n), limits, 0);
            } else {
                log_.error(pos(file, *names), "middlewares: expected a list of names");
            }
            if (limits.empty()) continue;
            const YamlNode* ruleNode = mapField(&v, "rule");
            if (!ruleNode) {
                log_.error(pos(file, k), "router \"" + k.text + "\" has no rule");
                continue;
            }
            Rule rule;
            std::string error;
            std::size_t offset = 0;
            if (!parseRule(ruleNode->text, rule, error, offset)) {
                SourcePos at = pos(file, *ruleNode);
                if (!ruleNode->text.empty() && ruleNode->text.find('\n') == std::string::npos)
                    at.column += static_cast<int>(offset) + (ruleNode->quoted ? 1 : 0);
                log_.error(at, "rule: " + error);
                continue;
            }
            if (const YamlNode* priority = mapField(&v, "priority")) {
                log_.warning(pos(file, *priority),
                             "priority orders Traefik's routers; ratelab ranks routes by how "
                             "specific they are (an exact path, then a pattern, then the "
                             "longest prefix)");
            }
            std::vector<std::string> notes;
            const std::vector<PolicyJson> routes = routesOfRule(rule, notes);
            for (const std::string& note : notes)
                log_.warning(pos(file, *ruleNode), "router \"" + k.text + "\": " + note);
            if (routes.empty()) {
                log_.warning(pos(file, *ruleNode), "router \"" + k.text +
                                                       "\": no route says its rule; its limits "
                                                       "are not imported");
                continue;
            }
            for (const RateLimit* r : limits)
                writePolicies(k.text, *r, routes, policies);
        }
    }

    void collect(std::string name, SourcePos at, std::vector<const RateLimit*>& out, int depth) {
        if (const std::size_t atSign = name.find('@'); atSign != std::string::npos) {
            const std::string provider = name.substr(atSign + 1);
            name.resize(atSign);
            if (provider != "file") {
                log_.warning(at, "middleware \"" + name + "@" + provider +
                                     "\" comes from another provider; not imported");
                return;
            }
        }
        auto it = middlewares_.find(name);
        if (it == middlewares_.end()) {
            log_.error(at, "middleware \"" + name + "\" is not defined");
            return;
        }
        Middleware& m = it->second;
        if (m.isChain) {
            if (depth >= kMaxChainDepth) {
                log_.error(at, "chain \"" + name + "\" nests too deeply (a cycle?)");
                return;
            }
            for (const auto& [n, p] : m.chain)
                collect(n, p, out, depth + 1);
            return;
        }
        if (m.rateLimit && m.rateLimit->valid && m.rateLimit->average > 0) {
            m.rateLimit->used = true;
            out.push_back(&*m.rateLimit);
        }
    }

    void writePolicies(const std::string& router, const RateLimit& r,
                       const std::vector<PolicyJson>& routes, PolicyJson& policies) {
        const double perSecond = static_cast<double>(r.average) *
                                 static_cast<double>(kNanosPerSecondTraefik) /
                                 static_cast<double>(r.periodNs);
        warnBucket(r, perSecond);
        for (const PolicyJson& route : routes) {
            PolicyJson policy{
                {"name", names_.unique(r.name + "." + router +
                                       (routes.size() > 1 ? "." + routeSlug(route) : ""))},
                {"match", route},
                {"algorithm", "token_bucket"},
                {"capacity", r.burst},
                {"refill_per_second", perSecond},
                {"key", r.key},
                {"budget", PolicyJson{{"enabled", false}}},
                {"mode", "enforce"}};
            policies.push_back(std::move(policy));
        }
    }

    // What Traefik's bucket does that the token bucket does not: hold a request instead of
    // refusing it, and forget an idle bucket.
    void warnBucket(const RateLimit& r, double perSecond) {
        const double truncated = std::floor(perSecond);
        const std::int64_t maxDelayMs =
            perSecond < 1 ? 500 : static_cast<std::int64_t>(1000.0 / (2.0 * truncated));
        log_.warning(r.at, "Traefik holds a request for up to " + std::to_string(maxDelayMs) +
                               " ms when its token comes that soon, and forwards it; the token "
                               "bucket refuses it");
        const std::int64_t ttl =
            perSecond >= 1 ? 2 : 1 + static_cast<std::int64_t>(1.0 / perSecond);
        if (static_cast<double>(r.burst) > std::max(1.0, perSecond * static_cast<double>(ttl - 1)))
            log_.warning(r.at, "Traefik forgets a bucket " + std::to_string(ttl) +
                                   " wall-clock seconds after its last request and starts it "
                                   "full (" +
                                   std::to_string(r.burst) +
                                   "); the token bucket refills at the rate, so after a pause it "
                                   "lets fewer requests through at once");
    }

    const TraefikConfig& config_;
    ImportLog& log_;
    std::map<std::string, Middleware> middlewares_;
    PolicyJson trusted_;  // from excludedIPs; null: none
    PolicyNames names_;
};

ImportResult finishTraefik(const TraefikConfig& config, ImportLog& log) {
    const std::optional<PolicyJson> file = mapTraefikConfig(config, log);
    return finishImport(log, file, config.unreadable);
}

bool isToml(const std::string& name) {
    return name.size() >= 5 && name.compare(name.size() - 5, 5, ".toml") == 0;
}

}  // namespace

void parseTraefikText(std::string_view text, const std::string& name, bool toml,
                      TraefikConfig& config, ImportLog& log) {
    const int file = log.addFile(name);
    config.roots.resize(static_cast<std::size_t>(file) + 1);
    if (toml) {
        try {
            config.roots[file] = fromToml(toml::parse(text, name));
        } catch (const toml::parse_error& e) {
            log.error(SourcePos{file, static_cast<int>(e.source().begin.line),
                                static_cast<int>(e.source().begin.column)},
                      std::string(e.description()));
        }
        return;
    }
    envoy::YamlParseResult parsed = envoy::parseYaml(text);
    if (!parsed.ok) {
        log.error(SourcePos{file, parsed.errorAt.line, parsed.errorAt.column}, parsed.error);
        return;
    }
    config.roots[file] = std::move(parsed.root);
}

TraefikConfig readTraefikFiles(const std::vector<std::string>& files, ImportLog& log) {
    TraefikConfig config;
    for (const std::string& path : files) {
        std::string error;
        const std::optional<std::string> text = readImportFile(path, error);
        if (!text) {
            const int file = log.addFile(path);
            config.roots.resize(static_cast<std::size_t>(file) + 1);
            log.error(SourcePos{file, 0, 0}, error);
            config.unreadable = true;
            continue;
        }
        parseTraefikText(*text, path, isToml(path), config, log);
    }
    return config;
}

std::optional<PolicyJson> mapTraefikConfig(const TraefikConfig& config, ImportLog& log) {
    if (log.hasErrors()) return std::nullopt;
    Mapper mapper(config, log);
    std::optional<PolicyJson> file = mapper.map();
    if (log.hasErrors()) return std::nullopt;
    return file;
}

ImportResult importTraefik(const std::vector<std::string>& files) {
    ImportLog log;
    if (files.empty()) {
        log.addFile("");
        log.error(SourcePos{0, 0, 0}, "no configuration file");
    }
    const TraefikConfig config = readTraefikFiles(files, log);
    return finishTraefik(config, log);
}

ImportResult importTraefikText(std::string_view text, const std::string& name, bool toml) {
    ImportLog log;
    TraefikConfig config;
    parseTraefikText(text, name, toml, config, log);
    return finishTraefik(config, log);
}

}  // namespace ratelab::formats::traefik
