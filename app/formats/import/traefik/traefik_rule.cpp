// Traefik's rule expressions: matchers joined by &&, ||, ! and parentheses, arguments in back
// quotes or double quotes. A recursive descent into alternatives of conjunctions.

#include "formats/import/traefik/traefik_rule.h"

#include <algorithm>
#include <cctype>

#include "formats/import/path_regex.h"
#include "policy/policy_names.h"

namespace ratelab::formats::traefik {

namespace {

// More alternatives than this (a rule that multiplies out) are refused rather than expanded.
constexpr std::size_t kMaxAlternatives = 64;

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

class Parser {
public:
    explicit Parser(std::string_view text) : text_(text) {}

    bool parse(Rule& out, std::string& error, std::size_t& offset) {
        std::vector<std::vector<Matcher>> result;
        if (!expression(result) ||
            (skip(),
             at_ != text_.size() && fail("unexpected \"" + std::string(1, text_[at_]) + "\""))) {
            error = error_;
            offset = errorAt_;
            return false;
        }
        out.alternatives = std::move(result);
        return true;
    }

private:
    using Alternatives = std::vector<std::vector<Matcher>>;

    bool fail(std::string message) {
        if (error_.empty()) {
            error_ = std::move(message);
            errorAt_ = at_;
        }
        return false;
    }
    void skip() {
        while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_])))
            ++at_;
    }
    bool take(std::string_view token) {
        skip();
        if (text_.substr(at_, token.size()) != token) return false;
        at_ += token.size();
        return true;
    }

    bool expression(Alternatives& out) {
        if (++depth_ > 32) return fail("the rule nests too deeply");
        if (!conjunction(out)) return false;
        while (take("||")) {
            Alternatives more;
            if (!conjunction(more)) return false;
            out.insert(out.end(), more.begin(), more.end());
            if (out.size() > kMaxAlternatives) return fail("the rule has too many alternatives");
        }
        --depth_;
        return true;
    }

    bool conjunction(Alternatives& out) {
        if (!unary(out)) return false;
        while (take("&&")) {
            Alternatives right;
            if (!unary(right)) return false;
            Alternatives product;
            for (const auto& a : out) {
                for (const auto& b : right) {
                    std::vector<Matcher> both = a;
                    both.insert(both.end(), b.begin(), b.end());
                    product.push_back(std::move(both));
                }
            }
            if (product.size() > kMaxAlternatives)
                return fail("the rule has too many alternatives");
            out = std::move(product);
        }
        return true;
    }

    bool unary(Alternatives& out) {
        if (take("!")) {
            Alternatives inner;
            const std::size_t start = at_;
            if (!unary(inner)) return false;
            if (inner.size() != 1 || inner[0].size() != 1) {
                at_ = start;
                return fail("a negation of several matchers is not read");
            }
            inner[0][0].negated = !inner[0][0].negated;
            out = std::move(inner);
            return true;
        }
        if (take("(")) {
            if (!expression(out)) return false;
            if (!take(")")) return fail("expected \")\"");
            return true;
        }
        return matcher(out);
    }

    bool matcher(Alternatives& out) {
        skip();
        const std::size_t start = at_;
        while (at_ < text_.size() && std::isalnum(static_cast<unsigned char>(text_[at_])))
            ++at_;
        if (at_ == start) return fail("expected a matcher such as PathPrefix(`/api`)");
        Matcher m;
        m.name = std::string(text_.substr(start, at_ - start));
        if (!take("(")) return fail("expected \"(\" after " + m.name);
        skip();
        if (!take(")")) {
            do {
                skip();
                if (at_ >= text_.size() || (text_[at_] != '`' && text_[at_] != '"'))
                    return fail("expected a quoted argument of " + m.name);
                const char quote = text_[at_++];
                const std::size_t end = text_.find(quote, at_);
                if (end == std::string_view::npos) return fail("unterminated argument");
                m.args.emplace_back(text_.substr(at_, end - at_));
                at_ = end + 1;
            } while (take(","));
            if (!take(")")) return fail("expected \")\" after the arguments of " + m.name);
        }
        out = {{std::move(m)}};
        return true;
    }

    std::string_view text_;
    std::size_t at_ = 0;
    int depth_ = 0;
    std::string error_;
    std::size_t errorAt_ = 0;
};

