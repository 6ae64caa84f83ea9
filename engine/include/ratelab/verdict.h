#pragma once

// What a decision says: each matching policy's outcome, the refusal's stable code, and the
// rendered HTTP answer. Written by Limiter::check() and Limiter::decide() (limiter.h).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ratelab/limit.h"

namespace ratelab {

class Limiter;

/// What a matching policy did with a request.
enum class PolicyOutcome : std::uint8_t {
    Passed,               ///< allowed by the policy
    Throttled,            ///< over the limit: 429
    ShadowThrottled,      ///< over the limit in shadow mode: counted, passed
    CostExceedsCapacity,  ///< costs more than the limit can ever hold: 429, no Retry-After
    Bypassed,             ///< a bypass rule skipped the policy
    NoIdentity,           ///< no key could be derived: 412
    ForwardedMalformed,   ///< a trusted proxy's forwarded header is malformed: 412 (fail closed)
    FailedOpen,           ///< store transport error under fail_open_on_transport: passed
    FailedClosed,         ///< store transport error under deny: 503
    StoreRefused,         ///< the store refused (OOM, read-only, ...): 503 under every policy
    /// The shared store was unreachable and the policy's on_store_error is `local`: the
    /// process's own memory store decided on the per-replica limit. The decision says whether
    /// it passed (refused: 429, or cost above the local capacity).
    DecidedLocally,
    /// The store had no room for a new bucket (its cap reached with nothing idle, or Redis out
    /// of memory) and no enclosing bucket to charge instead: 503 under every policy.
    StoreFull,
    // A new outcome goes above this line, and kPolicyOutcomeCount follows the last one.
};

/// How many outcomes there are: PolicyOutcome values run from 0 to kPolicyOutcomeCount - 1, so
/// counters, metrics and charts enumerate them all (with policyOutcomeName) without a list.
inline constexpr std::size_t kPolicyOutcomeCount =
    static_cast<std::size_t>(PolicyOutcome::StoreFull) + 1;

/// "passed", "throttled", "shadow_throttled", "cost_exceeds_capacity", "bypassed",
/// "no_identity", "forwarded_malformed", "failed_open", "failed_closed", "store_refused",
/// "decided_locally", "store_full".
std::string_view policyOutcomeName(PolicyOutcome outcome);

/// The stable code of a refusal, carried in the problem+json body.
enum class RefusalCode : std::uint8_t {
    None,
    RateLimited,          ///< 429
    CostExceedsCapacity,  ///< 429 without Retry-After: waiting never helps
    IdentityUnavailable,  ///< 412: no principal, credential or peer to key on
    ForwardedMalformed,   ///< 412: a trusted proxy sent a forwarded header that does not parse
    StoreUnavailable,     ///< 503: transport error under `deny`
    StoreRefused,         ///< 503: the store refused (out of memory, read-only, script error)
    StoreFull,            ///< 503: the store had no room for a new bucket
};

/// "rate_limited", "cost_exceeds_capacity", "identity_unavailable", "forwarded_malformed",
/// "store_unavailable", "store_refused", "store_full"; "" for None.
std::string_view refusalCodeName(RefusalCode code);

/// One matching policy's part in a decision.
struct PolicyResult {
    std::uint32_t policy = 0;  ///< index into the PolicySet
    std::uint32_t tier = 0;    ///< index into the policy's tiers; 0 without tiers
    PolicyOutcome outcome = PolicyOutcome::Passed;
    Decision decision;
    bool chargedFallback = false;
    std::string key;    ///< the bucket key charged; filled only when Check::captureKeys
    std::string scope;  ///< the budget scope; filled only when Check::captureKeys

    /// What Limiter::settle() needs to find the very bucket this result charged, written by the
    /// limiter. Set (`pending`) only when the policy charges by outcome (chargesByOutcome) and a
    /// store admitted the request; the strings keep their capacity when the Check is reused.
    struct Charge {
        bool pending = false;    ///< settle() applies the response to this result
        bool local = false;      ///< charged the limiter's local store (on_store_error "local")
        std::uint8_t level = 0;  ///< ConsumeResult::chargedLevel
        std::uint32_t limitId = 0;
        std::int64_t cost = 0;         ///< what the decision charged
        std::int64_t stamp = 0;        ///< ConsumeResult::stamp
        std::uint64_t generation = 0;  ///< the compiled limit it was decided under
        std::string key;               ///< the bucket charged (a budget fallback's key if one was)
        std::string partition;
    };
    Charge charge;
};

/// A decision without text: what the simulator and benchmarks read. Reuse one across calls;
/// its storage and strings keep their capacity, so steady-state calls do not allocate.
struct Check {
    bool captureKeys = false;  ///< set before calling to fill PolicyResult::key and ::scope
    bool allowed = true;
    int status = 200;  ///< 200 (pass), 429, 412 or 503
    RefusalCode code = RefusalCode::None;
    Nanos retryAfter = 0;  ///< 429: how long until the refusing policy would admit the request

    /// One per matching policy, in order, up to and including the first that refused: like
    /// nested middleware, a refused request does not spend the quota of later policies. Valid
    /// until the Check is used for the next decision.
    std::span<const PolicyResult> policies() const { return {results_.data(), used_}; }

    /// The result of the policy that refused the request, written by the walk that stopped
    /// there; null when the request passed. The one answer to which policy refused: shadow
    /// policies that throttled, or that had no key, before it are not it.
    const PolicyResult* refusal() const {
        return refusedBy_ < used_ ? &results_[refusedBy_] : nullptr;
    }

    /// Whether Limiter::settle() can change anything for this decision: some policy that charges
    /// by outcome charged it. A caller with nothing to settle may skip keeping the Check.
    bool settles() const { return settles_; }

private:
    friend class Limiter;
    // Grows to the most policies one request ever matched; entries past used_ are stale.
    std::vector<PolicyResult> results_;
    std::size_t used_ = 0;
    std::size_t refusedBy_ = static_cast<std::size_t>(-1);  ///< index into results_
    bool settles_ = false;
};

struct HttpHeader {
    std::string name;
    std::string value;
};

/// Everything a server needs to answer: status, headers (on passes too) and, for refusals, a
/// problem+json body.
struct Verdict {
    bool allowed = true;
    int status = 200;
    RefusalCode code = RefusalCode::None;
    std::vector<HttpHeader> headers;
    std::string contentType;  ///< "application/problem+json" when body is set
    std::string body;
    Check check;  ///< the decisions behind it; keys and scopes filled when explained
};

}  // namespace ratelab
