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

std::uint64_t routeSpecificity(const RouteMatch& match) {
    constexpr std::uint64_t kExact = 2, kWildcards = 1, kPrefix = 0;
    if (!match.pathPattern.empty()) {
        const std::string_view pattern = match.pathPattern;
        if (pattern.find('*') == std::string_view::npos) return kExact << 32;
        std::uint64_t literal = 0;
        std::size_t from = 0;
        while (from < pattern.size()) {
            std::size_t end = pattern.find('/', from);
            if (end == std::string_view::npos) end = pattern.size();
            const std::string_view segment = pattern.substr(from, end - from);
            if (!segment.empty() && segment.find('*') == std::string_view::npos) ++literal;
            from = end + 1;
        }
        return kWildcards << 32 | literal;
    }
    std::string_view prefix = match.pathPrefix;
    while (!prefix.empty() && prefix.back() == '/')
        prefix.remove_suffix(1);  // "/api/" matches as "/api" does; "/" is the empty prefix
    return kPrefix << 32 | prefix.size();
}

Tier resolvedTier(const Policy& policy, const Tier& tier) {
    Tier resolved = tier;
    if (resolved.capacity <= 0) resolved.capacity = policy.capacity;
    if (resolved.refillPerSecond <= 0) resolved.refillPerSecond = policy.refillPerSecond;
    if (resolved.windowMs <= 0) resolved.windowMs = policy.windowMs;
    return resolved;
}

Limit compileLimit(const Policy& policy, const Tier* tier) {
    const Tier numbers = tier ? resolvedTier(policy, *tier)
                              : Tier{"", policy.capacity, policy.refillPerSecond, policy.windowMs};
    Limit limit;
    limit.algorithm = policy.algorithm;
    limit.capacity = numbers.capacity;
    if (numbers.refillPerSecond > 0) {
        const double interval = std::round(1e9 / numbers.refillPerSecond);
        limit.emissionInterval = interval < 1 ? 1 : static_cast<Nanos>(std::min(interval, 9e18));
    }
    limit.window = numbers.windowMs * kNanosPerMilli;
    if (policy.algorithm == Algorithm::FixedWindow) {
        limit.align = policy.align;
        limit.calendarUnit =
            policy.align == WindowAlign::Calendar ? policy.calendarUnit : CalendarUnit::None;
    }
    if (policy.algorithm == Algorithm::LeakyBucket) {
        // nginx's unit; the epsilon keeps 0.15 (9 r/m) from flooring to 149.
        const double milli = std::floor(numbers.refillPerSecond * 1000 + 1e-6);
        limit.milliRate = static_cast<std::int64_t>(std::clamp(milli, 1.0, 1e15));
    }
    if (policy.algorithm == Algorithm::HaproxyRate) {
        limit.countRefused = policy.countRefused;
        limit.expire = policy.expireMs * kNanosPerMilli;
    }
    limit.delay = policy.nodelay ? kNoDelay : policy.delay;
    limit.settles = chargesByOutcome(policy);
    return limit;
}

bool chargesByOutcome(const Policy& policy) {
    return policy.charge.rule != ChargeRule::Always || policy.charge.penalty > 0;
}

std::int64_t settleCost(const ChargeConfig& charge, int status, std::int64_t cost) {
    const auto in = [status](const std::vector<int>& statuses) {
        return std::find(statuses.begin(), statuses.end(), status) != statuses.end();
    };
    std::int64_t change = 0;
    if (charge.rule != ChargeRule::Always) {
        const bool failed = in(charge.failureStatuses);
        if (failed != (charge.rule == ChargeRule::Failures)) change = -cost;
    }
    if (charge.penalty > 0 && in(charge.penaltyStatuses)) change += charge.penalty;
    return change;
}

Limit perReplicaLimit(const Limit& limit, int replicas) {
    if (replicas <= 1) return limit;
    const std::int64_t n = replicas;
    Limit local = limit;
    if (limit.algorithm == Algorithm::LeakyBucket) {
        // nginx's burst B passes B + 1 requests at once; `delay` counts requests of the burst.
        local.capacity = std::max<std::int64_t>(1, (limit.capacity + 1) / n) - 1;
        if (limit.delay != kNoDelay) local.delay = limit.delay / n;
        if (limit.milliRate > 0) local.milliRate = std::max<std::int64_t>(1, limit.milliRate / n);
    } else {
        local.capacity = std::max<std::int64_t>(1, limit.capacity / n);
    }
    if (isRateAlgorithm(limit.algorithm)) local.emissionInterval = limit.emissionInterval * n;
    return local;
}

std::vector<Limit> compileLimits(const Policy& policy) {
    std::vector<Limit> limits;
    if (!policy.tiers || policy.tiers->tiers.empty()) {
        limits.push_back(compileLimit(policy));
        return limits;
    }
    for (const Tier& tier : policy.tiers->tiers)
        limits.push_back(compileLimit(policy, &tier));
    return limits;
}

}  // namespace ratelab
