#include "sim/log/format/json_scanner.h"

namespace ratelab::sim {

namespace {

constexpr int kMaxDepth = 64;

class Scanner {
public:
    Scanner(std::string_view s, const JsonPaths& paths, JsonVisitor& visitor, std::string& scratch)
        : s_(s), nodes_(paths.nodes()), visitor_(visitor), scratch_(scratch) {}

    bool run(std::size_t& errorOffset, std::string& error) {
        skipSpace();
        bool ok = value(0, 0);
        if (ok) {
            skipSpace();
            if (pos_ != s_.size()) ok = fail("unexpected characters after the JSON value");
        }
        if (!ok) {
            errorOffset = pos_ < s_.size() ? pos_ : s_.size();
            error = error_;
        }
        return ok;
    }

private:
    bool fail(const char* what) {
        if (error_.empty()) error_ = what;
        return false;
    }

    void skipSpace() {
        while (pos_ < s_.size() &&
               (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r' || s_[pos_] == '\n'))
            ++pos_;
    }

    int child(int node, std::string_view key) const {
        if (node < 0) return -1;
        for (const auto& [name, index] : nodes_[static_cast<std::size_t>(node)].children) {
            if (name == key) return index;
        }
        return -1;
    }

    static int hexDigit(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }

    bool hex4(std::uint32_t& out) {
        if (pos_ + 4 > s_.size()) return fail("a \\u escape is cut off");
        out = 0;
        for (int i = 0; i < 4; ++i) {
            const int d = hexDigit(s_[pos_ + static_cast<std::size_t>(i)]);
            if (d < 0) return fail("a \\u escape has a non-hex digit");
            out = out * 16 + static_cast<std::uint32_t>(d);
        }
        pos_ += 4;
        return true;
    }

    void appendUtf8(std::uint32_t cp) {
        if (cp < 0x80) {
            scratch_.push_back(static_cast<char>(cp));
        } else if (cp < 0x800) {
            scratch_.push_back(static_cast<char>(0xc0 | (cp >> 6)));
            scratch_.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
        } else if (cp < 0x10000) {
            scratch_.push_back(static_cast<char>(0xe0 | (cp >> 12)));
            scratch_.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
            scratch_.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
        } else {
            scratch_.push_back(static_cast<char>(0xf0 | (cp >> 18)));
            scratch_.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
            scratch_.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
            scratch_.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
        }
    }

    // A string at s_[pos_] == '"'. Without escapes `out` views the line; with them, the
    // unescaped text is appended to scratch_ (which never grows past the line's length, the
    // capacity reserved up front, so earlier views stay valid).
    bool string(std::string_view& out) {
        const std::size_t start = ++pos_;
        while (pos_ < s_.size()) {
            const char c = s_[pos_];
            if (c == '"') {
                out = s_.substr(start, pos_ - start);
                ++pos_;
                return true;
            }
            if (c == '\\') break;
            if (static_cast<unsigned char>(c) < 0x20)
                return fail("a control character in a string");
            ++pos_;
        }
        if (pos_ >= s_.size()) return fail("a string is cut off");
        const std::size_t from = scratch_.size();
        scratch_.append(s_.data() + start, pos_ - start);
        while (pos_ < s_.size()) {
            const char c = s_[pos_];
            if (c == '"') {
                out = std::string_view(scratch_.data() + from, scratch_.size() - from);
                ++pos_;
                return true;
            }
            if (static_cast<unsigned char>(c) < 0x20)
                return fail("a control character in a string");
            if (c != '\\') {
                scratch_.push_back(c);
                ++pos_;
                continue;
            }
            if (++pos_ >= s_.size()) break;
            const char e = s_[pos_++];
            switch (e) {
                case '"':
                case '\\':
                case '/':
                    scratch_.push_back(e);
                    break;
                case 'b':
                    scratch_.push_back('\b');
                    break;
                case 'f':
                    scratch_.push_back('\f');
                    break;
                case 'n':
                    scratch_.push_back('\n');
                    break;
                case 'r':
                    scratch_.push_back('\r');
                    break;
                case 't':
                    scratch_.push_back('\t');
                    break;
                case 'u': {
                    std::uint32_t cp;
                    if (!hex4(cp)) return false;
                    if (cp >= 0xd800 && cp < 0xdc00 && pos_ + 1 < s_.size() && s_[pos_] == '\\' &&
                        s_[pos_ + 1] == 'u') {
                        pos_ += 2;
                        std::uint32_t low;
                        if (!hex4(low)) return false;
                        if (low >= 0xdc00 && low < 0xe000) {
                            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                        } else {
                            appendUtf8(0xfffd);
                            cp = low;
                        }
                    }
                    if (cp >= 0xd800 && cp < 0xe000) cp = 0xfffd;  // a lone surrogate
                    appendUtf8(cp);
                    break;
                }
                default:
                    --pos_;
                    return fail("an unknown escape in a string");
            }
        }
        return fail("a string is cut off");
    }

    // A number, true, false or null: its characters.
    bool scalar(std::string_view& out) {
        const std::size_t start = pos_;
        const char c = s_[pos_];
        if (c == 't' || c == 'f' || c == 'n') {
            for (std::string_view word : {"true", "false", "null"}) {
                if (s_.substr(pos_, word.size()) == word) {
                    pos_ += word.size();
                    out = word;
                    return true;
                }
            }
            return fail("an unknown literal");
        }
        if (c == '-') ++pos_;
        std::size_t digits = 0;
        while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
            ++pos_;
            ++digits;
        }
        if (digits == 0) {
            pos_ = start;
            return fail("expected a value");
        }
        if (pos_ < s_.size() && s_[pos_] == '.') {
            ++pos_;
            std::size_t frac = 0;
            while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
                ++pos_;
                ++frac;
            }
            if (frac == 0) return fail("a number has an empty fraction");
        }
        if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
            ++pos_;
            if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
            std::size_t exp = 0;
            while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
                ++pos_;
                ++exp;
            }
            if (exp == 0) return fail("a number has an empty exponent");
        }
        out = s_.substr(start, pos_ - start);
        return true;
    }

