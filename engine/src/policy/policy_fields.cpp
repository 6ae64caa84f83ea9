#include "policy/policy_fields.h"

#include <cmath>
#include <cstdio>

namespace ratelab::policy {

namespace {

constexpr double kTwoTo63 = 9223372036854775808.0;
constexpr double kTwoTo64 = 18446744073709551616.0;

bool isWholeDouble(double x) {
    return std::isfinite(x) && std::floor(x) == x;
}

}  // namespace

std::size_t codePoints(std::string_view s) {
    std::size_t n = 0;
    for (unsigned char c : s)
        n += (c & 0xC0) != 0x80;
    return n;
}

std::string quoted(std::string_view s) {
    std::string out = "\"";
    std::size_t shown = 0;
    for (unsigned char c : s) {
        if (++shown > 80) {
            out += "...";
            break;
        }
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
            out.push_back(static_cast<char>(c));
        } else {
            char buffer[8];
            std::snprintf(buffer, sizeof buffer, "\\x%02x", c);
            out += buffer;
        }
    }
    return out + "\"";
}

bool readWhole(Diagnostics& sink, const json::Value& v, std::string_view what, std::int64_t& out,
               std::int64_t min, std::int64_t max) {
    std::string range = "between " + std::to_string(min) + " and " + std::to_string(max);
    std::int64_t value = 0;
    switch (v.type()) {
        case json::Value::Type::Integer:
            value = v.asInt();
            break;
        case json::Value::Type::Unsigned:
            sink.error(CheckLevel::Schema, v,
                       std::string(what) + " must be " + range + ", found " +
                           std::to_string(v.asUnsigned()));
            return false;
        case json::Value::Type::Double: {
            double x = v.asDouble();
            if (!isWholeDouble(x)) {
                sink.error(CheckLevel::Schema, v,
                           std::string(what) + " must be a whole number " + range + ", found " +
                               numberText(x));
                return false;
            }
            if (x < -kTwoTo63 || x >= kTwoTo63) {
                sink.error(CheckLevel::Schema, v,
                           std::string(what) + " must be " + range + ", found " + numberText(x));
                return false;
            }
            value = static_cast<std::int64_t>(x);
            break;
        }
        default:
            sink.reader().expect(v, {json::Value::Type::Integer}, "an integer");
            return false;
    }
    if (value < min || value > max) {
        sink.error(CheckLevel::Schema, v,
                   std::string(what) + " must be " + range + ", found " + std::to_string(value));
        return false;
    }
    out = value;
    return true;
}

bool Fields::isNull(std::string_view key) const {
    const json::Value* v = get(key);
    return v && v->isNull();
}

bool Fields::whole(std::string_view key, std::int64_t& out, std::int64_t min, std::int64_t max) {
    const json::Value* v = get(key);
    return v && readWhole(sink_, *v, key, out, min, max);
}

bool Fields::whole(std::string_view key, int& out, int min, int max) {
    std::int64_t wide = out;
    if (!whole(key, wide, min, max)) return false;
    out = static_cast<int>(wide);
    return true;
}

bool Fields::wholeUnsigned(std::string_view key, std::uint64_t& out) {
    const json::Value* v = get(key);
    if (!v) return false;
    std::string range =
        std::string(key) + " must be a whole number between 0 and 18446744073709551615";
    switch (v->type()) {
        case json::Value::Type::Unsigned:
            out = v->asUnsigned();
            return true;
        case json::Value::Type::Integer:
            if (v->asInt() < 0) break;
            out = static_cast<std::uint64_t>(v->asInt());
            return true;
        case json::Value::Type::Double: {
            double x = v->asDouble();
            if (!isWholeDouble(x) || x < 0 || x >= kTwoTo64) break;
            out = static_cast<std::uint64_t>(x);
            return true;
        }
        default:
            sink_.reader().expect(*v, {json::Value::Type::Integer}, "an integer");
            return false;
    }
    sink_.error(CheckLevel::Schema, *v, range + ", found " + numberText(v->asDouble()));
    return false;
}

bool Fields::number(std::string_view key, double& out, double min, double max, bool minExclusive) {
    const json::Value* v = get(key);
    if (!v) return false;
    if (!sink_.reader().expect(*v, {json::Value::Type::Double}, "a number")) return false;
    double x = v->asDouble();
    bool below = minExclusive ? !(x > min) : !(x >= min);
    if (below || !(x <= max) || !std::isfinite(x)) {
        sink_.error(CheckLevel::Schema, *v,
                    std::string(key) + " must be " + (minExclusive ? "above " : "at least ") +
                        numberText(min) + " and at most " + numberText(max) + ", found " +
                        numberText(x));
        return false;
    }
    out = x;
    return true;
}

bool Fields::numberOrNull(std::string_view key, std::optional<double>& out) {
    const json::Value* v = get(key);
    if (!v) return false;
    if (v->isNull()) {
        out.reset();
        return true;
    }
    if (!sink_.reader().expect(*v, {json::Value::Type::Double}, "a number or null")) return false;
    out = v->asDouble();
    return true;
}

bool Fields::boolean(std::string_view key, bool& out) {
    const json::Value* v = get(key);
    if (!v) return false;
    if (!sink_.reader().expect(*v, {json::Value::Type::Bool}, "true or false")) return false;
    out = v->asBool();
    return true;
}

bool Fields::string(std::string_view key, std::string& out, std::size_t minLength,
                    std::size_t maxLength) {
    const json::Value* v = get(key);
    if (!v) return false;
    if (!sink_.reader().expect(*v, {json::Value::Type::String}, "a string")) return false;
    std::size_t length = codePoints(v->asString());
    if (length < minLength) {
        sink_.error(CheckLevel::Schema, *v, std::string(key) + " must not be empty");
        return false;
    }
    if (length > maxLength) {
        sink_.error(
            CheckLevel::Schema, *v,
            std::string(key) + " is longer than " + std::to_string(maxLength) + " characters");
        return false;
    }
    out = v->asString();
    return true;
}

void Fields::reportNotOneOf(const json::Value& v, const std::vector<std::string_view>& names) {
    std::string allowed;
    for (std::string_view name : names) {
        if (!allowed.empty()) allowed += ", ";
        allowed += "\"" + std::string(name) + "\"";
    }
    std::string message = quoted(v.asString()) + " is not one of " + allowed;
    std::string_view suggestion = json::closestKey(v.asString(), names);
    if (!suggestion.empty()) message += "; did you mean \"" + std::string(suggestion) + "\"?";
    sink_.error(CheckLevel::Schema, v, std::move(message));
}

}  // namespace ratelab::policy
