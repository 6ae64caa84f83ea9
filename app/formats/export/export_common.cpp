#include "formats/export/export_common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "algorithms/calendar.h"
#include "policy/policy_file_internal.h"
#include "policy/policy_names.h"
#include "policy/policy_paths.h"

namespace ratelab::formats {

std::string_view ExportNotes::displayName() const {
    switch (target_) {
        case ExportTarget::Nginx:
            return "nginx";
        case ExportTarget::Envoy:
            return "Envoy";
        case ExportTarget::Haproxy:
            return "HAProxy";
        case ExportTarget::EnvoyRatelimit:
            return "the rate limit service";
    }
    return targetName();
}

std::string ExportNotes::prefix(std::size_t policy) const {
    return std::string(targetName()) + ": policy \"" + set_.policies[policy].name + "\": ";
}

std::string ExportNotes::approximate(std::size_t policy, std::string_view field,
                                     std::string message) {
    notes_.push_back({ExportNote::Kind::Approximated,
                      policy::policyPointer(policy) + std::string(field),
                      prefix(policy) + message});
    return message;
}

void ExportNotes::approximateSet(std::string_view pointer, std::string message) {
    notes_.push_back({ExportNote::Kind::Approximated, std::string(pointer),
                      std::string(targetName()) + ": " + message});
}

void ExportNotes::refuse(std::size_t policy, std::string_view field, std::string message) {
    notes_.push_back({ExportNote::Kind::Refused, policy::policyPointer(policy) + std::string(field),
                      prefix(policy) + message});
}

void ExportNotes::refuseSet(std::string_view pointer, std::string message) {
    notes_.push_back({ExportNote::Kind::Refused, std::string(pointer),
                      std::string(targetName()) + ": " + message});
}

bool ExportNotes::refused() const {
    return std::any_of(notes_.begin(), notes_.end(),
                       [](const ExportNote& n) { return n.kind == ExportNote::Kind::Refused; });
}

RequestNumbers requestNumbers(const Policy& p) {
    RequestNumbers n;
    const Limit limit = compileLimit(p);
    // A calendar month or year counts as its nominal 30 or 365 days.
    n.windowMs = algorithms::nominalWindow(limit) / kNanosPerMilli;
    switch (p.algorithm) {
        case Algorithm::LeakyBucket:
            n.atOnce = (p.capacity + 1) / p.cost;
            n.ratePerSecond = 1e9 / static_cast<double>(limit.emissionInterval) / p.cost;
            break;
        case Algorithm::TokenBucket:
        case Algorithm::Gcra:
            n.atOnce = p.capacity / p.cost;
            n.ratePerSecond = 1e9 / static_cast<double>(limit.emissionInterval) / p.cost;
            break;
        case Algorithm::FixedWindow:
        case Algorithm::SlidingWindow:
        case Algorithm::SlidingLog:
        case Algorithm::HaproxyRate:
            n.atOnce = p.capacity / p.cost;
            n.ratePerSecond =
                static_cast<double>(n.atOnce) * 1000.0 / static_cast<double>(n.windowMs);
            break;
    }
    return n;
}

std::vector<std::string> commonChecks(const PolicySet& set, std::size_t index, ExportNotes& notes,
                                      std::initializer_list<KeyPart::Kind> composite) {
    const Policy& p = set.policies[index];
    std::vector<std::string> comments;
    std::string target(notes.displayName());
    if (p.algorithm == Algorithm::FixedWindow && p.align == WindowAlign::Calendar &&
        notes.target() != ExportTarget::EnvoyRatelimit) {
        comments.push_back(notes.approximate(
            index, "/align",
            "its windows are on the calendar (the same for every key, each ending on the "
            "window's boundary in UTC), which " +
                target +
                " cannot align: it counts from each key's own requests, so a client may "
                "pass the quota twice around a window's end" +
                (p.calendarUnit != CalendarUnit::None
                     ? "; a calendar " +
                           std::string(policy::nameOf(policy::kCalendarUnits, p.calendarUnit)) +
                           " is exported as " +
                           (p.calendarUnit == CalendarUnit::Month ? "30" : "365") + " days"
                     : std::string())));
    }
    if (p.key.source == KeySource::Principal) {
        notes.refuse(index, "/key/source",
                     "it keys on the verified principal, which " + target +
                         " never sees; only the engine can enforce it");
    }
    if (p.key.source == KeySource::Default) {
        comments.push_back(notes.approximate(
            index, "/key/source",
            "the default chain (principal, then "
            "Authorization within a per-address budget, then the address) is "
            "exported as the client address alone: " +
                target +
                " can neither verify principals nor budget Authorization keys, and "
                "keying on a rotating Authorization header without a budget would "
                "hand out a fresh bucket per request; users behind one address share "
                "its limit"));
    }
    if (p.key.source == KeySource::Composite) {
        for (std::size_t j = 0; j < p.key.parts.size(); ++j) {
            const KeyPart& part = p.key.parts[j];
            if (std::find(composite.begin(), composite.end(), part.kind) != composite.end()) {
                continue;
            }
            notes.refuse(
                index, "/key/parts/" + std::to_string(j),
                "it keys on \"" + policy::keyPartText(part) + "\", which " + target +
                    " cannot build into a key" +
                    (part.kind == KeyPart::Kind::Principal || part.kind == KeyPart::Kind::Attribute
                         ? " (it sees no verified principal or attribute)"
                         : ""));
        }
    }
    if (policy::budgetApplies(p) && p.key.source != KeySource::Default) {
        notes.refuse(index, "/budget/enabled",
                     "it budgets the keys a client writes per address, which " + target +
                         " cannot do: a client rotating the value would get a fresh bucket per "
                         "request; export it with budget.enabled false only if that is acceptable");
    }
    if (p.budget.enabled && p.key.source != KeySource::Principal &&
        !(p.budget.ipv6Prefixes.empty() && p.budget.ipv4Prefixes.empty())) {
        std::string levels;
        for (const auto* family : {&p.budget.ipv6Prefixes, &p.budget.ipv4Prefixes}) {
            for (const AddressBudget& level : *family) {
                levels += (levels.empty() ? "/" : ", /") + std::to_string(level.prefix) +
                          " at most " + std::to_string(level.cap);
            }
        }
        comments.push_back(notes.approximate(
            index,
            p.budget.ipv6Prefixes.empty() ? "/budget/ipv4_prefixes" : "/budget/ipv6_prefixes",
            "the address budget (buckets per enclosing network: " + levels +
                ", then the network's own bucket) is not expressible: " + target +
                " keeps a state per address, so a client minting addresses takes a new state "
                "per request"));
    }
    if (p.tiers) {
        notes.refuse(index, "/tiers",
                     "it chooses its limit by a verified attribute (tiers), "
                     "which " +
                         target + " never sees");
    }
    if (!p.bypass.principals.empty()) {
        notes.refuse(index, "/bypass/principals",
                     "it exempts verified principals, which " + target +
                         " never sees; they would be limited like everyone else");
    }
    if (p.cost > 1) {
        RequestNumbers n = requestNumbers(p);
        comments.push_back(
            notes.approximate(index, "/cost",
                              "it costs " + std::to_string(p.cost) + " per request; " + target +
                                  " charges one, so its numbers are divided by the cost (" +
                                  std::to_string(n.atOnce) + " requests at once)"));
    }
    return comments;
}

std::string describe(const Policy& p) {
    std::string out(algorithmName(p.algorithm));
    switch (p.algorithm) {
        case Algorithm::TokenBucket:
        case Algorithm::Gcra:
            out += " capacity " + std::to_string(p.capacity) + ", " +
                   numberText(p.refillPerSecond) + " per second";
            break;
        case Algorithm::LeakyBucket:
            out += " burst " + std::to_string(p.capacity) + ", " + numberText(p.refillPerSecond) +
                   " per second" +
                   (p.nodelay     ? ", nodelay"
                    : p.delay > 0 ? ", delay " + std::to_string(p.delay)
                                  : "");
            break;
        default:
            out += " quota " + std::to_string(p.capacity) + " per " +
                   (p.align == WindowAlign::Calendar && p.calendarUnit != CalendarUnit::None
                        ? "calendar " +
                              std::string(policy::nameOf(policy::kCalendarUnits, p.calendarUnit))
                        : std::to_string(p.windowMs) + " ms") +
                   (p.align == WindowAlign::Calendar ? " on the calendar" : "");
    }
    if (p.cost != 1) out += ", cost " + std::to_string(p.cost);
    out += ", key " + std::string(policy::nameOf(policy::kKeySources, p.key.source));
    out += ", route " + std::string(policy::routeText(p.match));
    if (!p.match.methods.empty()) {
        out += " (";
        for (std::size_t i = 0; i < p.match.methods.size(); ++i) {
            out += (i ? " " : "") + p.match.methods[i];
        }
        out += ")";
    }
    if (p.mode == PolicyMode::Shadow) out += ", shadow";
    return out;
}

std::string identifier(std::string_view name) {
    std::string out(name);
    for (char& c : out) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!ok) c = '_';
    }
    return out;
}

