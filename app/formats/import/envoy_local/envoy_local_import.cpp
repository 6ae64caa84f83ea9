// Envoy's local rate limit filter configurations as token bucket policies.

#include "formats/import/envoy_local/envoy_local_import.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "formats/import/path_regex.h"
#include "policy/policy_names.h"

namespace ratelab::formats::envoy_local {

using envoy::mapField;
using envoy::scalarText;
using envoy::YamlNode;

namespace {

constexpr std::string_view kFilterName = "envoy.filters.http.local_ratelimit";
constexpr std::string_view kConfigType = "local_ratelimit.v3.LocalRateLimit";
// The policy loader's bounds: a capacity of at most 1e9, a rate of at most 1e9/s.
constexpr double kMaxLoaderValue = 1e9;

// A percentage as a person writes it: "50", "0.5".
std::string percentText(double percent) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", percent);
    return buffer;
}

SourcePos pos(const YamlNode& node) {
    return SourcePos{0, node.at.line, node.at.column};
}

// A filter's or per-route entry's configuration: typed_config's content, or the node itself
// for a per-route entry (typed_per_filter_config: {NAME: {"@type": ..., ...}}).
bool isLocalRateLimit(const YamlNode* config) {
    return scalarText(mapField(config, "@type")).find(kConfigType) != std::string::npos;
}

// One bucket as Envoy's local filter keeps it.
struct Bucket {
    std::int64_t maxTokens = 0;
    double perSecond = 0;
};

class Mapper {
public:
    explicit Mapper(ImportLog& log) : log_(log) {}

    std::optional<PolicyJson> map(const YamlNode& root) {
        visit(root);
        if (log_.hasErrors()) return std::nullopt;
        if (policies_.empty()) {
            log_.error(pos(root), "no rate limit: no " + std::string(kFilterName) +
                                      " filter or per-route configuration with a token_bucket and "
                                      "filter_enabled above 0%");
            return std::nullopt;
        }
        PolicyJson file{{"version", 1}, {"routing", "most_specific"}};
        file["policies"] = std::move(policies_);
        return file;
    }

private:
    // Every map with http_filters is an HTTP connection manager, wherever the file nests it
    // (a bootstrap, a listener, a list of listeners).
    void visit(const YamlNode& node) {
        if (node.isMap()) {
            if (const YamlNode* filters = mapField(&node, "http_filters")) {
                connectionManager(node, *filters);
                return;
            }
            for (const auto& e : node.entries)
                visit(e.value);
        } else if (node.isSequence()) {
            for (const YamlNode& item : node.items)
                visit(item);
        }
    }

    void connectionManager(const YamlNode& hcm, const YamlNode& filters) {
        if (!filters.isSequence()) {
            log_.error(pos(filters), "http_filters is a list of filters");
            return;
        }
        const YamlNode* listenerConfig = nullptr;
        std::string name;
        for (const YamlNode& filter : filters.items) {
            const YamlNode* config = mapField(&filter, "typed_config");
            if (scalarText(mapField(&filter, "name")) != kFilterName && !isLocalRateLimit(config))
                continue;
            name = scalarText(mapField(&filter, "name"));
            listenerConfig = config;
            break;
        }
        if (name.empty()) return;
        const std::string prefix = scalarText(mapField(&hcm, "stat_prefix"));
        if (listenerConfig) {
            if (mapField(listenerConfig, "token_bucket"))
                addPolicy(*listenerConfig, PolicyJson{{"path_prefix", "/"}},
                          prefix.empty() ? "listener" : prefix, false);
        }
        const YamlNode* routeConfig = mapField(&hcm, "route_config");
        if (!routeConfig) {
            if (mapField(&hcm, "rds"))
                log_.warning(pos(*mapField(&hcm, "rds")),
                             "routes come from RDS, which the import does not read: only the "
                             "filter-level bucket is imported, for every path");
            return;
        }
        const YamlNode* hosts = mapField(routeConfig, "virtual_hosts");
        if (!hosts || !hosts->isSequence()) return;
        for (const YamlNode& host : hosts->items) {
            const YamlNode* hostConfig = mapField(mapField(&host, "typed_per_filter_config"), name);
            const YamlNode* routes = mapField(&host, "routes");
            if (!routes || !routes->isSequence()) continue;
            for (const YamlNode& route : routes->items) {
                const YamlNode* own = mapField(mapField(&route, "typed_per_filter_config"), name);
                const YamlNode* config = own ? own : hostConfig;
                if (!config) continue;
                if (!mapField(config, "token_bucket")) {
                    log_.error(pos(*config),
                               "a per-route local rate limit configuration needs a token_bucket "
                               "(Envoy refuses it without one)");
                    continue;
                }
                std::optional<PolicyJson> match = routeMatch(route);
                if (!match) continue;
                const std::string routeName = scalarText(mapField(&route, "name"));
                addPolicy(*config, *match,
                          routeName.empty() ? "route-" + routeSlug(*match) : routeName, true);
            }
        }
    }

