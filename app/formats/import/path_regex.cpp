#include "formats/import/path_regex.h"

#include <algorithm>
#include <cctype>

#include "policy/policy_names.h"

namespace ratelab::formats {

namespace {

// One element of an alternative: literal text, a whole-segment wildcard, or "anything after".
struct Element {
    enum class Kind { Literal, Segment, Rest } kind = Kind::Literal;
    std::string text;   // Literal: the characters; Segment: the class as written
    bool exact = true;  // Segment: false when the class is narrower than "any segment"
};

using Alternative = std::vector<Element>;

bool literalChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-' ||
           c == '~' || c == '%' || c == ',' || c == ':' || c == '@' || c == '!' || c == '=' ||
           c == '&' || c == ';' || c == '\'' || c == '"' || c == '<' || c == '>' || c == '#';
}

void appendLiteral(Alternative& alt, std::string_view text) {
    if (!alt.empty() && alt.back().kind == Element::Kind::Literal) {
        alt.back().text += text;
    } else {
        alt.push_back(Element{Element::Kind::Literal, std::string(text), true});
    }
}

class RegexReader {
public:
    RegexReader(std::string_view regex, std::string& why) : re_(regex), why_(why) {}

    bool fail(std::string reason) {
        why_ = std::move(reason);
        return false;
    }

    // The whole expression after "^": alternatives (as a product of the groups' literal
    // alternatives) and whether it ends in "$".
    bool read(std::vector<Alternative>& out, bool& anchoredEnd) {
        out = {Alternative{}};
        anchoredEnd = false;
        while (pos_ < re_.size()) {
            const char c = re_[pos_];
            if (c == '$') {
                if (pos_ + 1 != re_.size()) return fail("\"$\" before the end of the expression");
                anchoredEnd = true;
                ++pos_;
                break;
            }
            if (c == '.') {
                // ".*" or ".+" at the end (before an optional "$"): the rest of the path.
                if (pos_ + 1 < re_.size() && (re_[pos_ + 1] == '*' || re_[pos_ + 1] == '+')) {
                    const std::size_t after = pos_ + 2;
                    if (after == re_.size() || (after + 1 == re_.size() && re_[after] == '$')) {
                        for (Alternative& a : out)
                            a.push_back(Element{Element::Kind::Rest,
                                                re_[pos_ + 1] == '+' ? ".+" : ".*", true});
                        pos_ = re_.size();
                        break;
                    }
                }
                return fail("\".\" (any character) other than a final \".*\"");
            }
            if (c == '[' || c == '\\') {
                std::string klass;
                bool narrow = true;
                if (c == '\\' && pos_ + 1 < re_.size() && !isClassEscape(re_[pos_ + 1])) {
                    const char lit = re_[pos_ + 1];
                    if (std::isalnum(static_cast<unsigned char>(lit)))
                        return fail("the escape \"\\" + std::string(1, lit) + "\"");
                    pos_ += 2;
                    if (!optionalChar(out, std::string(1, lit))) return false;
                    continue;
                }
                if (!readClass(klass, narrow)) return false;
                // A class needs "+" or "*" (or {n,m}) to be a segment wildcard.
                if (pos_ < re_.size() && (re_[pos_] == '+' || re_[pos_] == '*')) {
                    ++pos_;
                } else if (pos_ < re_.size() && re_[pos_] == '{') {
                    const std::size_t close = re_.find('}', pos_);
                    if (close == std::string_view::npos) return fail("an unclosed \"{\"");
                    klass += std::string(re_.substr(pos_, close + 1 - pos_));
                    pos_ = close + 1;
                } else {
                    return fail("the single-character class \"" + klass + "\"");
                }
                for (Alternative& a : out)
                    a.push_back(Element{Element::Kind::Segment, klass, !narrow});
                continue;
            }
            if (c == '(') {
                if (!readGroup(out)) return false;
                continue;
            }
            if (literalChar(c)) {
                ++pos_;
                if (!optionalChar(out, std::string(1, c))) return false;
                continue;
            }
            return fail("\"" + std::string(1, c) + "\"");
        }
        return true;
    }

private:
    static bool isClassEscape(char c) { return c == 'd' || c == 'w'; }

    // A literal character, or "/?" before the end: an optional trailing slash, which ratelab's
    // patterns accept anyway.
    bool optionalChar(std::vector<Alternative>& out, const std::string& lit) {
        if (pos_ < re_.size() && re_[pos_] == '?') {
            ++pos_;
            const bool atEnd = pos_ == re_.size() || (pos_ + 1 == re_.size() && re_[pos_] == '$');
            if (lit == "/" && atEnd) {
                sawOptionalSlash = true;
                return true;
            }
            return fail("the optional \"" + lit + "?\"");
        }
        if (pos_ < re_.size() && (re_[pos_] == '+' || re_[pos_] == '*' || re_[pos_] == '{'))
            return fail("a repeated \"" + lit + "\"");
        for (Alternative& a : out)
            appendLiteral(a, lit);
        return true;
    }

