#include "json/json_document.h"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>

#include "io/text_file.h"

namespace ratelab::json {

namespace {

// nlohmann's lexer pulls characters through an iterator. This one publishes how far the lexer
// has read, which the tree builder turns into the start position of each token.
struct TrackingIterator {
    using iterator_category = std::forward_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;

    const char* p = nullptr;
    const char** cursor = nullptr;

    reference operator*() const { return *p; }
    TrackingIterator& operator++() {
        ++p;
        *cursor = p;
        return *this;
    }
    TrackingIterator operator++(int) {
        TrackingIterator before = *this;
        ++*this;
        return before;
    }
    bool operator==(const TrackingIterator& other) const { return p == other.p; }
};

// Makes bytes safe to quote in a message: printable ASCII stays, the rest becomes \xNN.
std::string printable(std::string_view bytes) {
    std::string out;
    for (unsigned char c : bytes) {
        if (c >= 0x20 && c < 0x7f) {
            out.push_back(static_cast<char>(c));
        } else {
            char buffer[8];
            std::snprintf(buffer, sizeof buffer, "\\x%02x", c);
            out += buffer;
        }
    }
    return out;
}

// Turns byte offsets into line and column. Offsets only move forward while parsing, so each
// byte is counted once.
class LineCounter {
public:
    explicit LineCounter(std::string_view text) : text_(text) {}

    Position at(std::size_t offset) {
        if (offset < offset_) {  // never expected; stay correct anyway
            offset_ = 0;
            position_ = {1, 1};
        }
        offset = std::min(offset, text_.size());
        for (; offset_ < offset; ++offset_) {
            unsigned char c = static_cast<unsigned char>(text_[offset_]);
            if (c == '\n') {
                ++position_.line;
                position_.column = 1;
            } else if ((c & 0xC0) != 0x80) {  // count code points, not continuation bytes
                ++position_.column;
            }
        }
        return position_;
    }

private:
    std::string_view text_;
    std::size_t offset_ = 0;
    Position position_{1, 1};
};

}  // namespace

double Value::asDouble() const {
    switch (type_) {
        case Type::Integer:
            return static_cast<double>(int_);
        case Type::Unsigned:
            return static_cast<double>(uint_);
        default:
            return double_;
    }
}

const Member* Value::findMember(std::string_view key) const {
    for (const Member& member : members_) {
        if (member.key == key) return &member;
    }
    return nullptr;
}

const Value* Value::find(std::string_view key) const {
    const Member* member = findMember(key);
    return member ? member->value.get() : nullptr;
}

std::string_view Value::typeName(Type type) {
    switch (type) {
        case Type::Null:
            return "null";
        case Type::Bool:
            return "a boolean";
        case Type::Integer:
        case Type::Unsigned:
            return "an integer";
        case Type::Double:
            return "a number";
        case Type::String:
            return "a string";
        case Type::Array:
            return "an array";
        case Type::Object:
            return "an object";
    }
    return "a value";
}

std::string appendPointer(std::string_view pointer, std::string_view token) {
    std::string out(pointer);
    out.push_back('/');
    for (char c : token) {
        if (c == '~') {
            out += "~0";
        } else if (c == '/') {
            out += "~1";
        } else {
            out.push_back(c);
        }
    }
    return out;
}

Position positionOf(std::string_view text, std::size_t offset) {
    return LineCounter(text).at(offset);
}

// Builds the tree from nlohmann's SAX events.
class TreeBuilder {
public:
    TreeBuilder(std::string_view text, std::string_view fileName, const Limits& limits,
                Document& document)
        : text_(text), fileName_(fileName), limits_(limits), document_(document), lines_(text) {}

    const char** cursor() { return &cursor_; }

