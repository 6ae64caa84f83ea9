#pragma once

// A scenario: a seeded, deterministic workload on a virtual clock (the shipped ones and what each
// shows: scenarios/README.md; the file format: the reader in scenario_file.cpp). Plain data,
// loaded once from a scenario file; the runner never reads the file again.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ratelab/diagnostic.h"
#include "ratelab/ip_address.h"
#include "ratelab/limit.h"
#include "ratelab/policy.h"
#include "ratelab/policy_file.h"
#include "ratelab/policy_tuning.h"

namespace ratelab::sim {

class RecordedLog;  // replay_source.h

/// A distribution an arrival draws from: `values`, each with its probability. A value whose
/// probability is 0 shares what the others leave equally: plain values alone are equally
/// likely (an equi-depth histogram: a fit writes each as the mean of an equal share of the
/// sorted observations), and a rare value far above them (a session a hundred times the
/// others) keeps its own probability. One value is a constant.
struct Distribution {
    std::vector<double> values;
    /// Empty (every value equally likely), or one per value: its probability, or 0.
    std::vector<double> probabilities;

    /// The probability of drawing values[i].
    double probability(std::size_t i) const;
    double mean() const;
    friend bool operator==(const Distribution&, const Distribution&) = default;
};

/// When one actor's instances send requests. Rates are per instance.
struct Arrival {
    enum class Kind : std::uint8_t {
        Constant,  ///< evenly spaced, `ratePerSecond` per instance, instances staggered
        Poisson,   ///< exponential gaps, `ratePerSecond` per instance
        Burst,     ///< `burstSize` requests every `burstEvery`, `burstSpacing` apart (a page load)
        Ramp,  ///< evenly spaced, the rate moving linearly from `fromPerSecond` to `toPerSecond`
        /// Each instance on its own: sessions of `sessionSize` requests spread evenly over
        /// `sessionSpan` (drawn together per session), `idle` between one session's last
        /// request and the next one's first (an ON/OFF source); `total` sessions in all, or
        /// until stop when unset. Without `idle`, one session.
        Session,
        /// Each instance on its own: requests `gaps` apart, `total` of them in all (until stop
        /// when unset).
        Empirical,
    };
    Kind kind = Kind::Constant;
    double ratePerSecond = 1.0;
    std::int64_t burstSize = 6;
    Nanos burstEvery = 10 * kNanosPerSecond;
    Nanos burstSpacing = 0;
    /// Burst: the first burst of every instance at start + burstPhase (a synchronised crowd, or
    /// an attacker timing a window boundary). Unset: each instance at a random phase.
    std::optional<Nanos> burstPhase;
    double fromPerSecond = 0;
    double toPerSecond = 0;
    Nanos rampOver = 0;  ///< ramp length; 0 means until the actor stops
    /// Session and empirical arrivals draw per instance, each instance from its own stream.
    /// Sessions (session) or requests (empirical) each instance sends; unset: until stop. An
    /// instance with a total is placed at random where its whole activity fits before stop;
    /// an activity drawn longer than that is compressed to fit, its idle gaps first.
    std::optional<Distribution> total;
    Distribution sessionSize;  ///< session: requests per session
    /// Session: seconds from a session's first request to its last; one value, or one per
    /// sessionSize value, drawn with it (the i-th span with the i-th size).
    Distribution sessionSpan;
    std::optional<Distribution> idle;  ///< session: seconds between sessions; unset: one session
    Distribution gaps;                 ///< empirical: seconds between requests
    /// Session and empirical: each request's time rounded down to a whole multiple of this
    /// since the run's start, as a log that records whole seconds shows them; 0: exact.
    Nanos resolution = 0;

