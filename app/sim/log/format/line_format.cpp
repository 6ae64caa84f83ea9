#include "sim/log/format/line_format.h"

#include <array>
#include <memory>

#include "sim/log/format/format_internal.h"

namespace ratelab::sim {

using namespace format;

namespace {

constexpr std::array<std::pair<LogFormat, std::string_view>, 6> kFormatNames = {{
    {LogFormat::Combined, "combined"},
    {LogFormat::Common, "common"},
    {LogFormat::Csv, "csv"},
    {LogFormat::Nginx, "nginx"},
    {LogFormat::Caddy, "caddy"},
    {LogFormat::Json, "json"},
}};

}  // namespace

std::string_view logFormatName(LogFormat format) {
    for (const auto& [f, name] : kFormatNames) {
        if (f == format) return name;
    }
    return "";
}

std::optional<LogFormat> parseLogFormat(std::string_view name) {
    for (const auto& [f, n] : kFormatNames) {
        if (n == name) return f;
    }
    return std::nullopt;
}

std::string logFormatNames() {
    std::string out;
    for (std::size_t i = 0; i < kFormatNames.size(); ++i) {
        if (i > 0) out += i + 1 == kFormatNames.size() ? " or " : ", ";
        out += kFormatNames[i].second;
    }
    return out;
}

std::vector<LogFormat> allLogFormats() {
    std::vector<LogFormat> out;
    for (const auto& entry : kFormatNames) out.push_back(entry.first);
    return out;
}

std::optional<std::pair<std::string, std::string>> parseJsonField(std::string_view text) {
    const std::size_t eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0) return std::nullopt;
    return std::pair<std::string, std::string>(text.substr(0, eq), text.substr(eq + 1));
}

LogLineParser::LogLineParser() : program_(std::make_unique<Program>()) {}
LogLineParser::LogLineParser(LogLineParser&&) noexcept = default;
LogLineParser& LogLineParser::operator=(LogLineParser&&) noexcept = default;
LogLineParser::~LogLineParser() = default;

std::optional<LogLineParser> LogLineParser::make(const LogFormatOptions& options,
                                                 std::string& error) {
    LogLineParser parser;
    parser.options_ = options;
    Program& p = *parser.program_;
    if (options.format != LogFormat::Nginx && !options.nginxFormat.empty()) {
        error = "--log-format is for --format nginx";
        return std::nullopt;
    }
    if (options.format != LogFormat::Json && !options.jsonFields.empty()) {
        error = "--field is for --format json";
        return std::nullopt;
    }
    switch (options.format) {
        case LogFormat::Combined:
        case LogFormat::Common:
        case LogFormat::Csv:
            break;
        case LogFormat::Nginx:
            if (options.nginxFormat.empty()) {
                error = "--format nginx needs --log-format 'STRING' (the server's log_format)";
                return std::nullopt;
            }
            if (!compileNginx(options.nginxFormat, p.nginx, error)) return std::nullopt;
            break;
        case LogFormat::Caddy:
            p.caddy = true;
            p.paths.add("ts", kJsonTime);
            p.paths.add("request.remote_ip", kJsonClient);
            p.paths.add("request.remote_addr", kJsonClientWithPort);
            p.paths.add("request.method", kJsonMethod);
            p.paths.add("request.uri", kJsonPath);
            p.paths.add("request.headers", kJsonHeaders, true);
            p.paths.add("status", kJsonStatus);
            break;
        case LogFormat::Json: {
            bool client = false, time = false;
            for (const auto& [role, path] : options.jsonFields) {
                int r = -1;
                if (role == "client") r = kJsonClient, client = true;
                if (role == "time") r = kJsonTime, time = true;
                if (role == "method") r = kJsonMethod;
                if (role == "path") r = kJsonPath;
                if (role == "status") r = kJsonStatus;
                if (role.starts_with("header:") && role.size() > 7) {
                    r = kJsonHeader + static_cast<int>(p.jsonHeaders.size());
                    p.jsonHeaders.push_back(role.substr(7));
                }
                if (r < 0) {
                    error = "--field " + role + "=" + path +
                            ": the field is one of client, time, method, path, status, "
                            "header:NAME";
                    return std::nullopt;
                }
                if (!p.paths.add(path, r)) {
                    error = "--field " + role + "=" + path +
                            ": the path is keys joined by dots, e.g. request.remote_ip";
                    return std::nullopt;
                }
            }
            if (!client || !time) {
                error = std::string("--format json needs --field ") +
                        (client ? "time=PATH" : "client=PATH") +
                        " (and --field client=PATH --field time=PATH in all)";
                return std::nullopt;
            }
            break;
        }
    }
    return parser;
}

