#include "sim/log_format.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <memory>

#include "identity/forwarded.h"
#include "ratelab/ip_address.h"
#include "sim/log_json.h"

namespace ratelab::sim {

namespace {

constexpr std::array<std::pair<LogFormat, std::string_view>, 6> kFormatNames = {{
    {LogFormat::Combined, "combined"},
    {LogFormat::Common, "common"},
    {LogFormat::Csv, "csv"},
    {LogFormat::Nginx, "nginx"},
    {LogFormat::Caddy, "caddy"},
    {LogFormat::Json, "json"},
}};

bool isHostName(std::string_view s) {
    if (s.empty() || s.size() > 253) return false;
    for (char c : s) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '-' || c == '_';
        if (!ok) return false;
    }
    return true;
}

std::string clip(std::string_view s, std::size_t n = 60) {
    std::string out(s.substr(0, n));
    for (char& c : out) {
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) == 0x7f) c = '?';
    }
    if (s.size() > n) out += "...";
    return out;
}

int column(std::size_t offset) {
    return static_cast<int>(std::min<std::size_t>(offset, 1u << 30)) + 1;
}

// The client field: an address (a balancer may write "198.51.100.7:4711"), or a host name as
// old traces have it. False with the problem set.
bool readClient(std::string_view text, std::size_t offset, LogRecord& out, LineProblem& problem) {
    out.client = text;
    out.address = IpAddress::parse(text);
    if (!out.address) out.address = identity::parseForwardedNode(text);
    if (out.address || isHostName(text)) return true;
    problem.column = column(offset);
    problem.message = "client \"" + clip(text) + "\" is neither an IP address nor a host name";
    return false;
}

bool readTime(std::string_view text, TimeSyntax syntax, std::size_t offset, LogRecord& out,
              LineProblem& problem) {
    if (parseLogTime(text, syntax, out.epochMicros, problem.message)) return true;
    problem.column = column(offset);
    return false;
}

bool readStatus(std::string_view text, LogRecord& out) {
    int status = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), status);
    if (ec != std::errc() || end != text.data() + text.size() || status < 0 || status > 999) {
        return false;
    }
    out.status = status;
    return true;
}

// A request target to the path the engine matches: an absolute URI keeps its path, the query
// and fragment go. False for a target that is not a path (a scanner's junk).
bool targetPath(std::string_view target, std::string_view& path) {
    if (target.starts_with("http://") || target.starts_with("https://")) {
        const std::size_t slash = target.find('/', target.find("//") + 2);
        target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
    }
    if (target.empty() || target.front() != '/') return false;
    path = target.substr(0, target.find_first_of("?#"));
    return true;
}

// "GET /a/b?x=1 HTTP/1.1": the method and the path. A request field that is "-" or not a
// request line is kept as method "-" and path "/", so the line still counts as the request
// the server saw.
void splitRequest(std::string_view request, LogRecord& out) {
    out.method = "-";
    out.path = "/";
    const std::size_t space = request.find(' ');
    if (space == std::string_view::npos || space == 0) return;
    std::string_view target = request.substr(space + 1);
    target = target.substr(0, target.find(' '));
    std::string_view path;
    if (!targetPath(target, path)) return;
    out.method = request.substr(0, space);
    out.path = path;
}

void addHeader(std::string_view name, std::string_view value, LogRecord& out) {
    if (value.empty() || value == "-") return;
    out.headers.push_back(Header{name, value});
}

// nginx writes '"', '\' and bytes outside printable ASCII as \xHH; Apache writes \" and \\.
// Unescapes into `scratch` (reserved to the line's length) when `value` holds a backslash.
std::string_view unescapeLogText(std::string_view value, std::string& scratch) {
    if (value.find('\\') == std::string_view::npos) return value;
    const std::size_t from = scratch.size();
    for (std::size_t i = 0; i < value.size(); ++i) {
        const char c = value[i];
        if (c == '\\' && i + 3 < value.size() && value[i + 1] == 'x') {
            auto hex = [](char h) {
                return h >= '0' && h <= '9'   ? h - '0'
                       : h >= 'a' && h <= 'f' ? h - 'a' + 10
                       : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                              : -1;
            };
            const int hi = hex(value[i + 2]), lo = hex(value[i + 3]);
            if (hi >= 0 && lo >= 0) {
                scratch.push_back(static_cast<char>(hi * 16 + lo));
                i += 3;
                continue;
            }
        }
        if (c == '\\' && i + 1 < value.size() && (value[i + 1] == '"' || value[i + 1] == '\\')) {
            scratch.push_back(value[++i]);
            continue;
        }
        scratch.push_back(c);
    }
    return std::string_view(scratch.data() + from, scratch.size() - from);
}