    // Any value; `node` is the trie node for this position, -1 when nothing below is wanted.
    bool value(int node, int depth) {
        if (pos_ >= s_.size()) return fail("the line ends where a value should be");
        if (depth > kMaxDepth) return fail("nested more than 64 levels deep");
        const char c = s_[pos_];
        const JsonPaths::Node* n = node >= 0 ? &nodes_[static_cast<std::size_t>(node)] : nullptr;
        if (c == '{') return object(node, n && n->membersAsValues ? n->role : -1, depth);
        if (c == '[') return array(n && n->role >= 0 ? n->role : -1, {}, depth);
        std::string_view text;
        const bool isString = c == '"';
        if (isString ? !string(text) : !scalar(text)) return false;
        if (n && n->role >= 0) visitor_.value(JsonValue{n->role, isString, {}, text});
        return true;
    }

    // An array; the strings in it go to `role` (with `member`) when role >= 0.
    bool array(int role, std::string_view member, int depth) {
        ++pos_;
        skipSpace();
        if (pos_ < s_.size() && s_[pos_] == ']') {
            ++pos_;
            return true;
        }
        for (;;) {
            skipSpace();
            if (role >= 0 && pos_ < s_.size() && s_[pos_] == '"') {
                std::string_view text;
                if (!string(text)) return false;
                visitor_.value(JsonValue{role, true, member, text});
            } else if (!value(-1, depth + 1)) {
                return false;
            }
            skipSpace();
            if (pos_ >= s_.size()) return fail("an array is cut off");
            if (s_[pos_] == ']') {
                ++pos_;
                return true;
            }
            if (s_[pos_] != ',') return fail("expected ',' or ']' in an array");
            ++pos_;
        }
    }

    // An object; with memberRole >= 0 every member is a value of that role, named.
    bool object(int node, int memberRole, int depth) {
        ++pos_;
        skipSpace();
        if (pos_ < s_.size() && s_[pos_] == '}') {
            ++pos_;
            return true;
        }
        for (;;) {
            skipSpace();
            if (pos_ >= s_.size()) return fail("an object is cut off");
            if (s_[pos_] != '"') return fail("expected a member name");
            std::string_view key;
            if (!string(key)) return false;
            skipSpace();
            if (pos_ >= s_.size() || s_[pos_] != ':') return fail("expected ':' after a name");
            ++pos_;
            skipSpace();
            if (pos_ >= s_.size()) return fail("the line ends where a value should be");
            if (memberRole >= 0) {
                if (s_[pos_] == '[') {
                    if (!array(memberRole, key, depth + 1)) return false;
                } else if (s_[pos_] == '"') {
                    std::string_view text;
                    if (!string(text)) return false;
                    visitor_.value(JsonValue{memberRole, true, key, text});
                } else if (!value(-1, depth + 1)) {
                    return false;
                }
            } else if (!value(child(node, key), depth + 1)) {
                return false;
            }
            skipSpace();
            if (pos_ >= s_.size()) return fail("an object is cut off");
            if (s_[pos_] == '}') {
                ++pos_;
                return true;
            }
            if (s_[pos_] != ',') return fail("expected ',' or '}' in an object");
            ++pos_;
        }
    }

    std::string_view s_;
    const std::vector<JsonPaths::Node>& nodes_;
    JsonVisitor& visitor_;
    std::string& scratch_;
    std::size_t pos_ = 0;
    std::string error_;
};

}  // namespace

bool JsonPaths::add(std::string_view path, int role, bool membersAsValues) {
    if (path.empty()) return false;
    int node = 0;
    std::size_t start = 0;
    for (;;) {
        const std::size_t dot = path.find('.', start);
        const std::string_view key =
            path.substr(start, dot == std::string_view::npos ? dot : dot - start);
        if (key.empty()) return false;
        int next = -1;
        for (const auto& [name, index] : nodes_[static_cast<std::size_t>(node)].children) {
            if (name == key) next = index;
        }
        if (next < 0) {
            next = static_cast<int>(nodes_.size());
            nodes_[static_cast<std::size_t>(node)].children.emplace_back(std::string(key), next);
            nodes_.emplace_back();
        }
        node = next;
        if (dot == std::string_view::npos) break;
        start = dot + 1;
    }
    nodes_[static_cast<std::size_t>(node)].role = role;
    nodes_[static_cast<std::size_t>(node)].membersAsValues = membersAsValues;
    return true;
}

bool scanJsonLine(std::string_view line, const JsonPaths& paths, JsonVisitor& visitor,
                  std::string& scratch, std::size_t& errorOffset, std::string& error) {
    scratch.clear();
    scratch.reserve(line.size());
    Scanner scanner(line, paths, visitor, scratch);
    return scanner.run(errorOffset, error);
}

}  // namespace ratelab::sim
