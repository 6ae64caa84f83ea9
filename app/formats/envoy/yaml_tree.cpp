#include "formats/envoy/yaml_tree.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <sstream>
#include <unordered_map>

namespace ratelab::formats::envoy {

namespace {

YamlMark markOf(const YAML::Mark& m) {
    return {m.line + 1, m.column + 1};
}

// Thrown inside yaml-cpp's parse to stop it (its own exceptions carry marks the same way); never
// escapes parseYaml().
struct LimitExceeded {
    YamlMark at;
    std::string what;
};

// Builds the tree from yaml-cpp's events. A stack of open collections; a map collects
// alternating keys and values.
class TreeBuilder final : public YAML::EventHandler {
public:
    explicit TreeBuilder(YamlNode& root) : root_(root) {}

    void OnDocumentStart(const YAML::Mark&) override {}
    void OnDocumentEnd() override {}

    void OnNull(const YAML::Mark& m, YAML::anchor_t anchor) override {
        YamlNode n;
        n.kind = YamlNode::Kind::Null;
        // An empty value's mark is where the next token starts; its key's is more useful.
        n.at = pendingKeyAt().value_or(markOf(m));
        add(std::move(n), anchor);
    }
    void OnAlias(const YAML::Mark& m, YAML::anchor_t anchor) override {
        auto it = anchors_.find(anchor);
        if (it == anchors_.end()) throw LimitExceeded{markOf(m), "unknown alias"};
        count(it->second.second, markOf(m));
        YamlNode copy = it->second.first;
        add(std::move(copy), 0);
    }
    void OnScalar(const YAML::Mark& m, const std::string& tag, YAML::anchor_t anchor,
                  const std::string& value) override {
        YamlNode n;
        n.kind = YamlNode::Kind::Scalar;
        n.at = markOf(m);
        n.text = value;
        // "!" is yaml-cpp's tag for a quoted scalar; an explicit !!str makes a string too.
        n.quoted = tag == "!" || tag == "tag:yaml.org,2002:str";
        add(std::move(n), anchor);
    }
    void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                         YAML::EmitterStyle::value) override {
        open(YamlNode::Kind::Sequence, m, anchor);
    }
    void OnSequenceEnd() override { close(); }
    void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                    YAML::EmitterStyle::value) override {
        open(YamlNode::Kind::Map, m, anchor);
    }
    void OnMapEnd() override { close(); }

private:
    struct Open {
        YamlNode node;
        YAML::anchor_t anchor = 0;
        std::size_t nodesAtStart = 0;
        bool haveKey = false;  // Map: a key is waiting for its value
        YamlNode key;
    };

    std::optional<YamlMark> pendingKeyAt() const {
        if (stack_.empty() || !stack_.back().haveKey) return std::nullopt;
        return stack_.back().key.at;
    }

    void count(std::size_t n, YamlMark at) {
        nodes_ += n;
        if (nodes_ > kMaxYamlNodes) {
            throw LimitExceeded{at, "the document expands to more than " +
                                        std::to_string(kMaxYamlNodes) +
                                        " nodes (aliases included)"};
        }
    }

    void open(YamlNode::Kind kind, const YAML::Mark& m, YAML::anchor_t anchor) {
        if (static_cast<int>(stack_.size()) >= kMaxYamlDepth) {
            throw LimitExceeded{markOf(m),
                                "nesting deeper than " + std::to_string(kMaxYamlDepth) + " levels"};
        }
        count(1, markOf(m));
        Open o;
        o.node.kind = kind;
        o.node.at = markOf(m);
        o.anchor = anchor;
        o.nodesAtStart = nodes_;
        stack_.push_back(std::move(o));
    }

    void close() {
        Open o = std::move(stack_.back());
        stack_.pop_back();
        if (o.haveKey) {  // a key without a value cannot come from yaml-cpp; keep it as null
            YamlNode null;
            null.at = o.key.at;
            o.node.entries.push_back({std::move(o.key), std::move(null)});
        }
        remember(o.anchor, o.node, nodes_ - o.nodesAtStart + 1);
        place(std::move(o.node));
    }

    void add(YamlNode node, YAML::anchor_t anchor) {
        if (node.kind == YamlNode::Kind::Scalar || node.kind == YamlNode::Kind::Null) {
            count(1, node.at);
            remember(anchor, node, 1);
        }
        place(std::move(node));
    }

    void remember(YAML::anchor_t anchor, const YamlNode& node, std::size_t size) {
        if (anchor != 0) anchors_[anchor] = {node, size};
    }

    void place(YamlNode node) {
        if (stack_.empty()) {
            if (!rootSet_) root_ = std::move(node);
            rootSet_ = true;
            return;
        }
        Open& top = stack_.back();
        if (top.node.kind == YamlNode::Kind::Sequence) {
            top.node.items.push_back(std::move(node));
        } else if (!top.haveKey) {
            top.key = std::move(node);
            top.haveKey = true;
        } else {
            top.node.entries.push_back({std::move(top.key), std::move(node)});
            top.haveKey = false;
        }
    }

    YamlNode& root_;
    bool rootSet_ = false;
    std::vector<Open> stack_;
    std::unordered_map<YAML::anchor_t, std::pair<YamlNode, std::size_t>> anchors_;
    std::size_t nodes_ = 0;
};

