#include "ratelab/observers.h"

#include "http/json_text.h"
#include "log_line.h"

namespace ratelab {

PolicyCounters::Counters& PolicyCounters::countersFor(std::string_view policy) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [name, counters] : policies_) {
        if (name == policy) return *counters;
    }
    policies_.emplace_back(std::string(policy), std::make_unique<Counters>());
    return *policies_.back().second;
}

void PolicyCounters::onLimitHit(const LimitEvent& event) {
    countersFor(event.policy)
        .byOutcome[static_cast<std::size_t>(event.outcome)]
        .fetch_add(1, std::memory_order_relaxed);
}

void PolicyCounters::onStoreError(const StoreErrorEvent& event) {
    countersFor(event.policy)
        .byOutcome[static_cast<std::size_t>(event.outcome)]
        .fetch_add(1, std::memory_order_relaxed);
}

std::int64_t PolicyCounters::count(std::string_view policy, PolicyOutcome outcome) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [name, counters] : policies_) {
        if (name == policy) {
            return counters->byOutcome[static_cast<std::size_t>(outcome)].load(
                std::memory_order_relaxed);
        }
    }
    return 0;
}

std::vector<PolicyCounters::Row> PolicyCounters::snapshot() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<Row> rows;
    for (const auto& [name, counters] : policies_) {
        for (std::size_t i = 0; i < kOutcomes; ++i) {
            const std::int64_t n = counters->byOutcome[i].load(std::memory_order_relaxed);
            if (n > 0) rows.push_back(Row{name, static_cast<PolicyOutcome>(i), n});
        }
    }
    return rows;
}

JsonLogObserver::JsonLogObserver(Sink sink, int linesPerSecond)
    : JsonLogObserver(std::move(sink), JsonLogOptions{linesPerSecond, nullptr, {}}) {}

JsonLogObserver::JsonLogObserver(Sink sink, JsonLogOptions options)
    : sink_(std::move(sink)), options_(std::move(options)) {
    if (!options_.keyNamer) {
        ownNamer_ = std::make_unique<KeyNamer>();
        options_.keyNamer = ownNamer_.get();
    }
    if (!options_.wallClock) options_.wallClock = &logging::wallClockNow;
}

std::string_view JsonLogObserver::levelOf(PolicyOutcome outcome) {
    switch (outcome) {
        case PolicyOutcome::Passed:
        case PolicyOutcome::Bypassed:
        case PolicyOutcome::Throttled:
        case PolicyOutcome::ShadowThrottled:
        case PolicyOutcome::CostExceedsCapacity:
            return "info";
        case PolicyOutcome::NoIdentity:
        case PolicyOutcome::ForwardedMalformed:
        case PolicyOutcome::FailedOpen:
            return "warn";
        case PolicyOutcome::FailedClosed:
        case PolicyOutcome::StoreRefused:
            return "error";
    }
    return "info";
}

std::int64_t JsonLogObserver::admit(std::string_view policy, bool storeError, Nanos now) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string key(policy);
    key += storeError ? "\x1fstore" : "\x1fhit";
    Window& w = windows_[key];
    const Nanos second = now / kNanosPerSecond;
    if (second != w.second) {
        w.second = second;
        w.written = 0;
    }
    if (w.written >= options_.linesPerSecond) {
        ++w.suppressed;
        return -1;
    }
    ++w.written;
    const std::int64_t suppressed = w.suppressed;
    w.suppressed = 0;
    return suppressed;
}

// {"time":T,"level":L,"event":E,"policy":P,"route":R,"key":K,"outcome":O: the fields every
// line starts with.
std::string JsonLogObserver::lineStart(std::string_view event, std::string_view policy,
                                       std::string_view route, std::string_view key,
                                       PolicyOutcome outcome) const {
    std::string line = logging::lineStart(options_.wallClock(), levelOf(outcome), event);
    line += ",\"policy\":";
    http::appendJsonString(line, policy);
    line += ",\"route\":";
    http::appendJsonString(line, route);
    line += ",\"key\":\"";
    if (!key.empty()) {
        char name[KeyNamer::kKeyNameLength];
        options_.keyNamer->name(key, name);
        line.append(name, sizeof name);
    }
    line += "\",\"outcome\":";
    http::appendJsonString(line, policyOutcomeName(outcome));
    return line;
}

namespace {

// ,"t_ms":T[,"suppressed_before":N]}
void lineEnd(std::string& line, Nanos now, std::int64_t suppressed) {
    line += ",\"t_ms\":";
    http::appendInt(line, now / kNanosPerMilli);
    if (suppressed > 0) {
        line += ",\"suppressed_before\":";
        http::appendInt(line, suppressed);
    }
    line += "}";
}

}  // namespace

void JsonLogObserver::onLimitHit(const LimitEvent& event) {
    const std::int64_t suppressed = admit(event.policy, false, event.now);
    if (suppressed < 0) return;
    std::string line = lineStart("limit_hit", event.policy, event.route, event.key, event.outcome);
    line += ",\"retry_after_ms\":";
    http::appendInt(line, (event.decision.retryAfter + kNanosPerMilli - 1) / kNanosPerMilli);
    lineEnd(line, event.now, suppressed);
    sink_(line);
}

void JsonLogObserver::onStoreError(const StoreErrorEvent& event) {
    const std::int64_t suppressed = admit(event.policy, true, event.now);
    if (suppressed < 0) return;
    std::string line =
        lineStart("store_error", event.policy, event.route, event.key, event.outcome);
    line += ",\"status\":";
    http::appendJsonString(line, storeStatusName(event.status));
    line += ",\"error\":";
    http::appendJsonString(line, event.error);
    lineEnd(line, event.now, suppressed);
    sink_(line);
}

}  // namespace ratelab
