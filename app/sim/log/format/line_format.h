#pragma once

// Access-log line formats: what one line of a log says about the request it records.
//
// Formats: `combined` and `common` (nginx and Apache), `csv` (a header naming its columns, or
// the bare `ts_ms,client[,path[,method]]`), `nginx` with the server's own `log_format` string,
// `caddy` (Caddy's JSON access log) and `json` (any JSON-lines log, its fields named by path).
//
// A line whose client and time are readable but whose later fields are damaged (a cut-off
// quote, a truncated user agent) is Damaged: replayed, with a warning. Only a line without a
// readable client or time is Unparsed.
//
// Entry point for one line of one format (what a fuzzer drives):
//     std::optional<LogLineParser> p = LogLineParser::make(options, error);
//     LogRecord record;
//     LineProblem problem;
//     LineStatus s = p->parse(line, record, problem);   // never throws, any bytes
// A parser is stateful only for CSV (a header line names the columns of the lines after it);
// startFile() forgets the header between files.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ratelab/ip_address.h"
#include "ratelab/request.h"
#include "sim/log/format/log_time.h"

namespace ratelab::sim {

enum class LogFormat : std::uint8_t { Combined, Common, Csv, Nginx, Caddy, Json };

/// "combined", "common", "csv", "nginx", "caddy", "json".
std::string_view logFormatName(LogFormat format);
std::optional<LogFormat> parseLogFormat(std::string_view name);
/// "combined, common, csv, nginx, caddy or json", for messages.
std::string logFormatNames();
/// Every format, in that order (for a chooser).
std::vector<LogFormat> allLogFormats();
/// A json field as `--field` writes it, "ROLE=PATH" ("client=request.remote_ip"); nullopt
/// without an "=" after a non-empty role. The roles themselves are checked by
/// LogLineParser::make.
std::optional<std::pair<std::string, std::string>> parseJsonField(std::string_view text);

/// How to read lines: the format, and what `nginx` and `json` need.
struct LogFormatOptions {
    LogFormat format = LogFormat::Combined;
    /// nginx: the `log_format` string, e.g. "$remote_addr - $remote_user [$time_local] ...".
    std::string nginxFormat;
    /// json: ROLE=PATH pairs, ROLE one of client, time, method, path, status, header:NAME; PATH
    /// keys joined by dots ("request.remote_ip"). client and time are required.
    std::vector<std::pair<std::string, std::string>> jsonFields;
};

/// nginx's default `main` format with the forwarded-for field it appends behind a balancer.
inline constexpr std::string_view kNginxMainFormat =
    "$remote_addr - $remote_user [$time_local] \"$request\" $status $body_bytes_sent "
    "\"$http_referer\" \"$http_user_agent\" \"$http_x_forwarded_for\"";

/// One parsed line. Views point into the line or the parser; valid until the next parse().
struct LogRecord {
    std::int64_t epochMicros = 0;
    std::string_view client;           ///< the connecting address (or host name) as written
    std::optional<IpAddress> address;  ///< the client as an address; unset for a host name
    std::string_view method = "GET";   ///< "GET" when the log does not say
    std::string_view path = "/";       ///< without the query; "/" when the log does not say
    int status = 0;                    ///< 0 when not logged or unreadable
    /// The request headers the log recorded (X-Forwarded-For, Authorization, ...), names as
    /// the log writes them (the engine compares them case-insensitively). "-" values are absent.
    std::vector<Header> headers;
};

enum class LineStatus : std::uint8_t {
    Ok,
    Damaged,   ///< client and time read; a later field is damaged (see LineProblem)
    Unparsed,  ///< no readable client or time: not a request
    Skipped,   ///< not a request line: a CSV header, an empty line
};

/// Where and what: column is 1-based, in bytes.
struct LineProblem {
    int column = 1;
    std::string message;
};

/// Reads lines of one format. Not thread-safe; one per stream (or per fuzzer).
class LogLineParser {
public:
    /// Checks the options (an nginx format without $remote_addr, a json field without a path):
    /// nullopt with `error` set.
    static std::optional<LogLineParser> make(const LogFormatOptions& options, std::string& error);

    /// Parses one line (without its newline). Any bytes; never throws.
    LineStatus parse(std::string_view line, LogRecord& out, LineProblem& problem);
    /// A new file begins: a CSV header may follow.
    void startFile();
    const LogFormatOptions& options() const { return options_; }
    /// The format as a user would write it: "combined", "nginx '$remote_addr ...'".
    std::string describe() const;

    LogLineParser(LogLineParser&&) noexcept;
    LogLineParser& operator=(LogLineParser&&) noexcept;
    ~LogLineParser();

    struct Program;  // the compiled nginx format, CSV columns or JSON paths

private:
    LogLineParser();
    LogFormatOptions options_;
    std::unique_ptr<Program> program_;
};

/// What the first lines of a log look like: the chosen format and why, or why none fits.
struct DetectedFormat {
    std::optional<LogFormatOptions> options;
    std::string explanation;  ///< "combined: 10 of the first 10 lines parse" or the error
};

/// Tries the formats on the first non-empty lines (at most 10): Caddy and CSV by their shape,
/// then nginx's `main` format with the forwarded-for field, combined and common, keeping the
/// richest one that reads at least half of them cleanly. A JSON log that is not Caddy's needs
/// `--format json --field ...`, and says so.
DetectedFormat detectLogFormat(const std::vector<std::string_view>& firstLines);

}  // namespace ratelab::sim