    bool null() { return scalar(Value::Type::Null); }
    bool boolean(bool value) {
        Value* v = scalar(Value::Type::Bool);
        if (v) v->bool_ = value;
        return true;
    }
    bool number_integer(std::int64_t value) {
        Value* v = scalar(Value::Type::Integer);
        if (v) v->int_ = value;
        return true;
    }
    bool number_unsigned(std::uint64_t value) {
        // Values that fit an int64 are plain integers; larger ones keep their own type.
        if (value <= static_cast<std::uint64_t>(INT64_MAX)) {
            return number_integer(static_cast<std::int64_t>(value));
        }
        Value* v = scalar(Value::Type::Unsigned);
        if (v) v->uint_ = value;
        return true;
    }
    bool number_float(double value, const std::string&) {
        Value* v = scalar(Value::Type::Double);
        if (v) v->double_ = value;
        return true;
    }
    bool string(std::string& value) {
        Position at = tokenStart();
        Value* v = scalar(Value::Type::String, at);
        if (!v) return true;
        if (value.size() > limits_.maxStringBytes) {
            error(at, v->pointer_,
                  "string of " + std::to_string(value.size()) + " bytes is longer than the " +
                      std::to_string(limits_.maxStringBytes / 1024) + " KiB limit");
        } else {
            v->string_ = std::move(value);
        }
        return true;
    }
    bool binary(nlohmann::json::binary_t&) { return false; }  // JSON text has no binary values

    bool start_object(std::size_t) { return open(Value::Type::Object); }
    bool start_array(std::size_t) { return open(Value::Type::Array); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }

    bool key(std::string& key) {
        Position at = tokenStart();
        markConsumed();
        Frame& frame = stack_.back();
        if (key.size() > limits_.maxStringBytes) {
            error(at, frame.value->pointer_,
                  "key of " + std::to_string(key.size()) + " bytes is longer than the " +
                      std::to_string(limits_.maxStringBytes / 1024) + " KiB limit");
            key.resize(64);
        }
        frame.duplicate = false;
        if (const Member* first = frame.value->findMember(key)) {
            frame.duplicate = true;
            error(at, appendPointer(frame.value->pointer_, key),
                  "duplicate key \"" + printable(key) + "\" (first at line " +
                      std::to_string(first->keyPosition.line) + ", column " +
                      std::to_string(first->keyPosition.column) + ")");
        }
        frame.key = std::move(key);
        frame.keyPosition = at;
        return true;
    }

    bool parse_error(std::size_t position, const std::string& lastToken,
                     const nlohmann::detail::exception& ex) {
        // nlohmann counts the characters read, including the offending one: point at it.
        std::size_t offset = position > 0 ? position - 1 : 0;
        if (position >= text_.size() && lastToken.size() <= 1) offset = text_.size();
        std::string message = ex.what();
        // Drop "[json.exception.parse_error.101] parse error at line L, column C: ".
        if (auto at = message.find("column "); at != std::string::npos) {
            if (auto colon = message.find(": ", at); colon != std::string::npos) {
                message = message.substr(colon + 2);
            }
        }
        // Other exceptions (number overflow) carry only the "[json.exception...] " tag.
        if (message.rfind("[json.exception.", 0) == 0) {
            if (auto close = message.find("] "); close != std::string::npos) {
                message = message.substr(close + 2);
            }
        }
        message = printable(message);
        error(lines_.at(offset), currentPointer(), message);
        return false;
    }

    std::unique_ptr<Value> takeRoot() { return std::move(root_); }

private:
    struct Frame {
        Value* value = nullptr;
        std::string key;
        Position keyPosition;
        bool duplicate = false;
    };

    // Where the token being reported starts: after the previous event, skipping whitespace and
    // the separators the lexer consumed on the way.
    Position tokenStart() {
        std::size_t offset = scanFrom_;
        while (offset < text_.size()) {
            char c = text_[offset];
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',' || c == ':' ||
                c == ']' || c == '}') {
                ++offset;
            } else {
                break;
            }
        }
        // Skip a UTF-8 byte order mark at the very start (nlohmann does too).
        if (offset == 0 && text_.substr(0, 3) == "\xEF\xBB\xBF") offset = 3;
        return lines_.at(offset);
    }

    void markConsumed() { scanFrom_ = static_cast<std::size_t>(cursor_ - text_.data()); }

