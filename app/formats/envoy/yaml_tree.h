#pragma once

// A YAML document as a tree that remembers where each node was written: the front end of the
// configuration readers of this folder. yaml-cpp parses (its event interface, so that the tree
// keeps what yaml-cpp's own Node forgets: duplicate keys in order, and whether a scalar was
// quoted); this file only builds the tree, bounded in depth and size, and resolves plain
// scalars to YAML 1.1 types as envoyproxy/ratelimit's YAML library does (yes/no/on/off are
// booleans, 0x1F an integer, 1.5 a float).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ratelab::formats::envoy {

/// Where a node starts: 1-based line and column (in bytes, as yaml-cpp counts).
struct YamlMark {
    int line = 0;
    int column = 0;
};

struct YamlEntry;

struct YamlNode {
    enum class Kind : std::uint8_t { Null, Scalar, Sequence, Map };
    Kind kind = Kind::Null;
    YamlMark at;
    std::string text;                ///< Scalar: the value as written (no quotes)
    bool quoted = false;             ///< Scalar: quoted, or tagged !!str: always a string
    std::vector<YamlNode> items;     ///< Sequence
    std::vector<YamlEntry> entries;  ///< Map, in file order, duplicates kept

    bool isNull() const { return kind == Kind::Null; }
    bool isScalar() const { return kind == Kind::Scalar; }
    bool isSequence() const { return kind == Kind::Sequence; }
    bool isMap() const { return kind == Kind::Map; }
};

/// One key and its value in a map (a struct of its own rather than std::pair, which may not
/// name YamlNode before YamlNode is complete).
struct YamlEntry {
    YamlNode key;
    YamlNode value;
};

/// What a scalar means under YAML 1.1's core types (untagged plain scalars only; a quoted one
/// is always a string).
enum class ScalarType : std::uint8_t { Null, Bool, Int, Float, String };
ScalarType scalarType(const YamlNode& node);
/// The boolean of a Bool scalar (true, yes, on, y, ... in any of YAML 1.1's spellings).
std::optional<bool> scalarBool(const YamlNode& node);
/// The value under `name` in `map`; null when `map` is null, not a map, or has no such key.
const YamlNode* mapField(const YamlNode* map, std::string_view name);
/// A scalar's text; `fallback` for a null node or one that is not a scalar.
std::string scalarText(const YamlNode* node, std::string fallback = {});
/// The integer of an Int scalar: decimal, 0x hex, 0o or leading-0 octal, 0b binary, with
/// optional sign and '_' separators; nullopt when it does not fit 64 bits.
std::optional<std::int64_t> scalarInt(const YamlNode& node);
/// The text of a node as envoyproxy/ratelimit's YAML library prints it in messages: a
/// scalar's text, "[...]" for a sequence, "map[...]" for a map, "<nil>" for null.
std::string printed(const YamlNode& node);

struct YamlParseResult {
    /// The first document; null when the text holds none (an empty file).
    YamlNode root;
    bool ok = true;  ///< false: `error` says why and where; root is partial
    YamlMark errorAt;
    std::string error;           ///< yaml-cpp's message, or a limit exceeded
    bool moreDocuments = false;  ///< documents after the first (they are not read)
    YamlMark secondDocumentAt;
};

/// Limits that keep a hostile file from exhausting the process: nesting, and the nodes built
/// (aliases copy the node they name, so a file of a few lines could otherwise expand to
/// billions).
inline constexpr int kMaxYamlDepth = 64;
inline constexpr std::size_t kMaxYamlNodes = 1'000'000;

/// Parses the first document of `text`. Never throws.
YamlParseResult parseYaml(std::string_view text);

}  // namespace ratelab::formats::envoy
