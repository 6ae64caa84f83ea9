#include "serve/admin/service_log.h"

#include <cstdio>

#include "json/json_text.h"
#include "observers/log_line.h"

namespace ratelab::serve {

LogLine::LogLine(std::string_view level, std::string_view event)
    : line_(observers::lineStart(observers::wallClockNow(), level, event)) {}

LogLine& LogLine::field(std::string_view name, std::string_view value) {
    line_ += ',';
    json::appendJsonString(line_, name);
    line_ += ':';
    json::appendJsonString(line_, value);
    return *this;
}

LogLine& LogLine::field(std::string_view name, std::int64_t value) {
    line_ += ',';
    json::appendJsonString(line_, name);
    line_ += ':';
    json::appendInt(line_, value);
    return *this;
}

LogLine& LogLine::flag(std::string_view name, bool value) {
    line_ += ',';
    json::appendJsonString(line_, name);
    line_ += value ? ":true" : ":false";
    return *this;
}

ServiceLog::ServiceLog(Sink sink) : sink_(std::move(sink)) {
    if (!sink_) {
        sink_ = [](std::string_view line) {
            std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
            std::fflush(stderr);
        };
    }
}

void ServiceLog::write(const LogLine& line) {
    writeText(line.text());
}

void ServiceLog::writeText(std::string_view line) {
    std::lock_guard<std::mutex> lock(mutex_);
    sink_(line);
}

}  // namespace ratelab::serve
