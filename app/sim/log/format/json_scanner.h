#pragma once

// A narrow JSON-lines scanner for access logs (simulator internals): one pass over a line that
// checks its syntax and hands back the values at a few dotted paths, without building a
// document. Measured on Caddy's lines (tests/bench/bench_replay.cpp, gunzip included), reading
// the fields a replay needs: nlohmann-json's DOM 85,000 lines per CPU second, this scanner
// 470,000. A DOM alone would hold a JSON replay below its target of 300,000 lines a second.
// It is strict where a replay needs it (strings, escapes, nesting, numbers' characters) and
// refuses what it cannot read with the byte offset of the problem.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ratelab::sim {

/// The paths wanted from each line, as a trie of keys. Build once, scan many lines.
class JsonPaths {
public:
    /// Registers `path` ("request.remote_ip") under `role` (any small number >= 0). With
    /// `membersAsValues`, the object at the path is not one value: each of its members is
    /// handed over with its name (Caddy's request.headers: name to an array of strings).
    /// False when `path` is empty or has an empty key.
    bool add(std::string_view path, int role, bool membersAsValues = false);

    struct Node {
        std::vector<std::pair<std::string, int>> children;  // key, node index
        int role = -1;
        bool membersAsValues = false;
    };
    const std::vector<Node>& nodes() const { return nodes_; }

private:
    std::vector<Node> nodes_{Node{}};
};

/// A value found at a wanted path. `text` is a string's contents (unescaped) or a number's or
/// literal's characters; `member` names the member for membersAsValues paths.
struct JsonValue {
    int role = 0;
    bool isString = false;
    std::string_view member;
    std::string_view text;
};

/// Receives values in the order they appear.
class JsonVisitor {
public:
    virtual ~JsonVisitor() = default;
    virtual void value(const JsonValue& value) = 0;
};

/// Scans one JSON value (an object, for a log line) spanning all of `line` but for
/// surrounding white space. Unescaped strings are written to `scratch`, which must not be
/// touched until the values are used; its capacity is reserved here so the views stay valid.
/// Returns true, or false with `errorOffset` (0-based) and `error` set; values found before
/// the problem have already been handed over.
bool scanJsonLine(std::string_view line, const JsonPaths& paths, JsonVisitor& visitor,
                  std::string& scratch, std::size_t& errorOffset, std::string& error);

}  // namespace ratelab::sim