// A double-quoted field at s[pos] == '"' with backslash escapes; pos moves past the closing
// quote. False when the field is cut off (pos at the end).
bool quoted(std::string_view s, std::size_t& pos, std::string_view& out) {
    const std::size_t start = ++pos;
    while (pos < s.size()) {
        if (s[pos] == '\\') {
            pos += 2;
            continue;
        }
        if (s[pos] == '"') {
            out = s.substr(start, pos - start);
            ++pos;
            return true;
        }
        ++pos;
    }
    out = s.substr(std::min(start, s.size()));
    pos = s.size();
    return false;
}

LineStatus damaged(std::size_t offset, std::string message, LineProblem& problem) {
    problem.column = column(offset);
    problem.message = std::move(message);
    return LineStatus::Damaged;
}

// --- combined and common -----------------------------------------------------------------

LineStatus parseClfLine(std::string_view line, bool combined, LogRecord& out, LineProblem& problem,
                        std::string& scratch) {
    std::size_t pos = line.find(' ');
    if (pos == std::string_view::npos || pos == 0) {
        problem.column = 1;
        problem.message = "no client field";
        return LineStatus::Unparsed;
    }
    if (!readClient(line.substr(0, pos), 0, out, problem)) return LineStatus::Unparsed;
    const std::size_t open = line.find('[', pos);
    const std::size_t close = open == std::string_view::npos ? open : line.find(']', open);
    if (close == std::string_view::npos) {
        problem.column = column(pos + 1);
        problem.message = "no [time] field";
        return LineStatus::Unparsed;
    }
    if (!readTime(line.substr(open + 1, close - open - 1), TimeSyntax::Clf, open + 1, out,
                  problem)) {
        return LineStatus::Unparsed;
    }
    // Client and time are read: from here on a bad field damages the line but keeps it.
    pos = close + 1;
    if (pos + 1 >= line.size() || line[pos] != ' ' || line[pos + 1] != '"') {
        return damaged(pos, "no \"request\" field after the time", problem);
    }
    ++pos;
    std::string_view request;
    const std::size_t requestAt = pos;
    const bool requestClosed = quoted(line, pos, request);
    splitRequest(unescapeLogText(request, scratch), out);
    if (!requestClosed) return damaged(requestAt, "the request field is cut off", problem);
    for (const char* what : {"status", "bytes"}) {
        if (pos >= line.size() || line[pos] != ' ') {
            return damaged(pos, std::string("no ") + what + " field", problem);
        }
        const std::size_t start = ++pos;
        while (pos < line.size() && line[pos] != ' ')
            ++pos;
        const std::string_view field = line.substr(start, pos - start);
        const bool number =
            field.find_first_not_of("0123456789") == std::string_view::npos && !field.empty();
        if (field != "-" && !number) {
            return damaged(start,
                           std::string(what) + " field \"" + clip(field) + "\" is not a number",
                           problem);
        }
        if (what[0] == 's' && number) readStatus(field, out);
    }
    if (!combined) return LineStatus::Ok;
    for (const char* what : {"referer", "user-agent"}) {
        if (pos + 1 >= line.size() || line[pos] != ' ' || line[pos + 1] != '"') {
            return damaged(pos, std::string("no quoted ") + what + " field (combined format)",
                           problem);
        }
        const std::size_t at = ++pos;
        std::string_view ignored;
        if (!quoted(line, pos, ignored)) {
            return damaged(at, std::string("the ") + what + " field is cut off", problem);
        }
    }
    return LineStatus::Ok;
}

// --- CSV ------------------------------------------------------------------------------------

enum class CsvRole : std::uint8_t { Ignore, TsMs, Time, Client, Method, Path, Status, Header };

struct CsvColumn {
    CsvRole role = CsvRole::Ignore;
    std::string header;  // Header: the header's name
};

std::vector<CsvColumn> legacyCsvColumns() {
    return {{CsvRole::TsMs, {}}, {CsvRole::Client, {}}, {CsvRole::Path, {}}, {CsvRole::Method, {}}};
}

