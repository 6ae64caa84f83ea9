#pragma once

// Value snapshots the simulator hands out: plain structs, safe to copy across threads.

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ratelab/limit.h"
#include "ratelab/limit_observer.h"
#include "ratelab/store.h"

namespace ratelab {
struct Check;  // limiter.h
}

namespace ratelab::sim {

/// What happened to one class's requests. Every request lands in exactly one of allowed,
/// throttled (429), refused (412) and failed_closed (503), so
/// offered == allowed + throttled + refused + failed_closed. failed_open counts the allowed
/// requests that passed only because the store failed under fail_open_on_transport;
/// decided_locally the requests a policy decided on its process's own store while the shared
/// one was unreachable (allowed or throttled); store_full the failed_closed requests refused
/// because the store had no room. `outcomes` counts policy decisions by PolicyOutcome, so a
/// request that two policies decided counts twice there.
struct ClassCounters {
    std::int64_t offered = 0;
    std::int64_t allowed = 0;
    std::int64_t throttled = 0;
    std::int64_t refused = 0;
    std::int64_t failedOpen = 0;
    std::int64_t failedClosed = 0;
    std::int64_t decidedLocally = 0;
    std::int64_t storeFull = 0;
    std::array<std::int64_t, kPolicyOutcomeCount> outcomes{};

