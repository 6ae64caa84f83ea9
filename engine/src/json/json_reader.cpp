#include "json/json_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ratelab::json {

namespace {

// Control characters in a message would corrupt a terminal or a log line.
std::string sanitize(std::string message) {
    std::string out;
    out.reserve(message.size());
    for (unsigned char c : message) {
        if (c < 0x20 || c == 0x7f) {
            char buffer[8];
            std::snprintf(buffer, sizeof buffer, "\\x%02x", c);
            out += buffer;
        } else {
            out.push_back(static_cast<char>(c));
        }
    }
    return out;
}

std::size_t editDistance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t above = row[j];
            std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
            row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
            diagonal = above;
        }
    }
    return row[b.size()];
}

template <class Range>
std::string_view closest(std::string_view unknown, const Range& known) {
    std::string_view best;
    std::size_t bestDistance = SIZE_MAX;
    for (std::string_view candidate : known) {
        std::size_t d = editDistance(unknown, candidate);
        if (d < bestDistance) {
            bestDistance = d;
            best = candidate;
        }
    }
    // Close means a couple of typos, scaled a little with length ("capacty", "refil_per_second").
    std::size_t allowed = std::max<std::size_t>(2, unknown.size() / 4);
    return bestDistance <= allowed ? best : std::string_view();
}

}  // namespace

void Reader::error(const Value& at, std::string message) {
    errorAt(at.position(), at.pointer(), std::move(message));
}

void Reader::warning(const Value& at, std::string message) {
    warningAt(at.position(), at.pointer(), std::move(message));
}

void Reader::errorAt(Position at, std::string pointer, std::string message) {
    out_.push_back(Diagnostic{Diagnostic::Severity::Error, file_, at.line, at.column,
                              std::move(pointer), sanitize(std::move(message))});
}

void Reader::warningAt(Position at, std::string pointer, std::string message) {
    out_.push_back(Diagnostic{Diagnostic::Severity::Warning, file_, at.line, at.column,
                              std::move(pointer), sanitize(std::move(message))});
}

bool Reader::expect(const Value& value, std::initializer_list<Value::Type> types,
                    std::string_view what) {
    for (Value::Type type : types) {
        if (value.type() == type) return true;
        if (type == Value::Type::Integer && value.type() == Value::Type::Unsigned) return true;
        if (type == Value::Type::Double && value.isNumber()) return true;
    }
    error(value, "expected " + std::string(what) + ", found " +
                     std::string(Value::typeName(value.type())));
    return false;
}

std::size_t Reader::errorCount() const {
    return static_cast<std::size_t>(std::count_if(
        out_.begin(), out_.end(),
        [](const Diagnostic& d) { return d.severity == Diagnostic::Severity::Error; }));
}

std::string_view closestKey(std::string_view unknown,
                            std::initializer_list<std::string_view> known) {
    return closest(unknown, known);
}

std::string_view closestKey(std::string_view unknown, const std::vector<std::string_view>& known) {
    return closest(unknown, known);
}

ObjectReader::ObjectReader(Reader& reader, const Value& object,
                           std::initializer_list<std::string_view> known)
    : reader_(reader), object_(object) {
    for (const Member& member : object.members()) {
        bool isKnown = std::find(known.begin(), known.end(), member.key) != known.end();
        if (isKnown) continue;
        std::string message = "unknown key \"" + member.key + "\"";
        std::string_view suggestion = closestKey(member.key, known);
        if (!suggestion.empty()) message += "; did you mean \"" + std::string(suggestion) + "\"?";
        reader_.errorAt(member.keyPosition, member.value->pointer(), std::move(message));
    }
}

bool ObjectReader::require(std::string_view key) {
    if (has(key)) return true;
    reader_.error(object_, "missing required key \"" + std::string(key) + "\"");
    return false;
}

bool ObjectReader::readInt(std::string_view key, std::int64_t& out, std::int64_t min,
                           std::int64_t max) {
    const Value* v = get(key);
    if (!v) return false;
    if (v->type() == Value::Type::Double || v->type() == Value::Type::Unsigned) {
        reader_.error(*v, std::string(key) + " must be a whole number between " +
                              std::to_string(min) + " and " + std::to_string(max));
        return false;
    }
    if (!reader_.expect(*v, {Value::Type::Integer}, "an integer")) return false;
    if (v->asInt() < min || v->asInt() > max) {
        reader_.error(*v, std::string(key) + " must be between " + std::to_string(min) + " and " +
                              std::to_string(max) + ", found " + std::to_string(v->asInt()));
        return false;
    }
    out = v->asInt();
    return true;
}

bool ObjectReader::readInt(std::string_view key, int& out, int min, int max) {
    std::int64_t wide = out;
    if (!readInt(key, wide, min, max)) return false;
    out = static_cast<int>(wide);
    return true;
}

bool ObjectReader::readUint(std::string_view key, std::uint64_t& out) {
    const Value* v = get(key);
    if (!v) return false;
    if (v->type() == Value::Type::Unsigned) {
        out = v->asUnsigned();
        return true;
    }
    if (v->type() == Value::Type::Integer && v->asInt() >= 0) {
        out = static_cast<std::uint64_t>(v->asInt());
        return true;
    }
    reader_.error(*v, std::string(key) + " must be a whole number of at least 0");
    return false;
}

bool ObjectReader::readNumber(std::string_view key, double& out, double min, double max,
                              bool minExclusive) {
    const Value* v = get(key);
    if (!v) return false;
    if (!reader_.expect(*v, {Value::Type::Double}, "a number")) return false;
    double x = v->asDouble();
    bool below = minExclusive ? !(x > min) : !(x >= min);
    if (below || !(x <= max) || !std::isfinite(x)) {
        reader_.error(*v, std::string(key) + " must be " + (minExclusive ? "above " : "at least ") +
                              numberText(min) + " and at most " + numberText(max) + ", found " +
                              numberText(x));
        return false;
    }
    out = x;
    return true;
}

bool ObjectReader::readString(std::string_view key, std::string& out, bool allowEmpty) {
    const Value* v = get(key);
    if (!v) return false;
    if (!reader_.expect(*v, {Value::Type::String}, "a string")) return false;
    if (!allowEmpty && v->asString().empty()) {
        reader_.error(*v, std::string(key) + " must not be empty");
        return false;
    }
    out = v->asString();
    return true;
}

bool ObjectReader::readBool(std::string_view key, bool& out) {
    const Value* v = get(key);
    if (!v) return false;
    if (!reader_.expect(*v, {Value::Type::Bool}, "true or false")) return false;
    out = v->asBool();
    return true;
}

const Value* ObjectReader::readObject(std::string_view key) {
    const Value* v = get(key);
    if (!v) return nullptr;
    return reader_.expect(*v, {Value::Type::Object}, "an object") ? v : nullptr;
}

const Value* ObjectReader::readArray(std::string_view key) {
    const Value* v = get(key);
    if (!v) return nullptr;
    return reader_.expect(*v, {Value::Type::Array}, "an array") ? v : nullptr;
}

}  // namespace ratelab::json
