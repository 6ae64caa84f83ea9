#pragma once

// Shared by the Redis store suites: the suite's own server, a store on it, seeded request
// traces, and a field-by-field comparison of two stores' results.

#include <QtTest>

#include <cinttypes>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ratelab/memory_store.h"
#include "ratelab/redis_store.h"
#include "redis_fixture.h"

namespace ratelab::redistest {

/// The base of a suite that runs on one throwaway redis-server (server_, on a unix socket),
/// started before the suite's first test and killed with the suite.
class RedisSuite : public QObject {
    Q_OBJECT

protected:
    testing::RedisServer server_;

private slots:
    void initTestCase() {
        std::string error;
        QVERIFY2(server_.start(&error), error.c_str());
    }
};

inline constexpr Nanos kMs = kNanosPerMilli;
inline constexpr Nanos kSecond = kNanosPerSecond;
/// A realistic epoch time: server-time stores see values like this (far above 2^53).
inline constexpr Nanos kEpoch = 1'700'000'000'000'000'000LL;

/// A store deciding on the caller's clock, as the simulator drives it.
inline std::unique_ptr<Store> callerTimeStore(const std::vector<std::string>& urls,
                                              const std::string& ns,
                                              RedisStoreOptions options = {}) {
    options.urls = urls;
    options.keyNamespace = ns;
    options.timeSource = RedisTimeSource::Caller;
    std::string error;
    std::unique_ptr<Store> store = makeRedisStore(options, &error);
    if (!store) qFatal("makeRedisStore: %s", error.c_str());
    return store;
}

inline RedisStoreCounters countersOf(const Store& store) {
    return dynamic_cast<const RedisStore&>(store).counters();
}

inline Limit makeLimit(Algorithm algorithm) {
    Limit l;
    l.algorithm = algorithm;
    switch (algorithm) {
        case Algorithm::TokenBucket:
            l.capacity = 10;
            l.emissionInterval = 100 * kMs;
            break;
        case Algorithm::Gcra:
            l.capacity = 5;
            l.emissionInterval = 250 * kMs;
            break;
        case Algorithm::FixedWindow:
        case Algorithm::SlidingWindow:
            l.capacity = 20;
            l.window = 2 * kSecond;
            break;
        case Algorithm::SlidingLog:
            l.capacity = 8;
            l.window = kSecond;
            break;
        case Algorithm::LeakyBucket:
            l.capacity = 5;
            l.emissionInterval = 100 * kMs;
            l.delay = 2;
            break;
    }
    return l;
}

/// The time a limit takes to admit its capacity once: the scale traces step time on.
inline Nanos periodOf(const Limit& l) {
    return isRateAlgorithm(l.algorithm) ? l.capacity * l.emissionInterval : l.window;
}

/// One request of a trace; the strings live in the trace.
struct TraceItem {
    std::string key;
    std::string partition;
    std::string scope;
    std::string fallback;
    /// With TraceShape::chain: the enclosing levels (two peers share a network; every
    /// network shares one outer scope), each with its bucket.
    std::string scope2;
    std::string fallback2;
    std::string scope3;
    std::string fallback3;
    std::int64_t cost = 1;
    Nanos now = 0;
};

struct TraceShape {
    int keys = 20;             ///< distinct keys (skewed: low ids are hotter)
    int peers = 0;             ///< > 0: budget rows; keys are grouped under this many peers
    bool timeGoesBack = true;  ///< occasional small steps back (caller clocks may)
    bool chain = false;        ///< with peers: a three-level budget chain (TraceItem::scope2)
    Nanos meanStep = 0;        ///< 0: derived from the limit
};

/// A seeded trace over several keys: mostly cost 1, some larger, a few above capacity; time
/// mostly creeping forward, with idle gaps of several periods and (optionally) steps back.
inline std::vector<TraceItem> makeTrace(const Limit& limit, int count, std::uint64_t seed,
                                        TraceShape shape) {
    std::mt19937_64 rng(seed);
    std::vector<TraceItem> trace;
    trace.reserve(static_cast<std::size_t>(count));
    const Nanos period = periodOf(limit);
    // About 4x the limit on the hottest key, 2x on a middling one, under it on the coldest.
    const Nanos meanStep = shape.meanStep > 0 ? shape.meanStep : period / (limit.capacity + 1) / 40;
    Nanos now = kEpoch;
    for (int i = 0; i < count; ++i) {
        const std::uint64_t r = rng() % 1000;
        if (r == 0) {
            now += 5 * period + static_cast<Nanos>(rng() % static_cast<std::uint64_t>(period));
        } else if (r == 1 && shape.timeGoesBack) {
            now -= static_cast<Nanos>(rng() % static_cast<std::uint64_t>(period / 2 + 1));
        } else {
            now += static_cast<Nanos>(rng() % static_cast<std::uint64_t>(2 * meanStep + 1));
        }
        TraceItem item;
        const int id = static_cast<int>(std::min(rng() % shape.keys, rng() % shape.keys));
        const std::uint64_t c = rng() % 100;
        item.cost = c < 90   ? 1
                    : c < 99 ? 2 + static_cast<std::int64_t>(rng() % 3)
                             : limit.capacity + 1 + static_cast<std::int64_t>(rng() % 3);
        item.now = now;
        if (shape.peers > 0) {
            const int peer = id % shape.peers;
            item.partition = "peer:198.51.100." + std::to_string(peer);
            item.key = "auth:" + std::to_string(id);
            item.scope = item.partition;
            item.fallback = "ip:198.51.100." + std::to_string(peer);
            if (shape.chain) {
                item.scope2 = "net:198.51.100." + std::to_string(peer / 2) + "/31";
                item.fallback2 = "ip:198.51.100." + std::to_string(peer / 2) + "/31";
                item.scope3 = "net:198.51.100.0/24";
                item.fallback3 = "ip:198.51.100.0/24";
                item.partition = item.fallback3;
            }
        } else {
            item.key = "auth:" + std::to_string(id);
            item.partition = item.key;
        }
        trace.push_back(std::move(item));
    }
    return trace;
}

/// The request of `item`; `budget` holds its chain: one level, or with a chained trace three
/// (budget[0..2]). The enclosing levels' caps are 2 and 3 times the template's.
inline ConsumeRequest requestOf(const TraceItem& item, const Limit& limit,
                                const BucketBudget* budgetTemplate, BucketBudget* budget) {
    ConsumeRequest r;
    r.limitId = 1;
    r.limitName = "api";
    r.limit = &limit;
    r.partition = item.partition;
    r.key = item.key;
    r.cost = item.cost;
    r.now = item.now;
    if (budgetTemplate) {
        *budget = *budgetTemplate;
        budget->scope = item.scope;
        budget->fallbackKey = item.fallback;
        budget->next = nullptr;
        if (!item.scope2.empty()) {
            budget[1] = *budgetTemplate;
            budget[1].scope = item.scope2;
            budget[1].fallbackKey = item.fallback2;
            budget[1].cap = 2 * budgetTemplate->cap;
            budget[2] = *budgetTemplate;
            budget[2].scope = item.scope3;
            budget[2].fallbackKey = item.fallback3;
            budget[2].cap = 3 * budgetTemplate->cap;
            budget[2].next = nullptr;
            budget[1].next = &budget[2];
            budget[0].next = &budget[1];
        }
        r.budget = budget;
    }
    return r;
}

/// One consumption; the partition defaults to the key.
inline ConsumeResult consumeOne(Store& store, const Limit& limit, const std::string& key, Nanos now,
                                const BucketBudget* budget = nullptr,
                                const std::string& partition = {}, std::int64_t cost = 1,
                                Nanos timeout = 0) {
    ConsumeRequest r;
    r.limitId = 1;
    r.limitName = "api";
    r.limit = &limit;
    r.partition = partition.empty() ? std::string_view(key) : std::string_view(partition);
    r.key = key;
    r.cost = cost;
    r.now = now;
    r.budget = budget;
    r.timeout = timeout;
    return store.consume(r);
}

/// Empty when both results agree on every field; else a description of the first difference.
inline std::string difference(const ConsumeResult& expected, const ConsumeResult& actual) {
    const Decision& e = expected.decision;
    const Decision& a = actual.decision;
    if (expected.status == actual.status && e.allowed == a.allowed && e.reason == a.reason &&
        e.limit == a.limit && e.remaining == a.remaining && e.retryAfter == a.retryAfter &&
        e.resetAfter == a.resetAfter && e.delay == a.delay &&
        expected.chargedFallback == actual.chargedFallback &&
        expected.chargedLevel == actual.chargedLevel &&
        (!e.allowed || expected.stamp == actual.stamp))  // a stamp names what was charged
        return {};
    char text[512];
    auto describe = [](const ConsumeResult& r, char* out, std::size_t size) {
        std::snprintf(
            out, size,
            "status %d allowed %d reason %d limit %" PRId64 " remaining %" PRId64 " retry %" PRId64
            " reset %" PRId64 " delay %" PRId64 " charged level %d stamp %" PRId64 " %s",
            int(r.status), int(r.decision.allowed), int(r.decision.reason), r.decision.limit,
            r.decision.remaining, r.decision.retryAfter, r.decision.resetAfter, r.decision.delay,
            int(r.chargedLevel), r.stamp, r.error.c_str());
    };
    char left[240];
    char right[240];
    describe(expected, left, sizeof left);
    describe(actual, right, sizeof right);
    std::snprintf(text, sizeof text, "memory: %s\n   redis: %s", left, right);
    return text;
}

}  // namespace ratelab::redistest
