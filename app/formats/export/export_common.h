#pragma once

// What the three exports share: the frame of an export (Exporter), notes (approximations and
// refusals), the numbers a target runs in requests, the header comment, and the checks every
// target makes alike.

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "formats/policy_export.h"
#include "policy/policy_fields.h"

namespace ratelab::formats {

/// Collects one export's notes and comments. Not thread-safe.
class ExportNotes {
public:
    ExportNotes(ExportTarget target, const PolicySet& set) : target_(target), set_(set) {}

    /// Records an approximation of policy `policy`'s `field` (a pointer under the policy); the
    /// note's message is prefixed with the target and the policy's name. Returns `message`, to
    /// be written as a comment next to the lines.
    std::string approximate(std::size_t policy, std::string_view field, std::string message);
    void approximateSet(std::string_view pointer, std::string message);
    void refuse(std::size_t policy, std::string_view field, std::string message);
    void refuseSet(std::string_view pointer, std::string message);

    bool refused() const;
    std::string_view targetName() const { return exportTargetName(target_); }
    ExportTarget target() const { return target_; }
    /// "nginx", "Envoy", "HAProxy": the target as a sentence names it.
    std::string_view displayName() const;
    std::vector<ExportNote> take() { return std::move(notes_); }

private:
    std::string prefix(std::size_t policy) const;

    ExportTarget target_;
    const PolicySet& set_;
    std::vector<ExportNote> notes_;
};

/// The frame every target's export fills in: the policy set, its notes, the preamble, and run().
/// Not thread-safe; one object per export.
class Exporter {
public:
    Exporter(ExportTarget target, const PolicySet& set) : set_(set), notes_(target, set) {}
    virtual ~Exporter() = default;
    Exporter(const Exporter&) = delete;
    Exporter& operator=(const Exporter&) = delete;

    /// Checks the set, writes its policies in file order, and returns the notes, with the text
    /// only when none of them is a refusal (a refused export writes nothing).
    ExportResult run();

protected:
    /// What concerns the whole set (trusted proxies, modes, the target's own limits). Returns
    /// how many of the policies, from the first, the target writes.
    virtual std::size_t checkSet() = 0;
    /// Writes policy `index`, or notes why it cannot.
    virtual void writePolicy(std::size_t index) = 0;
    /// The file once every policy is written and none refused.
    virtual std::string text() const = 0;

    /// The header comment (headerComment), then `usage` (what the file is and where it goes)
    /// and `inexpressible` (what the target cannot express) as comment paragraphs, then a blank
    /// line.
    std::string preamble(std::string_view usage, std::string_view inexpressible) const;

    const PolicySet& set_;
    ExportNotes notes_;
};

/// A policy's numbers in whole requests, the targets charging 1 per request: capacity (the
/// leaky bucket's burst + 1 included) and quota divided by the cost, the rate too.
struct RequestNumbers {
    std::int64_t atOnce = 0;   ///< requests admitted at once: B, Q, or the leaky burst + 1
    double ratePerSecond = 0;  ///< rate algorithms: requests per second the engine runs
    std::int64_t windowMs = 0;
};

/// REQUIRES: the policy validated (cost <= capacity, limit compiled).
RequestNumbers requestNumbers(const Policy& p);

/// The refusals and approximations common to every target (principal keys, tiers, bypass
/// principals, key parts it cannot see, budgets, cost, a Redis store, the response headers).
/// `composite` lists the composite part kinds the target can build. Returns the approximations'
/// messages, to be written as comments.
std::vector<std::string> commonChecks(const PolicySet& set, std::size_t index, ExportNotes& notes,
                                      std::initializer_list<KeyPart::Kind> composite);

/// True when the notes hold a refusal: the export then writes nothing.
bool anyRefused(const std::vector<ExportNote>& notes);

/// Refuses policy `index` when it is a sliding window or log, or HAProxy's rate counter, and the
/// target has only a bucket (named `bucket`, e.g. "nginx's leaky bucket"): a bucket would admit
/// up to twice the quota within one window. Returns whether it refused.
bool refuseSlidingWindow(const Policy& p, std::size_t index, ExportNotes& notes,
                         std::string_view bucket);

/// The "#   approximated: ..." comment lines for commonChecks()' messages.
std::string approximationComments(const std::vector<std::string>& messages);

/// "# " lines: what generated the file, from which version, and the validation record.
std::string headerComment(const PolicySet& set, std::string_view prefix);

/// A policy's one-line summary, e.g. "token_bucket capacity 30, 5 per second, key default".
std::string describe(const Policy& p);

/// `name` with every character outside [A-Za-z0-9_] replaced by '_'.
std::string identifier(std::string_view name);

/// Names made unique within one exported file: `base`, then `base_2`, `base_3`, ...
class UniqueNames {
public:
    std::string take(const std::string& base);

private:
    std::set<std::string> taken_;
};

/// Comment lines (`prefix` + text) wrapped at about 96 columns; lines after the first start
/// with `continuation` when it is given.
std::string commentLines(std::string_view prefix, std::string_view text,
                         std::string_view continuation = {});

}  // namespace ratelab::formats
