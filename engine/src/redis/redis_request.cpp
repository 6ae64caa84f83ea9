#include "redis/redis_request.h"

#include <charconv>
#include <limits>
#include <tuple>

#include "algorithms/algorithms.h"

namespace ratelab::redis {

namespace {

constexpr std::int64_t kExactBelow = std::int64_t{1} << 53;  // Lua numbers are exact below
constexpr std::int64_t kMaxLeakyBurst = (std::int64_t{1} << 31) - 1;

// Checks that the scripts' arithmetic stays exact for this limit (see lua_scripts.cpp and lua/).
bool limitSupported(const Limit& l, std::string* error) {
    auto refuse = [&](const char* what) {
        *error = std::string("limit outside what the Redis store computes exactly: ") + what;
        return false;
    };
    switch (l.algorithm) {
        case Algorithm::TokenBucket:
        case Algorithm::Gcra:
            if (l.capacity < 1 || l.emissionInterval < 1)
                return refuse("capacity and interval >= 1");
            if (l.capacity > kMaxDuration / l.emissionInterval)
                return refuse("capacity * interval above 90 days");
            return true;
        case Algorithm::FixedWindow:
            if (l.capacity < 1 || l.capacity >= kExactBelow) return refuse("quota 1 to 2^53 - 1");
            if (l.align == WindowAlign::FirstRequest) break;
            // Calendar windows are computed in whole ms, their ends from Unix time.
            if (l.calendarUnit != CalendarUnit::None) return true;
            if (l.window < kNanosPerMilli || l.window > kMaxAlignedWindow ||
                l.window % kNanosPerMilli != 0)
                return refuse("calendar window a whole number of ms, 1 ms to 366 days");
            return true;
        case Algorithm::SlidingWindow:
        case Algorithm::SlidingLog:
            if (l.capacity < 1 || l.capacity > std::numeric_limits<std::uint32_t>::max())
                return refuse("quota 1 to 2^32 - 1");
            break;
        case Algorithm::HaproxyRate:
            // haproxy_rate.h's bounds; the script's arithmetic is exact within them.
            if (l.capacity < 0 || l.capacity >= algorithms::kHaproxyMaxCount)
                return refuse("capacity 0 to 2^26 - 2");
            if (l.window < kNanosPerMilli || l.window % kNanosPerMilli != 0 ||
                l.window / kNanosPerMilli > algorithms::kHaproxyMaxPeriodMs)
                return refuse("period a whole number of ms, 1 ms to 2^31 - 1 ms");
            if (l.expire < 0 || l.expire % kNanosPerMilli != 0 ||
                l.expire / kNanosPerMilli > algorithms::kHaproxyMaxPeriodMs)
                return refuse("expire a whole number of ms, 0 to 2^31 - 1 ms");
            return true;
        case Algorithm::LeakyBucket: {
            if (l.capacity < 0 || l.capacity > kMaxLeakyBurst) return refuse("burst 0 to 2^31 - 1");
            if (l.emissionInterval < 1) return refuse("interval >= 1");
            if (l.delay < kNoDelay) return refuse("delay >= 0 or nodelay");
            // freshAfter(l) <= kMaxDuration: every ms count times 1e6 stays exact.
            const std::int64_t ms = algorithms::ceilDiv((l.capacity + 1) * 1'000'000, algorithms::leakyRate(l));
            if (ms > kMaxDuration / kNanosPerMilli - 1) return refuse("burst / rate above 90 days");
            return true;
        }
    }
    if (l.window < 1 || l.window > kMaxDuration) return refuse("window 1 ns to 90 days");
    return true;
}

class ArgWriter {
public:
    explicit ArgWriter(EncodedRequest* out) : out_(out) { out_->text.clear(); }

