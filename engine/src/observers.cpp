#include "ratelab/observers.h"

#include <charconv>

namespace ratelab {

namespace {

void appendJsonString(std::string& out, std::string_view text) {
    static const char* const kHex = "0123456789abcdef";
    out.push_back('"');
    for (unsigned char c : text) {
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(static_cast<char>(c));
        } else if (c < 0x20) {
            out += "\\u00";
            out.push_back(kHex[c >> 4]);
            out.push_back(kHex[c & 15]);
        } else {
            out.push_back(static_cast<char>(c));
        }
    }
    out.push_back('"');
}

void appendInt(std::string& out, std::int64_t value) {
    char buffer[24];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    out.append(buffer, end);
}

std::string_view statusName(StoreStatus status) {
    switch (status) {
        case StoreStatus::Ok:
            return "ok";
        case StoreStatus::Transport:
            return "transport";
        case StoreStatus::Refused:
            return "refused";
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

void JsonLogObserver::onLimitHit(const LimitEvent& event) {
    const std::int64_t suppressed = admit(event.policy, false, event.now);
    if (suppressed < 0) return;
    std::string line = "{\"event\":\"limit_hit\",\"policy\":";
    appendJsonString(line, event.policy);
    line += ",\"route\":";
    appendJsonString(line, event.route);
    line += ",\"key\":";
    appendJsonString(line, event.keyHash);
    line += ",\"outcome\":";
    appendJsonString(line, policyOutcomeName(event.outcome));
    line += ",\"retry_after_ms\":";
    appendInt(line, (event.decision.retryAfter + kNanosPerMilli - 1) / kNanosPerMilli);
    line += ",\"t_ms\":";
    appendInt(line, event.now / kNanosPerMilli);
    if (suppressed > 0) {
        line += ",\"suppressed_before\":";
        appendInt(line, suppressed);
    }
    line += "}";
    sink_(line);
}

void JsonLogObserver::onStoreError(const StoreErrorEvent& event) {
    const std::int64_t suppressed = admit(event.policy, true, event.now);
    if (suppressed < 0) return;
    std::string line = "{\"event\":\"store_error\",\"policy\":";
    appendJsonString(line, event.policy);
    line += ",\"route\":";
    appendJsonString(line, event.route);
    line += ",\"key\":";
    appendJsonString(line, event.keyHash);
    line += ",\"outcome\":";
    appendJsonString(line, policyOutcomeName(event.outcome));
    line += ",\"status\":";
    appendJsonString(line, statusName(event.status));
    line += ",\"error\":";
    appendJsonString(line, event.error);
    line += ",\"t_ms\":";
    appendInt(line, event.now / kNanosPerMilli);
    if (suppressed > 0) {
        line += ",\"suppressed_before\":";
        appendInt(line, suppressed);
    }
    line += "}";
    sink_(line);
}

}  // namespace ratelab