    std::optional<PolicyJson> routeMatch(const YamlNode& route) {
        const YamlNode* match = mapField(&route, "match");
        if (const YamlNode* prefix = mapField(match, "prefix")) {
            if (!policy::isValidRoutePath(scalarText(prefix))) {
                log_.warning(pos(*prefix), "the prefix \"" + scalarText(prefix) +
                                               "\" is not a path a route can hold: its local "
                                               "rate limit is not imported");
                return std::nullopt;
            }
            std::string approximation;
            PolicyJson out = prefixRoute(scalarText(prefix), approximation);
            if (!approximation.empty()) log_.warning(pos(*prefix), "Envoy " + approximation);
            return out;
        }
        if (const YamlNode* path = mapField(match, "path")) {
            if (scalarText(path) == "/") return PolicyJson{{"path_prefix", "/"}};
            if (std::optional<PolicyJson> exact = exactRoute(scalarText(path))) return exact;
            log_.warning(pos(*path), "the path \"" + scalarText(path) +
                                         "\" cannot be said as a ratelab route: its local rate "
                                         "limit is not imported");
            return std::nullopt;
        }
        log_.warning(pos(match ? *match : route),
                     "only prefix and path route matches are imported (this route's local rate "
                     "limit is not)");
        return std::nullopt;
    }

    // The percentage a RuntimeFractionalPercent gives by default (unset: 0, Envoy's default).
    double percent(const YamlNode* fraction) {
        if (!fraction) return 0;
        if (mapField(fraction, "runtime_key"))
            log_.warning(pos(*mapField(fraction, "runtime_key")),
                         "Envoy's runtime may change this percentage at its key; the import "
                         "uses the default_value");
        const YamlNode* value = mapField(fraction, "default_value");
        const YamlNode* written = mapField(value, "numerator");
        const std::optional<std::int64_t> numerator =
            written ? envoy::scalarInt(*written) : std::nullopt;
        if (!numerator || *numerator < 0) {
            log_.error(pos(written ? *written
                           : value ? *value
                                   : *fraction),
                       "default_value needs a numerator of 0 or more");
            return 0;
        }
        const std::string denominator = scalarText(mapField(value, "denominator"));
        const double scale = denominator.empty() || denominator == "HUNDRED" ? 100
                             : denominator == "TEN_THOUSAND"                 ? 10'000
                             : denominator == "MILLION"                      ? 1'000'000
                                                                             : 0;
        if (scale == 0) {
            log_.error(pos(*mapField(value, "denominator")),
                       "denominator is HUNDRED, TEN_THOUSAND or MILLION");
            return 0;
        }
        return std::min(100.0, static_cast<double>(*numerator) * 100.0 / scale);
    }

    // A protobuf Duration as Envoy's YAML writes it: "1s", "0.25s", or {seconds, nanos}.
    std::optional<double> seconds(const YamlNode* node) {
        if (!node) return std::nullopt;
        if (node->isMap()) {
            const auto s = mapField(node, "seconds") ? envoy::scalarInt(*mapField(node, "seconds"))
                                                     : std::optional<std::int64_t>(0);
            const auto n = mapField(node, "nanos") ? envoy::scalarInt(*mapField(node, "nanos"))
                                                   : std::optional<std::int64_t>(0);
            if (!s || !n || *s < 0 || *n < 0 || *n > 999'999'999) return std::nullopt;
            return static_cast<double>(*s) + static_cast<double>(*n) / 1e9;
        }
        const std::string t = scalarText(node);
        if (t.size() < 2 || t.back() != 's') return std::nullopt;
        const std::string number = t.substr(0, t.size() - 1);
        if (number.find_first_not_of("0123456789.") != std::string::npos || number.front() == '.' ||
            std::count(number.begin(), number.end(), '.') > 1)
            return std::nullopt;
        return std::strtod(number.c_str(), nullptr);
    }

    std::optional<Bucket> bucket(const YamlNode& tokenBucket) {
        Bucket out;
        const YamlNode* max = mapField(&tokenBucket, "max_tokens");
        const std::optional<std::int64_t> maxTokens = max ? envoy::scalarInt(*max) : std::nullopt;
        if (!maxTokens || *maxTokens < 1 || *maxTokens > kMaxLoaderValue) {
            log_.error(pos(max ? *max : tokenBucket),
                       "token_bucket.max_tokens is a whole number from 1 to 1000000000");
            return std::nullopt;
        }
        const YamlNode* fill = mapField(&tokenBucket, "tokens_per_fill");
        const std::optional<std::int64_t> perFill =
            fill ? envoy::scalarInt(*fill) : std::optional<std::int64_t>(1);
        if (!perFill || *perFill < 1 || *perFill > 4'294'967'295) {
            log_.error(pos(*fill), "token_bucket.tokens_per_fill is a whole number above 0");
            return std::nullopt;
        }
        const YamlNode* interval = mapField(&tokenBucket, "fill_interval");
        const std::optional<double> s = seconds(interval);
        if (!s || *s <= 0) {
            log_.error(pos(interval ? *interval : tokenBucket),
                       "token_bucket.fill_interval is a duration above 0 (\"1s\", \"0.5s\")");
            return std::nullopt;
        }
        out.maxTokens = *maxTokens;
        out.perSecond = static_cast<double>(*perFill) / *s;
        if (out.perSecond > kMaxLoaderValue || out.perSecond < 1e-9) {
            log_.error(pos(interval ? *interval : tokenBucket),
                       "the bucket refills faster than 1e9 or slower than 1e-9 tokens a second, "
                       "which ratelab's token bucket does not take");
            return std::nullopt;
        }
        return out;
    }