void LogLineParser::startFile() {
    program_->atFileStart = true;
}

std::string LogLineParser::describe() const {
    std::string out(logFormatName(options_.format));
    if (options_.format == LogFormat::Nginx) out += " '" + options_.nginxFormat + "'";
    for (const auto& [role, path] : options_.jsonFields)
        out += " " + role + "=" + path;
    return out;
}

LineStatus LogLineParser::parse(std::string_view line, LogRecord& out, LineProblem& problem) {
    Program& p = *program_;
    out.epochMicros = 0;
    out.client = {};
    out.address.reset();
    out.method = "GET";
    out.path = "/";
    out.status = 0;
    out.headers.clear();
    p.scratch.clear();
    p.scratch.reserve(line.size());
    if (line.find_first_not_of(" \t") == std::string_view::npos) return LineStatus::Skipped;
    switch (options_.format) {
        case LogFormat::Combined:
        case LogFormat::Common:
            return parseClfLine(line, options_.format == LogFormat::Combined, out, problem,
                                p.scratch);
        case LogFormat::Csv:
            return parseCsvLine(line, p, out, problem);
        case LogFormat::Nginx:
            return parseNginxLine(line, p, out, problem);
        case LogFormat::Caddy:
        case LogFormat::Json:
            return parseJsonLine(line, p, out, problem);
    }
    return LineStatus::Unparsed;
}

DetectedFormat detectLogFormat(const std::vector<std::string_view>& firstLines) {
    std::vector<std::string_view> lines;
    for (std::string_view l : firstLines) {
        if (l.find_first_not_of(" \t\r") != std::string_view::npos) lines.push_back(l);
        if (lines.size() == 10) break;
    }
    DetectedFormat out;
    if (lines.empty()) {
        out.explanation = "the log has no lines to tell its format by";
        return out;
    }
    const bool json = lines.front().find_first_not_of(" \t") != std::string_view::npos &&
                      lines.front()[lines.front().find_first_not_of(" \t")] == '{';
    std::vector<LogFormatOptions> candidates;
    if (json) {
        candidates.push_back({LogFormat::Caddy, {}, {}});
    } else {
        candidates.push_back({LogFormat::Csv, {}, {}});
        candidates.push_back({LogFormat::Nginx, std::string(kNginxMainFormat), {}});
        candidates.push_back({LogFormat::Combined, {}, {}});
        candidates.push_back({LogFormat::Common, {}, {}});
    }
    // The richest format (CSV, nginx's main, combined, common) that reads at least half of the
    // lines cleanly: a truncated user agent on one line keeps a log combined.
    const std::size_t n = lines.size();
    std::size_t best = candidates.size(), bestOk = 0;
    for (std::size_t i = 0; i < candidates.size() && best == candidates.size(); ++i) {
        std::string error;
        std::optional<LogLineParser> parser = LogLineParser::make(candidates[i], error);
        std::size_t ok = 0;
        LogRecord record;
        LineProblem problem;
        for (std::string_view l : lines) {
            const LineStatus s = parser->parse(l, record, problem);
            if (s == LineStatus::Ok || s == LineStatus::Skipped) ++ok;
        }
        if (ok * 2 >= n && ok > 0) {
            best = i;
            bestOk = ok;
        }
    }
    if (best == candidates.size()) {
        out.explanation =
            json ? "the log is JSON lines but not Caddy's access log; give --format json "
                   "--field client=PATH --field time=PATH (paths as keys joined by dots)"
                 : "cannot tell the format from the first lines (none reads at least half of "
                   "them); give --format " +
                       logFormatNames();
        return out;
    }
    out.options = candidates[best];
    out.explanation = std::string(logFormatName(candidates[best].format)) +
                      (candidates[best].format == LogFormat::Nginx
                           ? " (nginx's main log_format with $http_x_forwarded_for)"
                           : "") +
                      ", detected: " + std::to_string(bestOk) + " of the first " +
                      std::to_string(n) + " lines read cleanly";
    return out;
}

}  // namespace ratelab::sim
