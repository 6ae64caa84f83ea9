#include "ratelab/json_log_observer.h"

#include "json/json_text.h"
#include "observers/log_line.h"

namespace ratelab {

JsonLogObserver::JsonLogObserver(Sink sink, int linesPerSecond)
    : JsonLogObserver(std::move(sink), JsonLogOptions{linesPerSecond, nullptr, {}}) {}

JsonLogObserver::JsonLogObserver(Sink sink, JsonLogOptions options)
    : sink_(std::move(sink)), options_(std::move(options)) {
    if (!options_.keyNamer) {
        ownNamer_ = std::make_unique<KeyNamer>();
        options_.keyNamer = ownNamer_.get();
    }
    if (!options_.wallClock) options_.wallClock = &observers::wallClockNow;
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
        case PolicyOutcome::DecidedLocally:
            return "warn";
        case PolicyOutcome::FailedClosed:
        case PolicyOutcome::StoreRefused:
        case PolicyOutcome::StoreFull:
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
    std::string line = observers::lineStart(options_.wallClock(), levelOf(outcome), event);
    line += ",\"policy\":";
    json::appendJsonString(line, policy);
    line += ",\"route\":";
    json::appendJsonString(line, route);
    line += ",\"key\":\"";
    if (!key.empty()) {
        char name[KeyNamer::kKeyNameLength];
        options_.keyNamer->name(key, name);
        line.append(name, sizeof name);
    }
    line += "\",\"outcome\":";
    json::appendJsonString(line, policyOutcomeName(outcome));
    return line;
}

namespace {

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
    std::string line = lineStart("limit_hit", event.policy, event.route, event.key, event.outcome);
    if (event.refused) line += ",\"refused\":true";
    line += ",\"retry_after_ms\":";
    json::appendInt(line, ceilMillis(event.decision.retryAfter));
    lineEnd(line, event.now, suppressed);
    sink_(line);
}

void JsonLogObserver::onStoreError(const StoreErrorEvent& event) {
    const std::int64_t suppressed = admit(event.policy, true, event.now);
    if (suppressed < 0) return;
    std::string line =
        lineStart("store_error", event.policy, event.route, event.key, event.outcome);
    if (event.refused) line += ",\"refused\":true";
    line += ",\"status\":";
    json::appendJsonString(line, storeStatusName(event.status));
    line += ",\"error\":";
    json::appendJsonString(line, event.error);
    if (event.outcome == PolicyOutcome::DecidedLocally) {
        line += event.decision.allowed ? ",\"allowed\":true" : ",\"allowed\":false";
        if (!event.decision.allowed) {
            line += ",\"retry_after_ms\":";
            json::appendInt(line, ceilMillis(event.decision.retryAfter));
        }
    }
    lineEnd(line, event.now, suppressed);
    sink_(line);
}

}  // namespace ratelab
