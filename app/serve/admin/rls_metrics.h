#pragma once

// The rate limit service's counters and their Prometheus families: per domain and rule the
// original's five (total_hits, over_limit, near_limit, within_limit, shadow_mode) from the
// decider's reports (rls::RlsObserver), the answers' overall codes, the gRPC calls by method and
// status with a latency histogram each, and the configuration's reloads.
//
// Label sets are bounded: the rules' names come from the configuration, except where a rule
// names its counters after the request's values (detailed_metric), so at most kMaxRuleLabels
// (domain, descriptor) pairs are told apart over the life of the process and later ones are
// counted under domain="(other)". Domains and descriptors a client makes up never reach a
// label: they match no rule, and only rules count (an unknown domain only adds to one counter).

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ratelab/limit.h"
#include "serve/rls/rls_decider.h"
#include "serve/rls/rls_types.h"

namespace ratelab::serve {

/// The RPCs the gRPC listener serves, as they appear in the `method` label.
enum class RlsRpc : std::uint8_t { ShouldRateLimit, HealthCheck };
inline constexpr std::size_t kRlsRpcCount = 2;

/// "OK", "INVALID_ARGUMENT", ...: grpc::StatusCode's name of a code number.
std::string_view grpcCodeName(int code);

/// Thread-safe: every count*() from any thread, render() from any.
class RlsMetrics final : public rls::RlsObserver {
public:
    static constexpr std::uint32_t kMaxRuleLabels = 4096;
    /// gRPC status codes 0..16 (OK .. UNAUTHENTICATED); anything else counts as 2, UNKNOWN.
    static constexpr int kGrpcCodes = 17;

    RlsMetrics();
    ~RlsMetrics() override;

    /// A limit the decider charged: its rule's counters.
    void onHit(const rls::RlsHit& hit) override;
    void onDomainNotFound(std::string_view domain) override;
    /// One answered ShouldRateLimit, by its overall code.
    void countAnswer(rls::RlsCode overall);
    /// One finished call, by RPC, gRPC status code and the time from its arrival to its answer.
    void countCall(RlsRpc rpc, int grpcCode, Nanos latency);
    void countReload(bool succeeded, Nanos wallTime);
    /// Calls of `rpc` answered so far, every status code.
    std::int64_t calls(RlsRpc rpc) const;

    /// The families, appended to the sidecar's exposition.
    void render(std::string& out) const;

private:
    struct RuleRow;
    struct CallRow;
    std::uint32_t slotFor(std::string_view domain, std::string_view statKey);

    mutable std::shared_mutex labelsMutex_;
    std::unordered_map<std::string, std::uint32_t> slots_;     // "domain\x1fdescriptor" -> slot
    std::vector<std::pair<std::string, std::string>> labels_;  // by slot: domain, descriptor
    std::unique_ptr<RuleRow[]> rules_;                         // kMaxRuleLabels + 1: "(other)"
    std::unique_ptr<CallRow[]> calls_;                         // by RlsRpc
    std::array<std::atomic<std::int64_t>, 3> overall_{};       // by rls::RlsCode
    std::atomic<std::int64_t> domainNotFound_{0};
    std::atomic<std::int64_t> reloads_{0};
    std::atomic<std::int64_t> reloadFailures_{0};
    std::atomic<Nanos> lastReload_{0};
};

}  // namespace ratelab::serve
