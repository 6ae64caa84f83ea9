#pragma once

// The engine's front door (Limiter) and its options. What a decision returns is in verdict.h.

#include <cstdint>
#include <memory>

#include "ratelab/limit.h"
#include "ratelab/limit_observer.h"
#include "ratelab/policy.h"
#include "ratelab/request.h"
#include "ratelab/store.h"
#include "ratelab/verdict.h"

namespace ratelab {

struct LimiterOptions {
    /// Receives limit hits and store failures. Not owned; must outlive the limiter.
    LimitObserver* observer = nullptr;
    /// Secret of the keyed hash that names keys in events. 0 picks a random one; replicas that
    /// want correlated logs share a value.
    std::uint64_t keyHashSecret = 0;
};

/// The engine's front door: matches policies, derives keys, consumes from the store, applies
/// store-error rules, shadow mode and bypasses, and renders verdicts.
/// check() and decide() are thread-safe when the store is (both shipped stores are).
class Limiter {
public:
    /// REQUIRES: `policies` validated and compiled (loading a policy file does both).
    Limiter(PolicySet policies, std::shared_ptr<Store> store, LimiterOptions options = {});
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
