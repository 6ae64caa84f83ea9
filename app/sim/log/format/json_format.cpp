// JSON-lines access logs (Caddy's, or any with --field paths): the values the paths name, into
// one record.

#include "sim/log/format/format_internal.h"

namespace ratelab::sim::format {

namespace {

// Collects the JSON values of one line into a LogRecord.
class JsonRecordVisitor final : public JsonVisitor {
public:
    JsonRecordVisitor(LogLineParser::Program& p, LogRecord& out) : p_(p), out_(out) {}

    void value(const JsonValue& v) override {
        switch (v.role) {
            case kJsonClient:
                if (v.isString && !client_.data()) client_ = v.text;
                break;
            case kJsonClientWithPort:
                if (v.isString && !clientWithPort_.data()) clientWithPort_ = v.text;
                break;
            case kJsonTime:
                if (!time_.data()) time_ = v.text;
                break;
            case kJsonMethod:
                if (v.isString && !v.text.empty()) out_.method = v.text;
                break;
            case kJsonPath:
                if (v.isString && !targetPath(v.text, out_.path)) badPath_ = true;
                break;
            case kJsonStatus:
                if (!readStatus(v.text, out_)) badStatus_ = true;
                break;
            case kJsonHeaders:
                // Caddy writes credentials as "REDACTED" unless told to log them: no header.
                if (v.isString && !(p_.caddy && v.text == "REDACTED")) {
                    addHeader(v.member, v.text, out_);
                }
                break;
            default:
                if (v.isString && v.role >= kJsonHeader &&
                    static_cast<std::size_t>(v.role - kJsonHeader) < p_.jsonHeaders.size()) {
                    addHeader(p_.jsonHeaders[static_cast<std::size_t>(v.role - kJsonHeader)],
                              v.text, out_);
                }
                break;
        }
    }

    std::string_view client_, clientWithPort_, time_;
    bool badPath_ = false, badStatus_ = false;

private:
    LogLineParser::Program& p_;
    LogRecord& out_;
};

}  // namespace

LineStatus parseJsonLine(std::string_view line, LogLineParser::Program& p, LogRecord& out,
                         LineProblem& problem) {
    JsonRecordVisitor v(p, out);
    std::size_t errorOffset = 0;
    std::string error;
    const bool ok = scanJsonLine(line, p.paths, v, p.scratch, errorOffset, error);
    std::string_view client = v.client_;
    if (!client.data() && v.clientWithPort_.data()) client = v.clientWithPort_;
    const std::string_view what = p.caddy ? "request.remote_ip" : "client";
    if (!client.data() || !v.time_.data()) {
        problem.column = column(ok ? 0 : errorOffset);
        problem.message = ok ? "no " + std::string(!client.data() ? what : "time") + " field"
                             : "JSON " + error + " before the client and time were read";
        return LineStatus::Unparsed;
    }
    const auto offsetOf = [&](std::string_view text) -> std::size_t {
        const auto at = reinterpret_cast<std::uintptr_t>(text.data());
        const auto begin = reinterpret_cast<std::uintptr_t>(line.data());
        return at >= begin && at <= begin + line.size() ? at - begin : 0;
    };
    if (!readClient(client, offsetOf(client), out, problem)) return LineStatus::Unparsed;
    if (!readTime(v.time_, TimeSyntax::Any, offsetOf(v.time_), out, problem)) {
        return LineStatus::Unparsed;
    }
    if (!ok) return damaged(errorOffset, "JSON " + error, problem);
    if (v.badPath_) return damaged(0, "the path does not start with '/'", problem);
    if (v.badStatus_) return damaged(0, "the status is not a number", problem);
    return LineStatus::Ok;
}

}  // namespace ratelab::sim::format
