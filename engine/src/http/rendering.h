#pragma once

// Rendering a decision as HTTP: the rate-limit header fields in each style, Retry-After, and
// problem+json bodies with a stable code per refusal.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "policy/compiled_policy.h"
#include "ratelab/limit.h"
#include "ratelab/policy.h"
#include "ratelab/verdict.h"

namespace ratelab::http {

/// Whole seconds for a header: rounded up, and at least `floor`.
std::int64_t ceilSeconds(Nanos duration, std::int64_t floor = 0);

/// The `w` a client is told for a limit: the window, or the time a rate algorithm takes to
/// refill its whole burst, in whole seconds (at least 1).
std::int64_t windowSeconds(const Limit& limit);

/// Appends the quota header fields for the policies in `check` that decided with trustworthy
/// state (passed, throttled, cost above capacity; never shadow, bypassed or failed-open ones),
/// each in its policy's style, plus Retry-After on a 429 for throttling. Reuses `headers`'
/// elements from `used` on and returns the new count. `compiled[i]` is the compiled form of
/// `policies.policies[i]`, whose limits the headers advertise.
std::size_t renderHeaders(const PolicySet& policies, std::span<const CompiledPolicy> compiled,
                          const Check& check, std::vector<HttpHeader>& headers, std::size_t used);

/// The same for decisions that come from elsewhere than a Check (Envoy's rate limit service,
/// app/serve/rls): `results` as Check::policies(), and the Check's status, code and retry time.
std::size_t renderHeaders(const PolicySet& policies, std::span<const CompiledPolicy> compiled,
                          std::span<const PolicyResult> results, int status, RefusalCode code,
                          Nanos retryAfter, std::vector<HttpHeader>& headers, std::size_t used);

/// The problem+json body for a refusal (RFC 9457 shape, the IETF draft's problem types where
/// one exists): type, title, status, code, detail and, for quota refusals, violated-policies.
void renderProblem(const PolicySet& policies, const Check& check, std::int64_t cost,
                   std::string& body);

}  // namespace ratelab::http