CsvColumn csvColumnNamed(std::string_view name) {
    std::string n;
    for (char c : name)
        n.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c);
    auto header = [](std::string h) {
        std::replace(h.begin(), h.end(), '_', '-');
        return CsvColumn{CsvRole::Header, std::move(h)};
    };
    if (n == "ts_ms" || n == "epoch_ms") return {CsvRole::TsMs, {}};
    if (n == "ts" || n == "time" || n == "timestamp" || n == "time_iso8601" || n == "msec" ||
        n == "time_local")
        return {CsvRole::Time, {}};
    if (n == "client" || n == "key" || n == "remote_addr" || n == "ip" || n == "client_ip" ||
        n == "remote_ip")
        return {CsvRole::Client, {}};
    if (n == "method" || n == "request_method") return {CsvRole::Method, {}};
    if (n == "path" || n == "uri" || n == "request_uri") return {CsvRole::Path, {}};
    if (n == "status") return {CsvRole::Status, {}};
    if (n == "x_forwarded_for" || n == "x-forwarded-for" || n == "authorization" ||
        n == "forwarded" || n == "x-real-ip" || n == "x_real_ip")
        return header(n);
    if (n.starts_with("header:")) return header(n.substr(7));
    if (n.starts_with("http_")) return header(n.substr(5));
    return {};
}

// One CSV field at line[pos]; "quoted, fields" with "" escapes are unescaped into `scratch`
// (reserved to the line's length). pos moves past the comma (or past the end). False when a
// quoted field is not closed.
bool csvField(std::string_view line, std::size_t& pos, std::string& scratch,
              std::string_view& out) {
    if (pos < line.size() && line[pos] == '"') {
        const std::size_t from = scratch.size();
        ++pos;
        bool closed = false;
        while (pos < line.size()) {
            if (line[pos] == '"') {
                if (pos + 1 < line.size() && line[pos + 1] == '"') {
                    scratch.push_back('"');
                    pos += 2;
                    continue;
                }
                ++pos;
                closed = true;
                break;
            }
            scratch.push_back(line[pos++]);
        }
        out = std::string_view(scratch.data() + from, scratch.size() - from);
        pos = pos < line.size() && line[pos] == ',' ? pos + 1 : line.size() + 1;
        return closed;
    }
    const std::size_t comma = line.find(',', pos);
    out = line.substr(std::min(pos, line.size()),
                      comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    pos = comma == std::string_view::npos ? line.size() + 1 : comma + 1;
    return true;
}

bool isNumber(std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789.") == std::string_view::npos;
}

// --- nginx log_format -----------------------------------------------------------------------

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

NginxItem nginxVariable(std::string name) {
    NginxItem item;
    item.text = "$" + name;
    if (name == "remote_addr") item.var = NginxVar::RemoteAddr;
    if (name == "time_local") item.var = NginxVar::TimeLocal;
    if (name == "time_iso8601") item.var = NginxVar::TimeIso8601;
    if (name == "msec") item.var = NginxVar::Msec;
    if (name == "request") item.var = NginxVar::Request;
    if (name == "request_method") item.var = NginxVar::RequestMethod;
    if (name == "request_uri" || name == "uri") item.var = NginxVar::RequestUri;
    if (name == "status") item.var = NginxVar::Status;
    if (name.starts_with("http_") && name.size() > 5) {
        item.var = NginxVar::Header;
        item.header = name.substr(5);
        std::replace(item.header.begin(), item.header.end(), '_', '-');
    }
    return item;
}

bool compileNginx(std::string_view format, std::vector<NginxItem>& items, std::string& error) {
    auto isNameChar = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_';
    };
    std::size_t pos = 0;
    while (pos < format.size()) {
        if (format[pos] != '$') {
            const std::size_t next = format.find('$', pos);
            const std::size_t end = next == std::string_view::npos ? format.size() : next;
            NginxItem literal;
            literal.literal = true;
            literal.text = std::string(format.substr(pos, end - pos));
            items.push_back(std::move(literal));
            pos = end;
            continue;
        }
        std::string name;
        if (pos + 1 < format.size() && format[pos + 1] == '{') {
            const std::size_t close = format.find('}', pos + 2);
            if (close == std::string_view::npos) {
                error = "--log-format: \"${\" at character " + std::to_string(pos + 1) +
                        " is not closed";
                return false;
            }
            name = std::string(format.substr(pos + 2, close - pos - 2));
            pos = close + 1;
        } else {
            std::size_t end = pos + 1;
            while (end < format.size() && isNameChar(format[end]))
                ++end;
            name = std::string(format.substr(pos + 1, end - pos - 1));
            pos = end;
        }
        if (name.empty() || !std::all_of(name.begin(), name.end(), isNameChar)) {
            error = "--log-format: \"$\" at character " + std::to_string(pos) +
                    " is not followed by a variable name";
            return false;
        }
        std::transform(name.begin(), name.end(), name.begin(),
                       [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; });
        if (!items.empty() && !items.back().literal) {
            error = "--log-format: " + items.back().text + " and $" + name +
                    " have nothing between them, so a line cannot tell where one ends";
            return false;
        }
        items.push_back(nginxVariable(std::move(name)));
    }
    const auto has = [&](std::initializer_list<NginxVar> vars) {
        return std::any_of(items.begin(), items.end(), [&](const NginxItem& i) {
            return !i.literal && std::find(vars.begin(), vars.end(), i.var) != vars.end();
        });
    };
    if (!has({NginxVar::RemoteAddr})) {
        error = "--log-format has no $remote_addr: the client of a line cannot be read";
        return false;
    }
    if (!has({NginxVar::TimeLocal, NginxVar::TimeIso8601, NginxVar::Msec})) {
        error =
            "--log-format has no $time_local, $time_iso8601 or $msec: a line's time cannot "
            "be read";
        return false;
    }
    return true;
}