    void addPolicy(const YamlNode& config, const PolicyJson& match, const std::string& name,
                   bool perRoute) {
        const SourcePos at = pos(config);
        const std::optional<Bucket> b = bucket(*mapField(&config, "token_bucket"));
        const double enabled = percent(mapField(&config, "filter_enabled"));
        const double enforced = percent(mapField(&config, "filter_enforced"));
        if (!b || log_.hasErrors()) return;
        if (enabled == 0) {
            log_.warning(at,
                         "filter_enabled is unset or 0%: Envoy's filter does nothing here; not "
                         "imported");
            return;
        }
        if (enabled < 100)
            log_.warning(at, "Envoy applies this limit to a sample of requests (filter_enabled " +
                                 percentText(enabled) + "%); the import applies it to all");
        if (enforced > 0 && enforced < 100)
            log_.warning(at,
                         "Envoy refuses only a sample of the requests over the limit "
                         "(filter_enforced " +
                             percentText(enforced) + "%); the import refuses all of them");
        if (enforced == 0)
            log_.warning(at,
                         "filter_enforced is unset or 0%: Envoy only counts; imported in "
                         "shadow mode");
        if (const YamlNode* d = mapField(&config, "descriptors"))
            log_.warning(pos(*d),
                         "descriptor buckets need the route's rate_limits actions, "
                         "which this import does not read: only the default bucket is "
                         "imported");
        if (scalarBoolField(config, "local_rate_limit_per_downstream_connection"))
            log_.warning(at,
                         "Envoy keeps one bucket per downstream connection; the import keeps "
                         "one bucket for all of them");
        if (const YamlNode* status = mapField(mapField(&config, "status"), "code");
            status && scalarText(status) != "429" && scalarText(status) != "TooManyRequests")
            log_.warning(pos(*status), "Envoy answers a refused request with status " +
                                           scalarText(status) + "; the import answers 429");
        log_.warning(at, std::string("Envoy's local limiter keeps one bucket per Envoy instance ") +
                             (perRoute ? "for this route" : "for the whole listener") +
                             ": N instances let N times the limit through; the import is one "
                             "bucket for every client, as if there were one instance");
        PolicyJson policy{{"name", names_.unique(name)},
                          {"match", match},
                          {"algorithm", "token_bucket"},
                          {"capacity", b->maxTokens},
                          {"refill_per_second", b->perSecond},
                          {"key", PolicyJson{{"source", "composite"}, {"parts", {"route"}}}},
                          {"budget", PolicyJson{{"enabled", false}}},
                          {"mode", enforced == 0 ? "shadow" : "enforce"}};
        policies_.push_back(std::move(policy));
    }

    static bool scalarBoolField(const YamlNode& map, std::string_view name) {
        const YamlNode* node = mapField(&map, name);
        return node && envoy::scalarBool(*node).value_or(false);
    }

    ImportLog& log_;
    PolicyJson policies_ = PolicyJson::array();
    PolicyNames names_;
};

ImportResult finish(const YamlNode& root, ImportLog& log) {
    const std::optional<PolicyJson> file =
        log.hasErrors() ? std::nullopt : mapEnvoyLocalConfig(root, log);
    return finishImport(log, file, false);
}

YamlNode parse(std::string_view text, ImportLog& log) {
    envoy::YamlParseResult parsed = envoy::parseYaml(text);
    if (!parsed.ok)
        log.error(SourcePos{0, parsed.errorAt.line, parsed.errorAt.column}, parsed.error);
    return std::move(parsed.root);
}

}  // namespace

std::optional<PolicyJson> mapEnvoyLocalConfig(const YamlNode& root, ImportLog& log) {
    if (log.hasErrors()) return std::nullopt;
    Mapper mapper(log);
    std::optional<PolicyJson> file = mapper.map(root);
    if (log.hasErrors()) return std::nullopt;
    return file;
}

ImportResult importEnvoyLocal(const std::vector<std::string>& files) {
    ImportLog log;
    ImportResult failed;
    const std::optional<std::string> text =
        readSingleImportFile(files, "envoy-local reads one Envoy configuration file", log, failed);
    if (!text) return failed;
    return finish(parse(*text, log), log);
}

ImportResult importEnvoyLocalText(std::string_view text, const std::string& name) {
    ImportLog log;
    log.addFile(name);
    return finish(parse(text, log), log);
}

}  // namespace ratelab::formats::envoy_local
