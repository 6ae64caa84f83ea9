#include "ratelab/observers.h"

#include "http/json_text.h"

namespace ratelab {

namespace {

std::string_view statusName(StoreStatus status) {
    switch (status) {
        case StoreStatus::Ok:
            return "ok";
        case StoreStatus::Transport:
            return "transport";
        case StoreStatus::Refused:
            return "refused";
        case StoreStatus::Full:
            return "full";
    }
    return "";
}

}  // namespace

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
    : sink_(std::move(sink)), linesPerSecond_(linesPerSecond) {}

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
    if (w.written >= linesPerSecond_) {
        ++w.suppressed;
        return -1;
    }
    ++w.written;
    const std::int64_t suppressed = w.suppressed;
    w.suppressed = 0;
    return suppressed;
}

namespace {

// {"event":E,"policy":P,"route":R,"key":K,"outcome":O: the fields every log line starts with.
std::string lineStart(std::string_view event, std::string_view policy, std::string_view route,
                      std::string_view keyHash, PolicyOutcome outcome) {
    std::string line = "{\"event\":";
    http::appendJsonString(line, event);
    line += ",\"policy\":";
    http::appendJsonString(line, policy);
    line += ",\"route\":";
    http::appendJsonString(line, route);
    line += ",\"key\":";
    http::appendJsonString(line, keyHash);
    line += ",\"outcome\":";
    http::appendJsonString(line, policyOutcomeName(outcome));
    return line;
}

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
    std::string line =
        lineStart("limit_hit", event.policy, event.route, event.keyHash, event.outcome);
    line += ",\"retry_after_ms\":";
    http::appendInt(line, (event.decision.retryAfter + kNanosPerMilli - 1) / kNanosPerMilli);
    lineEnd(line, event.now, suppressed);
    sink_(line);
}

void JsonLogObserver::onStoreError(const StoreErrorEvent& event) {
    const std::int64_t suppressed = admit(event.policy, true, event.now);
    if (suppressed < 0) return;
    std::string line =
        lineStart("store_error", event.policy, event.route, event.keyHash, event.outcome);
    line += ",\"status\":";
    http::appendJsonString(line, statusName(event.status));
    line += ",\"error\":";
    http::appendJsonString(line, event.error);
    if (event.outcome == PolicyOutcome::DecidedLocally) {
        line += event.decision.allowed ? ",\"allowed\":true" : ",\"allowed\":false";
        if (!event.decision.allowed) {
            line += ",\"retry_after_ms\":";
            http::appendInt(line,
                            (event.decision.retryAfter + kNanosPerMilli - 1) / kNanosPerMilli);
        }
    }
    lineEnd(line, event.now, suppressed);
    sink_(line);
}

}  // namespace ratelab
