#pragma once

// The sidecar's own log lines (start, reload, drain, policy diagnostics), in the shape of the
// engine's log observer: JSON objects, one per line, starting with time, level and event.

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace ratelab::serve {

/// Builds one line: LogLine("info", "reloaded").field("generation", 2).text().
class LogLine {
public:
    LogLine(std::string_view level, std::string_view event);
    LogLine& field(std::string_view name, std::string_view value);
    LogLine& field(std::string_view name, const char* value) {
        return field(name, std::string_view(value));
    }
    LogLine& field(std::string_view name, std::int64_t value);
    /// A JSON true or false (a name of its own, as a bool would convert to either overload).
    LogLine& flag(std::string_view name, bool value);
    /// The line, without a newline.
    std::string text() const { return line_ + "}"; }

private:
    std::string line_;
};

/// Where lines go. Thread-safe: lines never interleave.
class ServiceLog {
public:
    using Sink = std::function<void(std::string_view line)>;
    /// Null sink: standard error.
    explicit ServiceLog(Sink sink = {});
    void write(const LogLine& line);
    /// Passes a line built elsewhere (the engine's log observer) through the same sink.
    void writeText(std::string_view line);

private:
    Sink sink_;
    std::mutex mutex_;
};

}  // namespace ratelab::serve