    /// Whether instances draw their own arrivals (session, empirical).
    bool perInstance() const { return kind == Kind::Session || kind == Kind::Empirical; }
};

/// The TCP peer each instance connects from.
struct PeerSpec {
    enum class Kind : std::uint8_t {
        None,              ///< no peer (a server that cannot see one)
        Ipv4,              ///< `address`; every instance uses it
        Ipv4Pool,          ///< one address per instance, taken in order from `cidr`
        Nat,               ///< `address`, shared by every instance behind it
        Ipv6,              ///< `address` (IPv6), every instance
        Ipv6Rotate,        ///< a new random address inside `cidr` (a /64) per request
        Ipv6PrefixRotate,  ///< a new random /`prefixLength` inside `cidr` (a /48) per request
        Ipv4Rotate,        ///< a new random address inside `cidr` (an IPv4 network) per request
    };
    Kind kind = Kind::None;
    IpAddress address;
    Cidr cidr;
    int prefixLength = 64;
};

enum class AuthorizationMode : std::uint8_t {
    None,
    Fixed,   ///< one token per instance
    Rotate,  ///< a new token on every request
};

enum class PrincipalMode : std::uint8_t {
    None,
    Fixed,  ///< one verified principal per instance
};

/// What the client writes in a forwarded header.
struct ForwardedSpec {
    enum class Kind : std::uint8_t {
        None,
        SpoofRandom,  ///< a random IPv4 client address the caller writes itself, per request
        ViaProxy,     ///< the request arrives from `proxy`; the header names the instance's peer
        /// Through `proxy` as well, but the client first writes a random address of its own
        /// and the proxy appends the real one: "203.0.113.9, 198.51.100.7".
        SpoofViaProxy,
    };
    Kind kind = Kind::None;
    IpAddress proxy;
    std::string header = "x-forwarded-for";  ///< x-forwarded-for, forwarded or x-real-ip
};

struct Identity {
    PeerSpec peer;
    AuthorizationMode authorization = AuthorizationMode::None;
    PrincipalMode principal = PrincipalMode::None;
    ForwardedSpec forwarded;
    /// Verified attributes sent with every request, e.g. {"plan", "premium"}. "{instance}" in a
    /// value becomes the instance's number, e.g. {"account", "user{instance}"}.
    std::vector<std::pair<std::string, std::string>> attributes;
};

/// What the service answers an actor's requests that pass the limiter, so that policies that
/// charge by outcome (charge "failures" or "successes", a penalty) can be simulated. Each request
/// draws its status from the actor's own seeded stream (traffic.h), whatever the policies
/// decide, so runs stay reproducible and two policy sets see the same answers.
struct ResponseModel {
    enum class Kind : std::uint8_t {
        None,         ///< not modelled: every request answers 200 and nothing is drawn
        SuccessRate,  ///< 200 with probability `successRate`, otherwise `failureStatus`
        Statuses,     ///< each of `statuses` with its probability (they add up to 1)
    };
    Kind kind = Kind::None;
    double successRate = 1.0;
    int failureStatus = 401;
    std::vector<std::pair<int, double>> statuses;  ///< status, probability; in file order

    /// The status of a request whose draw is `unit`, uniform in [0, 1).
    int status(double unit) const;
};

/// A group of identical clients: `count` instances with one arrival process and identity.
struct Actor {
    std::string name;
    std::string className = "legit";  ///< "legit", "attacker" or any name; metrics group by it
    std::int64_t count = 1;
    Arrival arrival;
    std::string method = "GET";
    std::string path = "/";
    /// Extra headers sent on every request, e.g. {"x-account", "alice"}; "{instance}" in a value
    /// becomes the instance's number.
    std::vector<std::pair<std::string, std::string>> headers;
    std::int64_t cost = 0;  ///< 0: each policy's own cost
    Identity identity;
    ResponseModel response;
    Nanos start = 0;            ///< first request not before this
    std::optional<Nanos> stop;  ///< no request at or after this; unset: the end
    /// A replayed access log: when set, requests, times and clients come from it, and
    /// arrival, identity, method and path above are unused.
    std::shared_ptr<const RecordedLog> recorded;
};

/// A store failure mode active over [from, to).
enum class StoreFailure : std::uint8_t {
    Transport,  ///< connection dropped: StoreStatus::Transport, immediately
    Timeout,    ///< the store stalls past the policy's store_timeout_ms: StoreStatus::Transport
    Refusal,    ///< the store answers OOM: StoreStatus::Refused
};

/// Fields a policy_change event sets on one policy (Limiter::retune). Unset fields keep theirs.
struct PolicyChange {
    std::string policy;  ///< the policy's name; empty: the first policy
    std::optional<std::int64_t> capacity;
    std::optional<double> refillPerSecond;
    std::optional<std::int64_t> windowMs;
    std::optional<std::int64_t> cost;
    std::optional<PolicyMode> mode;