    // "[...]", "\d" or "\w": a class; `narrow` unless it admits every character but "/".
    bool readClass(std::string& klass, bool& narrow) {
        if (re_[pos_] == '\\') {
            klass = std::string(re_.substr(pos_, 2));
            pos_ += 2;
            narrow = true;
            return true;
        }
        const std::size_t begin = pos_;
        ++pos_;
        bool negated = false;
        if (pos_ < re_.size() && re_[pos_] == '^') {
            negated = true;
            ++pos_;
        }
        std::string members;
        bool first = true;
        while (pos_ < re_.size() && (re_[pos_] != ']' || first)) {
            if (re_[pos_] == '\\' && pos_ + 1 < re_.size()) {
                members += re_.substr(pos_, 2);
                pos_ += 2;
            } else {
                members.push_back(re_[pos_++]);
            }
            first = false;
        }
        if (pos_ >= re_.size()) return fail("an unclosed \"[\"");
        ++pos_;  // ']'
        klass = std::string(re_.substr(begin, pos_ - begin));
        const bool hasSlash = members.find('/') != std::string::npos;
        if (negated) {
            if (!hasSlash) return fail("the class \"" + klass + "\", which admits \"/\"");
            narrow = members != "/";
        } else {
            if (hasSlash) return fail("the class \"" + klass + "\", which admits \"/\"");
            narrow = true;
        }
        return true;
    }

    // "(a|b)" or "(?:a|b)" of literal text: the product with what came before. A capturing
    // group around one class ("([^/]+)") is that class.
    bool readGroup(std::vector<Alternative>& out) {
        ++pos_;
        if (re_.substr(pos_, 2) == "?:") pos_ += 2;
        if (pos_ < re_.size() && (re_[pos_] == '[' || re_[pos_] == '\\')) {
            std::string klass;
            bool narrow = true;
            if (re_[pos_] == '\\' && pos_ + 1 < re_.size() && !isClassEscape(re_[pos_ + 1]))
                return fail("a group that starts with an escape");
            if (!readClass(klass, narrow)) return false;
            if (pos_ + 1 < re_.size() && (re_[pos_] == '+' || re_[pos_] == '*') &&
                re_[pos_ + 1] == ')') {
                pos_ += 2;
                for (Alternative& a : out)
                    a.push_back(Element{Element::Kind::Segment, klass, !narrow});
                return true;
            }
            return fail("a group other than alternatives of literal text");
        }
        std::vector<std::string> options{""};
        while (pos_ < re_.size() && re_[pos_] != ')') {
            const char c = re_[pos_];
            if (c == '|') {
                options.emplace_back();
                ++pos_;
            } else if (c == '\\' && pos_ + 1 < re_.size() &&
                       !std::isalnum(static_cast<unsigned char>(re_[pos_ + 1]))) {
                options.back().push_back(re_[pos_ + 1]);
                pos_ += 2;
            } else if (literalChar(c)) {
                options.back().push_back(c);
                ++pos_;
            } else {
                return fail("a group other than alternatives of literal text");
            }
        }
        if (pos_ >= re_.size()) return fail("an unclosed \"(\"");
        ++pos_;
        if (pos_ < re_.size() &&
            (re_[pos_] == '?' || re_[pos_] == '*' || re_[pos_] == '+' || re_[pos_] == '{'))
            return fail("a repeated or optional group");
        std::vector<Alternative> product;
        for (const Alternative& a : out) {
            for (const std::string& o : options) {
                Alternative next = a;
                appendLiteral(next, o);
                product.push_back(std::move(next));
                if (product.size() > kMaxRegexAlternatives)
                    return fail("more than " + std::to_string(kMaxRegexAlternatives) +
                                " alternatives");
            }
        }
        out = std::move(product);
        return true;
    }

public:
    bool sawOptionalSlash = false;

private:
    std::string_view re_;
    std::size_t pos_ = 1;  // after '^'
    std::string& why_;
};

bool hasLetters(std::string_view text) {
    for (char c : text) {
        if (std::isalpha(static_cast<unsigned char>(c))) return true;
    }
    return false;
}

}  // namespace

std::optional<PolicyJson> exactRoute(std::string_view path) {
    if (!policy::isValidRoutePath(path) || path.size() < 2 || path.front() != '/' ||
        path.back() == '/' || path.find('*') != std::string_view::npos ||
        path.find("//") != std::string_view::npos)
        return std::nullopt;
    return PolicyJson{{"path_pattern", std::string(path)}};
}

PolicyJson prefixRoute(std::string_view prefix, std::string& approximation) {
    approximation.clear();
    if (prefix.size() > 1 && prefix.back() != '/') {
        approximation = "\"" + std::string(prefix) + "\" is a prefix of any text (\"" +
                        std::string(prefix) + "x\" too); ratelab's prefix ends at a segment (\"" +
                        std::string(prefix) + "\" and \"" + std::string(prefix) + "/...\" only)";
    }
    return PolicyJson{{"path_prefix", std::string(prefix.empty() ? "/" : prefix)}};
}

