#pragma once

// Tuning to a stated tolerance on a recorded log, which has no classes to trade against each
// other: "leave 99% of the clients never throttled". The log is replayed once through the
// policy to learn which bucket each request lands in; from each bucket's request times over the
// policy's window come the rate and the burst it needs; the limits are the ones that the chosen
// share of clients' buckets fit in. The log is then replayed with those limits, and the clients
// still throttled are reported with how often. Both replays stream the log from its files
// (StreamedReplays), so memory grows with the requests' times, 8 bytes each, not with their
// lines; a log already in memory replays from there (MemoryReplays).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ratelab/policy.h"
#include "sim/log/rereader.h"
#include "sim/report/report.h"
#include "sim/scenario/scenario.h"

namespace ratelab::sim {

struct ThrottledClient {
    std::string client;  ///< as written in the log
    std::int64_t offered = 0;
    std::int64_t throttled = 0;
};

struct ToleranceTuning {
    std::size_t policyIndex = 0;  ///< the tuned policy
    double keepUnthrottled = 0;   ///< the share asked for, in (0, 1]
    /// What the limits were read from: per client (the most demanding of its buckets), the
    /// most requests in any window of the policy's window_ms.
    std::int64_t clients = 0;  ///< clients with a request the policy keyed
    std::int64_t windowPeakMedian = 0;
    std::int64_t windowPeakMax = 0;
    std::int64_t capacity = 0;               ///< chosen: burst, or quota per window
    double refillPerSecond = 0;              ///< chosen (rate algorithms; else the policy's)
    std::int64_t predictedThrottled = 0;     ///< clients whose bucket needs more than that
    PolicySet tuned;                         ///< the policy set with those numbers, validated
    Report report;                           ///< the replay with them
    std::int64_t throttledClients = 0;       ///< clients throttled at least once in that replay
    std::vector<ThrottledClient> throttled;  ///< the most throttled first, at most `top`

    /// The share of clients never throttled in the replay.
    double keptShare() const;
};

class ScenarioRunner;

/// The whole-log replays a tuning runs, one after the other, each opened afresh.
class LogReplays {
public:
    virtual ~LogReplays() = default;
    /// A new replay of the log, a scenario of makeReplayScenario; nullopt with `error` set
    /// when the log cannot be read.
    virtual std::optional<Scenario> open(std::string& error) = 0;
    /// Called between batches of the replay `open` gave last.
    virtual void advanced() {}
    /// That replay has run: false with `error` set when it did not read the whole log, or read
    /// other requests than the first replay did.
    virtual bool finished(const ScenarioRunner& runner, std::string& error) = 0;
    /// Its report.
    virtual Report report(const ScenarioRunner& runner) const = 0;
};

/// A replay scenario of a log held in memory, run as it is each time.
class MemoryReplays final : public LogReplays {
public:
    explicit MemoryReplays(Scenario replay) : replay_(std::move(replay)) {}
    std::optional<Scenario> open(std::string&) override { return replay_; }
    bool finished(const ScenarioRunner&, std::string&) override { return true; }
    Report report(const ScenarioRunner& runner) const override;

private:
    Scenario replay_;
};

/// A log streamed from its files for each replay (LogRereader: "-" is kept for the second).
/// `reading` receives what the first replay read, with the files named as given, and the
/// error that stopped either; `progress` the share of both replays done.
class StreamedReplays final : public LogReplays {
public:
    StreamedReplays(const ReplayInput& input, LogReading& reading,
                    std::function<void(double)> progress = {});
    std::optional<Scenario> open(std::string& error) override;
    void advanced() override;
    bool finished(const ScenarioRunner& runner, std::string& error) override;
    Report report(const ScenarioRunner& runner) const override;

private:
    LogReading& current() { return replays_ <= 1 ? reading_ : again_; }  // of the last open()
    const LogReading& current() const { return replays_ <= 1 ? reading_ : again_; }

    LogRereader log_;
    LogReading& reading_;
    LogReading again_;  // the later replays' reading
    std::function<void(double)> progress_;
    std::shared_ptr<LogStream> stream_;
    int replays_ = 0;            // opened so far
    std::int64_t requests_ = 0;  // of the first
};

/// Tunes policy `policyName` (empty: the first) of `policies` on the log `replays` replays so
/// that at least `keepUnthrottled` of the clients are never throttled.
/// Rate algorithms (token_bucket, gcra) get a refill of the chosen share's peak rate over the
/// policy's window (rounded up to three significant digits) and the burst that leaves the share
/// unthrottled at that rate; window algorithms get the quota. Nullopt with `error` set for an
/// unknown policy, a leaky_bucket (nginx's arithmetic has no such bound; sweep it instead), a
/// log the policy keys no request of, tuned numbers that do not validate, or a log that cannot
/// be read (then `replays` says more).
std::optional<ToleranceTuning> tuneToTolerance(LogReplays& replays, const PolicySet& policies,
                                               std::string_view policyName, double keepUnthrottled,
                                               std::size_t top, std::string& error);

/// What was chosen and why, and who is still throttled, for a terminal.
std::string toleranceText(const ToleranceTuning& tuning);
/// The same as JSON; deterministic; ends in a newline.
std::string toleranceJson(const ToleranceTuning& tuning);

}  // namespace ratelab::sim
