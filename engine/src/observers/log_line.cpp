#include "observers/log_line.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "json/json_text.h"

namespace ratelab::observers {

Nanos wallClockNow() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

void appendRfc3339(std::string& out, Nanos unixNanos) {
    Nanos seconds = unixNanos / kNanosPerSecond;
    Nanos rest = unixNanos % kNanosPerSecond;
    if (rest < 0) {
        rest += kNanosPerSecond;
        --seconds;
    }
    const std::time_t t = static_cast<std::time_t>(seconds);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buffer[40];
    const int n = std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                                tm.tm_sec, static_cast<int>(rest / kNanosPerMilli));
    out.append(buffer, static_cast<std::size_t>(n));
}

std::string lineStart(Nanos unixNanos, std::string_view level, std::string_view event) {
    std::string line = "{\"time\":\"";
    appendRfc3339(line, unixNanos);
    line += "\",\"level\":";
    json::appendJsonString(line, level);
    line += ",\"event\":";
    json::appendJsonString(line, event);
    return line;
}

}  // namespace ratelab::observers
