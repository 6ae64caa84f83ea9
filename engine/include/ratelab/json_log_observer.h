#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "ratelab/limit_observer.h"

namespace ratelab {

/// Writes one JSON object per event, one per line, through `sink`:
///   {"event":"limit_hit","policy":"api","route":"/x","key":"1f0c...","outcome":"throttled",
///    "retry_after_ms":1000,"t_ms":12345}
///   {"event":"store_error","policy":"api","route":"/x","key":"...","outcome":"failed_open",
///    "status":"transport","error":"connection refused","t_ms":12345}
/// Keys are the limiter's keyed hashes, never keys or credentials. A flood cannot flood the log:
/// each (policy, event kind) writes at most `linesPerSecond` lines per second of event time and
/// then one line saying how many it suppressed. Thread-safe.
class JsonLogObserver final : public LimitObserver {
public:
    using Sink = std::function<void(std::string_view line)>;
    explicit JsonLogObserver(Sink sink, int linesPerSecond = 10);

    void onLimitHit(const LimitEvent& event) override;
    void onStoreError(const StoreErrorEvent& event) override;

private:
    // Returns how many lines were suppressed before this one, or -1 to suppress this one.
    std::int64_t admit(std::string_view policy, bool storeError, Nanos now);

    Sink sink_;
    int linesPerSecond_;
    std::mutex mutex_;
    struct Window {
        Nanos second = 0;
        int written = 0;
        std::int64_t suppressed = 0;
    };
    std::unordered_map<std::string, Window> windows_;
};

}  // namespace ratelab