// --- JSON -----------------------------------------------------------------------------------

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

}  // namespace

struct LogLineParser::Program {
    std::string scratch;
    // nginx
    std::vector<NginxItem> nginx;
    // csv
    std::vector<CsvColumn> csv = legacyCsvColumns();
    bool atFileStart = true;
    // json
    JsonPaths paths;
    std::vector<std::string> jsonHeaders;  // names of kJsonHeader + i
    bool caddy = false;
};

namespace {

LineStatus parseCsvLine(std::string_view line, LogLineParser::Program& p, LogRecord& out,
                        LineProblem& problem) {
    if (p.atFileStart) {
        p.atFileStart = false;
        std::size_t pos = 0;
        std::string_view first;
        csvField(line, pos, p.scratch, first);
        if (!isNumber(first)) {
            // A header: it names the columns of this file and the files after it.
            std::vector<CsvColumn> columns;
            bool time = false, client = false;
            pos = 0;
            while (pos <= line.size()) {
                std::string_view name;
                csvField(line, pos, p.scratch, name);
                columns.push_back(csvColumnNamed(name));
                time = time || columns.back().role == CsvRole::TsMs ||
                       columns.back().role == CsvRole::Time;
                client = client || columns.back().role == CsvRole::Client;
            }
            if (!time || !client) {
                problem.column = 1;
                problem.message = std::string("the CSV header names no ") +
                                  (time ? "client column (client, key, remote_addr, ip)"
                                        : "time column (ts_ms, ts, time, timestamp)");
                return LineStatus::Unparsed;
            }
            p.csv = std::move(columns);
            return LineStatus::Skipped;
        }
        p.scratch.clear();
    }
    std::size_t pos = 0;
    bool haveTime = false, haveClient = false;
    std::string_view timeText;
    std::size_t timeAt = 0;
    TimeSyntax timeSyntax = TimeSyntax::Any;
    std::optional<LineStatus> damage;
    for (const CsvColumn& c : p.csv) {
        if (pos > line.size()) break;
        const std::size_t at = pos;
        std::string_view field;
        const bool closed = csvField(line, pos, p.scratch, field);
        if (!closed && !damage) {
            damage = damaged(at, "a quoted field is not closed", problem);
        }
        switch (c.role) {
            case CsvRole::Ignore:
                break;
            case CsvRole::TsMs:
            case CsvRole::Time:
                timeText = field;
                timeAt = at;
                timeSyntax = c.role == CsvRole::TsMs ? TimeSyntax::EpochMillis : TimeSyntax::Any;
                haveTime = true;
                break;
            case CsvRole::Client:
                if (field.empty()) {
                    problem.column = column(at);
                    problem.message = "the client field is empty";
                    return LineStatus::Unparsed;
                }
                if (!readClient(field, at, out, problem)) return LineStatus::Unparsed;
                haveClient = true;
                break;
            case CsvRole::Method:
                if (!field.empty()) out.method = field;
                break;
            case CsvRole::Path:
                if (!field.empty() && !targetPath(field, out.path) && !damage) {
                    damage = damaged(at, "path \"" + clip(field, 40) + "\" does not start with '/'",
                                     problem);
                }
                break;
            case CsvRole::Status:
                if (!field.empty() && !readStatus(field, out) && !damage) {
                    damage =
                        damaged(at, "status \"" + clip(field, 40) + "\" is not a number", problem);
                }
                break;
            case CsvRole::Header:
                addHeader(c.header, field, out);
                break;
        }
    }
    if (!haveTime) {
        problem.column = column(line.size());
        problem.message = "no time field";
        return LineStatus::Unparsed;
    }
    if (!readTime(timeText, timeSyntax, timeAt, out, problem)) return LineStatus::Unparsed;
    if (!haveClient) {
        problem.column = column(line.size());
        problem.message = "no client field after the time";
        return LineStatus::Unparsed;
    }
    return damage.value_or(LineStatus::Ok);
}

LineStatus parseNginxLine(std::string_view line, LogLineParser::Program& p, LogRecord& out,
                          LineProblem& problem) {
    bool haveClient = false, haveTime = false;
    std::optional<LineStatus> damage;
    std::size_t pos = 0;
    const std::vector<NginxItem>& items = p.nginx;
    for (std::size_t i = 0; i < items.size() && !damage; ++i) {
        const NginxItem& item = items[i];
        if (item.literal) {
            if (line.substr(pos, item.text.size()) != item.text) {
                damage = damaged(pos,
                                 "expected \"" + clip(item.text, 20) + "\" before " +
                                     (i + 1 < items.size() ? items[i + 1].text : "the end"),
                                 problem);
                break;
            }
            pos += item.text.size();
            continue;
        }
        // A variable runs to the next literal (nginx escapes '"' inside values as \x22), or to
        // the end; $time_local holds a space, so it is its fixed 26 characters.
        std::size_t end = line.size();
        bool cut = false;
        if (i + 1 < items.size()) {
            const std::string& next = items[i + 1].text;
            if (item.var == NginxVar::TimeLocal && pos + 26 <= line.size()) {
                end = pos + 26;
            } else {
                end = line.find(next, pos);
                if (end == std::string_view::npos) {
                    end = line.size();
                    cut = true;
                }
            }
        }
        const std::string_view value = line.substr(pos, end - pos);
        switch (item.var) {
            case NginxVar::Other:
                break;
            case NginxVar::RemoteAddr:
                if (!readClient(value, pos, out, problem)) return LineStatus::Unparsed;
                haveClient = true;
                break;
            case NginxVar::TimeLocal:
            case NginxVar::TimeIso8601:
            case NginxVar::Msec:
                if (!haveTime) {
                    const TimeSyntax syntax = item.var == NginxVar::TimeLocal ? TimeSyntax::Clf
                                              : item.var == NginxVar::Msec
                                                  ? TimeSyntax::EpochSeconds
                                                  : TimeSyntax::Iso8601;
                    if (!readTime(value, syntax, pos, out, problem)) return LineStatus::Unparsed;
                    haveTime = true;
                }
                break;
            case NginxVar::Request:
                splitRequest(unescapeLogText(value, p.scratch), out);
                break;
            case NginxVar::RequestMethod:
                if (!value.empty() && value != "-") out.method = value;
                break;
            case NginxVar::RequestUri:
                if (!targetPath(unescapeLogText(value, p.scratch), out.path)) out.path = "/";
                break;
            case NginxVar::Status:
                if (!readStatus(value, out)) {
                    damage =
                        damaged(pos, "status \"" + clip(value, 20) + "\" is not a number", problem);
                }
                break;
            case NginxVar::Header:
                addHeader(item.header, unescapeLogText(value, p.scratch), out);
                break;
        }
        if (cut && !damage) {
            damage = damaged(pos,
                             "the " + item.text + " field is cut off (no \"" +
                                 clip(items[i + 1].text, 20) + "\" after it)",
                             problem);
        }
        pos = end;
    }
    if (!haveClient || !haveTime) {
        problem.message = std::string(haveClient ? "no time" : "no client") +
                          (damage ? " before the damage: " + problem.message : "");
        problem.column = column(pos);
        return LineStatus::Unparsed;
    }
    return damage.value_or(LineStatus::Ok);
}

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
                // Nor is a value without a name (an empty key, or "headers" not an object).
                if (v.isString && !v.member.empty() && !(p_.caddy && v.text == "REDACTED")) {
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