bool routable(std::string_view s) {
    return std::all_of(s.begin(), s.end(), policy::isRouteChar);
}

std::string written(const Matcher& m) {
    std::string out = (m.negated ? "!" : "") + m.name + "(";
    for (std::size_t i = 0; i < m.args.size(); ++i)
        out += (i ? ", `" : "`") + m.args[i] + "`";
    return out + ")";
}

}  // namespace

bool parseRule(std::string_view text, Rule& out, std::string& error, std::size_t& errorOffset) {
    return Parser(text).parse(out, error, errorOffset);
}

std::vector<PolicyJson> routesOfRule(const Rule& rule, std::vector<std::string>& notes) {
    std::vector<PolicyJson> routes;
    auto note = [&notes](std::string text) {
        if (std::find(notes.begin(), notes.end(), text) == notes.end())
            notes.push_back(std::move(text));
    };
    for (const std::vector<Matcher>& conjunction : rule.alternatives) {
        std::vector<PolicyJson> paths;
        bool pathSeen = false, unroutable = false;
        std::vector<std::string> methods;
        for (const Matcher& m : conjunction) {
            const std::string name = lower(m.name);
            const bool isPath = name == "path" || name == "pathprefix" || name == "pathregexp";
            if (m.negated) {
                note(written(m) + " is not carried: the policy applies whatever it says");
                continue;
            }
            if (isPath && pathSeen) {
                note(written(m) + " beside another path matcher is not carried");
                continue;
            }
            if (name == "method") {
                for (const std::string& a : m.args) {
                    std::string upper;
                    for (char c : a)
                        upper.push_back(
                            static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
                    // A policy's methods are 1 to 32 letters (what the loader accepts).
                    const bool letters = !upper.empty() && upper.size() <= 32 &&
                                         std::all_of(upper.begin(), upper.end(),
                                                     [](char c) { return c >= 'A' && c <= 'Z'; });
                    if (letters) {
                        methods.push_back(upper);
                    } else {
                        note(written(m) + " is not a method ratelab routes by; not carried");
                    }
                }
                continue;
            }
            if (!isPath) {
                note(written(m) + (name.starts_with("host")
                                       ? " is not carried: ratelab does not tell hosts apart"
                                       : " is not carried: the policy applies whatever it says"));
                continue;
            }
            pathSeen = true;
            for (const std::string& a : m.args) {
                if (!routable(a)) {
                    note(m.name +
                         ": an argument with spaces or bytes outside printable ASCII is not "
                         "carried (a route holds them percent-encoded)");
                    unroutable = true;
                    continue;
                }
                if (name == "pathprefix") {
                    std::string approximation;
                    if (a.empty() || a.front() != '/') {
                        note(written(m) + ": a path prefix starts with \"/\"; not carried");
                        unroutable = true;
                        continue;
                    }
                    paths.push_back(prefixRoute(a, approximation));
                    if (!approximation.empty()) note("Traefik's " + approximation);
                } else if (name == "path") {
                    if (std::optional<PolicyJson> exact = exactRoute(a)) {
                        paths.push_back(*exact);
                    } else {
                        note(written(m) + ": no ratelab route matches exactly \"" + a +
                             "\"; not carried");
                        unroutable = true;
                    }
                } else {
                    std::string why;
                    std::optional<RegexRoutes> fromRegex = routesFromRegex(a, false, why);
                    if (!fromRegex) {
                        note(written(m) + ": " + why + "; not carried");
                        unroutable = true;
                        continue;
                    }
                    for (const std::string& approximation : fromRegex->approximations)
                        note(written(m) + ": " + approximation);
                    paths.insert(paths.end(), fromRegex->matches.begin(), fromRegex->matches.end());
                }
            }
        }
        if (paths.empty() && unroutable) continue;
        if (paths.empty()) paths.push_back(PolicyJson{{"path_prefix", "/"}});
        for (PolicyJson& p : paths) {
            if (!methods.empty()) p["methods"] = methods;
            if (std::find(routes.begin(), routes.end(), p) == routes.end()) routes.push_back(p);
        }
    }
    return routes;
}

}  // namespace ratelab::formats::traefik
