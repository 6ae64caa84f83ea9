#pragma once

// Exports a validated policy set to the configuration of another rate limiter. Each export
// states, in comments, what the target cannot express, and refuses a policy it cannot
// approximate rather than emitting something that limits differently in a way that matters.
// The rule for "approximated": the target may differ in timing, granularity or shape (a smooth
// refill for a window), and may be stricter for some clients, but never admits an attacker
// more than the policy would over the policy's own worst case; each approximation says how in
// a comment. What each target does with each part of a policy:
//
//                  nginx (limit_req)           Envoy (local_ratelimit)     HAProxy (stick table)
// leaky_bucket     exact when nginx's integer  token bucket of burst+1     at most burst+1 over
//                  rate equals the engine's;   (approx.; no delaying)      (burst+1)/R (approx.)
//                  else nearest lower rate
// token_bucket,    burst=B-1 nodelay (approx.: token bucket B, R (exact     at most B over B/R
// gcra             ms arithmetic)              when R*I/1000 is whole)     (approx.)
// fixed_window     burst=Q-1 nodelay, rate Q/W token bucket Q, Q per W     http_req_rate(W) > Q
//                  (approx.: same 2Q worst     (approx.)                   (approx.: sliding)
//                  case as the window)
// sliding_window,  refused: the target admits  refused (same reason)       http_req_rate(W) > Q
// sliding_log      2Q in one window                                        (approx.: HAProxy's
//                                                                          period counter)
// key peer         $binary_remote_addr, or a   masked_remote_address       src,ipmask(v4,v6)
//                  map to /v4 and /v6 (v4 a    (exact)                     (exact)
//                  multiple of 8, v6 of 16)
// key default      the peer (approx.: no budgets, no credential hashing; keying on a rotating
//                  Authorization header without a budget would hand out fresh buckets)
// key header       the header, else the peer   the header, else the peer   the header hashed;
//                  (approx.; engine: 412)      (approx.; engine: 412)      412 without it
// key principal,   refused: the targets see no verified principal or attribute
// parts principal,
// attribute, header
// composite        route, peer and method parts only (HAProxy: route and peer)
// tiers            refused: no verified attribute to choose the tier
// bypass cidrs     geo map (exact)             refused                     src acl (exact)
// bypass principals refused everywhere (no verified principal)
// mode shadow      limit_req_dry_run when all  filter_enforced 0% (exact)  set-var instead of
//                  policies are shadow, else                               deny (approx.)
//                  refused
// trusted_proxies  realip module (x-forwarded-for, x-real-ip); forwarded refused everywhere;
//                  Envoy: a comment block for the connection manager's XFF settings; HAProxy:
//                  set-src from the last hop (approx.: one proxy tier)
// cost c > 1       capacity and rate divided by c (approx.; the targets charge 1 per request)
// redis store      each instance counts alone (approx., said in a comment)
// headers, Retry-After, on_store_error, store_timeout_ms: not expressible, said in a comment
// (Envoy's DRAFT_VERSION_03 X-RateLimit headers stand in for "legacy").
//
// envoy-ratelimit (envoyproxy/ratelimit's YAML and the Envoy routes whose rate_limits actions
// send its descriptors): fixed windows of the service's units only (a second to 365 days from
// the Unix epoch: calendar-aligned exactly, first_request approximated), every other algorithm
// refused; keys as masked_remote_address and request_headers actions, one descriptor tree per
// policy under a generic_key naming it; routes as Envoy route matches (path_separated_prefix
// for the engine's segment prefixes), most specific first; shadow as shadow_mode.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ratelab/diagnostic.h"
#include "ratelab/policy.h"

namespace ratelab::formats {

enum class ExportTarget : std::uint8_t { Nginx, Envoy, Haproxy, EnvoyRatelimit };
/// Every target, in the order lists of them name them.
inline constexpr ExportTarget kExportTargets[] = {
    ExportTarget::Nginx, ExportTarget::Envoy, ExportTarget::Haproxy, ExportTarget::EnvoyRatelimit};

/// "nginx", "envoy", "haproxy", "envoy-ratelimit".
std::string_view exportTargetName(ExportTarget target);
std::optional<ExportTarget> parseExportTarget(std::string_view name);

/// How one part of one policy was carried over.
struct ExportNote {
    enum class Kind : std::uint8_t {
        Approximated,  ///< exported differently, as the message says (also in the output)
        Refused,       ///< cannot be exported; the whole export is refused
    };
    Kind kind = Kind::Approximated;
    std::string pointer;  ///< JSON pointer of the field, e.g. "/policies/1/key/source"
    std::string message;  ///< names the policy and the target
};

struct ExportResult {
    std::string text;               ///< the configuration; empty when anything was refused
    std::vector<ExportNote> notes;  ///< approximations and refusals, in policy order
    bool ok() const;                ///< true when nothing was refused
};

/// `note` as a diagnostic of `file` at `line`:`column` (0: no position; the pointer still names
/// the field): an error when refused, a warning when approximated. What `ratelab-cli export`
/// prints and what the workbench shows before it writes an export. Thread-safe.
Diagnostic exportNoteDiagnostic(const ExportNote& note, std::string file, int line = 0,
                                int column = 0);

/// Exports `policies` for `target`. REQUIRES: the set validates without errors (as a loaded
/// policy file does). Deterministic: the same set gives the same bytes. Thread-safe.
ExportResult exportPolicySet(const PolicySet& policies, ExportTarget target);

}  // namespace ratelab::formats
