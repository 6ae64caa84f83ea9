// The Redis store: requests become EVALSHA calls of one script per algorithm (redis_request.cpp,
// lua_scripts.cpp), run by RedisClient (pooling, Cluster routing, retries within a deadline);
// an optional local cache answers floods from keys Redis already refused.

#include "ratelab/redis_store.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <map>
#include <mutex>
#include <optional>
#include <random>

#include "algorithms/algorithms.h"
#include "ratelab/redis_url.h"
#include "redis/lua_scripts.h"
#include "redis/over_limit_cache.h"
#include "redis/redis_client.h"
#include "redis/redis_request.h"
#include "redis/sentinel.h"

namespace ratelab {

namespace redis {
namespace {

// HAProxy's counter counting refused requests: a refusal answered locally would leave Redis
// uncounted, and the counter would let the key through earlier than it should.
bool countsRefusals(const Limit& limit) {
    return limit.algorithm == Algorithm::HaproxyRate && limit.countRefused;
}

std::int64_t parseInfoField(std::string_view info, std::string_view field) {
    std::size_t at = 0;
    while ((at = info.find(field, at)) != std::string_view::npos) {
        if ((at == 0 || info[at - 1] == '\n') && at + field.size() < info.size() &&
            info[at + field.size()] == ':') {
            const char* begin = info.data() + at + field.size() + 1;
            std::int64_t value = 0;
            std::from_chars(begin, info.data() + info.size(), value);
            return value;
        }
        at += field.size();
    }
    return 0;
}

class RedisStoreImpl final : public RedisStore {
public:
    RedisStoreImpl(const RedisStoreOptions& options, ClientOptions clientOptions)
        : options_(options)
        , client_(std::move(clientOptions))
        , settings_{options_.keyNamespace, options_.timeSource == RedisTimeSource::Caller,
                    ceilMillis(std::max<Nanos>(0, options_.callerTimeMinKeyLifetime))}
        , seed_(std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32)) {
        if (options_.overLimitCacheEntries > 0)
            cache_ = std::make_unique<OverLimitCache>(options_.overLimitCacheEntries);
    }

    ConsumeResult consume(const ConsumeRequest& request) override {
        ConsumeResult result;
        EncodedRequest encoded;
        if (!encode(request, &encoded, &result)) return result;
        const auto started = Clock::now();
        const Nanos cacheNow = cacheClock(request, started);
        std::uint64_t fingerprint = 0;
        if (cache_) {
            fingerprint = fingerprintOf(request);
            if (fromCache(request, fingerprint, cacheNow, &result)) return result;
        }
        Outcome outcome = client_.eval(encoded.call(), deadlineFor(request.timeout, started));
        finish(request, std::move(outcome), fingerprint, cacheNow, &result);
        return result;
    }

    void consumeBatch(std::span<const ConsumeRequest> requests,
                      std::span<ConsumeResult> results) override {
        if (requests.size() == 1) {  // no pipeline to build
            results[0] = consume(requests[0]);
            return;
        }
        const auto started = Clock::now();
        std::vector<std::uint64_t> fingerprints(cache_ ? requests.size() : 0);
        pipeline(
            requests, started,
            [&](std::size_t i, EncodedRequest* encoded) {
                const ConsumeRequest& request = requests[i];
                results[i] = ConsumeResult{};
                if (!encode(request, encoded, &results[i])) return false;
                if (!cache_) return true;
                fingerprints[i] = fingerprintOf(request);
                return !fromCache(request, fingerprints[i], cacheClock(request, started),
                                  &results[i]);
            },
            [&](std::size_t i, Outcome outcome) {
                finish(requests[i], std::move(outcome), cache_ ? fingerprints[i] : 0,
                       cacheClock(requests[i], started), &results[i]);
            });
    }

    SettleResult settle(const SettleRequest& request) override {
        SettleResult result;
        EncodedRequest encoded;
        if (!encodeSettleCall(request, &encoded, &result)) return result;
        const auto started = Clock::now();
        Outcome outcome = client_.eval(encoded.call(), deadlineFor(request.timeout, started));
        finishSettle(request, std::move(outcome), &result);
        return result;
    }

