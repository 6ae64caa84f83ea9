#include "sim/decide/log_tuning.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "json/json_reader.h"
#include "ratelab/limiter.h"
#include "ratelab/number_text.h"
#include "ratelab/policy_file.h"
#include "sim/log/recorded_traffic.h"
#include "sim/report/report_json.h"
#include "sim/run/scenario_runner.h"

namespace ratelab::sim {

namespace {

// Every request the tuned policy keyed, grouped by bucket, and which clients used each bucket.
class BucketTimes final : public DecisionSink {
public:
    explicit BucketTimes(std::uint32_t policy) : policy_(policy) {}

    void onDecision(const DecisionRecord& d) override {
        for (const PolicyResult& r : d.check->policies()) {
            if (r.policy != policy_ || r.key.empty()) continue;
            auto [it, fresh] = index_.try_emplace(r.key, static_cast<std::uint32_t>(times_.size()));
            if (fresh) times_.emplace_back();
            times_[it->second].push_back(d.at);
            const std::uint64_t pair = (static_cast<std::uint64_t>(d.instance) << 32) | it->second;
            if (seen_.insert(pair).second) uses_.emplace_back(d.instance, it->second);
        }
    }

    const std::vector<std::vector<Nanos>>& times() const { return times_; }
    /// (client, bucket) pairs, each once.
    const std::vector<std::pair<std::int64_t, std::uint32_t>>& uses() const { return uses_; }

private:
    std::uint32_t policy_;
    std::unordered_map<std::string, std::uint32_t> index_;
    std::vector<std::vector<Nanos>> times_;
    std::unordered_set<std::uint64_t> seen_;
    std::vector<std::pair<std::int64_t, std::uint32_t>> uses_;
};

// The most requests in any window (t - window, t] of one bucket's ascending times.
std::int64_t windowPeak(const std::vector<Nanos>& t, Nanos window) {
    std::int64_t best = 0;
    std::size_t first = 0;
    for (std::size_t j = 0; j < t.size(); ++j) {
        while (t[first] <= t[j] - window)
            ++first;
        best = std::max<std::int64_t>(best, static_cast<std::int64_t>(j - first + 1));
    }
    return best;
}

// The smallest burst a token bucket (or GCRA) refilled one token every `interval` ns, starting
// full, needs to admit every request at times `t`: requests i..j need j - i + 1 tokens and
// (t_j - t_i) / interval came back between them, so the burst is the largest
// (j - i + 1) - (t_j - t_i) / interval, that is g_j - min over i <= j of g_i, plus one, with
// g_k = k - t_k / interval.
std::int64_t burstNeeded(const std::vector<Nanos>& t, Nanos interval) {
    double lowest = 0;
    double need = 0;
    const double per = static_cast<double>(interval);
    for (std::size_t k = 0; k < t.size(); ++k) {
        const double g = static_cast<double>(k) - static_cast<double>(t[k] - t[0]) / per;
        if (k == 0 || g < lowest) lowest = g;
        need = std::max(need, g - lowest + 1.0);
    }
    return static_cast<std::int64_t>(std::ceil(need - 1e-9));
}

// Rounded up to three significant digits: a rate a little above the chosen share's peak.
double roundUp3(double x) {
    const double magnitude = std::pow(10.0, std::floor(std::log10(x)) - 2);
    return std::ceil(x / magnitude - 1e-9) * magnitude;
}

// The value at or below which `keep` of `values` lie (the k-th smallest, k = ceil(keep * n)).
std::int64_t quantile(std::vector<std::int64_t> values, double keep) {
    const auto n = static_cast<double>(values.size());
    auto k = static_cast<std::size_t>(std::ceil(keep * n - 1e-9));
    k = std::clamp<std::size_t>(k, 1, values.size());
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k - 1),
                     values.end());
    return values[k - 1];
}

// Runs a replay to its end in batches, telling `replays` between them.
void runReplay(ScenarioRunner& runner, LogReplays& replays) {
    while (!runner.finished()) {
        runner.advance(runner.duration(), 200'000);
        replays.advanced();
    }
}

}  // namespace

Report MemoryReplays::report(const ScenarioRunner& runner) const {
    return buildReport(runner, Timing{});
}

StreamedReplays::StreamedReplays(const ReplayInput& input, LogReading& reading,
                                 std::function<void(double)> progress)
    : log_(input), reading_(reading), progress_(std::move(progress)) {}

std::optional<Scenario> StreamedReplays::open(std::string& error) {
    if (replays_++ > 0) again_ = LogReading{};
    LogReading& reading = current();
    stream_ = log_.open(reading);
    if (!stream_) {
        if (&reading != &reading_) {
            reading_.error = reading.error;
            reading_.unreadable = reading.unreadable;
        }
        error = reading_.error ? reading_.error->message : "the log cannot be read";
        return std::nullopt;
    }
    return log_.scenario(stream_, kNanosPerSecond);
}

void StreamedReplays::advanced() {
    if (progress_ && stream_) progress_((replays_ - 1 + stream_->fractionRead()) / 2);
}