    std::string currentPointer() const {
        if (stack_.empty()) return "";
        const Frame& frame = stack_.back();
        if (frame.value->type_ == Value::Type::Array) {
            return appendPointer(frame.value->pointer_, std::to_string(frame.value->items_.size()));
        }
        return frame.key.empty() ? frame.value->pointer_
                                 : appendPointer(frame.value->pointer_, frame.key);
    }

    // Creates a value at the current place in the tree and returns it.
    Value* place(Value::Type type, Position at) {
        auto value = std::make_unique<Value>();
        value->type_ = type;
        value->position_ = at;
        value->pointer_ = currentPointer();
        Value* raw = value.get();
        if (stack_.empty()) {
            root_ = std::move(value);
        } else {
            Frame& frame = stack_.back();
            if (frame.value->type_ == Value::Type::Array) {
                frame.value->items_.push_back(std::move(value));
            } else if (frame.duplicate) {
                discarded_.push_back(std::move(value));  // the first occurrence wins
            } else {
                frame.value->members_.push_back(
                    Member{frame.key, frame.keyPosition, std::move(value)});
            }
        }
        return raw;
    }

    Value* scalar(Value::Type type) { return scalar(type, tokenStart()); }
    Value* scalar(Value::Type type, Position at) {
        Value* v = place(type, at);
        markConsumed();
        return v;
    }

    bool open(Value::Type type) {
        Position at = tokenStart();
        if (static_cast<int>(stack_.size()) >= limits_.maxDepth) {
            error(at, currentPointer(),
                  "nesting deeper than " + std::to_string(limits_.maxDepth) + " levels");
            return false;  // stops the parse: deeper input is never examined
        }
        Value* v = place(type, at);
        markConsumed();
        stack_.push_back(Frame{v, {}, {}, false});
        return true;
    }

    bool close() {
        markConsumed();
        stack_.pop_back();
        return true;
    }

    void error(Position at, std::string pointer, std::string message) {
        document_.diagnostics.push_back(Diagnostic{Diagnostic::Severity::Error,
                                                   std::string(fileName_), at.line, at.column,
                                                   std::move(pointer), std::move(message)});
    }

    std::string_view text_;
    std::string_view fileName_;
    const Limits& limits_;
    Document& document_;
    LineCounter lines_;
    const char* cursor_ = nullptr;
    std::size_t scanFrom_ = 0;
    std::vector<Frame> stack_;
    std::unique_ptr<Value> root_;
    std::vector<std::unique_ptr<Value>> discarded_;
};

Document parse(std::string_view text, std::string_view fileName, const Limits& limits) {
    Document document;
    if (text.size() > limits.maxDocumentBytes) {
        document.diagnostics.push_back(
            Diagnostic{Diagnostic::Severity::Error, std::string(fileName), 1, 1, "",
                       "input of " + std::to_string(text.size()) + " bytes is larger than the " +
                           std::to_string(limits.maxDocumentBytes >> 20) + " MiB limit"});
        return document;
    }
    TreeBuilder builder(text, fileName, limits, document);
    *builder.cursor() = text.data();
    TrackingIterator first{text.data(), builder.cursor()};
    TrackingIterator last{text.data() + text.size(), builder.cursor()};
    bool ok = nlohmann::json::sax_parse(first, last, &builder, nlohmann::json::input_format_t::json,
                                        /*strict=*/true, /*ignore_comments=*/false);
    if (ok) document.root = builder.takeRoot();
    return document;
}

Document parseFile(const std::string& path, const Limits& limits) {
    std::string error;
    io::FilePtr file = io::openForReading(path, &error);
    std::optional<std::string> text;
    if (file) text = io::readAll(file.get(), limits.maxDocumentBytes, &error);
    if (!text) {
        // An oversized file is pinned to its start, like oversized text; an unreadable one has
        // no position.
        const int at = file ? 1 : 0;
        Document document;
        document.diagnostics.push_back(
            Diagnostic{Diagnostic::Severity::Error, path, at, at, "", std::move(error)});
        document.unreadable = !file;
        return document;
    }
    return parse(*text, path, limits);
}

}  // namespace ratelab::json