    void settleBatch(std::span<const SettleRequest> requests,
                     std::span<SettleResult> results) override {
        if (requests.size() == 1) {
            results[0] = settle(requests[0]);
            return;
        }
        pipeline(
            requests, Clock::now(),
            [&](std::size_t i, EncodedRequest* encoded) {
                results[i] = SettleResult{};
                return encodeSettleCall(requests[i], encoded, &results[i]);
            },
            [&](std::size_t i, Outcome outcome) {
                finishSettle(requests[i], std::move(outcome), &results[i]);
            });
    }

    KeyspaceStats keyspace() const override {
        KeyspaceStats stats;
        const Deadline deadline = deadlineFor(0, Clock::now());
        const std::string_view dbsize[] = {"DBSIZE"};
        for (const Outcome& o : client_.onEveryMaster(dbsize, deadline))
            if (o.kind == Outcome::Kind::Reply && o.reply->type == REDIS_REPLY_INTEGER)
                stats.buckets += o.reply->integer;
        const std::string_view info[] = {"INFO", "memory"};
        for (const Outcome& o : client_.onEveryMaster(info, deadline))
            if (o.kind == Outcome::Kind::Reply && o.reply->type == REDIS_REPLY_STRING)
                stats.bytes += parseInfoField({o.reply->str, o.reply->len}, "used_memory_dataset");
        return stats;
    }

    KeyspaceStats keyspaceAt(Nanos now) const override {
        // The walk visits every key (docs/RELIABILITY.md has its cost): past kExactWalkKeys keys it
        // is made again only once the wall time since the last one is kWalkSpacing times what that
        // one took, so that it costs a run at most about 1/kWalkSpacing of its time; in between,
        // the last walk's counts stand.
        const KeyspaceStats quick = keyspace();
        {
            std::lock_guard<std::mutex> lock(walkMutex_);
            if (lastWalk_ && quick.buckets > kExactWalkKeys &&
                Clock::now() - lastWalkEnd_ < kWalkSpacing * lastWalkCost_) {
                KeyspaceStats held = *lastWalk_;
                held.bytes = quick.bytes;
                return held;
            }
        }
        const Clock::time_point started = Clock::now();
        KeyspaceStats stats = walkKeyspace(now);
        stats.bytes = quick.bytes;
        std::lock_guard<std::mutex> lock(walkMutex_);
        lastWalk_ = stats;
        lastWalkEnd_ = Clock::now();
        lastWalkCost_ = lastWalkEnd_ - started;
        return stats;
    }

    std::string_view kind() const override { return "redis"; }

private:
    static constexpr std::int64_t kExactWalkKeys = 100'000;
    static constexpr int kWalkSpacing = 20;

    // Every key of the namespace judged at the caller's `now` (lua/keyspace.lua), bytes aside.
    KeyspaceStats walkKeyspace(Nanos now) const {
        const Script& script = keyspaceScript();
        // EVAL, the source, numkeys, then ARGV (lua_scripts.h keyspaceScript).
        std::vector<std::string> args = {"EVAL",
                                         script.source,
                                         "0",
                                         "0",
                                         keyspacePattern(options_.keyNamespace),
                                         std::to_string(options_.keyNamespace.size() + 3),
                                         std::to_string(kKeyspaceStep)};
        appendKeyspaceNow(now, settings_, &args);
        {
            std::lock_guard<std::mutex> lock(knownMutex_);
            for (const auto& [name, known] : known_)
                appendKeyspaceLimit(name, known.limit, known.slotLifetimeMs, now, settings_, &args);
        }
        // Every master's walk starts with `first` (cursor 0); its later steps send `next`.
        const std::vector<std::string_view> first(args.begin(), args.end());
        std::vector<std::string_view> next = first;
        std::string cursor;
        KeyspaceStats stats;
        const auto step = [&](const redisReply& reply, std::span<const std::string_view>* send) {
            if (reply.type != REDIS_REPLY_ARRAY || reply.elements != 4 ||
                reply.element[0]->type != REDIS_REPLY_STRING)
                return false;
            std::int64_t counts[3];
            for (std::size_t i = 0; i < 3; ++i) {
                if (reply.element[i + 1]->type != REDIS_REPLY_INTEGER) return false;
                counts[i] = reply.element[i + 1]->integer;
            }
            stats.buckets += counts[0];
            stats.budgetSlots += counts[1];
            stats.scopes += counts[2];
            cursor.assign(reply.element[0]->str, reply.element[0]->len);
            if (cursor == "0") return false;  // this master's walk is over
            next[3] = cursor;
            *send = next;
            return true;
        };
        client_.walkEveryMaster(first, step, deadlineFor(0, Clock::now()), options_.timeout);
        return stats;
    }

public:
    ConsumeResult probe() override {
        ConsumeResult result;
        const std::string_view ping[] = {"PING"};
        for (const Outcome& o : client_.onEveryMaster(ping, deadlineFor(0, Clock::now()))) {
            if (o.kind == Outcome::Kind::Reply) continue;
            // One node that does not answer makes the store unready; a refusal says more.
            if (result.status == StoreStatus::Ok || o.kind == Outcome::Kind::Refused) {
                result.status = o.kind == Outcome::Kind::Refused ? StoreStatus::Refused
                                                                 : StoreStatus::Transport;
                result.error = o.error;
            }
        }
        return result;
    }