bool StreamedReplays::finished(const ScenarioRunner& runner, std::string& error) {
    LogReading& reading = current();
    log_.nameAsGiven(reading);
    if (reading.error) {
        reading_.error = reading.error;
        reading_.unreadable = reading.unreadable;
    } else if (replays_ == 1) {
        requests_ = runner.requests();
        return true;
    } else if (runner.requests() != requests_) {
        reading_.error = log_.changed("tuned", requests_, runner.requests());
    } else {
        return true;
    }
    error = reading_.error->message;
    return false;
}

Report StreamedReplays::report(const ScenarioRunner& runner) const {
    // As a log in memory reports: the distinct clients as the log actor's instances.
    Report r = buildReplayReport(runner, Timing{}, current());
    r.replay.reset();
    return r;
}

double ToleranceTuning::keptShare() const {
    const std::int64_t n = report.totals.spread.empty() ? 0 : report.totals.spread[0].instances;
    return n > 0 ? 1.0 - static_cast<double>(throttledClients) / static_cast<double>(n) : 1.0;
}

std::optional<ToleranceTuning> tuneToTolerance(LogReplays& replays, const PolicySet& policies,
                                               std::string_view policyName, double keepUnthrottled,
                                               std::size_t top, std::string& error) {
    ToleranceTuning t;
    t.keepUnthrottled = keepUnthrottled;
    if (!(keepUnthrottled > 0 && keepUnthrottled <= 1)) {
        error = "--keep-unthrottled must be above 0 and at most 1";
        return std::nullopt;
    }
    bool found = false;
    for (std::size_t i = 0; i < policies.policies.size() && !found; ++i) {
        if (policyName.empty() || policies.policies[i].name == policyName) {
            t.policyIndex = i;
            found = true;
        }
    }
    if (!found) {
        error = "the policy file has no policy \"" + std::string(policyName) + "\"";
        return std::nullopt;
    }
    const Policy& policy = policies.policies[t.policyIndex];
    if (policy.algorithm == Algorithm::LeakyBucket) {
        error = "policy \"" + policy.name +
                "\" is a leaky_bucket, whose nginx arithmetic has no burst bound to read off a "
                "log; use --vary capacity=... --vary refill=... instead";
        return std::nullopt;
    }

    // 1. Which bucket each request lands in, under the policy as it is.
    const auto isReplay = [](const Scenario& s) {
        return s.actors.size() == 1 && s.actors[0].recorded != nullptr;
    };
    BucketTimes buckets(static_cast<std::uint32_t>(t.policyIndex));
    {
        std::optional<Scenario> replay = replays.open(error);
        if (!replay) return std::nullopt;
        if (!isReplay(*replay)) {
            error = "tuning to a tolerance needs a replayed access log";
            return std::nullopt;
        }
        RunnerOptions options;
        options.measureWallTime = false;
        options.decisions = &buckets;
        ScenarioRunner runner(std::move(*replay), policies, options);
        runReplay(runner, replays);
        if (!replays.finished(runner, error)) return std::nullopt;
    }
    if (buckets.times().empty()) {
        error = "policy \"" + policy.name + "\" keys no request of the log (no match, or bypassed)";
        return std::nullopt;
    }

    // 2. Per client, the most demanding of its buckets: the peak over the window first.
    const Nanos window = policy.windowMs * kNanosPerMilli;
    std::size_t clientCount = 0;  // the replay's instances: one per client of the log
    for (auto [client, bucket] : buckets.uses())
        clientCount = std::max(clientCount, static_cast<std::size_t>(client) + 1);
    std::vector<std::int64_t> peakOfBucket;
    for (const std::vector<Nanos>& times : buckets.times())
        peakOfBucket.push_back(windowPeak(times, window));
    auto perClient = [&](const std::vector<std::int64_t>& ofBucket) {
        std::vector<std::int64_t> need(clientCount, -1);
        for (auto [client, bucket] : buckets.uses()) {
            std::int64_t& n = need[static_cast<std::size_t>(client)];
            n = std::max(n, ofBucket[bucket]);
        }
        need.erase(std::remove(need.begin(), need.end(), -1), need.end());
        return need;
    };
    const std::vector<std::int64_t> peaks = perClient(peakOfBucket);
    t.clients = static_cast<std::int64_t>(peaks.size());
    t.windowPeakMedian = quantile(peaks, 0.5);
    t.windowPeakMax = *std::max_element(peaks.begin(), peaks.end());

    // 3. The numbers the chosen share fits in.
    Policy tuned = policy;
    std::vector<std::int64_t> needs;
    if (isRateAlgorithm(policy.algorithm)) {
        const std::int64_t quota = quantile(peaks, keepUnthrottled);
        tuned.refillPerSecond =
            roundUp3(static_cast<double>(quota) * 1e9 / static_cast<double>(window));
        Policy unit = tuned;  // the emission interval; the burst is what is being found
        unit.capacity = 1;
        const Limit compiled = compileLimit(unit);
        std::vector<std::int64_t> burstOfBucket;
        for (const std::vector<Nanos>& times : buckets.times())
            burstOfBucket.push_back(burstNeeded(times, compiled.emissionInterval));
        needs = perClient(burstOfBucket);
    } else {
        needs = peaks;
    }
    tuned.capacity = std::max<std::int64_t>(1, quantile(needs, keepUnthrottled));
    t.capacity = tuned.capacity;
    t.refillPerSecond = tuned.refillPerSecond;
    t.predictedThrottled = std::count_if(needs.begin(), needs.end(),
                                         [&](std::int64_t n) { return n > tuned.capacity; });
    t.tuned = policies;
    t.tuned.policies[t.policyIndex] = tuned;
    for (const Diagnostic& d : validatePolicySet(t.tuned, "tuned")) {
        if (d.severity == Diagnostic::Severity::Error) {
            error = "the tuned numbers (capacity " + std::to_string(t.capacity) + ", refill " +
                    numberText(t.refillPerSecond) + "/s) do not validate: " + d.message;
            return std::nullopt;
        }
    }

    // 4. The log again, with them: who is still throttled, and how often.
    std::optional<Scenario> replay = replays.open(error);
    if (!replay) return std::nullopt;
    const std::shared_ptr<const RecordedLog> log = replay->actors[0].recorded;
    RunnerOptions options;
    options.measureWallTime = false;
    ScenarioRunner runner(std::move(*replay), t.tuned, options);
    runReplay(runner, replays);
    if (!replays.finished(runner, error)) return std::nullopt;
    t.report = replays.report(runner);
    const std::span<const InstanceCounters> clients = runner.instances(0);
    std::vector<ThrottledClient> throttled;
    for (std::size_t i = 0; i < clients.size(); ++i) {
        if (clients[i].throttled == 0) continue;
        throttled.push_back({log->clientName(static_cast<std::int64_t>(i)), clients[i].offered,
                             clients[i].throttled});
    }
    t.throttledClients = static_cast<std::int64_t>(throttled.size());
    const std::size_t n = std::min(top, throttled.size());
    std::partial_sort(throttled.begin(), throttled.begin() + static_cast<std::ptrdiff_t>(n),
                      throttled.end(), [](const ThrottledClient& a, const ThrottledClient& b) {
                          if (a.throttled != b.throttled) return a.throttled > b.throttled;
                          return a.client < b.client;
                      });
    throttled.resize(n);
    t.throttled = std::move(throttled);
    return t;
}