std::string UniqueNames::take(const std::string& base) {
    std::string name = base;
    for (int n = 2; !taken_.insert(name).second; ++n)
        name = base + "_" + std::to_string(n);
    return name;
}

std::string commentLines(std::string_view first, std::string_view text,
                         std::string_view continuation) {
    constexpr std::size_t kWidth = 96;
    std::string out;
    std::string_view prefix = first;
    std::string line;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find(' ', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view word = text.substr(start, end - start);
        if (!line.empty() && prefix.size() + line.size() + 1 + word.size() > kWidth) {
            out += std::string(prefix) + line + "\n";
            line.clear();
            if (!continuation.empty()) prefix = continuation;
        }
        if (!line.empty()) line += ' ';
        line += word;
        start = end + 1;
    }
    if (!line.empty()) out += std::string(prefix) + line + "\n";
    return out;
}

std::string headerComment(const PolicySet& set, std::string_view prefix) {
    std::string out;
    out += commentLines(prefix,
                        "Generated by ratelab from a version " + std::to_string(set.version) +
                            " policy file. Edit the policy and export again rather than editing "
                            "this file.");
    std::string names;
    for (const Policy& p : set.policies)
        names += (names.empty() ? "" : ", ") + p.name;
    out += commentLines(prefix, "Policies, in match order: " + names + ".");
    if (set.store.kind == StoreConfig::Kind::Redis) {
        std::string shared =
            "The policy shares counters through Redis; here each instance counts alone, so N "
            "instances admit up to N times each limit";
        if (set.store.replicas > 1) {
            shared += " (the policy names " + std::to_string(set.store.replicas) +
                      " replicas: divide each limit by that to keep the shared total)";
        }
        out += commentLines(prefix, shared + ".");
    }
    const bool local = std::any_of(set.policies.begin(), set.policies.end(), [](const Policy& p) {
        return p.onStoreError == StoreErrorRule::Local;
    });
    if (local) {
        out += commentLines(prefix,
                            "Not expressible: on_store_error \"local\" (a 1/replicas share of "
                            "the limit while the shared store is unreachable); an exported "
                            "instance always counts alone, with the whole limit.");
    }
    std::string byOutcome;
    for (const Policy& p : set.policies) {
        if (chargesByOutcome(p)) byOutcome += (byOutcome.empty() ? "" : ", ") + p.name;
    }
    if (!byOutcome.empty()) {
        out += commentLines(prefix,
                            "Not expressible: charging by outcome (charge \"failures\" or "
                            "\"successes\", penalty) in " +
                                byOutcome +
                                ". The target charges every request when it is decided and "
                                "never gives a charge back nor adds a penalty once the response "
                                "is known: it counts every attempt, successful or not.");
    }
    if (!set.validation) {
        out += commentLines(prefix,
                            "Validation: none recorded (a policy replayed against scenarios "
                            "before export carries its results here).");
        return out;
    }
    const ValidationRecord& v = *set.validation;
    out += commentLines(prefix, "Validated by " +
                                    (v.generator.empty() ? std::string("(unnamed)") : v.generator) +
                                    " against " + std::to_string(v.runs.size()) + " scenario" +
                                    (v.runs.size() == 1 ? "" : "s") + ":");
    for (const ValidationRun& run : v.runs) {
        std::string line = "- " + run.scenario + " (seed " + std::to_string(run.seed) + ", " +
                           std::to_string(run.requests) +
                           " requests): " + (run.pass ? "pass" : "FAIL");
        for (const ValidationExpectation& e : run.expectations) {
            line += "; " + e.metric + " = " + numberText(e.actual);
            if (e.min) line += " (min " + numberText(*e.min) + ")";
            if (e.max) line += " (max " + numberText(*e.max) + ")";
            line += e.pass ? " ok" : " FAILED";
        }
        out += commentLines(prefix, line, std::string(prefix) + "  ");
    }
    return out;
}

