#include "ratelab/json_log_observer.h"

#include "json/json_text.h"

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
    }
    return "";
}

}  // namespace

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
    json::appendJsonString(line, event);
    line += ",\"policy\":";
    json::appendJsonString(line, policy);
    line += ",\"route\":";
    json::appendJsonString(line, route);
    line += ",\"key\":";
    json::appendJsonString(line, keyHash);
    line += ",\"outcome\":";
    json::appendJsonString(line, policyOutcomeName(outcome));
    return line;
}

// ,"t_ms":T[,"suppressed_before":N]}
void lineEnd(std::string& line, Nanos now, std::int64_t suppressed) {
    line += ",\"t_ms\":";
    json::appendInt(line, now / kNanosPerMilli);
    if (suppressed > 0) {
        line += ",\"suppressed_before\":";
        json::appendInt(line, suppressed);
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
    json::appendInt(line, (event.decision.retryAfter + kNanosPerMilli - 1) / kNanosPerMilli);
    lineEnd(line, event.now, suppressed);
    sink_(line);
}

void JsonLogObserver::onStoreError(const StoreErrorEvent& event) {
    const std::int64_t suppressed = admit(event.policy, true, event.now);
    if (suppressed < 0) return;
    std::string line =
        lineStart("store_error", event.policy, event.route, event.keyHash, event.outcome);
    line += ",\"status\":";
    json::appendJsonString(line, statusName(event.status));
    line += ",\"error\":";
    json::appendJsonString(line, event.error);
    lineEnd(line, event.now, suppressed);
    sink_(line);
}

}  // namespace ratelab
