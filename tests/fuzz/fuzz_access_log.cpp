// Access logs: the same bytes, split into lines, read as every format (combined, common, csv,
// nginx with its `main` format, caddy, json with named fields), and the format guess over the
// first lines. Every line gets exactly one status; a parsed line has a client and a time, a
// problem carries a message and a column inside the line, and the views of a record point into
// the line or stay empty.

#include <vector>

#include "fuzz/fuzz_check.h"
#include "sim/log/format/line_format.h"

using namespace ratelab;

namespace {

constexpr const char* kHarness = "fuzz_access_log";

std::vector<sim::LogFormatOptions> everyFormat() {
    std::vector<sim::LogFormatOptions> formats;
    for (sim::LogFormat f : {sim::LogFormat::Combined, sim::LogFormat::Common, sim::LogFormat::Csv,
                             sim::LogFormat::Caddy}) {
        sim::LogFormatOptions o;
        o.format = f;
        formats.push_back(o);
    }
    sim::LogFormatOptions nginx;
    nginx.format = sim::LogFormat::Nginx;
    nginx.nginxFormat = std::string(sim::kNginxMainFormat);
    formats.push_back(nginx);
    sim::LogFormatOptions json;
    json.format = sim::LogFormat::Json;
    json.jsonFields = {{"client", "request.remote_ip"},
                       {"time", "ts"},
                       {"method", "request.method"},
                       {"path", "request.uri"},
                       {"status", "status"},
                       {"header:Authorization", "request.headers.Authorization"}};
    formats.push_back(json);
    return formats;
}

void checkLine(sim::LogLineParser& parser, std::string_view line) {
    sim::LogRecord record;
    sim::LineProblem problem;
    const sim::LineStatus status = parser.parse(line, record, problem);
    if (status == sim::LineStatus::Ok || status == sim::LineStatus::Damaged) {
        fuzz::require(!record.client.empty(), kHarness, "a request line without a client");
    }
    if (status == sim::LineStatus::Damaged || status == sim::LineStatus::Unparsed) {
        fuzz::require(!problem.message.empty(), kHarness, "a line problem without a message");
        fuzz::require(problem.column >= 1 &&
                          static_cast<std::size_t>(problem.column) <= line.size() + 1,
                      kHarness, "a line problem's column outside the line");
    }
    for (const Header& h : record.headers) {
        if (h.name.empty()) {
            fuzz::fail(kHarness, "a recorded header without a name, format " +
                                     parser.describe() +
                                     ", line: " + std::string(line));
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
    const std::string_view text = fuzz::text(data, size);
    std::vector<std::string_view> lines;
    for (std::size_t start = 0; start <= text.size() && lines.size() < 256;) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    std::vector<std::string_view> first;
    for (std::string_view l : lines) {
        if (first.size() == 10) break;
        if (!l.empty()) first.push_back(l);
    }
    const sim::DetectedFormat detected = sim::detectLogFormat(first);
    fuzz::require(detected.options.has_value() || !detected.explanation.empty(), kHarness,
                  "no format detected and no reason given");

    static std::vector<sim::LogFormatOptions> formats = everyFormat();
    for (const sim::LogFormatOptions& options : formats) {
        std::string error;
        std::optional<sim::LogLineParser> parser = sim::LogLineParser::make(options, error);
        fuzz::require(parser.has_value(), kHarness, "a shipped format does not compile");
        for (std::string_view line : lines)
            checkLine(*parser, line);
    }
    if (detected.options) {
        std::string error;
        std::optional<sim::LogLineParser> parser = sim::LogLineParser::make(*detected.options, error);
        fuzz::require(parser.has_value(), kHarness, "a detected format does not compile");
        for (std::string_view line : lines)
            checkLine(*parser, line);
    }
    return 0;
}
