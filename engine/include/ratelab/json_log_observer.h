#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "ratelab/key_namer.h"
#include "ratelab/limit_observer.h"

namespace ratelab {

struct JsonLogOptions {
    /// Lines per (policy, event kind) per second of event time; then one line saying how many
    /// were left out.
    int linesPerSecond = 10;
    /// Names the keys in lines. Null: a namer with a random secret, owned by the observer.
    /// Not owned; must outlive the observer.
    const KeyNamer* keyNamer = nullptr;
    /// Wall-clock nanoseconds since the Unix epoch for the "time" field. Empty: system_clock.
    std::function<Nanos()> wallClock;
};

/// Writes one JSON object per event, one per line, through `sink`:
///   {"time":"2024-05-01T12:34:56.789Z","level":"info","event":"limit_hit","policy":"api",
///    "route":"/x","key":"1f0c...","outcome":"throttled","retry_after_ms":1000,"t_ms":12345}
///   {"time":"...","level":"warn","event":"store_error","policy":"api","route":"/x",
///    "key":"...","outcome":"failed_open","status":"transport","error":"connection refused",
///    "t_ms":12345}
/// A store error decided on the local store (outcome "decided_locally") also carries
/// "allowed" and, when refused, "retry_after_ms".
/// `time` is the wall clock (RFC 3339, UTC); `t_ms` the limiter's own clock. `level` is info for
/// limit hits, warn for requests without identity and fail-open passes, error for requests a
/// store failure refused. Keys are named by the KeyNamer (HMAC-SHA-256), never written as they
/// are. A flood cannot flood the log: see JsonLogOptions::linesPerSecond. Thread-safe.
class JsonLogObserver final : public LimitObserver {
public:
    using Sink = std::function<void(std::string_view line)>;
    explicit JsonLogObserver(Sink sink, int linesPerSecond = 10);
    JsonLogObserver(Sink sink, JsonLogOptions options);

    void onLimitHit(const LimitEvent& event) override;
    void onStoreError(const StoreErrorEvent& event) override;

    /// "info", "warn" or "error": the level of a line about `outcome`.
    static std::string_view levelOf(PolicyOutcome outcome);

private:
    // Returns how many lines were suppressed before this one, or -1 to suppress this one.
    std::int64_t admit(std::string_view policy, bool storeError, Nanos now);
    std::string lineStart(std::string_view event, std::string_view policy, std::string_view route,
                          std::string_view key, PolicyOutcome outcome) const;

    Sink sink_;
    JsonLogOptions options_;
    std::unique_ptr<KeyNamer> ownNamer_;
    std::mutex mutex_;
    struct Window {
        Nanos second = 0;
        int written = 0;
        std::int64_t suppressed = 0;
    };
    std::unordered_map<std::string, Window> windows_;
};

}  // namespace ratelab