    RedisStoreCounters counters() const override {
        const ClientCounters& c = client_.counters();
        RedisStoreCounters r;
        r.commands = c.commands.load(std::memory_order_relaxed);
        r.connects = c.connects.load(std::memory_order_relaxed);
        r.connectFailures = c.connectFailures.load(std::memory_order_relaxed);
        r.scriptLoads = c.scriptLoads.load(std::memory_order_relaxed);
        r.redirects = c.redirects.load(std::memory_order_relaxed);
        if (const redis::SentinelMaster* sentinel = client_.topology().sentinel())
            r.failovers = sentinel->switches();
        r.cacheHits = cacheHits_.load(std::memory_order_relaxed);
        r.transportErrors = transportErrors_.load(std::memory_order_relaxed);
        r.refusals = refusals_.load(std::memory_order_relaxed);
        return r;
    }

private:
    bool encode(const ConsumeRequest& request, EncodedRequest* encoded, ConsumeResult* result) {
        std::string error;
        if (encodeRequest(request, settings_, encoded, &error)) {
            noteLimit(request);
            return true;
        }
        result->status = StoreStatus::Refused;
        result->error = "redis store: " + error;
        refusals_.fetch_add(1, std::memory_order_relaxed);
        return false;
    }

    bool encodeSettleCall(const SettleRequest& request, EncodedRequest* encoded,
                          SettleResult* result) {
        std::string error;
        if (encodeSettle(request, settings_, encoded, &error)) return true;
        result->status = StoreStatus::Refused;
        result->error = "redis store: " + error;
        refusals_.fetch_add(1, std::memory_order_relaxed);
        return false;
    }

    // The status of a call that got no usable reply (a reply the decoder refuses counts as a
    // refusal), counted in the store's statistics.
    StoreStatus failedStatus(Outcome::Kind kind) {
        if (kind == Outcome::Kind::Transport) {
            transportErrors_.fetch_add(1, std::memory_order_relaxed);
            return StoreStatus::Transport;
        }
        refusals_.fetch_add(1, std::memory_order_relaxed);
        return kind == Outcome::Kind::Full ? StoreStatus::Full : StoreStatus::Refused;
    }

    void finishSettle(const SettleRequest& request, Outcome&& outcome, SettleResult* result) {
        if (outcome.kind == Outcome::Kind::Reply && decodeSettleReply(*outcome.reply, result)) {
            result->status = StoreStatus::Ok;
            // A refund may admit what this replica's cache would still refuse.
            if (cache_ && result->applied && request.cost < 0)
                cache_->forget(
                    fingerprintOf(request.limitId, *request.limit, request.partition, request.key));
            return;
        }
        result->applied = false;
        result->status = failedStatus(outcome.kind);
        result->error =
            "redis store: " + (outcome.kind == Outcome::Kind::Reply
                                   ? std::string("unexpected reply from the settle script")
                                   : outcome.error);
    }

