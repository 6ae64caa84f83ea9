#pragma once

// Schema-level reading of one JSON object of a policy file, on top of json::ObjectReader.
// Numbers follow JSON Schema: an integer is any number without a fractional part (20.0 is 20),
// so the loader and the shipped schema agree. Each read reports a wrong type or range at the
// value and leaves `out` unchanged; an absent key is not an error and leaves `out` unchanged.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json/json_reader.h"
#include "policy/policy_file_internal.h"
#include "policy/policy_names.h"

namespace ratelab::policy {

class Fields {
public:
    /// REQUIRES: object.isObject(). Reports unknown keys ("did you mean").
    Fields(Diagnostics& sink, const json::Value& object,
           std::initializer_list<std::string_view> known)
        : sink_(sink), reader_(sink.reader(), object, known) {}

    const json::Value& object() const { return reader_.object(); }
    const json::Value* get(std::string_view key) const { return reader_.get(key); }
    bool has(std::string_view key) const { return reader_.has(key); }
    bool isNull(std::string_view key) const;
    bool require(std::string_view key) { return reader_.require(key); }

    bool whole(std::string_view key, std::int64_t& out, std::int64_t min, std::int64_t max);
    bool whole(std::string_view key, int& out, int min, int max);
    bool wholeUnsigned(std::string_view key, std::uint64_t& out);
    /// Any finite number in [min, max], or (min, max] when `minExclusive`.
    bool number(std::string_view key, double& out, double min, double max,
                bool minExclusive = false);
    /// A number, or null (out = nullopt).
    bool numberOrNull(std::string_view key, std::optional<double>& out);
    bool boolean(std::string_view key, bool& out);
    /// A string of minLength..maxLength code points.
    bool string(std::string_view key, std::string& out, std::size_t minLength,
                std::size_t maxLength);

    template <class E, std::size_t N>
    bool choice(std::string_view key, E& out, const NameTable<E, N>& table) {
        const json::Value* v = get(key);
        if (!v) return false;
        if (!sink_.reader().expect(*v, {json::Value::Type::String}, "a string")) return false;
        for (const auto& [name, value] : table) {
            if (v->asString() == name) {
                out = value;
                return true;
            }
        }
        std::vector<std::string_view> names;
        for (const auto& entry : table)
            names.push_back(entry.first);
        reportNotOneOf(*v, names);
        return false;
    }

    const json::Value* object(std::string_view key) { return reader_.readObject(key); }
    const json::Value* array(std::string_view key) { return reader_.readArray(key); }

    Diagnostics& sink() { return sink_; }

private:
    void reportNotOneOf(const json::Value& v, const std::vector<std::string_view>& names);

    Diagnostics& sink_;
    json::ObjectReader reader_;
};

/// Reads a JSON value as a whole number in [min, max] (JSON Schema "integer"); reports at it.
bool readWhole(Diagnostics& sink, const json::Value& v, std::string_view what, std::int64_t& out,
               std::int64_t min, std::int64_t max);

/// Number of UTF-8 code points in `s` (the unit of JSON Schema's minLength / maxLength).
std::size_t codePoints(std::string_view s);

/// Quotes `s` for a message: printable ASCII as is, other bytes as \xNN, cut after 80 bytes.
std::string quoted(std::string_view s);


}  // namespace ratelab::policy
