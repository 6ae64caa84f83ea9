#include "serve/admin/service_metrics.h"

#include "serve/admin/prometheus_text.h"

namespace ratelab::serve {

namespace {

using prometheus::appendDouble;
using prometheus::family;
using prometheus::Sample;
using prometheus::seconds;

// The per-listener figures of HttpServerStats, one family each.
struct ListenerFamily {
    std::string_view name;
    std::string_view type;
    std::string_view help;
    std::int64_t HttpServerStats::*figure;
};
constexpr ListenerFamily kListenerFamilies[] = {
    {"ratelab_connections", "gauge", "Open client connections, by listener.",
     &HttpServerStats::openConnections},
    {"ratelab_connections_accepted_total", "counter", "Connections accepted, by listener.",
     &HttpServerStats::acceptedConnections},
    {"ratelab_connections_refused_total", "counter",
     "Connections refused with 503 because the connection cap was reached, by listener.",
     &HttpServerStats::refusedConnections},
    {"ratelab_connections_idle_closed_total", "counter",
     "Kept-alive connections closed by the idle timeout, by listener.",
     &HttpServerStats::idleClosed},
};

void serverFamilies(std::string& out, const MetricsSnapshot& s) {
    const std::pair<std::string_view, const HttpServerStats*> listeners[] = {
        {"decisions", &s.decisions}, {"admin", &s.admin}};
    for (const ListenerFamily& f : kListenerFamilies) {
        family(out, f.name, f.type, f.help);
        for (auto [name, stats] : listeners)
            Sample(out, f.name).label("listener", name).value(stats->*f.figure);
    }
    family(out, "ratelab_http_refused_total", "counter",
           "Requests the HTTP layer refused before any decision (malformed, too large, too "
           "slow), by listener and status.");
    for (auto [name, stats] : listeners) {
        for (auto [status, count] : stats->refusedRequests) {
            Sample(out, "ratelab_http_refused_total")
                .label("listener", name)
                .label("status", std::to_string(status))
                .value(count);
        }
    }
}

}  // namespace

struct SidecarMetrics::Shard {
    // One row per policy name slot, and one for "(other)".
    std::unique_ptr<OutcomeRow[]> rows{new OutcomeRow[kMaxPolicyNames + 1]()};
    // Refusals by the policy that refused (Check::refusal()), slotted like rows.
    std::unique_ptr<std::atomic<std::int64_t>[]> refusals =
        std::make_unique<std::atomic<std::int64_t>[]>(kMaxPolicyNames + 1);
    alignas(64) std::array<std::atomic<std::int64_t>, kStatuses.size()> requests{};
    std::array<std::atomic<std::int64_t>, kLatencyBounds.size() + 1> latency{};
    std::atomic<std::int64_t> latencySum{0};
    std::atomic<std::int64_t> latencyCount{0};
    char padding[64] = {};
};

SidecarMetrics::SidecarMetrics(unsigned workers, std::string version)
    : version_(std::move(version))
    , storeErrors_(new std::array<std::atomic<std::int64_t>, 2>[kMaxPolicyNames + 1]()) {
    for (unsigned i = 0; i < workers; ++i)
        shards_.push_back(std::make_unique<Shard>());
}

SidecarMetrics::~SidecarMetrics() = default;

std::uint32_t SidecarMetrics::slotFor(std::string_view policyName) {
    std::lock_guard<std::mutex> lock(namesMutex_);
    for (std::uint32_t i = 0; i < names_.size(); ++i) {
        if (names_[i] == policyName) return i;
    }
    if (names_.size() >= kMaxPolicyNames) return kMaxPolicyNames;
    names_.emplace_back(policyName);
    return static_cast<std::uint32_t>(names_.size() - 1);
}

void SidecarMetrics::countDecision(unsigned worker, std::uint32_t slot, PolicyOutcome outcome) {
    shards_[worker]->rows[slot][static_cast<std::size_t>(outcome)].fetch_add(
        1, std::memory_order_relaxed);
}

void SidecarMetrics::countRefusal(unsigned worker, std::uint32_t slot) {
    shards_[worker]->refusals[slot].fetch_add(1, std::memory_order_relaxed);
}

void SidecarMetrics::countRequest(unsigned worker, int status, Nanos latency) {
    Shard& s = *shards_[worker];
    std::size_t i = 0;
    while (i + 1 < kStatuses.size() && kStatuses[i] != status)
        ++i;
    s.requests[i].fetch_add(1, std::memory_order_relaxed);
    std::size_t bucket = 0;
    while (bucket < kLatencyBounds.size() && latency > kLatencyBounds[bucket])
        ++bucket;
    s.latency[bucket].fetch_add(1, std::memory_order_relaxed);
    s.latencySum.fetch_add(latency, std::memory_order_relaxed);
    s.latencyCount.fetch_add(1, std::memory_order_relaxed);
}

void SidecarMetrics::countStoreError(std::uint32_t slot, StoreStatus status) {
    if (status == StoreStatus::Ok) return;
    storeErrors_[slot][status == StoreStatus::Transport ? 0 : 1].fetch_add(
        1, std::memory_order_relaxed);
}

void SidecarMetrics::countReload(bool succeeded, Nanos wallTime) {
    (succeeded ? reloads_ : reloadFailures_).fetch_add(1, std::memory_order_relaxed);
    if (succeeded) lastReload_.store(wallTime, std::memory_order_relaxed);
}

namespace {

void counter(std::string& out, std::string_view name, std::string_view help, std::int64_t v) {
    family(out, name, "counter", help);
    Sample(out, name).value(v);
}

void renderRedis(std::string& out, const RedisStoreCounters& r) {
    counter(out, "ratelab_redis_commands_total",
            "Scripts sent to Redis, retries included (a pipeline counts each of its calls).",
            r.commands);
    counter(out, "ratelab_redis_connects_total", "Connections to Redis established.", r.connects);
    counter(out, "ratelab_redis_connect_failures_total",
            "Connection attempts to Redis that failed (backoff bounds them).", r.connectFailures);
    counter(out, "ratelab_redis_script_loads_total",
            "Rounds of calls resent with the script's text after NOSCRIPT.", r.scriptLoads);
    counter(out, "ratelab_redis_redirects_total",
            "Cluster ASK answers, and MOVED answers that changed the slot map.", r.redirects);
    counter(out, "ratelab_redis_transport_errors_total",
            "Redis calls that ended unreachable or too slow.", r.transportErrors);
    counter(out, "ratelab_redis_refusals_total",
            "Redis calls the server refused (READONLY, OOM, a script error, ...).", r.refusals);
    counter(out, "ratelab_redis_failovers_total",
            "Sentinel: times the sentinels named a new master.", r.failovers);
    counter(out, "ratelab_redis_cache_hits_total",
            "Consumptions the over-limit cache answered without Redis.", r.cacheHits);
}

void renderBatching(std::string& out, const BatchingStoreCounters& b) {
    counter(out, "ratelab_store_batches_total",
            "Batches the decision loops' store calls were coalesced into.", b.batches);
    counter(out, "ratelab_store_batched_consumptions_total",
            "Consumptions sent to the store in those batches.", b.consumptions);
    counter(out, "ratelab_store_batch_timeouts_total",
            "Store calls answered unavailable because their timeout passed before a batch "
            "could carry them.",
            b.timedOut);
    family(out, "ratelab_store_largest_batch", "gauge", "Most consumptions one batch carried.");
    Sample(out, "ratelab_store_largest_batch").value(b.largestBatch);
}

}  // namespace

std::string SidecarMetrics::render(const MetricsSnapshot& s) const {
    std::vector<std::string> names;
    {
        std::lock_guard<std::mutex> lock(namesMutex_);
        names = names_;
    }
    const bool other = names.size() >= kMaxPolicyNames;
    if (other) names.emplace_back("(other)");

    std::string out;
    out.reserve(8192);
    family(out, "ratelab_build_info", "gauge", "The running ratelab's version.");
    Sample(out, "ratelab_build_info").label("version", version_).value(std::int64_t(1));

    family(out, "ratelab_decisions_total", "counter",
           "Outcomes of matching policies, passes included, by policy and outcome.");
    for (std::uint32_t slot = 0; slot < names.size(); ++slot) {
        for (std::size_t o = 0; o < kPolicyOutcomeCount; ++o) {
            std::int64_t sum = 0;
            for (const auto& shard : shards_)
                sum += shard->rows[slot][o].load(std::memory_order_relaxed);
            Sample(out, "ratelab_decisions_total")
                .label("policy", names[slot])
                .label("outcome", policyOutcomeName(static_cast<PolicyOutcome>(o)))
                .value(sum);
        }
    }
    family(out, "ratelab_refusals_total", "counter",
           "Requests refused, by the policy that refused them: the first enforcing policy "
           "whose outcome refused (shadow policies never refuse).");
    for (std::uint32_t slot = 0; slot < names.size(); ++slot) {
        std::int64_t sum = 0;
        for (const auto& shard : shards_)
            sum += shard->refusals[slot].load(std::memory_order_relaxed);
        Sample(out, "ratelab_refusals_total").label("policy", names[slot]).value(sum);
    }
    family(out, "ratelab_fail_open_total", "counter",
           "Requests passed because the store could not be reached and the policy fails open "
           "(the failed_open outcome of ratelab_decisions_total), by policy.");
    for (std::uint32_t slot = 0; slot < names.size(); ++slot) {
        std::int64_t sum = 0;
        for (const auto& shard : shards_) {
            sum += shard->rows[slot][static_cast<std::size_t>(PolicyOutcome::FailedOpen)].load(
                std::memory_order_relaxed);
        }
        Sample(out, "ratelab_fail_open_total").label("policy", names[slot]).value(sum);
    }

    family(out, "ratelab_requests_total", "counter",
           "Decision requests answered, by the status the decision carries (behind nginx a "
           "refusal travels as 403); 400: the request did not describe one to decide.");
    for (std::size_t i = 0; i < kStatuses.size(); ++i) {
        std::int64_t sum = 0;
        for (const auto& shard : shards_)
            sum += shard->requests[i].load(std::memory_order_relaxed);
        Sample(out, "ratelab_requests_total")
            .label("status",
                   kStatuses[i] == 0 ? std::string("other") : std::to_string(kStatuses[i]))
            .value(sum);
    }

    family(out, "ratelab_decision_duration_seconds", "histogram",
           "Time to decide one request (every matching policy, store calls included).");
    std::int64_t cumulative = 0;
    for (std::size_t b = 0; b <= kLatencyBounds.size(); ++b) {
        for (const auto& shard : shards_)
            cumulative += shard->latency[b].load(std::memory_order_relaxed);
        std::string le = "+Inf";
        if (b < kLatencyBounds.size()) {
            le.clear();
            appendDouble(le, seconds(kLatencyBounds[b]));
        }
        Sample(out, "ratelab_decision_duration_seconds_bucket").label("le", le).value(cumulative);
    }
    std::int64_t sumNanos = 0;
    std::int64_t count = 0;
    for (const auto& shard : shards_) {
        sumNanos += shard->latencySum.load(std::memory_order_relaxed);
        count += shard->latencyCount.load(std::memory_order_relaxed);
    }
    Sample(out, "ratelab_decision_duration_seconds_sum").value(seconds(sumNanos));
    Sample(out, "ratelab_decision_duration_seconds_count").value(count);

    family(out, "ratelab_store_errors_total", "counter",
           "Store calls that failed, by policy and class (transport: unreachable or too slow; "
           "refused: the store answered no).");
    for (std::uint32_t slot = 0; slot < names.size(); ++slot) {
        for (StoreStatus status : {StoreStatus::Transport, StoreStatus::Refused}) {
            Sample(out, "ratelab_store_errors_total")
                .label("policy", names[slot])
                .label("class", storeStatusName(status))
                .value(storeErrors_[slot][status == StoreStatus::Transport ? 0 : 1].load(
                    std::memory_order_relaxed));
        }
    }

    family(out, "ratelab_store_buckets", "gauge", "Live buckets in the store.");
    Sample(out, "ratelab_store_buckets").label("store", s.storeKind).value(s.keyspace.buckets);
    family(out, "ratelab_store_budget_slots", "gauge",
           "Live budget slots (credentials counted against a peer or the global budget).");
    Sample(out, "ratelab_store_budget_slots")
        .label("store", s.storeKind)
        .value(s.keyspace.budgetSlots);
    family(out, "ratelab_store_bytes", "gauge", "Memory the store holds for buckets and slots.");
    Sample(out, "ratelab_store_bytes").label("store", s.storeKind).value(s.keyspace.bytes);
    if (s.keyspace.maxBuckets > 0) {
        family(out, "ratelab_store_max_buckets", "gauge", "The store's cap on live buckets.");
        Sample(out, "ratelab_store_max_buckets")
            .label("store", s.storeKind)
            .value(s.keyspace.maxBuckets);
    }

    if (s.redis) renderRedis(out, *s.redis);
    if (s.batching) renderBatching(out, *s.batching);

    family(out, "ratelab_policy_reloads_total", "counter",
           "Policy file reloads (SIGHUP or POST /-/reload), by result; a failed reload keeps "
           "the running policies.");
    Sample(out, "ratelab_policy_reloads_total")
        .label("result", "success")
        .value(reloads_.load(std::memory_order_relaxed));
    Sample(out, "ratelab_policy_reloads_total")
        .label("result", "failure")
        .value(reloadFailures_.load(std::memory_order_relaxed));
    family(out, "ratelab_policy_last_reload_success_timestamp_seconds", "gauge",
           "When the policies now running were loaded (Unix time).");
    Sample(out, "ratelab_policy_last_reload_success_timestamp_seconds")
        .value(seconds(lastReload_.load(std::memory_order_relaxed)));
    family(out, "ratelab_policies", "gauge", "Policies in the running policy file.");
    Sample(out, "ratelab_policies").value(s.policies);
    family(out, "ratelab_ready", "gauge",
           "1 when the store answers and the sidecar is not draining.");
    Sample(out, "ratelab_ready").value(std::int64_t(s.ready ? 1 : 0));
    family(out, "ratelab_draining", "gauge", "1 once SIGTERM was received.");
    Sample(out, "ratelab_draining").value(std::int64_t(s.draining ? 1 : 0));
    serverFamilies(out, s);
    return out;
}

}  // namespace ratelab::serve
