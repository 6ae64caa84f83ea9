#include "ratelab/policy.h"

#include <algorithm>
#include <cmath>

namespace ratelab {

namespace {

// Splits off the next path segment; `path` keeps the rest after the '/'.
std::string_view nextSegment(std::string_view& path) {
    if (!path.empty() && path.front() == '/') path.remove_prefix(1);
    std::size_t slash = path.find('/');
    std::string_view segment = path.substr(0, slash);
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash);
    return segment;
}

// "*" matches one segment, "**" any number of them (zero included); other segments literally.
bool matchPattern(std::string_view pattern, std::string_view path) {
    while (!pattern.empty()) {
        std::string_view want = nextSegment(pattern);
        if (want == "**") {
            if (pattern.empty()) return true;
            for (std::string_view rest = path;; nextSegment(rest)) {
                if (matchPattern(pattern, rest)) return true;
                if (rest.empty()) return false;
            }
        }
        if (path.empty()) return want.empty();
        std::string_view have = nextSegment(path);
        if (want != "*" && want != have) return false;
    }
    return path.empty() || path == "/";
}

}  // namespace

bool RouteMatch::matches(std::string_view method, std::string_view path) const {
    if (!methods.empty()) {
        bool found = false;
        for (const std::string& m : methods)
            found = found || m == method;
        if (!found) return false;
    }
    if (!pathPattern.empty()) return matchPattern(pathPattern, path);
    if (pathPrefix.empty() || pathPrefix == "/") return true;
    std::string_view prefix = pathPrefix;
    if (prefix.back() == '/') prefix.remove_suffix(1);
    if (path.substr(0, prefix.size()) != prefix) return false;
    return path.size() == prefix.size() || path[prefix.size()] == '/';
}

Limit compileLimit(Algorithm algorithm, std::int64_t capacity, double refillPerSecond,
                   std::int64_t windowMs, std::int64_t delay, bool nodelay) {
    Limit limit;
    limit.algorithm = algorithm;
    limit.capacity = capacity;
    if (refillPerSecond > 0) {
        double interval = std::round(1e9 / refillPerSecond);
        limit.emissionInterval = interval < 1 ? 1 : static_cast<Nanos>(std::min(interval, 9e18));
    }
    limit.window = windowMs * kNanosPerMilli;
    limit.delay = nodelay ? kNoDelay : delay;
    return limit;
}

Limit perReplicaLimit(const Limit& limit, int replicas) {
    if (replicas <= 1) return limit;
    const std::int64_t n = replicas;
    Limit local = limit;
    if (limit.algorithm == Algorithm::LeakyBucket) {
        // nginx's burst B passes B + 1 requests at once; `delay` counts requests of the burst.
        local.capacity = std::max<std::int64_t>(1, (limit.capacity + 1) / n) - 1;
        if (limit.delay != kNoDelay) local.delay = limit.delay / n;
    } else {
        local.capacity = std::max<std::int64_t>(1, limit.capacity / n);
    }
    if (isRateAlgorithm(limit.algorithm)) local.emissionInterval = limit.emissionInterval * n;
    return local;
}

void compileLimits(PolicySet& set) {
    for (Policy& p : set.policies) {
        p.limit = compileLimit(p.algorithm, p.capacity, p.refillPerSecond, p.windowMs, p.delay,
                               p.nodelay);
        if (!p.tiers) continue;
        for (Tier& tier : p.tiers->tiers) {
            tier.limit =
                compileLimit(p.algorithm, tier.capacity > 0 ? tier.capacity : p.capacity,
                             tier.refillPerSecond > 0 ? tier.refillPerSecond : p.refillPerSecond,
                             tier.windowMs > 0 ? tier.windowMs : p.windowMs, p.delay, p.nodelay);
        }
    }
}

}  // namespace ratelab
