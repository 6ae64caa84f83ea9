#include "serve/admin/rls_metrics.h"

#include <mutex>

#include "serve/admin/prometheus_text.h"
#include "serve/admin/service_metrics.h"

namespace ratelab::serve {

namespace {

using prometheus::appendDouble;
using prometheus::family;
using prometheus::Sample;
using prometheus::seconds;

constexpr std::string_view kRpcNames[kRlsRpcCount] = {"ShouldRateLimit", "Check"};
constexpr std::string_view kServiceNames[kRlsRpcCount] = {
    "envoy.service.ratelimit.v3.RateLimitService", "grpc.health.v1.Health"};

// grpc::StatusCode's names, by number.
constexpr std::string_view kGrpcCodeNames[RlsMetrics::kGrpcCodes] = {
    "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
    "DATA_LOSS", "UNAUTHENTICATED"};

constexpr auto& kBounds = SidecarMetrics::kLatencyBounds;

// The original's five counters, in its order and with its names.
enum Figure : std::size_t { kTotalHits, kOverLimit, kNearLimit, kWithinLimit, kShadowMode };
struct RuleFamily {
    std::string_view name;
    std::string_view help;
};
constexpr RuleFamily kRuleFamilies[] = {
    {"ratelab_rls_total_hits_total", "Hits charged to the rule (each call's hits addend)."},
    {"ratelab_rls_over_limit_total", "Hits charged over the rule's limit, shadow rules included."},
    {"ratelab_rls_near_limit_total", "Hits within the rule's limit but past 80 % of it."},
    {"ratelab_rls_within_limit_total", "Hits within the rule's limit."},
    {"ratelab_rls_shadow_mode_total",
     "Hits over the limit of a rule in shadow mode (answered OK)."},
};
constexpr std::size_t kRuleFigures = std::size(kRuleFamilies);

}  // namespace

std::string_view grpcCodeName(int code) {
    return code >= 0 && code < RlsMetrics::kGrpcCodes ? kGrpcCodeNames[code] : "UNKNOWN";
}

struct RlsMetrics::RuleRow {
    std::array<std::atomic<std::int64_t>, kRuleFigures> figures{};
};

struct RlsMetrics::CallRow {
    std::array<std::atomic<std::int64_t>, kGrpcCodes> codes{};
    std::array<std::atomic<std::int64_t>, kBounds.size() + 1> latency{};
    std::atomic<std::int64_t> latencySum{0};
};

RlsMetrics::RlsMetrics()
    : rules_(new RuleRow[kMaxRuleLabels + 1]()), calls_(new CallRow[kRlsRpcCount]()) {}

RlsMetrics::~RlsMetrics() = default;

std::uint32_t RlsMetrics::slotFor(std::string_view domain, std::string_view statKey) {
    // One buffer per thread, so that a lookup allocates nothing once it has grown.
    thread_local std::string key;
    key.assign(domain);
    key += '\x1f';
    key += statKey;
    {
        std::shared_lock<std::shared_mutex> lock(labelsMutex_);
        auto it = slots_.find(key);
        if (it != slots_.end()) return it->second;
        if (labels_.size() >= kMaxRuleLabels) return kMaxRuleLabels;
    }
    std::unique_lock<std::shared_mutex> lock(labelsMutex_);
    auto it = slots_.find(key);
    if (it != slots_.end()) return it->second;
    if (labels_.size() >= kMaxRuleLabels) return kMaxRuleLabels;
    const auto slot = static_cast<std::uint32_t>(labels_.size());
    labels_.emplace_back(std::string(domain), std::string(statKey));
    slots_.emplace(key, slot);
    return slot;
}

void RlsMetrics::onHit(const rls::RlsHit& hit) {
    // The decider names a rule "<domain>.<path>"; the domain is a label of its own.
    std::string_view rule = hit.statsKey;
    if (rule.size() > hit.domain.size() && rule.substr(0, hit.domain.size()) == hit.domain &&
        rule[hit.domain.size()] == '.') {
        rule.remove_prefix(hit.domain.size() + 1);
    }
    RuleRow& row = rules_[slotFor(hit.domain, rule)];
    const auto hits = static_cast<std::int64_t>(hit.hits);
    auto add = [&row, hits](Figure f) {
        row.figures[f].fetch_add(hits, std::memory_order_relaxed);
    };
    add(kTotalHits);
    if (hit.overLimit) {
        add(kOverLimit);
        if (hit.shadow) add(kShadowMode);
    } else {
        add(kWithinLimit);
        if (hit.nearLimit) add(kNearLimit);
    }
}

void RlsMetrics::onDomainNotFound(std::string_view) {
    domainNotFound_.fetch_add(1, std::memory_order_relaxed);
}

void RlsMetrics::countAnswer(rls::RlsCode overall) {
    overall_[static_cast<std::size_t>(overall)].fetch_add(1, std::memory_order_relaxed);
}

void RlsMetrics::countCall(RlsRpc rpc, int grpcCode, Nanos latency) {
    CallRow& row = calls_[static_cast<std::size_t>(rpc)];
    if (grpcCode < 0 || grpcCode >= kGrpcCodes) grpcCode = 2;
    row.codes[static_cast<std::size_t>(grpcCode)].fetch_add(1, std::memory_order_relaxed);
    std::size_t bucket = 0;
    while (bucket < kBounds.size() && latency > kBounds[bucket])
        ++bucket;
    row.latency[bucket].fetch_add(1, std::memory_order_relaxed);
    row.latencySum.fetch_add(latency, std::memory_order_relaxed);
}

std::int64_t RlsMetrics::calls(RlsRpc rpc) const {
    std::int64_t n = 0;
    for (const auto& c : calls_[static_cast<std::size_t>(rpc)].codes)
        n += c.load(std::memory_order_relaxed);
    return n;
}

void RlsMetrics::countReload(bool succeeded, Nanos wallTime) {
    (succeeded ? reloads_ : reloadFailures_).fetch_add(1, std::memory_order_relaxed);
    if (succeeded) lastReload_.store(wallTime, std::memory_order_relaxed);
}

void RlsMetrics::render(std::string& out) const {
    std::vector<std::pair<std::string, std::string>> labels;
    {
        std::shared_lock<std::shared_mutex> lock(labelsMutex_);
        labels = labels_;
    }
    const bool other = labels.size() >= kMaxRuleLabels;
    if (other) labels.emplace_back("(other)", "(other)");
    for (std::size_t f = 0; f < kRuleFigures; ++f) {
        const RuleFamily& rf = kRuleFamilies[f];
        family(out, rf.name, "counter",
               std::string(rf.help) + " By domain and descriptor rule (the matched path).");
        for (std::size_t slot = 0; slot < labels.size(); ++slot) {
            Sample(out, rf.name)
                .label("domain", labels[slot].first)
                .label("descriptor", labels[slot].second)
                .value(rules_[slot].figures[f].load(std::memory_order_relaxed));
        }
    }

    family(out, "ratelab_rls_answers_total", "counter",
           "ShouldRateLimit answers, by overall code (errors are counted by "
           "ratelab_grpc_calls_total).");
    for (rls::RlsCode code : {rls::RlsCode::Ok, rls::RlsCode::OverLimit}) {
        Sample(out, "ratelab_rls_answers_total")
            .label("overall_code", code == rls::RlsCode::Ok ? "OK" : "OVER_LIMIT")
            .value(overall_[static_cast<std::size_t>(code)].load(std::memory_order_relaxed));
    }

    family(out, "ratelab_rls_domain_not_found_total", "counter",
           "Descriptors of calls to a domain no configuration file declares (answered OK without "
           "a limit).");
    Sample(out, "ratelab_rls_domain_not_found_total")
        .value(domainNotFound_.load(std::memory_order_relaxed));

    family(out, "ratelab_grpc_calls_total", "counter",
           "gRPC calls answered, by service, method and status code.");
    for (std::size_t rpc = 0; rpc < kRlsRpcCount; ++rpc) {
        for (int code = 0; code < kGrpcCodes; ++code) {
            const std::int64_t n =
                calls_[rpc].codes[static_cast<std::size_t>(code)].load(std::memory_order_relaxed);
            // OK always, so that a rate can be taken from the start; other codes once seen.
            if (n == 0 && code != 0) continue;
            Sample(out, "ratelab_grpc_calls_total")
                .label("service", kServiceNames[rpc])
                .label("method", kRpcNames[rpc])
                .label("code", grpcCodeName(code))
                .value(n);
        }
    }

    family(out, "ratelab_grpc_call_duration_seconds", "histogram",
           "Time from a gRPC call's arrival to its answer (the decision and its store calls "
           "included), by method.");
    for (std::size_t rpc = 0; rpc < kRlsRpcCount; ++rpc) {
        const CallRow& row = calls_[rpc];
        std::int64_t cumulative = 0;
        for (std::size_t b = 0; b <= kBounds.size(); ++b) {
            cumulative += row.latency[b].load(std::memory_order_relaxed);
            std::string le = "+Inf";
            if (b < kBounds.size()) {
                le.clear();
                appendDouble(le, seconds(kBounds[b]));
            }
            Sample(out, "ratelab_grpc_call_duration_seconds_bucket")
                .label("method", kRpcNames[rpc])
                .label("le", le)
                .value(cumulative);
        }
        Sample(out, "ratelab_grpc_call_duration_seconds_sum")
            .label("method", kRpcNames[rpc])
            .value(seconds(row.latencySum.load(std::memory_order_relaxed)));
        Sample(out, "ratelab_grpc_call_duration_seconds_count")
            .label("method", kRpcNames[rpc])
            .value(cumulative);
    }

    family(out, "ratelab_rls_config_reloads_total", "counter",
           "Rate limit configuration reloads (SIGHUP or POST /-/reload), by result; a failed "
           "reload keeps the running configuration and its counters.");
    Sample(out, "ratelab_rls_config_reloads_total")
        .label("result", "success")
        .value(reloads_.load(std::memory_order_relaxed));
    Sample(out, "ratelab_rls_config_reloads_total")
        .label("result", "failure")
        .value(reloadFailures_.load(std::memory_order_relaxed));
    family(out, "ratelab_rls_config_last_reload_success_timestamp_seconds", "gauge",
           "When the rate limit configuration now running was loaded (Unix time).");
    Sample(out, "ratelab_rls_config_last_reload_success_timestamp_seconds")
        .value(seconds(lastReload_.load(std::memory_order_relaxed)));
}

}  // namespace ratelab::serve