    /// `policy`'s tunable fields with the changes applied: what Limiter::retune takes.
    PolicyTuning tuning(const Policy& policy) const;
};

struct ScenarioEvent {
    enum class Kind : std::uint8_t { StoreOutage, StoreLatency, PolicyChange };
    Kind kind = Kind::StoreOutage;
    Nanos from = 0;  ///< store events: active over [from, to); policy_change: applied at `from`
    Nanos to = 0;
    int replica = -1;  ///< store events with per-replica stores: which one; -1 every store
    StoreFailure failure = StoreFailure::Transport;
    Nanos latency = 0;  ///< store_latency: added to every store call
    sim::PolicyChange change;
    int line = 0;  ///< where the event is written, for diagnostics found later
    int column = 0;
};

/// `{"metric": "attacker.allowed_per_s", "max": 2}`, checked against the run's summary.
struct Expectation {
    std::string metric;
    std::optional<double> min;
    std::optional<double> max;
};

struct Scenario {
    std::string file;  ///< where it was loaded from; empty when built in code
    std::string name;
    std::string title;
    std::string description;
    std::uint64_t seed = 1;
    Nanos duration = 60 * kNanosPerSecond;
    Nanos sampleInterval = kNanosPerSecond;
    int replicas = 1;
    /// True: every replica talks to one store. False: each replica has its own memory store.
    bool sharedStore = true;
    std::int64_t maxBuckets = 0;  ///< memory store cap override; 0: the policy file's
    /// A streamed replay, whose span is known only at its end: the run ends with the sample
    /// that holds the last request, `duration` being only a bound.
    bool endsWithTraffic = false;
    /// > 0 (even): a run that would close more samples merges them in pairs and doubles its
    /// sample interval, so the figures are those of a run at the final interval from the start.
    std::int64_t maxSamples = 0;
    /// The policy file as written in the scenario, and resolved against the scenario's folder.
    std::string policy;
    std::string policyPath;
    int policyLine = 0;  ///< where the scenario names its policy, for errors about that file
    int policyColumn = 0;
    std::vector<Actor> actors;
    std::vector<ScenarioEvent> events;
    std::vector<Expectation> expectations;

    /// Class names in first-appearance order over the actors: the metrics' class index.
    std::vector<std::string> classNames() const;
};

/// How many instances a crowd of `count` becomes when scaled `factor` times:
/// max(1, llround(count * factor)), so a crowd never vanishes. `ratelab-cli fit --scale` and the
/// workbench's scenario editor both scale by it. REQUIRES: factor > 0.
std::int64_t scaledCrowdCount(std::int64_t count, double factor);

/// Whether an actor is a crowd that scaling multiplies: more than one generated instance. An
/// actor of one instance stands for one client and stays one; a replayed log is not scaled.
bool isScaledCrowd(const Actor& actor);

/// Multiplies every crowd's count (isScaledCrowd) by `factor` through scaledCrowdCount; single
/// actors keep theirs. A crowd's IPv4 pool too small for its new count is widened to the
/// smallest network that holds it (the network around the old one, its prefix shortened), unless
/// the wider network would take in another actor's addresses: then it stays, and the loader refuses
/// the count as it refuses any pool too small. Returns how many actors changed. REQUIRES: factor >
/// 0.
int scaleCrowds(Scenario& scenario, double factor);

struct ScenarioLoadResult {
    std::optional<Scenario> scenario;     ///< set when there is no error
    std::vector<Diagnostic> diagnostics;  ///< every problem found, FILE:LINE:COLUMN
    bool unreadable = false;  ///< the file could not be read; the one diagnostic says why
    bool ok() const { return scenario.has_value(); }
};

/// Loads and validates a scenario file, reporting every problem at once (unknown keys with
/// "did you mean", types, ranges, unknown metrics). Oversized or deeply nested input is refused.
ScenarioLoadResult loadScenarioFile(const std::string& path);

/// The same on text in memory; `fileName` names it in diagnostics and resolves `policy`.
ScenarioLoadResult parseScenarioText(std::string_view text, std::string_view fileName);

/// Loads the policy file the scenario names (policyPath). When that file cannot be read, the
/// one diagnostic points at the scenario's line naming it, and `unreadable` is set.
/// REQUIRES: !scenario.policyPath.empty().
PolicyLoadResult loadScenarioPolicy(const Scenario& scenario,
                                    const PolicyCheckOptions& options = {});

/// Checks what needs the policy: policy_change events name existing policies and set valid
/// numbers. Diagnostics point into the scenario file.
std::vector<Diagnostic> checkScenarioAgainstPolicy(const Scenario& scenario,
                                                   const PolicySet& policies);

}  // namespace ratelab::sim
