#pragma once

// Writing the Prometheus text exposition (format 0.0.4): a family's HELP and TYPE lines, then its
// samples, `name{k1="v1",k2="v2"} value`. Numbers are written whatever the locale.

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "ratelab/limit.h"

namespace ratelab::serve::prometheus {

inline void appendNumber(std::string& out, std::int64_t value) {
    char buffer[24];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    out.append(buffer, end);
}

/// Shortest text that reads back as the same double.
inline void appendDouble(std::string& out, double value) {
    char buffer[32];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    out.append(buffer, end);
}

inline void appendLabelValue(std::string& out, std::string_view value) {
    out += '"';
    for (char c : value) {
        if (c == '\\' || c == '"') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    out += '"';
}

inline void family(std::string& out, std::string_view name, std::string_view type,
                   std::string_view help) {
    out += "# HELP ";
    out += name;
    out += ' ';
    out += help;
    out += "\n# TYPE ";
    out += name;
    out += ' ';
    out += type;
    out += '\n';
}

/// One sample line: Sample(out, "name").label("k", "v").value(1).
class Sample {
public:
    Sample(std::string& out, std::string_view name) : out_(out) { out_ += name; }
    Sample& label(std::string_view key, std::string_view value) {
        out_ += labels_ == 0 ? '{' : ',';
        ++labels_;
        out_ += key;
        out_ += '=';
        appendLabelValue(out_, value);
        return *this;
    }
    void value(std::int64_t v) {
        close();
        appendNumber(out_, v);
        out_ += '\n';
    }
    void value(double v) {
        close();
        appendDouble(out_, v);
        out_ += '\n';
    }

private:
    void close() {
        if (labels_ > 0) out_ += '}';
        out_ += ' ';
    }
    std::string& out_;
    int labels_ = 0;
};

inline double seconds(Nanos n) {
    return static_cast<double>(n) / static_cast<double>(kNanosPerSecond);
}

}  // namespace ratelab::serve::prometheus
