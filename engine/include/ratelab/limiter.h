#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ratelab/limit.h"
#include "ratelab/observer.h"
#include "ratelab/policy.h"
#include "ratelab/request.h"
#include "ratelab/store.h"

namespace ratelab {

/// The stable code of a refusal, carried in the problem+json body.
enum class RefusalCode : std::uint8_t {
    None,
    RateLimited,          ///< 429
    CostExceedsCapacity,  ///< 429 without Retry-After: waiting never helps
    IdentityUnavailable,  ///< 412: no principal, credential or peer to key on
    ForwardedMalformed,   ///< 412: a trusted proxy sent a forwarded header that does not parse
    StoreUnavailable,     ///< 503: transport error under `deny`
    StoreRefused,         ///< 503: the store refused (full, out of memory, read-only)
};

/// "rate_limited", "cost_exceeds_capacity", "identity_unavailable", "forwarded_malformed",
/// "store_unavailable", "store_refused"; "" for None.
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
};

/// A decision without text: what the simulator and benchmarks read. Reuse one across calls;
/// its vectors and strings keep their capacity, so steady-state calls do not allocate.
struct Check {
    bool captureKeys = false;  ///< set before calling to fill PolicyResult::key and ::scope
    bool allowed = true;
    int status = 200;  ///< 200 (pass), 429, 412 or 503
    RefusalCode code = RefusalCode::None;
    Nanos retryAfter = 0;  ///< 429: how long until the refusing policy would admit the request
    /// One per matching policy, in order, up to and including the first that refused: like
    /// nested middleware, a refused request does not spend the quota of later policies.
    std::vector<PolicyResult> policies;
    std::size_t used = 0;                ///< entries of `policies` that belong to this decision
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

struct LimiterOptions {
    /// Receives limit hits and store failures. Not owned; must outlive the limiter.
    LimitObserver* observer = nullptr;
    /// Secret of the keyed hash that names keys in events. 0 picks a random one; replicas that
    /// want correlated logs share a value.
    std::uint64_t keyHashSecret = 0;
};

/// Whether a bucket of policy `before` means the same thing under `after`, so that a limiter
/// taking over from another (a policy reload) may keep it: the same name, algorithm, key rules
/// and tier names. Numbers, routes, budgets, modes, headers and bypasses may differ.
bool keepsBucketState(const Policy& before, const Policy& after);

/// The engine's front door: matches policies, derives keys, consumes from the store, applies
/// store-error rules, shadow mode and bypasses, and renders verdicts.
/// check() and decide() are thread-safe when the store is (both shipped stores are).
class Limiter {
public:
    /// REQUIRES: `policies` validated and compiled (loading a policy file does both).
    Limiter(PolicySet policies, std::shared_ptr<Store> store, LimiterOptions options = {});
    /// A limiter for `policies` that takes over `previous`'s store and bucket state, for
    /// reloading a policy file while serving: a policy that keepsBucketState() with the policy
    /// of `previous` of the same name decides on that policy's buckets; every other policy
    /// starts with fresh ones (limit ids `previous` never used). `previous` may go on deciding
    /// meanwhile. REQUIRES: `policies` validated and compiled.
    Limiter(PolicySet policies, const Limiter& previous, LimiterOptions options = {});
    ~Limiter();
    Limiter(const Limiter&) = delete;
    Limiter& operator=(const Limiter&) = delete;

    /// Decides without rendering text. Never throws.
    void check(const RequestView& request, Nanos now, Check& out) const;

    /// Decides and renders status, headers and body into `out`, reusing its buffers. With
    /// `explain`, also fills each policy's key and scope in out.check. Never throws.
    void decide(const RequestView& request, Nanos now, Verdict& out, bool explain = false) const;
    Verdict decide(const RequestView& request, Nanos now, bool explain = false) const;

    const PolicySet& policies() const;
    Store& store() const;

    /// Replaces one policy's numbers (capacity, refill, window, cost, mode, headers) in place,
    /// as the workbench sliders do; buckets keep their state. The policy's name, key rules and
    /// algorithm stay. REQUIRES: `updated` validated. Not thread-safe with check()/decide().
    void retune(std::size_t policyIndex, const Policy& updated);

    /// The limitId a policy's tier uses in the store. Stable for the limiter's life.
    std::uint32_t limitId(std::size_t policyIndex, std::size_t tier = 0) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ratelab