std::string toleranceText(const ToleranceTuning& t) {
    const Policy& p = t.tuned.policies[t.policyIndex];
    std::string out;
    out += "policy \"" + p.name + "\" (" + std::string(algorithmName(p.algorithm)) + "), " +
           std::to_string(t.clients) + " clients; most requests in one " +
           numberText(static_cast<double>(p.windowMs)) + " ms window: median " +
           std::to_string(t.windowPeakMedian) + ", max " + std::to_string(t.windowPeakMax) + "\n";
    out += "  to keep " + numberText(t.keepUnthrottled * 100) +
           "% of the clients unthrottled: capacity " + std::to_string(t.capacity);
    if (isRateAlgorithm(p.algorithm)) out += ", refill " + numberText(t.refillPerSecond) + "/s";
    out += " (" + std::to_string(t.predictedThrottled) + " clients need more)\n";
    const std::int64_t replayed =
        t.report.totals.spread.empty() ? 0 : t.report.totals.spread[0].instances;
    out += "  replayed with them: " + std::to_string(t.throttledClients) + " of " +
           std::to_string(replayed) + " clients throttled at least once (" +
           numberText(std::round(t.keptShare() * 1e6) / 1e4) + "% never)\n";
    for (const ThrottledClient& c : t.throttled) {
        out += "    " + c.client + ": throttled " + std::to_string(c.throttled) + " of " +
               std::to_string(c.offered) + "\n";
    }
    return out;
}

std::string toleranceJson(const ToleranceTuning& t) {
    using report_json::Json;
    const Policy& p = t.tuned.policies[t.policyIndex];
    Json j;
    j["log"] = t.report.scenario;
    j["policy"] = p.name;
    j["algorithm"] = std::string(algorithmName(p.algorithm));
    j["window_ms"] = p.windowMs;
    j["keep_unthrottled"] = t.keepUnthrottled;
    j["clients"] = t.clients;
    j["window_peak"] = Json{{"median", t.windowPeakMedian}, {"max", t.windowPeakMax}};
    Json chosen{{"capacity", t.capacity}};
    if (isRateAlgorithm(p.algorithm)) chosen["refill_per_second"] = t.refillPerSecond;
    j["chosen"] = std::move(chosen);
    j["predicted_throttled_clients"] = t.predictedThrottled;
    j["throttled_clients"] = t.throttledClients;
    j["kept_share"] = report_json::rounded(t.keptShare());
    Json list = Json::array();
    for (const ThrottledClient& c : t.throttled)
        list.push_back(
            Json{{"client", c.client}, {"offered", c.offered}, {"throttled", c.throttled}});
    j["throttled"] = std::move(list);
    return j.dump(2) + "\n";
}

}  // namespace ratelab::sim
