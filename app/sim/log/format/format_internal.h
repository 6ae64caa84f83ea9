#pragma once

// What the access-log formats share inside the parser (line_format.h is the interface): the
// field readers every format uses (fields.cpp), each family's line parser (clf_format.cpp,
// csv_format.cpp, nginx_format.cpp, json_format.cpp) and the state a parser keeps between lines.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/log/format/line_format.h"
#include "sim/log/format/json_scanner.h"
#include "sim/log/format/log_time.h"

namespace ratelab::sim::format {

// --- fields every format reads (fields.cpp) ------------------------------------------------

/// A 1-based column for a byte offset, clamped.
int column(std::size_t offset);
/// `s` cut to `n` bytes, control bytes as '?', for messages.
std::string clip(std::string_view s, std::size_t n = 60);
/// The client field: an address (a balancer may write "198.51.100.7:4711"), or a host name as
/// old traces have it. False with the problem set.
bool readClient(std::string_view text, std::size_t offset, LogRecord& out, LineProblem& problem);
/// A time in `syntax`; false with the problem set at `offset`.
bool readTime(std::string_view text, TimeSyntax syntax, std::size_t offset, LogRecord& out,
              LineProblem& problem);
/// A status (0 to 999) into out.status; false when `text` is not one.
bool readStatus(std::string_view text, LogRecord& out);
/// A request target to the path the engine matches: an absolute URI keeps its path, the query
/// and fragment go. False for a target that is not a path (a scanner's junk).
bool targetPath(std::string_view target, std::string_view& path);
/// "GET /a/b?x=1 HTTP/1.1": the method and the path. A request field that is "-" or not a
/// request line is kept as method "-" and path "/", so the line still counts as the request
/// the server saw.
void splitRequest(std::string_view request, LogRecord& out);
/// A logged header into out.headers, unless it is empty or "-" (not sent) or has no name (a
/// CSV column named only "http_", a JSON value under an empty key: no header).
void addHeader(std::string_view name, std::string_view value, LogRecord& out);
/// nginx writes '"', '\' and bytes outside printable ASCII as \xHH; Apache writes \" and \\.
/// Unescapes into `scratch` (reserved to the line's length) when `value` holds a backslash.
std::string_view unescapeLogText(std::string_view value, std::string& scratch);
/// A double-quoted field at s[pos] == '"' with backslash escapes; pos moves past the closing
/// quote. False when the field is cut off (pos at the end).
bool quoted(std::string_view s, std::size_t& pos, std::string_view& out);
/// Damaged, with the problem at `offset`.
LineStatus damaged(std::size_t offset, std::string message, LineProblem& problem);

// --- what each family's parser keeps ------------------------------------------------------------

enum class CsvRole : std::uint8_t { Ignore, TsMs, Time, Client, Method, Path, Status, Header };

struct CsvColumn {
    CsvRole role = CsvRole::Ignore;
    std::string header;  // Header: the header's name
};
/// The bare `ts_ms,client[,path[,method]]` columns of a CSV without a header.
std::vector<CsvColumn> legacyCsvColumns();

enum class NginxVar : std::uint8_t {
    Other,  // logged but not needed
    RemoteAddr,
    TimeLocal,
    TimeIso8601,
    Msec,
    Request,
    RequestMethod,
    RequestUri,
    Status,
    Header,
};

struct NginxItem {
    bool literal = false;
    std::string text;  // literal text, or the variable's name
    NginxVar var = NginxVar::Other;
    std::string header;  // Header: the header's name, "x-forwarded-for"
};
/// Compiles an nginx `log_format` string; false with `error` for one that cannot be read.
bool compileNginx(std::string_view format, std::vector<NginxItem>& items, std::string& error);

enum JsonRole : int {
    kJsonClient,
    kJsonClientWithPort,  // Caddy before 2.5: request.remote_addr "198.51.100.7:4711"
    kJsonTime,
    kJsonMethod,
    kJsonPath,
    kJsonStatus,
    kJsonHeaders,  // an object of name: [values] (Caddy's request.headers)
    kJsonHeader,   // first of the named headers; role kJsonHeader + i is header i
};

}  // namespace ratelab::sim::format

namespace ratelab::sim {

struct LogLineParser::Program {
    std::string scratch;
    // nginx
    std::vector<format::NginxItem> nginx;
    // csv
    std::vector<format::CsvColumn> csv = format::legacyCsvColumns();
    bool atFileStart = true;
    // json
    JsonPaths paths;
    std::vector<std::string> jsonHeaders;  // names of kJsonHeader + i
    bool caddy = false;
};

}  // namespace ratelab::sim

namespace ratelab::sim::format {

// --- one line of each family ------------------------------------------------------------------

LineStatus parseClfLine(std::string_view line, bool combined, LogRecord& out, LineProblem& problem,
                        std::string& scratch);
LineStatus parseCsvLine(std::string_view line, LogLineParser::Program& p, LogRecord& out,
                        LineProblem& problem);
LineStatus parseNginxLine(std::string_view line, LogLineParser::Program& p, LogRecord& out,
                          LineProblem& problem);
LineStatus parseJsonLine(std::string_view line, LogLineParser::Program& p, LogRecord& out,
                         LineProblem& problem);

}  // namespace ratelab::sim::format
