#pragma once

// A JSON tree that remembers where every value and key was written, for configuration files
// whose errors must name FILE:LINE:COLUMN. Lexing, number parsing and UTF-8 checks are
// nlohmann::json's (its SAX interface); this layer adds positions, JSON pointers, duplicate-key
// detection and limits on size and depth. Not for hot paths: policy and scenario files only.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ratelab/diagnostic.h"

namespace ratelab::json {

struct Position {
    int line = 0;    ///< 1-based
    int column = 0;  ///< 1-based, in characters (UTF-8 code points)
};

class Value;

struct Member {
    std::string key;
    Position keyPosition;
    std::unique_ptr<Value> value;
};

class Value {
public:
    enum class Type { Null, Bool, Integer, Unsigned, Double, String, Array, Object };

    Type type() const { return type_; }
    Position position() const { return position_; }
    const std::string& pointer() const { return pointer_; }  ///< RFC 6901, "" for the root

    bool isNull() const { return type_ == Type::Null; }
    bool isBool() const { return type_ == Type::Bool; }
    /// Integer or Unsigned: a number written without fraction or exponent.
    bool isInteger() const { return type_ == Type::Integer || type_ == Type::Unsigned; }
    bool isNumber() const { return isInteger() || type_ == Type::Double; }
    bool isString() const { return type_ == Type::String; }
    bool isArray() const { return type_ == Type::Array; }
    bool isObject() const { return type_ == Type::Object; }

    bool asBool() const { return bool_; }
    std::int64_t asInt() const { return int_; }         ///< REQUIRES: type() == Integer
    std::uint64_t asUnsigned() const { return uint_; }  ///< REQUIRES: type() == Unsigned
    double asDouble() const;                            ///< any number
    const std::string& asString() const { return string_; }

    const std::vector<std::unique_ptr<Value>>& items() const { return items_; }
    const std::vector<Member>& members() const { return members_; }
    /// The member named `key`, or null. Objects never hold duplicate keys (they are errors).
    const Value* find(std::string_view key) const;
    const Member* findMember(std::string_view key) const;

    /// "null", "a boolean", "an integer", "a number", "a string", "an array", "an object".
    static std::string_view typeName(Type type);

private:
    friend class TreeBuilder;
    Type type_ = Type::Null;
    Position position_;
    std::string pointer_;
    bool bool_ = false;
    std::int64_t int_ = 0;
    std::uint64_t uint_ = 0;
    double double_ = 0;
    std::string string_;
    std::vector<std::unique_ptr<Value>> items_;
    std::vector<Member> members_;
};

struct Limits {
    std::size_t maxDocumentBytes = 16u << 20;  ///< 16 MiB
    std::size_t maxStringBytes = 64u << 10;    ///< 64 KiB per string or key
    int maxDepth = 64;                         ///< nested arrays and objects
};

struct Document {
    std::unique_ptr<Value> root;          ///< null when the text is not valid JSON
    std::vector<Diagnostic> diagnostics;  ///< syntax errors, duplicate keys, limits
    bool unreadable = false;  ///< parseFile(): the file could not be read (one diagnostic says why)
};

/// Parses `text`. Stops at the first syntax error (JSON cannot be resynchronised reliably);
/// duplicate keys are all reported and the tree is still built (the first occurrence wins).
Document parse(std::string_view text, std::string_view fileName, const Limits& limits = {});

/// Reads a file (io::readTextFile: pipes and process substitutions too) and parses it. An
/// unreadable file is one diagnostic without a position and sets `unreadable`; an oversized one
/// is one diagnostic at 1:1.
Document parseFile(const std::string& path, const Limits& limits = {});

/// Line and column of a byte offset in `text`.
Position positionOf(std::string_view text, std::size_t offset);

/// Appends `token` to `pointer` with RFC 6901 escaping ("~" -> "~0", "/" -> "~1").
std::string appendPointer(std::string_view pointer, std::string_view token);

}  // namespace ratelab::json