// Stops after the first document, noting where a second one starts.
class FirstDocumentOnly final : public YAML::EventHandler {
public:
    void OnDocumentStart(const YAML::Mark& m) override { at = markOf(m); }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  const std::string&) override {}
    void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}
    YamlMark at;
};

bool oneOf(std::string_view s, std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), s) != names.end();
}

bool isYamlFloat(std::string_view s) {
    if (oneOf(s, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF",
                  ".nan", ".NaN", ".NAN"})) {
        return true;
    }
    // [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
    std::size_t i = 0;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    auto digits = [&] {
        const std::size_t start = i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9')
            ++i;
        return i - start;
    };
    if (i < s.size() && s[i] == '.') {
        ++i;
        if (digits() == 0) return false;
    } else {
        if (digits() == 0) return false;
        if (i < s.size() && s[i] == '.') {
            ++i;
            digits();
        }
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
        if (digits() == 0) return false;
    }
    return i == s.size();
}

}  // namespace

std::optional<bool> scalarBool(const YamlNode& node) {
    if (node.kind != YamlNode::Kind::Scalar || node.quoted) return std::nullopt;
    const std::string_view s = node.text;
    if (oneOf(s, {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})) {
        return true;
    }
    if (oneOf(s, {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})) {
        return false;
    }
    return std::nullopt;
}

std::optional<std::int64_t> scalarInt(const YamlNode& node) {
    if (node.kind != YamlNode::Kind::Scalar || node.quoted) return std::nullopt;
    std::string s;
    for (char c : node.text)
        if (c != '_') s += c;
    if (s.empty()) return std::nullopt;
    bool negative = false;
    std::size_t i = 0;
    if (s[0] == '-' || s[0] == '+') {
        negative = s[0] == '-';
        i = 1;
    }
    int base = 10;
    if (s.size() > i + 1 && s[i] == '0') {
        const char p = s[i + 1];
        if (p == 'x' || p == 'X') {
            base = 16;
            i += 2;
        } else if (p == 'o' || p == 'O') {
            base = 8;
            i += 2;
        } else if (p == 'b' || p == 'B') {
            base = 2;
            i += 2;
        } else {
            base = 8;
            i += 1;
        }
    }
    if (i >= s.size()) return std::nullopt;
    // Underscores are allowed only after a base prefix, as in the original's YAML library.
    if (base == 10 && node.text.find('_') != std::string::npos) return std::nullopt;
    std::uint64_t magnitude = 0;
    const auto [end, ec] = std::from_chars(s.data() + i, s.data() + s.size(), magnitude, base);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    constexpr std::uint64_t kMax = static_cast<std::uint64_t>(INT64_MAX);
    if (negative) {
        if (magnitude > kMax + 1) return std::nullopt;
        return magnitude == kMax + 1 ? INT64_MIN : -static_cast<std::int64_t>(magnitude);
    }
    if (magnitude > kMax) return std::nullopt;
    return static_cast<std::int64_t>(magnitude);
}

ScalarType scalarType(const YamlNode& node) {
    if (node.kind == YamlNode::Kind::Null) return ScalarType::Null;
    if (node.kind != YamlNode::Kind::Scalar || node.quoted) return ScalarType::String;
    if (scalarBool(node)) return ScalarType::Bool;
    if (scalarInt(node)) return ScalarType::Int;
    if (isYamlFloat(node.text)) return ScalarType::Float;
    return ScalarType::String;
}

std::string printed(const YamlNode& node) {
    switch (node.kind) {
        case YamlNode::Kind::Null:
            return "<nil>";
        case YamlNode::Kind::Scalar:
            return node.text;
        case YamlNode::Kind::Sequence:
            return "[...]";
        case YamlNode::Kind::Map:
            return "map[...]";
    }
    return {};
}

YamlParseResult parseYaml(std::string_view text) {
    YamlParseResult out;
    std::istringstream in{std::string(text)};
    try {
        YAML::Parser parser(in);
        TreeBuilder builder(out.root);
        if (!parser.HandleNextDocument(builder)) return out;  // no document at all
        // Whatever follows is not read; only whether there is something is noted.
        FirstDocumentOnly rest;
        try {
            out.moreDocuments = parser.HandleNextDocument(rest);
        } catch (const YAML::Exception&) {
            out.moreDocuments = true;
        }
        out.secondDocumentAt = rest.at;
    } catch (const LimitExceeded& e) {
        out.ok = false;
        out.errorAt = e.at;
        out.error = e.what;
    } catch (const YAML::Exception& e) {
        // Including YAML::DeepRecursion: yaml-cpp's own guard on its recursive descent.
        out.ok = false;
        out.errorAt = markOf(e.mark);
        out.error = e.msg;
    } catch (const std::exception& e) {  // std::bad_alloc and the like: never past this reader
        out.ok = false;
        out.error = e.what();
    }
    return out;
}

const YamlNode* mapField(const YamlNode* map, std::string_view name) {
    if (!map || !map->isMap()) return nullptr;
    for (const auto& [k, v] : map->entries) {
        if (k.text == name) return &v;
    }
    return nullptr;
}

std::string scalarText(const YamlNode* node, std::string fallback) {
    return node && node->isScalar() ? node->text : fallback;
}

}  // namespace ratelab::formats::envoy