    ClassCounters& operator+=(const ClassCounters& o) {
        offered += o.offered;
        allowed += o.allowed;
        throttled += o.throttled;
        refused += o.refused;
        failedOpen += o.failedOpen;
        failedClosed += o.failedClosed;
        decidedLocally += o.decidedLocally;
        storeFull += o.storeFull;
        for (std::size_t i = 0; i < outcomes.size(); ++i)
            outcomes[i] += o.outcomes[i];
        return *this;
    }
    friend bool operator==(const ClassCounters&, const ClassCounters&) = default;
};

/// A counter of ClassCounters and its name in reports, CSV series and summary metrics.
struct CounterField {
    std::string_view name;
    std::int64_t ClassCounters::*member;
};

/// Every counter, in the order reports and CSV series write them. The one list of their names.
inline constexpr CounterField kCounterFields[] = {
    {"offered", &ClassCounters::offered},
    {"allowed", &ClassCounters::allowed},
    {"throttled", &ClassCounters::throttled},
    {"refused", &ClassCounters::refused},
    {"failed_open", &ClassCounters::failedOpen},
    {"failed_closed", &ClassCounters::failedClosed},
    {"decided_locally", &ClassCounters::decidedLocally},
    {"store_full", &ClassCounters::storeFull},
};

/// The outcomes a request can have: every request lands in exactly one of these counters (their
/// sum is `offered`; failed_open counts a subset of the allowed).
inline constexpr CounterField kOutcomeFields[] = {
    {"allowed", &ClassCounters::allowed},
    {"throttled", &ClassCounters::throttled},
    {"refused", &ClassCounters::refused},
    {"failed_closed", &ClassCounters::failedClosed},
};
inline constexpr std::size_t kOutcomeCount = std::size(kOutcomeFields);
/// Index of each outcome in kOutcomeFields.
inline constexpr std::size_t kAllowedOutcome = 0;
inline constexpr std::size_t kThrottledOutcome = 1;
inline constexpr std::size_t kRefusedOutcome = 2;
inline constexpr std::size_t kFailedClosedOutcome = 3;

/// The outcome of a decided request (an index into kOutcomeFields) from its HTTP status:
/// 200 allowed, 429 throttled, 412 refused, anything else failed_closed.
constexpr std::size_t requestOutcome(int status) {
    switch (status) {
        case 200:
            return kAllowedOutcome;
        case 429:
            return kThrottledOutcome;
        case 412:
            return kRefusedOutcome;
        default:
            return kFailedClosedOutcome;
    }
}

/// The class whose requests a policy is meant to stop. Every other class is legitimate:
/// "legit", and the likes of "free" and "premium" in a scenario of plan tiers.
inline constexpr std::string_view kAttackerClass = "attacker";
inline bool isLegitimateClass(std::string_view className) {
    return className != kAttackerClass;
}

/// One client instance's totals (an actor's instance, or a replayed log's client).
struct InstanceCounters {
    std::int64_t offered = 0;
    std::int64_t allowed = 0;
    std::int64_t throttled = 0;
    friend bool operator==(const InstanceCounters&, const InstanceCounters&) = default;
};

/// When a replayed log's client was seen and the bucket key its first request was charged to.
struct ClientSeen {
    /// The first matching policy's key as the engine derived it (credentials hashed), from the
    /// client's first request; empty when no policy matched it.
    std::string key;
    Nanos firstSeen = -1;  ///< virtual time of its first request; -1 until it sent one
    Nanos lastSeen = -1;   ///< and of its latest
};

/// A replayed client's decisions in one interval of the scenario's sample interval (as the
/// scenario gives it, before any doubling): [interval * sampleInterval, (interval + 1) *
/// sampleInterval) of virtual time.
struct ClientInterval {
    std::int64_t interval = 0;
    std::int64_t allowed = 0;
    std::int64_t throttled = 0;
    friend bool operator==(const ClientInterval&, const ClientInterval&) = default;
};

/// How a class's instances fared one against another (collateral and fairness).
struct ClassSpread {
    std::int64_t instances = 0;           ///< instances that sent at least one request
    std::int64_t throttledInstances = 0;  ///< of which throttled at least once
    /// Jain's fairness index of allowed requests across those instances:
    /// (sum x)^2 / (n * sum x^2), from 1/n (one instance got everything) to 1 (all equal);
    /// 1 when no instance was allowed anything (all equal at nothing).
    double fairness = 1.0;
    /// Legitimate classes: the most distinct instances of the class charged to one bucket
    /// within one sample interval (users behind one NAT address or /64 share a bucket), each
    /// instance counted with the buckets of its first request in the interval. Not measured
    /// for the attacker class (0).
    std::int64_t peakInstancesPerBucket = 0;
    friend bool operator==(const ClassSpread&, const ClassSpread&) = default;
};

/// One sample interval [start, end) of virtual time.
struct Sample {
    Nanos start = 0;
    Nanos end = 0;
    std::vector<ClassCounters> classes;  ///< indexed like ScenarioRunner::classNames()
    KeyspaceStats keyspace;              ///< summed over the stores, read at `end`
    std::int64_t storeErrors = 0;        ///< store calls that failed in the interval
    /// What the engine spent per decision over the interval: the wall time of the limiter's
    /// calls (the store's included) over the decisions they made, the runner's own work (traffic,
    /// counting) left out. Live charts only; never part of a report, since it differs from run to
    /// run. 0 when nothing was measured.
    double engineNanosPerDecision = 0;
};

/// One row of the per-actor table: totals since the start.
struct ActorRow {
    std::string name;
    std::string className;
    std::int64_t instances = 0;
    ClassCounters counters;
};

/// A limit hit or store failure kept for the workbench log. Keys are hashed, never raw.
struct LogEntry {
    Nanos at = 0;
    std::string actor;
    std::string policy;
    PolicyOutcome outcome = PolicyOutcome::Throttled;
    std::string keyHash;   ///< 16 hex digits (the observer's keyed hash)
    Nanos retryAfter = 0;  ///< limit hits
    std::string error;     ///< store failures: the store's message
};

/// One request's decision, streamed to a DecisionSink in order.
struct DecisionRecord {
    std::int64_t seq = 0;  ///< 0-based, in decision order
    Nanos at = 0;          ///< virtual time since the start
    /// The first matching policy's bucket key (credentials hashed by the engine), as the
    /// engine derived it; empty when no policy matched. Valid for the call only.
    std::string_view key;
    std::string_view method;  ///< the request's; valid for the call only
    std::string_view path;
    /// Replays: the client field as written, and the line the request came from (an index
    /// into the log's files, and a 1-based line). Empty and 0 otherwise.
    std::string_view client;
    std::uint32_t logFile = 0;
    std::int64_t logLine = 0;
    bool allowed = false;
    int status = 200;
    /// What the service answers the request if it passes, whatever the decision: its actor's
    /// response model (200 without one), a replayed line's logged status (0 when not logged).
    /// A passed request was settled with it where a policy charges by outcome.
    int answer = 200;
    std::int64_t remaining = 0;  ///< the smallest remaining over the matching policies
    Nanos retryAfter = 0;
    int actor = 0;              ///< index into Scenario::actors
    std::int64_t instance = 0;  ///< the actor's instance (a replay's client index)
    int replica = 0;            ///< which replica decided
    /// The engine's whole decision, every matching policy's key included. Valid for the call.
    const Check* check = nullptr;
};

/// Receives every decision, in order, on the runner's thread. Must not call back into the runner.
class DecisionSink {
public:
    virtual ~DecisionSink() = default;
    virtual void onDecision(const DecisionRecord& decision) = 0;
};

/// Totals since the start of the run, for reports and the workbench's summary.
struct RunTotals {
    std::int64_t requests = 0;
    Nanos virtualTime = 0;                  ///< virtual time reached
    std::vector<ClassCounters> classes;     ///< indexed like classNames()
    std::vector<std::int64_t> peakAllowed;  ///< per class: the most allowed in one sample
    std::int64_t maxBuckets = 0;            ///< over every sample, summed over the stores
    std::int64_t maxBudgetSlots = 0;
    std::int64_t maxBytes = 0;
    std::int64_t finalBuckets = 0;  ///< at the last sample
    std::int64_t storeErrors = 0;
    std::vector<ClassSpread> spread;  ///< per class, like `classes`
};

/// The value of a summary metric: "<class>.<counter>" (offered, allowed, throttled, refused,
/// failed_open, failed_closed, decided_locally, store_full), "<class>.allowed_fraction",
/// "<class>.throttled_fraction",
/// "<class>.allowed_per_s" (over the virtual duration), "<class>.peak_allowed_per_s" (the
/// busiest sample), "<class>.instances", "<class>.throttled_instances",
/// "<class>.throttled_instance_fraction", "<class>.fairness_jain",
/// "<class>.max_instances_per_bucket" (ClassSpread), "keyspace.max_buckets", "keyspace.max_bytes",
/// "keyspace.max_budget_slots", "keyspace.final_buckets", "store.errors", "requests". Nullopt for
/// an unknown name. A fraction of a class that offered nothing is 0.
std::optional<double> summaryMetric(std::string_view metric,
                                    const std::vector<std::string>& classNames,
                                    const RunTotals& totals, Nanos duration, Nanos sampleInterval);

/// The names summaryMetric() knows for these classes (for "did you mean" and documentation).
std::vector<std::string> metricNames(const std::vector<std::string>& classNames);

}  // namespace ratelab::sim
