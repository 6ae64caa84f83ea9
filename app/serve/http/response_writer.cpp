#include "serve/http/response_writer.h"

#include <charconv>
#include <cstring>
#include <ctime>

#include "json/json_text.h"
#include "serve/http/request_parser.h"

namespace ratelab::serve {

namespace {

void appendNumber(std::string& out, long long value) {
    char buffer[24];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    out.append(buffer, end);
}

}  // namespace

void Response::start(int status) {
    status_ = status;
    started_ = true;
    out_ += "HTTP/1.1 ";
    appendNumber(out_, status);
    out_ += ' ';
    out_ += reasonPhrase(status);
    out_ += "\r\n";
}

void Response::header(std::string_view name, std::string_view value) {
    out_ += name;
    out_ += ": ";
    const std::size_t at = out_.size();
    out_ += value;
    for (std::size_t i = at; i < out_.size(); ++i) {
        if (out_[i] == '\r' || out_[i] == '\n') out_[i] = ' ';
    }
    out_ += "\r\n";
}

void Response::finish(std::string_view contentType, std::string_view body) {
    finished_ = true;
    if (!contentType.empty()) {
        out_ += "Content-Type: ";
        out_ += contentType;
        out_ += "\r\n";
    }
    out_ += "Content-Length: ";
    appendNumber(out_, static_cast<long long>(body.size()));
    out_ += "\r\nDate: ";
    out_ += framing_.date;
    if (!framing_.keepAlive) {
        out_ += "\r\nConnection: close";
    } else if (framing_.http10KeepAlive) {
        out_ += "\r\nConnection: keep-alive";
    }
    out_ += "\r\n\r\n";
    if (!framing_.omitBody) out_ += body;
}

void writeServerError(std::string& out, int status, std::string_view detail,
                      std::string_view date) {
    std::string body = "{\"type\":\"about:blank\",\"title\":\"";
    body += reasonPhrase(status);
    body += "\",\"status\":";
    appendNumber(body, status);
    body += ",\"detail\":";
    json::appendJsonString(body, detail);
    body += "}";
    const ResponseFraming framing{false, false, false, date};
    Response response(out, framing);
    response.start(status);
    response.finish("application/problem+json", body);
}

void formatHttpDate(long long unixSeconds, char (&out)[29]) {
    static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    const std::time_t t = static_cast<std::time_t>(unixSeconds);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buffer[64];
    const int n = std::snprintf(buffer, sizeof buffer, "%s, %02d %s %04d %02d:%02d:%02d GMT",
                                kDays[tm.tm_wday], tm.tm_mday, kMonths[tm.tm_mon],
                                tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
    std::memset(out, ' ', sizeof out);
    std::memcpy(out, buffer, static_cast<std::size_t>(n > 29 ? 29 : n));
}

}  // namespace ratelab::serve