ExportResult Exporter::run() {
    const std::size_t count = checkSet();
    for (std::size_t i = 0; i < count; ++i)
        writePolicy(i);
    ExportResult result;
    result.notes = notes_.take();
    if (!anyRefused(result.notes)) result.text = text();
    return result;
}

std::string Exporter::preamble(std::string_view usage, std::string_view inexpressible) const {
    std::string out = headerComment(set_, "# ");
    out += "#\n";
    out += commentLines("# ", usage);
    out += commentLines("# ", inexpressible);
    out += "\n";
    return out;
}

bool anyRefused(const std::vector<ExportNote>& notes) {
    return std::any_of(notes.begin(), notes.end(),
                       [](const ExportNote& n) { return n.kind == ExportNote::Kind::Refused; });
}

bool refuseSlidingWindow(const Policy& p, std::size_t index, ExportNotes& notes,
                         std::string_view bucket) {
    if (p.algorithm == Algorithm::HaproxyRate) {
        notes.refuse(index, "/algorithm",
                     "it uses haproxy_rate, HAProxy's rate counter, which weighs the previous "
                     "period into every decision; " +
                         std::string(bucket) +
                         " would admit up to twice the count within one period. Export it to "
                         "HAProxy, or use token_bucket (capacity X, refill X per period) if that "
                         "is acceptable");
        return true;
    }
    if (p.algorithm != Algorithm::SlidingWindow && p.algorithm != Algorithm::SlidingLog)
        return false;
    notes.refuse(index, "/algorithm",
                 "it uses " + std::string(algorithmName(p.algorithm)) +
                     ", which admits at most the quota in any window; " + std::string(bucket) +
                     " would admit up to twice the quota within one window. Use token_bucket "
                     "(capacity Q, refill Q per window) if that is acceptable");
    return true;
}

std::string approximationComments(const std::vector<std::string>& messages) {
    std::string out;
    for (const std::string& m : messages)
        out += commentLines("#   approximated: ", m, "#     ");
    return out;
}

}  // namespace ratelab::formats