    /// Sends one pipeline of script calls for a batch. `prepare(i, encoded)` encodes request i
    /// or answers it without Redis (false: refused, or served from the over-limit cache);
    /// `finish(i, outcome)` takes the reply of each request sent. The pipeline's deadline is the
    /// longest of the sent requests' timeouts.
    template <typename Request, typename Prepare, typename Finish>
    void pipeline(std::span<const Request> requests, Clock::time_point started, Prepare prepare,
                  Finish finish) {
        const std::size_t n = requests.size();
        std::vector<EncodedRequest> encoded(n);  // never reallocated: views into their text
        std::vector<ScriptCall> calls;
        std::vector<std::size_t> sent;
        calls.reserve(n);
        sent.reserve(n);
        Nanos timeout = 0;
        for (std::size_t i = 0; i < n; ++i) {
            if (!prepare(i, &encoded[i])) continue;
            timeout =
                std::max(timeout, requests[i].timeout > 0 ? requests[i].timeout : options_.timeout);
            calls.push_back(encoded[i].call());
            sent.push_back(i);
        }
        if (calls.empty()) return;
        std::vector<Outcome> outcomes(calls.size());
        client_.evalMany(calls, outcomes, deadlineFor(timeout, started));
        for (std::size_t k = 0; k < sent.size(); ++k)
            finish(sent[k], std::move(outcomes[k]));
    }

    Deadline deadlineFor(Nanos timeout, Clock::time_point started) const {
        return started + std::chrono::nanoseconds(timeout > 0 ? timeout : options_.timeout);
    }

    // The over-limit cache keeps time on the store's clock: the caller's, or the local steady
    // clock at the moment the request left (never later than the server's decision, so a
    // cached refusal never outlasts Redis' own retry time).
    Nanos cacheClock(const ConsumeRequest& request, Clock::time_point started) const {
        if (settings_.callerTime) return request.now;
        return std::chrono::duration_cast<std::chrono::nanoseconds>(started.time_since_epoch())
            .count();
    }

    std::uint64_t fingerprintOf(const ConsumeRequest& request) const {
        return fingerprintOf(request.limitId, *request.limit, request.partition, request.key);
    }
    std::uint64_t fingerprintOf(std::uint32_t limitId, const Limit& l, std::string_view partition,
                                std::string_view key) const {
        const std::int64_t shape[] = {limitId,    static_cast<std::int64_t>(l.algorithm),
                                      l.capacity, l.emissionInterval,
                                      l.window,   l.delay};
        std::uint64_t h = XXH3_64bits_withSeed(shape, sizeof shape, seed_);
        h = XXH3_64bits_withSeed(partition.data(), partition.size(), h);
        h = XXH3_64bits_withSeed(key.data(), key.size(), h);
        return h | 1;  // 0 marks an empty cache entry
    }

    bool fromCache(const ConsumeRequest& request, std::uint64_t fingerprint, Nanos now,
                   ConsumeResult* result) {
        if (!cache_->find(fingerprint, request.cost, now, &result->decision)) return false;
        result->status = StoreStatus::Ok;
        result->chargedFallback = false;
        result->chargedLevel = 0;
        cacheHits_.fetch_add(1, std::memory_order_relaxed);
        return true;
    }

    void finish(const ConsumeRequest& request, Outcome&& outcome, std::uint64_t fingerprint,
                Nanos cacheNow, ConsumeResult* result) {
        std::string error;
        if (outcome.kind == Outcome::Kind::Reply &&
            decodeReply(*outcome.reply, request, settings_, result, &error)) {
            result->status = StoreStatus::Ok;
            if (cache_ && result->decision.allowed)
                cache_->forget(fingerprint);
            else if (cache_ && !result->chargedFallback && !countsRefusals(*request.limit))
                cache_->remember(fingerprint, request.cost, cacheNow, result->decision);
            return;
        }
        result->decision = Decision{};
        result->chargedFallback = false;
        result->chargedLevel = 0;
        result->status = failedStatus(outcome.kind);
        result->error = "redis store: " + (error.empty() ? outcome.error : error);
    }

