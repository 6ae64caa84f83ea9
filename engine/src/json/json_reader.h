#pragma once

// Typed, schema-level reading of a json::Document: each accessor checks type and range and
// reports what is wrong where it is written, so one pass over a file finds every problem.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "json/json_document.h"
#include "ratelab/number_text.h"

namespace ratelab::json {

/// Collects diagnostics for one file. Not thread-safe.
class Reader {
public:
    Reader(std::string file, std::vector<Diagnostic>& out) : file_(std::move(file)), out_(out) {}

    void error(const Value& at, std::string message);
    void warning(const Value& at, std::string message);
    void errorAt(Position at, std::string pointer, std::string message);
    void warningAt(Position at, std::string pointer, std::string message);

    /// Reports "expected X, found Y" unless `value` has one of `types`; returns whether it has.
    bool expect(const Value& value, std::initializer_list<Value::Type> types,
                std::string_view what);

    const std::string& file() const { return file_; }
    std::size_t errorCount() const;

private:
    std::string file_;
    std::vector<Diagnostic>& out_;
};

/// The closest of `known` to `unknown` by edit distance, or "" when none is close.
std::string_view closestKey(std::string_view unknown,
                            std::initializer_list<std::string_view> known);
std::string_view closestKey(std::string_view unknown, const std::vector<std::string_view>& known);

/// Reads the fields of one JSON object. The constructor reports unknown keys, naming the
/// nearest known key when one is close ("unknown key "capacty"; did you mean "capacity"?").
/// Each read* reports a wrong type or range at the value and leaves `out` unchanged; an absent
/// optional field leaves `out` unchanged and is not an error.
class ObjectReader {
public:
    /// REQUIRES: object.isObject().
    ObjectReader(Reader& reader, const Value& object,
                 std::initializer_list<std::string_view> known);

    const Value& object() const { return object_; }
    const Value* get(std::string_view key) const { return object_.find(key); }
    bool has(std::string_view key) const { return object_.find(key) != nullptr; }

    /// Reports "missing required key" at the object when `key` is absent.
    bool require(std::string_view key);

    bool readInt(std::string_view key, std::int64_t& out, std::int64_t min, std::int64_t max);
    bool readInt(std::string_view key, int& out, int min, int max);
    bool readUint(std::string_view key, std::uint64_t& out);
    /// Any number; `minExclusive` makes the lower bound strict (a rate must be above 0).
    bool readNumber(std::string_view key, double& out, double min, double max,
                    bool minExclusive = false);
    bool readString(std::string_view key, std::string& out, bool allowEmpty = true);
    bool readBool(std::string_view key, bool& out);

    /// A string that must be one of `options`; reports the allowed values otherwise.
    template <class E>
    bool readEnum(std::string_view key, E& out,
                  std::initializer_list<std::pair<std::string_view, E>> options) {
        const Value* v = get(key);
        if (!v) return false;
        if (!reader_.expect(*v, {Value::Type::String}, "a string")) return false;
        for (const auto& [name, value] : options) {
            if (v->asString() == name) {
                out = value;
                return true;
            }
        }
        std::string allowed;
        for (const auto& option : options) {
            if (!allowed.empty()) allowed += ", ";
            allowed += "\"" + std::string(option.first) + "\"";
        }
        reader_.error(*v, "\"" + v->asString() + "\" is not one of " + allowed);
        return false;
    }

    /// The member as an object or array, type-checked; null when absent or of the wrong type.
    const Value* readObject(std::string_view key);
    const Value* readArray(std::string_view key);

private:
    Reader& reader_;
    const Value& object_;
};

}  // namespace ratelab::json
