#include "sim/fit/fit_rule.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

namespace ratelab::sim {

namespace {

bool parseNumber(std::string_view text, double& out) {
    if (text.empty()) return false;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size() && std::isfinite(out);
}

// "401" -> 401..401, "4xx" -> 400..499, "40x" -> 400..409.
std::optional<std::pair<int, int>> parseStatus(std::string_view text) {
    if (text.size() != 3 || text[0] < '1' || text[0] > '5') return std::nullopt;
    int low = 0, high = 0;
    bool wild = false;
    for (char c : text) {
        if (c == 'x' || c == 'X') {
            wild = true;
            low = low * 10;
            high = high * 10 + 9;
        } else if (c >= '0' && c <= '9' && !wild) {
            low = low * 10 + (c - '0');
            high = high * 10 + (c - '0');
        } else {
            return std::nullopt;
        }
    }
    return std::pair{low, high};
}

bool compare(double x, ClassRule::Op op, double y) {
    switch (op) {
        case ClassRule::Op::Greater:
            return x > y;
        case ClassRule::Op::GreaterEqual:
            return x >= y;
        case ClassRule::Op::Less:
            return x < y;
        case ClassRule::Op::LessEqual:
            return x <= y;
        case ClassRule::Op::Equal:
            return x == y;
    }
    return false;
}

constexpr std::string_view kTerms = "expected rate, requests, status=CODES, ratio or count";

}  // namespace

double percentile(std::vector<double> values, double p) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const double rank = p / 100 * static_cast<double>(values.size() - 1);
    const auto below = static_cast<std::size_t>(std::floor(rank));
    const std::size_t above = std::min(below + 1, values.size() - 1);
    return values[below] + (values[above] - values[below]) * (rank - static_cast<double>(below));
}