    // What keyspaceAt() must know of a limit to tell whether its keys are fresh again: the
    // numbers its scripts were last called with, by name, and its budget slots' lifetime. On the
    // decision path it costs a hash and a relaxed load: the entry is written, under the mutex,
    // only when the numbers a limit id (budgeted or not) was last seen with change.
    void noteLimit(const ConsumeRequest& request) {
        const Limit& l = *request.limit;
        const std::int64_t lifetime =
            request.budget ? slotLifetimeMillis(*request.budget, algorithms::freshAfter(l)) : 0;
        const std::int64_t shape[] = {request.limitId,
                                      static_cast<std::int64_t>(l.algorithm),
                                      static_cast<std::int64_t>(l.align),
                                      static_cast<std::int64_t>(l.calendarUnit),
                                      l.capacity,
                                      l.emissionInterval,
                                      l.window,
                                      l.unixTimeAtZero,
                                      l.milliRate,
                                      l.expire,
                                      lifetime};
        const std::uint64_t tag = XXH3_64bits(shape, sizeof shape) | 1;
        std::atomic<std::uint64_t>& seen =
            seenLimits_[(2 * std::size_t{request.limitId} + (request.budget ? 1 : 0)) %
                        kSeenLimits];
        if (seen.load(std::memory_order_relaxed) == tag) return;
        std::lock_guard<std::mutex> lock(knownMutex_);
        KnownLimit& known = known_[std::string(request.limitName)];
        known.limit = l;
        if (request.budget) known.slotLifetimeMs = lifetime;
        seen.store(tag, std::memory_order_relaxed);
    }

    struct KnownLimit {
        Limit limit;
        std::int64_t slotLifetimeMs = 0;  ///< 0 until a budgeted request of the limit
    };
    static constexpr std::size_t kSeenLimits = 256;
    // Keys each call of the keyspace script looks at: enough that the walk takes few round
    // trips, few enough that Redis is not held up long by one call.
    static constexpr std::int64_t kKeyspaceStep = 1000;

    const RedisStoreOptions options_;
    mutable RedisClient client_;
    const EncodeSettings settings_;
    const std::uint64_t seed_;
    std::unique_ptr<OverLimitCache> cache_;
    std::atomic<std::int64_t> cacheHits_{0};
    std::atomic<std::int64_t> transportErrors_{0};
    std::atomic<std::int64_t> refusals_{0};
    std::array<std::atomic<std::uint64_t>, kSeenLimits> seenLimits_{};
    mutable std::mutex knownMutex_;
    std::map<std::string, KnownLimit, std::less<>> known_;  // guarded by knownMutex_
    // keyspaceAt()'s last walk: its counts, when it ended and what it took.
    mutable std::mutex walkMutex_;
    mutable std::optional<KeyspaceStats> lastWalk_;
    mutable Clock::time_point lastWalkEnd_;
    mutable Clock::duration lastWalkCost_{};
};

}  // namespace
}  // namespace redis

std::unique_ptr<Store> makeRedisStore(const RedisStoreOptions& options, std::string* error) {
    std::string scratch;
    if (!error) error = &scratch;
    if (options.urls.empty()) {
        *error = "redis store: no URL";
        return nullptr;
    }
    if (options.keyNamespace.find_first_of("{}") != std::string::npos) {
        *error = "redis store: the key namespace must not contain '{' or '}' (hash tags)";
        return nullptr;
    }
    if (options.poolSize < 1) {
        *error = "redis store: the pool needs at least one connection";
        return nullptr;
    }
    if (!options.username.empty() && options.password.empty()) {
        *error = "redis store: a username needs a password";
        return nullptr;
    }
    if (options.timeout <= 0 || options.connectTimeout <= 0) {
        *error = "redis store: timeouts must be positive";
        return nullptr;
    }
    redis::ClientOptions client;
    client.cluster = options.cluster || options.urls.size() > 1;
    client.poolSize = options.poolSize;
    client.connectTimeout = options.connectTimeout;
    client.backoffMin = options.reconnectBackoffMin;
    client.backoffMax = options.reconnectBackoffMax;
    for (const std::string& url : options.urls) {
        std::string why;
        std::optional<RedisEndpoint> endpoint = parseRedisUrl(url, &why);
        if (!endpoint) {
            *error = "redis URL '" + redactRedisUrl(url) + "': " + why;
            return nullptr;
        }
        if (endpoint->isSentinel() && client.cluster) {
            *error = "redis URL '" + redactRedisUrl(url) +
                     "': a Sentinel URL stands alone (it names every sentinel itself), never as "
                     "a Cluster seed";
            return nullptr;
        }
        if (client.cluster && endpoint->database != 0) {
            *error = "redis store: a Redis Cluster has database 0 only (" + endpoint->name() + ")";
            return nullptr;
        }
        if (!options.password.empty()) {
            endpoint->user = options.username;
            endpoint->password = options.password;
        }
        client.seeds.push_back(std::move(*endpoint));
    }
    return std::make_unique<redis::RedisStoreImpl>(options, std::move(client));
}

}  // namespace ratelab