    void begin() { start_ = out_->text.size(); }
    void end() { spans_[count_++] = {start_, out_->text.size() - start_}; }
    void append(std::string_view s) { out_->text.append(s); }
    void number(std::int64_t v) {
        char buffer[24];
        auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
        out_->text.append(buffer, end);
    }
    void arg(std::string_view s) {
        begin();
        append(s);
        end();
    }
    void arg(std::int64_t v) {
        begin();
        number(v);
        end();
    }
    void finish() {
        for (std::size_t i = 0; i < count_; ++i)
            out_->args[i] = std::string_view(out_->text).substr(spans_[i].first, spans_[i].second);
        out_->argc = count_;
    }

private:
    EncodedRequest* out_;
    std::size_t start_ = 0;
    std::array<std::pair<std::size_t, std::size_t>,
               std::tuple_size_v<decltype(EncodedRequest::args)>>
        spans_{};
    std::size_t count_ = 0;
};

void appendKeyName(ArgWriter& w, std::string_view ns, std::string_view partition,
                   std::string_view limitName, std::string_view middle, std::string_view key) {
    w.begin();
    w.append(ns);
    w.append(":{");
    w.append(partition);
    w.append("}:");
    w.append(limitName);
    w.append(":");
    w.append(middle);
    w.append(key);
    w.end();
}

// What the scripts take as the caller's time for `limit`: Unix time for calendar windows (the
// server's TIME is Unix time too), the caller's own otherwise. Stamps the scripts return are in
// the same time; the store gives and takes them in the caller's.
Nanos scriptTimeOffset(const Limit& limit, const EncodeSettings& settings) {
    return settings.callerTime && limit.align == WindowAlign::Calendar ? limit.unixTimeAtZero : 0;
}

// ARGV[1] and [2]: the caller's time as (floor seconds, nanoseconds), or "" for server TIME.
void writeNow(ArgWriter& w, const EncodeSettings& settings, Nanos now) {
    if (settings.callerTime) {
        Nanos seconds = now / kNanosPerSecond;
        if (now % kNanosPerSecond < 0) --seconds;  // floor
        w.arg(seconds);
        w.arg(now - seconds * kNanosPerSecond);
    } else {
        w.arg(std::string_view());
        w.arg(std::string_view("0"));
    }
}

bool readInteger(const redisReply& r, std::int64_t* out) {
    if (r.type == REDIS_REPLY_INTEGER) {
        *out = r.integer;
        return true;
    }
    if (r.type != REDIS_REPLY_STRING) return false;
    auto [end, ec] = std::from_chars(r.str, r.str + r.len, *out);
    return ec == std::errc() && end == r.str + r.len;
}

}  // namespace

std::string bucketKeyName(std::string_view ns, std::string_view partition,
                          std::string_view limitName, std::string_view key) {
    return std::string(ns) + ":{" + std::string(partition) + "}:" + std::string(limitName) + ":" +
           std::string(key);
}

std::string scopeKeyName(std::string_view ns, std::string_view partition,
                         std::string_view limitName, std::string_view scope) {
    return std::string(ns) + ":{" + std::string(partition) + "}:" + std::string(limitName) +
           ":scope:" + std::string(scope);
}

bool encodeRequest(const ConsumeRequest& request, const EncodeSettings& settings,
                   EncodedRequest* out, std::string* error) {
    if (!request.limit) {
        *error = "request without a limit";
        return false;
    }
    const Limit& l = *request.limit;
    if (request.cost < 0) {
        *error = "cost must not be negative";
        return false;
    }
    if (!limitSupported(l, error)) return false;
    // Every key of one decision shares the hash tag {partition}: one Cluster slot. An empty tag
    // (or one closed at once) would hash each whole key instead.
    if (request.partition.empty() || request.partition.front() == '}') {
        *error = "the partition must be non-empty and not start with '}' (it is the hash tag)";
        return false;
    }
    const BucketBudget* budget = request.budget;
    std::int64_t levels = 0;
    std::size_t budgetText = 0;
    for (const BucketBudget* b = budget; b; b = b->next) {
        if (++levels > static_cast<std::int64_t>(kMaxBudgetLevels)) {
            *error =
                "a budget chain may have at most " + std::to_string(kMaxBudgetLevels) + " levels";
            return false;
        }
        if (b->cap < 1) {
            *error = "a budget's cap must be at least 1";
            return false;
        }
        if (b->slotTtl > kMaxDuration) {
            *error = "a budget's slot lifetime must be at most 90 days";
            return false;
        }
        budgetText += b->scope.size() + 2 * b->fallbackKey.size();
    }

    out->script = scriptFor(l.algorithm);
    out->text.reserve(192 + request.key.size() * 2 +
                      request.partition.size() * static_cast<std::size_t>(1 + 2 * levels) +
                      budgetText + static_cast<std::size_t>(levels) * 48);
    ArgWriter w(out);
    w.arg(1 + 2 * levels);
    appendKeyName(w, settings.keyNamespace, request.partition, request.limitName, "", request.key);
    for (const BucketBudget* b = budget; b; b = b->next) {
        appendKeyName(w, settings.keyNamespace, request.partition, request.limitName,
                      "scope:", b->scope);
        appendKeyName(w, settings.keyNamespace, request.partition, request.limitName, "",
                      b->fallbackKey);
    }
    writeNow(w, settings, request.now + scriptTimeOffset(l, settings));
    w.arg(request.cost);
    w.arg(l.capacity);
    switch (l.algorithm) {
        case Algorithm::TokenBucket:
        case Algorithm::Gcra:
            w.arg(l.emissionInterval);
            w.arg(std::int64_t{l.settles ? 1 : 0});
            break;
        case Algorithm::LeakyBucket:
            w.arg(algorithms::leakyRate(l));
            // A delay beyond the burst never applies; clamping keeps the script's numbers small.
            w.arg(l.delay == kNoDelay ? std::int64_t{-1} : std::min(l.delay, l.capacity + 1));
            break;
        case Algorithm::HaproxyRate: {
            const std::int64_t expireMs = l.expire / kNanosPerMilli;
            w.arg(l.window / kNanosPerMilli);
            w.arg(l.countRefused ? expireMs : -1 - expireMs);
            break;
        }
        case Algorithm::FixedWindow:
            if (l.align == WindowAlign::FirstRequest) {
                w.arg(l.window);
                w.arg(std::int64_t{0});
            } else {
                w.arg(l.calendarUnit == CalendarUnit::None ? l.window / kNanosPerMilli : 0);
                w.arg(std::string_view(l.calendarUnit == CalendarUnit::Month  ? "m"
                                       : l.calendarUnit == CalendarUnit::Year ? "y"
                                                                              : "e"));
            }
            break;
        default:
            w.arg(l.window);
            w.arg(std::int64_t{0});
            break;
    }
    w.arg(settings.callerTime ? settings.minKeyLifetimeMs : 0);
    if (budget) {
        w.arg(slotLifetimeMillis(*budget, algorithms::freshAfter(l)));
        w.arg(request.key);
        for (const BucketBudget* b = budget; b; b = b->next) {
            w.arg(static_cast<std::int64_t>(b->cap));
            w.arg(b->fallbackKey);
        }
    }
    w.finish();
    out->slot = keySlot(out->args[1]);  // every key's slot: they share the tag
    return true;
}

bool decodeReply(const redisReply& reply, const ConsumeRequest& request,
                 const EncodeSettings& settings, ConsumeResult* out, std::string* error) {
    const Nanos offset = scriptTimeOffset(*request.limit, settings);
    std::int64_t f[7];
    bool ok = reply.type == REDIS_REPLY_ARRAY && reply.elements == 7;
    for (std::size_t i = 0; ok && i < 7; ++i)
        ok = readInteger(*reply.element[i], &f[i]);
    std::int64_t levels = 0;
    for (const BucketBudget* b = request.budget; b; b = b->next)
        ++levels;
    if (!ok || f[0] < 0 || f[0] > 2 || f[5] < 0 || f[5] > levels) {
        *error = "unexpected reply from the rate-limit script";
        return false;
    }
    Decision& d = out->decision;
    d.allowed = f[0] == 0;
    d.reason = static_cast<DenyReason>(f[0]);
    d.limit = request.limit->algorithm == Algorithm::LeakyBucket ? request.limit->capacity + 1
                                                                 : request.limit->capacity;
    d.remaining = f[1];
    d.retryAfter = f[2];
    d.resetAfter = f[3];
    d.delay = f[4];
    out->chargedLevel = static_cast<std::uint8_t>(f[5]);
    out->chargedFallback = f[5] != 0;
    out->stamp = f[6] == 0 ? 0 : f[6] - offset;
    return true;
}

bool encodeSettle(const SettleRequest& request, const EncodeSettings& settings, EncodedRequest* out,
                  std::string* error) {
    if (!request.limit || !request.limit->settles) {
        *error = "settle without a limit that settles";
        return false;
    }
    const Limit& l = *request.limit;
    const bool rate = l.algorithm == Algorithm::TokenBucket || l.algorithm == Algorithm::Gcra;
    if (!rate && l.algorithm != Algorithm::FixedWindow) {
        *error = std::string(algorithmName(l.algorithm)) + " does not settle";
        return false;
    }
    if (request.cost == 0 || request.cost <= -kExactBelow || request.cost >= kExactBelow) {
        *error = "settle cost must be non-zero and below 2^53";
        return false;
    }
    if (!limitSupported(l, error)) return false;
    if (request.partition.empty() || request.partition.front() == '}') {
        *error = "the partition must be non-empty and not start with '}' (it is the hash tag)";
        return false;
    }
    out->script = ScriptId::Settle;
    out->text.reserve(160 + request.key.size() + request.partition.size());
    ArgWriter w(out);
    w.arg(1);
    appendKeyName(w, settings.keyNamespace, request.partition, request.limitName, "", request.key);
    const Nanos offset = scriptTimeOffset(l, settings);
    writeNow(w, settings, request.now + offset);
    w.arg(request.cost);
    w.arg(l.capacity);
    w.arg(rate ? l.emissionInterval : l.window);
    w.arg(std::string_view(rate ? "r" : "f"));
    w.arg(settings.callerTime ? settings.minKeyLifetimeMs : 0);
    w.arg(request.stamp + offset);
    w.finish();
    out->slot = keySlot(out->args[1]);
    return true;
}

void appendKeyspaceLimit(std::string_view limitName, const Limit& limit,
                         std::int64_t slotLifetimeMs, Nanos now, const EncodeSettings& settings,
                         std::vector<std::string>* args) {
    std::string_view kind = "r";
    std::int64_t param = 0;
    std::int64_t param2 = 0;
    switch (limit.algorithm) {
        case Algorithm::TokenBucket:
        case Algorithm::Gcra:
            break;
        case Algorithm::FixedWindow:
            kind = "f";
            break;
        case Algorithm::SlidingWindow:
            kind = "w";
            param = limit.window;
            break;
        case Algorithm::SlidingLog:
            kind = "l";
            param = limit.window;
            break;
        case Algorithm::LeakyBucket:
            kind = "k";
            param = algorithms::leakyRate(limit);
            break;
        case Algorithm::HaproxyRate:
            kind = "h";
            param = algorithms::haproxyPeriodMs(limit);
            param2 = algorithms::haproxyExpireMs(limit);
            break;
    }
    args->emplace_back(limitName);
    args->emplace_back(kind);
    args->push_back(std::to_string(param));
    args->push_back(std::to_string(param2));
    appendKeyspaceNow(now + scriptTimeOffset(limit, settings), settings, args);
    args->push_back(std::to_string(slotLifetimeMs));
}

void appendKeyspaceNow(Nanos now, const EncodeSettings& settings, std::vector<std::string>* args) {
    EncodedRequest pair;
    ArgWriter w(&pair);
    writeNow(w, settings, now);
    w.finish();
    args->emplace_back(pair.args[0]);
    args->emplace_back(pair.args[1]);
}

std::string keyspacePattern(std::string_view keyNamespace) {
    std::string pattern;
    for (char c : keyNamespace) {
        if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') pattern += '\\';
        pattern += c;
    }
    return pattern + ":{*";
}

bool decodeSettleReply(const redisReply& reply, SettleResult* out) {
    std::int64_t applied = 0;
    if (!readInteger(reply, &applied) || applied < 0 || applied > 1) return false;
    out->applied = applied == 1;
    return true;
}

}  // namespace ratelab::redis
