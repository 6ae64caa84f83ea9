#include "http/rendering.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "algorithms/calendar.h"
#include "json/json_text.h"

namespace ratelab::http {

using json::appendInt;
using json::appendJsonEscaped;

namespace {

constexpr Nanos kSecond = kNanosPerSecond;

// Whether a client is told about this policy's quota: only enforced policies that decided on
// trustworthy state (never shadow policies, bypasses or failed-open store calls).
bool advertised(const PolicySet& policies, const PolicyResult& r, HeaderStyle style) {
    const Policy& p = policies.policies[r.policy];
    if (p.mode == PolicyMode::Shadow || p.headers != style) return false;
    return r.outcome == PolicyOutcome::Passed || r.outcome == PolicyOutcome::Throttled ||
           r.outcome == PolicyOutcome::CostExceedsCapacity;
}

// Writes `text` as an RFC 9651 sf-string at `p`: printable ASCII with '"' and '\' escaped.
// Policy names are validated to be printable ASCII; anything else is dropped rather than sent
// invalid. Writes at most 2 * text.size() + 2 characters.
char* writeSfString(char* p, std::string_view text) {
    *p++ = '"';
    for (char c : text) {
        if (c == '"' || c == '\\') *p++ = '\\';
        if (c >= 0x20 && c < 0x7f) *p++ = c;
    }
    *p++ = '"';
    return p;
}

// Appends one IETF list member, `separator"name";k1=v1;k2=v2`, to `field`: sized once for the
// longest it can be, written in place, then cut to length. Appending piece by piece checked
// the capacity and called memcpy for each of the member's seven pieces (a sixth of the full
// request path went to rendering two such fields). Inlined, so that the keys (";q=" and the
// like) are copied as the constants they are: called, each of the four copies was a memmove.
[[gnu::always_inline]] inline void appendMember(std::string& field, std::string_view separator,
                                                std::string_view name, std::string_view k1,
                                                std::int64_t v1, std::string_view k2,
                                                std::int64_t v2) {
    constexpr std::size_t kDigits = 20;  // an int64 in decimal, sign included
    const std::size_t at = field.size();
    field.resize(at + separator.size() + 2 * name.size() + 2 + k1.size() + k2.size() + 2 * kDigits);
    char* p = field.data() + at;
    p = std::copy(separator.begin(), separator.end(), p);
    p = writeSfString(p, name);
    p = std::copy(k1.begin(), k1.end(), p);
    p = std::to_chars(p, p + kDigits, v1).ptr;
    p = std::copy(k2.begin(), k2.end(), p);
    p = std::to_chars(p, p + kDigits, v2).ptr;
    field.resize(static_cast<std::size_t>(p - field.data()));
}

// Whether this policy's decision is the kind of refusal `code` names: over its limit (429), or
// costing more than it can hold, on the shared store or, during an outage, on the local one.
bool refusedAs(const PolicyResult& r, RefusalCode code) {
    const bool local = r.outcome == PolicyOutcome::DecidedLocally && !r.decision.allowed;
    if (code == RefusalCode::RateLimited) {
        return r.outcome == PolicyOutcome::Throttled ||
               (local && r.decision.reason == DenyReason::OverLimit);
    }
    if (code == RefusalCode::CostExceedsCapacity) {
        return r.outcome == PolicyOutcome::CostExceedsCapacity ||
               (local && r.decision.reason == DenyReason::CostExceedsCapacity);
    }
    return false;
}

// The next reused header, named `name`, its value empty. A reused header mostly has that name
// already: comparing is cheaper than assigning it again.
HttpHeader& next(std::vector<HttpHeader>& headers, std::size_t& used, std::string_view name) {
    if (used == headers.size()) headers.emplace_back();
    HttpHeader& h = headers[used++];
    if (h.name != name) h.name.assign(name);
    h.value.clear();
    return h;
}

// Seconds until this policy's quota resets; on the policy that throttled, the retry time, so
// Retry-After never points earlier than `t` (the IETF draft asks for that).
std::int64_t resetSeconds(const PolicyResult& r) {
    if (r.outcome == PolicyOutcome::Throttled) return ceilSeconds(r.decision.retryAfter, 1);
    return ceilSeconds(r.decision.resetAfter);
}

// The policy closest to its limit: the fewest remaining, then the longest reset.
const PolicyResult* expiring(std::span<const PolicyResult> results, const PolicySet& policies,
                             HeaderStyle style) {
    const PolicyResult* best = nullptr;
    for (const PolicyResult& r : results) {
        if (!advertised(policies, r, style)) continue;
        if (!best || r.decision.remaining < best->decision.remaining ||
            (r.decision.remaining == best->decision.remaining &&
             resetSeconds(r) > resetSeconds(*best))) {
            best = &r;
        }
    }
    return best;
}

}  // namespace

std::int64_t ceilSeconds(Nanos duration, std::int64_t floor) {
    if (duration <= 0) return floor;
    return std::max<std::int64_t>(floor, (duration + kSecond - 1) / kSecond);
}

std::int64_t windowSeconds(const Limit& limit) {
    switch (limit.algorithm) {
        case Algorithm::FixedWindow:
            return ceilSeconds(algorithms::nominalWindow(limit), 1);
        case Algorithm::SlidingWindow:
        case Algorithm::SlidingLog:
        case Algorithm::HaproxyRate:
            return ceilSeconds(limit.window, 1);
        case Algorithm::LeakyBucket:
            return ceilSeconds((limit.capacity + 1) * limit.emissionInterval, 1);
        case Algorithm::TokenBucket:
        case Algorithm::Gcra:
            break;
    }
    return ceilSeconds(limit.capacity * limit.emissionInterval, 1);
}

std::size_t renderHeaders(const PolicySet& policies, std::span<const CompiledPolicy> compiled,
                          const Check& check, std::vector<HttpHeader>& headers, std::size_t used) {
    return renderHeaders(policies, compiled, check.policies(), check.status, check.code,
                         check.retryAfter, headers, used);
}

std::size_t renderHeaders(const PolicySet& policies, std::span<const CompiledPolicy> compiled,
                          std::span<const PolicyResult> results, int status, RefusalCode code,
                          Nanos retryAfter, std::vector<HttpHeader>& headers, std::size_t used) {
    // IETF draft: one list member per policy, appended in policy order.
    HttpHeader* policyField = nullptr;
    HttpHeader* stateField = nullptr;
    unsigned styles = 0;  // bit s: some policy asks for HeaderStyle s
    for (const PolicyResult& r : results) {
        const Policy& p = policies.policies[r.policy];
        styles |= 1u << static_cast<unsigned>(p.headers);
        if (!advertised(policies, r, HeaderStyle::Ietf)) continue;
        std::string_view separator = ", ";
        if (!policyField) {
            separator = {};
            next(headers, used, "RateLimit-Policy");
            stateField = &next(headers, used, "RateLimit");
            policyField = &headers[used - 2];  // next() may have moved the vector
        }
        const Limit& limit = compiled[r.policy].limit(r.tier);
        appendMember(policyField->value, separator, p.name,
                     ";q=", r.decision.limit > 0 ? r.decision.limit : limit.capacity,
                     ";w=", windowSeconds(limit));
        appendMember(stateField->value, separator, p.name,
                     ";r=", std::max<std::int64_t>(0, r.decision.remaining),
                     ";t=", resetSeconds(r));
    }

    // Most checks ask for one style: the others' search for the expiring policy is skipped, since
    // it is a call each on every request's path.
    const auto asked = [&](HeaderStyle style) {
        return (styles >> static_cast<unsigned>(style) & 1u) != 0;
    };

    // Draft 7: every policy in RateLimit-Policy, the expiring one in the RateLimit dictionary.
    if (const PolicyResult* e = asked(HeaderStyle::Draft7)
                                    ? expiring(results, policies, HeaderStyle::Draft7)
                                    : nullptr) {
        HttpHeader& list = next(headers, used, "RateLimit-Policy");
        for (const PolicyResult& r : results) {
            if (!advertised(policies, r, HeaderStyle::Draft7)) continue;
            if (!list.value.empty()) list.value += ", ";
            appendInt(list.value, r.decision.limit);
            list.value += ";w=";
            appendInt(list.value, windowSeconds(compiled[r.policy].limit(r.tier)));
        }
        HttpHeader& state = next(headers, used, "RateLimit");
        state.value = "limit=";
        appendInt(state.value, e->decision.limit);
        state.value += ", remaining=";
        appendInt(state.value, std::max<std::int64_t>(0, e->decision.remaining));
        state.value += ", reset=";
        appendInt(state.value, resetSeconds(*e));
    }

    // Legacy X-RateLimit-*: the expiring policy only.
    if (const PolicyResult* e = asked(HeaderStyle::Legacy)
                                    ? expiring(results, policies, HeaderStyle::Legacy)
                                    : nullptr) {
        HttpHeader& limit = next(headers, used, "X-RateLimit-Limit");
        appendInt(limit.value, e->decision.limit);
        HttpHeader& remaining = next(headers, used, "X-RateLimit-Remaining");
        appendInt(remaining.value, std::max<std::int64_t>(0, e->decision.remaining));
        HttpHeader& reset = next(headers, used, "X-RateLimit-Reset");
        appendInt(reset.value, resetSeconds(*e));
    }

    if (status == 429 && code == RefusalCode::RateLimited) {
        HttpHeader& retry = next(headers, used, "Retry-After");
        appendInt(retry.value, ceilSeconds(retryAfter, 1));
    }
    return used;
}

void renderProblem(const PolicySet& policies, const Check& check, std::int64_t cost,
                   std::string& body) {
    body.clear();
    std::string_view type;
    std::string_view title;
    switch (check.code) {
        case RefusalCode::RateLimited:
            type = "https://iana.org/assignments/http-problem-types#quota-exceeded";
            title = "Request cannot be satisfied as assigned quota has been exceeded";
            break;
        case RefusalCode::CostExceedsCapacity:
            type = "https://iana.org/assignments/http-problem-types#quota-exceeded";
            title = "Request costs more than the assigned quota can ever hold";
            break;
        case RefusalCode::IdentityUnavailable:
            type = "urn:ratelab:problem:identity-unavailable";
            title = "No client identity to apply the rate limit to";
            break;
        case RefusalCode::ForwardedMalformed:
            type = "urn:ratelab:problem:forwarded-malformed";
            title = "The forwarded client address could not be read";
            break;
        case RefusalCode::StoreUnavailable:
        case RefusalCode::StoreRefused:
        case RefusalCode::StoreFull:
            type = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity";
            title = "Rate limiting is temporarily unavailable";
            break;
        case RefusalCode::None:
            return;
    }
    body += "{\"type\":\"";
    body += type;
    body += "\",\"title\":\"";
    body += title;
    body += "\",\"status\":";
    appendInt(body, check.status);
    body += ",\"code\":\"";
    body += refusalCodeName(check.code);
    body += "\",\"detail\":\"";
    const PolicyResult* first = check.refusal();
    std::string policyName = first ? policies.policies[first->policy].name : std::string();
    switch (check.code) {
        case RefusalCode::RateLimited:
            body += "Too many requests for policy \\\"";
            appendJsonEscaped(body, policyName);
            body += "\\\"; retry after ";
            appendInt(body, ceilSeconds(check.retryAfter, 1));
            body += " s.";
            break;
        case RefusalCode::CostExceedsCapacity:
            body += "This request costs ";
            appendInt(body, cost);
            body += "; policy \\\"";
            appendJsonEscaped(body, policyName);
            body += "\\\" holds at most ";
            appendInt(body, first ? first->decision.limit : 0);
            body += ", so it can never pass.";
            break;
        case RefusalCode::IdentityUnavailable:
            body += "Policy \\\"";
            appendJsonEscaped(body, policyName);
            body +=
                "\\\" needs a verified principal, a credential or the client address, and the "
                "request carries none of them.";
            break;
        case RefusalCode::ForwardedMalformed:
            body +=
                "The request came through a trusted proxy whose forwarded header does not "
                "parse, so the client cannot be identified.";
            break;
        case RefusalCode::StoreUnavailable:
            body += "The rate-limit store for policy \\\"";
            appendJsonEscaped(body, policyName);
            body += "\\\" cannot be reached and the policy denies on store errors.";
            break;
        case RefusalCode::StoreRefused:
            body += "The rate-limit store for policy \\\"";
            appendJsonEscaped(body, policyName);
            body += "\\\" refused the request.";
            break;
        case RefusalCode::StoreFull:
            body += "The rate-limit store for policy \\\"";
            appendJsonEscaped(body, policyName);
            body += "\\\" has no room for another client.";
            break;
        case RefusalCode::None:
            break;
    }
    body += "\"";
    if (check.code == RefusalCode::RateLimited || check.code == RefusalCode::CostExceedsCapacity) {
        body += ",\"violated-policies\":[";
        bool firstName = true;
        for (const PolicyResult& r : check.policies()) {
            if (!refusedAs(r, RefusalCode::RateLimited) &&
                !refusedAs(r, RefusalCode::CostExceedsCapacity)) {
                continue;
            }
            if (!firstName) body += ",";
            firstName = false;
            body += "\"";
            appendJsonEscaped(body, policies.policies[r.policy].name);
            body += "\"";
        }
        body += "]";
    }
    body += "}";
}

}  // namespace ratelab::http
