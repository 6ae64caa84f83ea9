// What the importers' fields become in the fields the policy loader reads, and the warnings
// that say how each differs from the product.

#include "formats/import/engine_fit.h"

#include <string>

#include "formats/import/path_regex.h"

namespace ratelab::formats {

namespace {

bool routeMatches(const PolicyJson& match, const std::string& path) {
    RouteMatch m;
    if (match.contains("path_pattern")) {
        m.pathPattern = match["path_pattern"].get<std::string>();
        m.pathPrefix.clear();
    } else {
        m.pathPrefix = match.value("path_prefix", "/");
    }
    if (match.contains("methods") && !match["methods"].empty())
        return m.matches(match["methods"][0].get<std::string>(), path);
    return m.matches("GET", path);
}

PolicyJson routeOf(const PolicyJson& match) {
    PolicyJson route = match;
    route.erase("methods");
    return route;
}

// A product that applies the limits of one route per request (nginx's location): the engine
// charges every policy whose route matches, in file order.
void warnOverlappingRoutes(const PolicyJson& policies, const std::vector<SourcePos>& at,
                           const std::string& product, const std::string& route, ImportLog& log) {
    for (std::size_t i = 0; i < policies.size(); ++i) {
        const PolicyJson own = routeOf(policies[i]["match"]);
        const std::string path = samplePath(own);
        for (std::size_t j = 0; j < policies.size(); ++j) {
            const PolicyJson other = routeOf(policies[j]["match"]);
            if (j == i || other == own || !routeMatches(other, path)) continue;
            log.warning(at[i], product + " applies only the limits of the " + route +
                                   " a request is routed to; the engine charges every policy "
                                   "whose route matches, so requests to " +
                                   routeText(own) + " are also charged by policy \"" +
                                   policies[j]["name"].get<std::string>() + "\" (" +
                                   lineRef(log, at[j]) + ")");
        }
    }
}

// A key's when_missing: what the product does with a request without the key's header.
void fitMissingKey(PolicyJson& key, SourcePos at, const std::string& product, ImportLog& log) {
    if (!key.contains("when_missing")) return;
    const std::string rule = key["when_missing"].get<std::string>();
    key.erase("when_missing");
    const std::string does =
        rule == "shared" ? "counts every request without the key's header in one shared bucket"
        : rule == "peer" ? "keys a request without the key's header by the client address alone"
                         : "does not limit a request without the key's header";
    log.warning(at, product + " " + does +
                        "; the engine refuses such a request with 412 (no key to count it by)");
}

}  // namespace

void fitNginxToEngine(PolicyJson& file, const std::vector<SourcePos>& at, ImportLog& log) {
    if (file.value("routing", "") == "most_specific") {
        file.erase("routing");
        warnOverlappingRoutes(file["policies"], at, "nginx", "location", log);
    }
    PolicyJson fitted = PolicyJson::array();
    for (std::size_t i = 0; i < file["policies"].size(); ++i) {
        PolicyJson& policy = file["policies"][i];
        fitMissingKey(policy["key"], at[i], "nginx", log);
        if (!policy.contains("limits")) {
            fitted.push_back(std::move(policy));
            continue;
        }
        // Zones on one key: nginx checks them all, charges none when one refuses, and delays
        // by the longest. One policy per zone, in the order nginx checks them.
        std::string zones;
        for (const PolicyJson& limit : policy["limits"])
            zones += (zones.empty() ? "" : ", ") + limit["name"].get<std::string>();
        log.warning(at[i], "nginx charges none of the zones " + zones +
                               " when one of them refuses a request; the import writes a "
                               "policy per zone, and a request a later one refuses stays "
                               "charged by the ones before it");
        const PolicyJson limits = policy["limits"];
        policy.erase("limits");
        const std::string name = policy["name"].get<std::string>();
        for (const PolicyJson& limit : limits) {
            PolicyJson one;
            for (auto it = policy.begin(); it != policy.end(); ++it) {
                one[it.key()] = it.value();
                if (it.key() != "match") continue;
                for (auto f = limit.begin(); f != limit.end(); ++f) {
                    if (f.key() != "name") one[f.key()] = f.value();
                }
            }
            one["name"] = name + "." + limit["name"].get<std::string>();
            fitted.push_back(std::move(one));
        }
    }
    file["policies"] = std::move(fitted);
}

void fitTraefikToEngine(PolicyJson& file, const std::vector<SourcePos>& at, ImportLog& log) {
    if (file.value("routing", "") == "most_specific") {
        file.erase("routing");
        warnOverlappingRoutes(file["policies"], at, "Traefik", "router", log);
    }
    for (std::size_t i = 0; i < file["policies"].size(); ++i)
        fitMissingKey(file["policies"][i]["key"], at[i], "Traefik", log);
}

void fitKongToEngine(PolicyJson& file, const std::vector<SourcePos>& at, ImportLog& log) {
    if (file.value("routing", "") == "most_specific") {
        file.erase("routing");
        warnOverlappingRoutes(file["policies"], at, "Kong", "route", log);
    }
    for (std::size_t i = 0; i < file["policies"].size(); ++i)
        fitMissingKey(file["policies"][i]["key"], at[i], "Kong", log);
}

void fitEnvoyLocalToEngine(PolicyJson& file, const std::vector<SourcePos>& at, ImportLog& log) {
    if (file.value("routing", "") == "most_specific") {
        file.erase("routing");
        warnOverlappingRoutes(file["policies"], at, "Envoy", "route", log);
    }
}

void fitHaproxyToEngine(PolicyJson& file, const std::vector<SourcePos>& at, ImportLog& log) {
    for (std::size_t i = 0; i < file["policies"].size(); ++i) {
        PolicyJson& policy = file["policies"][i];
        fitMissingKey(policy["key"], at[i], "HAProxy", log);
        if (policy.value("algorithm", "") != "haproxy_rate") continue;
        const std::int64_t window = policy["window_ms"].get<std::int64_t>();
        policy["algorithm"] = "sliding_window";
        log.warning(at[i],
                    "HAProxy's rate counter weights the previous period by the share of it "
                    "still inside the window, in whole milliseconds; the import uses the "
                    "engine's sliding window, which weights it in 1/65536 steps");
        if (policy.value("count_refused", false)) {
            log.warning(at[i],
                        "HAProxy counts the requests this rule denies too (they are tracked "
                        "before it); the sliding window counts admitted requests only, so a "
                        "client that keeps sending past the limit is let through again "
                        "sooner");
        }
        // Denied before it is counted, the rule reads the count without the request itself:
        // `gt X` lets X + 1 through, where the sliding window's capacity counts the request.
        if (!policy.value("count_refused", true))
            policy["capacity"] = policy["capacity"].get<std::int64_t>() + 1;
        policy.erase("count_refused");
        if (policy.contains("expire_ms")) {
            const std::int64_t expire = policy["expire_ms"].get<std::int64_t>();
            if (expire < 2 * window) {
                log.warning(at[i], "HAProxy forgets a key " + std::to_string(expire) +
                                       " ms after its last use; the sliding window forgets it "
                                       "after two idle periods (" +
                                       std::to_string(2 * window) + " ms)");
            }
            policy.erase("expire_ms");
        }
    }
}

}  // namespace ratelab::formats