std::optional<ClassRule> ClassRule::parse(std::string_view text, std::string& error) {
    ClassRule rule;
    rule.text_ = std::string(text);
    std::optional<std::vector<std::pair<int, int>>> pendingStatus;  // status= not yet used
    std::size_t at = 0;
    auto fail = [&](std::size_t column, const std::string& message) {
        error = "column " + std::to_string(column + 1) + ": " + message;
        return std::nullopt;
    };
    auto flushStatus = [&] {
        if (!pendingStatus) return;
        Term t;
        t.field = Term::Field::StatusCount;
        t.op = Op::GreaterEqual;
        t.value = 1;
        t.statuses = std::move(*pendingStatus);
        rule.terms_.push_back(std::move(t));
        pendingStatus.reset();
    };
    while (at < text.size()) {
        if (text[at] == ' ' || text[at] == '\t') {
            ++at;
            continue;
        }
        const std::size_t start = at;
        while (at < text.size() && text[at] != ' ' && text[at] != '\t')
            ++at;
        const std::string_view token = text.substr(start, at - start);
        std::size_t nameEnd = 0;
        while (nameEnd < token.size() && std::isalpha(static_cast<unsigned char>(token[nameEnd])))
            ++nameEnd;
        const std::string_view name = token.substr(0, nameEnd);
        std::string_view rest = token.substr(nameEnd);

        if (name == "status") {
            if (rest.empty() || rest[0] != '=') {
                return fail(start, "\"" + std::string(token) +
                                       "\": expected status=CODES, e.g. "
                                       "status=401 or status=4xx,403");
            }
            flushStatus();
            std::vector<std::pair<int, int>> codes;
            std::size_t codeStart = nameEnd + 1;
            while (codeStart <= token.size()) {
                std::size_t comma = token.find(',', codeStart);
                if (comma == std::string_view::npos) comma = token.size();
                const std::string_view code = token.substr(codeStart, comma - codeStart);
                std::optional<std::pair<int, int>> range = parseStatus(code);
                if (!range) {
                    return fail(start + codeStart, "\"" + std::string(code) +
                                                       "\" is not a status: expected three "
                                                       "digits (401) or a class (4xx)");
                }
                codes.push_back(*range);
                codeStart = comma + 1;
            }
            pendingStatus = std::move(codes);
            continue;
        }

        Term t;
        if (name == "rate") {
            t.field = Term::Field::Rate;
        } else if (name == "requests") {
            t.field = Term::Field::Requests;
        } else if (name == "ratio" || name == "count") {
            if (!pendingStatus) {
                return fail(start, std::string(name) +
                                       " compares the requests of a status: write status=CODES "
                                       "before it, e.g. status=401 " +
                                       std::string(name) + ">0.5");
            }
            t.field = name == "ratio" ? Term::Field::StatusRatio : Term::Field::StatusCount;
            t.statuses = std::move(*pendingStatus);
            pendingStatus.reset();
        } else {
            return fail(start,
                        "unknown term \"" + std::string(token) + "\"; " + std::string(kTerms));
        }
        const std::size_t opColumn = start + nameEnd;
        if (rest.starts_with(">=")) {
            t.op = Op::GreaterEqual;
            rest.remove_prefix(2);
        } else if (rest.starts_with("<=")) {
            t.op = Op::LessEqual;
            rest.remove_prefix(2);
        } else if (rest.starts_with(">")) {
            t.op = Op::Greater;
            rest.remove_prefix(1);
        } else if (rest.starts_with("<")) {
            t.op = Op::Less;
            rest.remove_prefix(1);
        } else if (rest.starts_with("=")) {
            t.op = Op::Equal;
            rest.remove_prefix(1);
        } else {
            return fail(opColumn, "expected >, >=, <, <= or = after " + std::string(name));
        }
        const std::size_t valueColumn = start + (token.size() - rest.size());
        const bool canPercentile = t.field == Term::Field::Rate || t.field == Term::Field::Requests;
        if (canPercentile && (rest.starts_with("P") || rest.starts_with("p"))) {
            double p = 0;
            if (!parseNumber(rest.substr(1), p) || p < 0 || p > 100) {
                return fail(valueColumn, "\"" + std::string(rest) +
                                             "\": a percentile is P0 to P100, e.g. P99.9");
            }
            t.percentile = p;
        } else if (!parseNumber(rest, t.value) || t.value < 0) {
            return fail(valueColumn, "\"" + std::string(rest) + "\": expected a number" +
                                         (canPercentile ? " or a percentile such as P99.9" : ""));
        } else if (t.field == Term::Field::StatusRatio && t.value > 1) {
            return fail(valueColumn, "\"" + std::string(rest) + "\": a ratio is between 0 and 1");
        }
        rule.terms_.push_back(std::move(t));
    }
    flushStatus();
    if (rule.terms_.empty()) {
        error = "the rule is empty; " + std::string(kTerms);
        return std::nullopt;
    }
    return rule;
}

void ClassRule::resolve(const std::vector<ClientFigures>& clients) {
    for (Term& t : terms_) {
        if (!t.percentile) continue;
        std::vector<double> values;
        values.reserve(clients.size());
        for (const ClientFigures& c : clients) {
            values.push_back(t.field == Term::Field::Rate ? c.ratePerSecond
                                                          : static_cast<double>(c.requests));
        }
        t.value = percentile(std::move(values), *t.percentile);
    }
}

bool ClassRule::matches(const ClientFigures& client) const {
    for (const Term& t : terms_) {
        double x = 0;
        switch (t.field) {
            case Term::Field::Rate:
                x = client.ratePerSecond;
                break;
            case Term::Field::Requests:
                x = static_cast<double>(client.requests);
                break;
            case Term::Field::StatusRatio:
            case Term::Field::StatusCount: {
                std::int64_t n = 0;
                for (const auto& [status, count] : client.statuses) {
                    for (const auto& [low, high] : t.statuses) {
                        if (status >= low && status <= high) {
                            n += count;
                            break;
                        }
                    }
                }
                x = t.field == Term::Field::StatusCount
                        ? static_cast<double>(n)
                        : (client.requests > 0
                               ? static_cast<double>(n) / static_cast<double>(client.requests)
                               : 0);
                break;
            }
        }
        if (!compare(x, t.op, t.value)) return false;
    }
    return true;
}

}  // namespace ratelab::sim