std::string routeText(const PolicyJson& match) {
    if (match.contains("path_pattern")) return match["path_pattern"].get<std::string>();
    if (match.contains("path_prefix")) return match["path_prefix"].get<std::string>();
    return "/";
}

std::string routeSlug(const PolicyJson& match) {
    std::string out;
    for (char c : routeText(match)) {
        const bool plain =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        if (plain) {
            out.push_back(c);
        } else if (!out.empty() && out.back() != '-') {
            out.push_back('-');
        }
    }
    while (!out.empty() && out.back() == '-')
        out.pop_back();
    return out;
}

std::string samplePath(const PolicyJson& match) {
    if (!match.contains("path_pattern")) return match.value("path_prefix", "/");
    const std::string p = match["path_pattern"].get<std::string>();
    std::string out;
    for (std::size_t i = 0; i < p.size(); ++i) {
        if (p.compare(i, 3, "/**") == 0) {
            i += 2;
        } else if (p[i] == '*') {
            out += "x";
        } else {
            out += p[i];
        }
    }
    return out.empty() ? "/" : out;
}

std::optional<RegexRoutes> routesFromRegex(std::string_view regex, bool caseless,
                                           std::string& why) {
    if (regex.empty() || regex.front() != '^') {
        why = "it is not anchored at the start (\"^\"), so it matches anywhere in the path";
        return std::nullopt;
    }
    RegexReader reader(regex, why);
    std::vector<Alternative> alternatives;
    bool anchoredEnd = false;
    if (!reader.read(alternatives, anchoredEnd)) {
        why = "no route says " + why;
        return std::nullopt;
    }
    RegexRoutes routes;
    bool narrowed = false, restPlus = false;
    for (const Alternative& alt : alternatives) {
        // Segments: literal text split at "/", each wildcard a whole segment.
        std::string pattern;
        bool wildcard = false, rest = false;
        for (std::size_t i = 0; i < alt.size(); ++i) {
            const Element& e = alt[i];
            if (e.kind == Element::Kind::Literal) {
                pattern += e.text;
                continue;
            }
            if (e.kind == Element::Kind::Rest) {
                rest = true;
                restPlus = restPlus || e.text == ".+";
                continue;
            }
            const bool startsSegment = !pattern.empty() && pattern.back() == '/';
            const bool endsSegment =
                i + 1 == alt.size() ||
                (alt[i + 1].kind == Element::Kind::Literal && alt[i + 1].text.front() == '/') ||
                alt[i + 1].kind == Element::Kind::Rest;
            if (!startsSegment || !endsSegment) {
                why = "no route says the class \"" + e.text + "\" inside a path segment";
                return std::nullopt;
            }
            pattern += "*";
            wildcard = true;
            narrowed = narrowed || !e.exact;
        }
        if (pattern.empty() || pattern.front() != '/') {
            why = "the path it matches does not start with \"/\"";
            return std::nullopt;
        }
        const bool prefix = rest || !anchoredEnd;
        if (!prefix) {
            std::string exact = pattern;
            if (exact.size() > 1 && exact.back() == '/') exact.pop_back();
            if (exact == "/" || exact.find("//") != std::string::npos) {
                why = "no pattern says the exact path \"" + pattern + "\"";
                return std::nullopt;
            }
            routes.matches.push_back(PolicyJson{{"path_pattern", exact}});
            if (exact != pattern)
                routes.approximations.push_back("the exact path \"" + pattern + "\" becomes \"" +
                                                exact + "\" (with or without the final \"/\")");
            continue;
        }
        if (!wildcard) {
            if (!policy::isValidRoutePath(pattern)) {
                why = "the prefix \"" + pattern + "\" is not a path a route can hold";
                return std::nullopt;
            }
            std::string approximation;
            routes.matches.push_back(prefixRoute(pattern, approximation));
            if (!approximation.empty()) routes.approximations.push_back(approximation);
            continue;
        }
        // A pattern followed by anything: the pattern's segments, then any number more.
        std::string base = pattern;
        if (base.back() == '/') base.pop_back();
        if (base.back() != '*' && base.back() != '/' && !rest && pattern.back() != '/') {
            routes.approximations.push_back("\"" + pattern +
                                            "\" followed by any text becomes whole segments "
                                            "after it");
        }
        routes.matches.push_back(PolicyJson{{"path_pattern", base + "/**"}});
    }
    if (narrowed)
        routes.approximations.push_back(
            "a segment of a narrower class becomes a segment of any text");
    if (restPlus)
        routes.approximations.push_back("\".+\" becomes any further segments, none included");
    if (caseless && hasLetters(regex))
        routes.approximations.push_back(
            "the expression ignores case; ratelab's routes compare paths case by case");
    return routes;
}

}  // namespace ratelab::formats
