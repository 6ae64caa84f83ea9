#pragma once

// The rule that sorts a log's clients into classes when a scenario is fitted to the log
// (`ratelab-cli fit --attacker-if RULE`). A rule is terms separated by spaces, all of which must
// hold:
//     rate>P99.9            requests per second over the log's duration, against a number or
//                           a percentile of every client's rate (P0..P100, interpolated)
//     requests>=100         the client's requests, against a number or a percentile
//     status=401 ratio>0.5  the share of the client's requests logged with one of these
//                           statuses (401, 4xx, 401,403); `count` compares their number instead
//     status=429            alone: at least one such request
// Operators: > >= < <= =.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ratelab::sim {

/// What one client did over the log: the figures a rule reads.
struct ClientFigures {
    std::int64_t requests = 0;
    double ratePerSecond = 0;                            ///< requests / the log's duration
    std::vector<std::pair<int, std::int64_t>> statuses;  ///< logged status, requests with it
};

/// A parsed rule. Plain value; evaluate with matches().
class ClassRule {
public:
    /// Parses `text`; nullopt with `error` set ("column 6: ...") when it is not a rule.
    static std::optional<ClassRule> parse(std::string_view text, std::string& error);

    /// The rule as given, for titles and messages.
    const std::string& text() const { return text_; }

    /// Resolves percentiles against every client of the log. Call before matches().
    void resolve(const std::vector<ClientFigures>& clients);
    /// Whether `client` satisfies every term. REQUIRES: resolve() called.
    bool matches(const ClientFigures& client) const;

    enum class Op : std::uint8_t { Greater, GreaterEqual, Less, LessEqual, Equal };
    struct Term {
        enum class Field : std::uint8_t { Rate, Requests, StatusRatio, StatusCount };
        Field field = Field::Rate;
        Op op = Op::Greater;
        double value = 0;                  ///< the number, or the resolved percentile
        std::optional<double> percentile;  ///< P99.9 -> 99.9
        /// StatusRatio / StatusCount: [low, high] ranges of statuses (401 -> 401..401,
        /// 4xx -> 400..499).
        std::vector<std::pair<int, int>> statuses;
    };

private:
    std::string text_;
    std::vector<Term> terms_;
};

/// The p-th percentile (0..100) of `values`, linear between the closest ranks. 0 when empty.
double percentile(std::vector<double> values, double p);

}  // namespace ratelab::sim
