#include "sim/access_log.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "sim/report.h"

namespace ratelab::sim {

namespace {

constexpr std::int64_t kMsPerDay = 86'400'000;
constexpr std::int64_t kMaxEpochMs = 253'402'300'799'999;  // 9999-12-31T23:59:59.999Z
// Times are kept in ns since the earliest line; 36,500 days (3.2e18 ns) cannot overflow.
constexpr std::int64_t kMaxSpanMs = 100LL * 365 * kMsPerDay;

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
std::int64_t daysFromCivil(std::int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool isLeap(std::int64_t y) {
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

bool digits(std::string_view s, std::int64_t& out) {
    if (s.empty()) return false;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
}

// "10/Oct/2000:13:55:36 -0700" to Unix milliseconds, or an error.
bool parseClfTime(std::string_view t, std::int64_t& epochMs, std::string& error) {
    static constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    // dd/Mon/yyyy:HH:MM:SS +zzzz is 26 characters.
    if (t.size() != 26 || t[2] != '/' || t[6] != '/' || t[11] != ':' || t[14] != ':' ||
        t[17] != ':' || t[20] != ' ' || (t[21] != '+' && t[21] != '-')) {
        error = "time \"" + std::string(t) + "\" is not dd/Mon/yyyy:HH:MM:SS +zzzz";
        return false;
    }
    std::int64_t day, year, hour, minute, second, zoneH, zoneM;
    if (!digits(t.substr(0, 2), day) || !digits(t.substr(7, 4), year) ||
        !digits(t.substr(12, 2), hour) || !digits(t.substr(15, 2), minute) ||
        !digits(t.substr(18, 2), second) || !digits(t.substr(22, 2), zoneH) ||
        !digits(t.substr(24, 2), zoneM)) {
        error = "time \"" + std::string(t) + "\" has a non-numeric field";
        return false;
    }
    unsigned month = 0;
    for (unsigned i = 0; i < 12; ++i) {
        if (t.substr(3, 3) == kMonths[i]) month = i + 1;
    }
    if (month == 0) {
        error = "time \"" + std::string(t) + "\" names no month";
        return false;
    }
    unsigned monthDays = kDays[month - 1] + (month == 2 && isLeap(year) ? 1 : 0);
    if (day < 1 || day > monthDays || hour > 23 || minute > 59 || second > 60 || zoneH > 14 ||
        zoneM > 59) {
        error = "time \"" + std::string(t) + "\" is out of range";
        return false;
    }
    const std::int64_t zone = (zoneH * 60 + zoneM) * 60'000 * (t[21] == '-' ? -1 : 1);
    epochMs = daysFromCivil(year, month, static_cast<unsigned>(day)) * kMsPerDay +
              ((hour * 60 + minute) * 60 + second) * 1000 - zone;
    return true;
}

// A double-quoted field starting at s[pos] == '"', with backslash escapes (nginx writes \x22
// and Apache \"). Leaves pos after the closing quote.
bool quoted(std::string_view s, std::size_t& pos, std::string_view& out) {
    if (pos >= s.size() || s[pos] != '"') return false;
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
    return false;
}

bool isHostName(std::string_view s) {
    if (s.empty() || s.size() > 253) return false;
    for (char c : s) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '-' || c == '_';
        if (!ok) return false;
    }
    return true;
}

// "GET /a/b?x=1 HTTP/1.1": the method and the path without its query. A request field that
// is "-" or not a request line (a scanner's junk) is kept as method "-" and path "/", so the
// line still counts as the request the server saw.
void splitRequest(std::string_view request, std::string_view& method, std::string_view& path) {
    method = "-";
    path = "/";
    const std::size_t space = request.find(' ');
    if (space == std::string_view::npos || space == 0) return;
    std::string_view target = request.substr(space + 1);
    target = target.substr(0, target.find(' '));
    if (target.starts_with("http://") || target.starts_with("https://")) {
        std::size_t slash = target.find('/', target.find("//") + 2);
        target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
    }
    if (target.empty() || target.front() != '/') return;
    method = request.substr(0, space);
    path = target.substr(0, target.find_first_of("?#"));
}

struct ParsedLine {
    std::int64_t epochMs = 0;
    std::string_view client;
    std::string_view method;
    std::string_view path;
};

bool parseClfLine(std::string_view line, bool combined, ParsedLine& out, std::string& error) {
    std::size_t pos = line.find(' ');
    if (pos == std::string_view::npos || pos == 0) {
        error = "no client field";
        return false;
    }
    out.client = line.substr(0, pos);
    const std::size_t open = line.find('[', pos);
    const std::size_t close = open == std::string_view::npos ? open : line.find(']', open);
    if (close == std::string_view::npos) {
        error = "no [time] field";
        return false;
    }
    if (!parseClfTime(line.substr(open + 1, close - open - 1), out.epochMs, error)) return false;
    pos = close + 1;
    if (pos >= line.size() || line[pos] != ' ') {
        error = "expected a space after the time";
        return false;
    }
    ++pos;
    std::string_view request;
    if (!quoted(line, pos, request)) {
        error = "no \"request\" field after the time";
        return false;
    }
    splitRequest(request, out.method, out.path);
    // status and bytes: digits or "-"
    for (const char* what : {"status", "bytes"}) {
        if (pos >= line.size() || line[pos] != ' ') {
            error = std::string("no ") + what + " field";
            return false;
        }
        const std::size_t start = ++pos;
        while (pos < line.size() && line[pos] != ' ')
            ++pos;
        std::string_view field = line.substr(start, pos - start);
        std::int64_t value;
        if (field != "-" && !digits(field, value)) {
            error = std::string(what) + " field \"" + std::string(field) + "\" is not a number";
            return false;
        }
    }
    if (combined) {
        std::string_view ignored;
        for (const char* what : {"referer", "user-agent"}) {
            if (pos >= line.size() || line[pos] != ' ' || !quoted(line, ++pos, ignored)) {
                error = std::string("no quoted ") + what + " field (combined format)";
                return false;
            }
        }
    }
    return true;
}

// One CSV field; handles "quoted, fields" with "" escapes. Leaves pos after the comma.
std::string_view csvField(std::string_view line, std::size_t& pos, std::string& scratch) {
    if (pos < line.size() && line[pos] == '"') {
        scratch.clear();
        ++pos;
        while (pos < line.size()) {
            if (line[pos] == '"') {
                if (pos + 1 < line.size() && line[pos + 1] == '"') {
                    scratch.push_back('"');
                    pos += 2;
                    continue;
                }
                ++pos;
                break;
            }
            scratch.push_back(line[pos++]);
        }
        if (pos < line.size() && line[pos] == ',') ++pos;
        return scratch;
    }
    std::size_t comma = line.find(',', pos);
    std::string_view field =
        line.substr(pos, comma == std::string_view::npos ? comma : comma - pos);
    pos = comma == std::string_view::npos ? line.size() + 1 : comma + 1;
    return field;
}

// Where quoted fields are unescaped: one buffer per field, owned by the caller, because `out`
// views them after the call.
struct CsvScratch {
    std::string ts, key, path, method;
};

bool parseCsvLine(std::string_view line, ParsedLine& out, CsvScratch& scratch, std::string& error) {
    std::size_t pos = 0;
    std::string_view ts = csvField(line, pos, scratch.ts);
    if (!digits(ts, out.epochMs) || out.epochMs < 0 || out.epochMs > kMaxEpochMs) {
        error = "ts_ms \"" + std::string(ts.substr(0, 40)) +
                "\" is not a Unix time in ms between 0 and 253402300799999 (year 9999)";
        return false;
    }
    if (pos > line.size()) {
        error = "no key field after ts_ms";
        return false;
    }
    std::string_view key = csvField(line, pos, scratch.key);
    if (key.empty()) {
        error = "the key field is empty";
        return false;
    }
    out.client = key;
    out.method = "GET";
    out.path = "/";
    if (pos <= line.size()) {
        std::string_view path = csvField(line, pos, scratch.path);
        if (!path.empty()) {
            if (path.front() != '/') {
                error = "path \"" + std::string(path.substr(0, 40)) + "\" does not start with '/'";
                return false;
            }
            out.path = path.substr(0, path.find_first_of("?#"));
        }
    }
    if (pos <= line.size()) {
        std::string_view method = csvField(line, pos, scratch.method);
        if (!method.empty()) out.method = method;
    }
    return true;
}

class Interner {
public:
    explicit Interner(std::vector<std::string>& table) : table_(table) {}
    std::uint32_t intern(std::string_view text) {
        auto it = index_.find(std::string(text));
        if (it != index_.end()) return it->second;
        const auto id = static_cast<std::uint32_t>(table_.size());
        table_.emplace_back(text);
        index_.emplace(table_.back(), id);
        return id;
    }

private:
    std::vector<std::string>& table_;
    std::unordered_map<std::string, std::uint32_t> index_;
};

}  // namespace

std::string_view logFormatName(LogFormat format) {
    switch (format) {
        case LogFormat::Combined:
            return "combined";
        case LogFormat::Common:
            return "common";
        case LogFormat::Csv:
            return "csv";
    }
    return "";
}

std::optional<LogFormat> parseLogFormat(std::string_view name) {
    if (name == "combined") return LogFormat::Combined;
    if (name == "common") return LogFormat::Common;
    if (name == "csv") return LogFormat::Csv;
    return std::nullopt;
}

LogFormat detectLogFormat(std::string_view text) {
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        std::string_view line = text.substr(pos, end == std::string_view::npos ? end : end - pos);
        pos = end == std::string_view::npos ? text.size() : end + 1;
        while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
            line.remove_suffix(1);
        if (line.empty()) continue;
        if (line.starts_with("ts_ms")) return LogFormat::Csv;
        std::size_t comma = line.find(',');
        std::int64_t ts;
        if (comma != std::string_view::npos && digits(line.substr(0, comma), ts)) {
            return LogFormat::Csv;
        }
        if (std::count(line.begin(), line.end(), '"') >= 6 && line.back() == '"') {
            return LogFormat::Combined;
        }
        return LogFormat::Common;
    }
    return LogFormat::Combined;
}

RecordedTraffic parseAccessLog(std::string_view text, LogFormat format, std::string_view fileName) {
    RecordedTraffic t;
    t.file = std::string(fileName);
    t.format = format;
    Interner paths(t.paths);
    Interner methods(t.methods);
    std::vector<std::string> clientTexts;
    Interner clients(clientTexts);
    std::vector<std::int64_t> epochs;
    CsvScratch csvScratch;
    std::string error;

    std::size_t pos = 0;
    std::int64_t lineNumber = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        std::string_view line = text.substr(pos, end == std::string_view::npos ? end : end - pos);
        pos = end == std::string_view::npos ? text.size() : end + 1;
        ++lineNumber;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
        if (format == LogFormat::Csv && lineNumber == 1 && line.starts_with("ts_ms")) continue;
        ++t.lines;

        ParsedLine parsed;
        error.clear();
        bool ok = format == LogFormat::Csv
                      ? parseCsvLine(line, parsed, csvScratch, error)
                      : parseClfLine(line, format == LogFormat::Combined, parsed, error);
        if (ok && !IpAddress::parse(parsed.client) && !isHostName(parsed.client)) {
            ok = false;
            error = "client \"" + std::string(parsed.client.substr(0, 60)) +
                    "\" is neither an IP address nor a host name";
        }
        if (!ok) {
            ++t.unparsedCount;
            if (t.unparsed.size() < kMaxUnparsedListed) t.unparsed.push_back({lineNumber, error});
            continue;
        }
        RecordedRequest r;
        r.client = clients.intern(parsed.client);
        r.path = paths.intern(parsed.path);
        r.method = methods.intern(parsed.method);
        r.line = static_cast<std::uint32_t>(lineNumber);
        t.requests.push_back(r);
        epochs.push_back(parsed.epochMs);
    }

    // Sort by time, stably: equal times keep file order.
    std::vector<std::uint32_t> order(t.requests.size());
    for (std::uint32_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return epochs[a] < epochs[b]; });
    std::vector<RecordedRequest> sorted;
    sorted.reserve(order.size());
    if (!order.empty()) t.startEpochMs = epochs[order.front()];
    std::vector<UnparsedLine> tooLate;
    for (std::uint32_t i : order) {
        RecordedRequest r = t.requests[i];
        if (epochs[i] - t.startEpochMs > kMaxSpanMs) {
            tooLate.push_back({r.line, "more than 36,500 days after the log's earliest line"});
            continue;
        }
        r.at = (epochs[i] - t.startEpochMs) * kNanosPerMilli;
        sorted.push_back(r);
    }
    t.requests = std::move(sorted);
    if (!t.requests.empty()) t.span = t.requests.back().at;
    if (!tooLate.empty()) {
        t.unparsedCount += static_cast<std::int64_t>(tooLate.size());
        t.unparsed.insert(t.unparsed.end(), tooLate.begin(), tooLate.end());
        std::sort(t.unparsed.begin(), t.unparsed.end(),
                  [](const UnparsedLine& a, const UnparsedLine& b) { return a.line < b.line; });
        if (t.unparsed.size() > kMaxUnparsedListed) t.unparsed.resize(kMaxUnparsedListed);
    }

    for (std::size_t i = 0; i < clientTexts.size(); ++i) {
        RecordedClient c;
        c.text = std::move(clientTexts[i]);
        c.address = IpAddress::parse(c.text);
        if (!c.address) {
            ++t.hostNames;
            std::array<std::uint8_t, 16> bytes{};
            bytes[0] = 0xfd;
            const auto index = static_cast<std::uint32_t>(i);
            bytes[1] = static_cast<std::uint8_t>(index >> 24);
            bytes[2] = static_cast<std::uint8_t>(index >> 16);
            bytes[3] = static_cast<std::uint8_t>(index >> 8);
            bytes[4] = static_cast<std::uint8_t>(index);
            bytes[15] = 1;
            c.syntheticAddress = IpAddress::fromBytes(bytes);
        }
        t.clients.push_back(std::move(c));
    }
    return t;
}

std::optional<RecordedTraffic> loadAccessLog(const std::string& path,
                                             std::optional<LogFormat> format, std::string& error) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = path + ": cannot open the file";
        return std::nullopt;
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) {
        error = path + ": cannot read the file";
        return std::nullopt;
    }
    const std::string text = buffer.str();
    return parseAccessLog(text, format ? *format : detectLogFormat(text), path);
}

Scenario makeReplayScenario(std::shared_ptr<const RecordedTraffic> traffic, Nanos sampleInterval) {
    Scenario s;
    s.file = traffic->file;
    s.name = std::filesystem::path(traffic->file).filename().string();
    s.title = "Replay of " + s.name;
    s.description = "Requests of a recorded access log, in time order, keyed by client field.";
    // At most kMaxReplaySamples samples: a log spanning years gets longer ones (whole seconds).
    if (traffic->span / sampleInterval >= kMaxReplaySamples) {
        const Nanos perSample = traffic->span / kMaxReplaySamples + 1;
        sampleInterval = (perSample + kNanosPerSecond - 1) / kNanosPerSecond * kNanosPerSecond;
    }
    s.sampleInterval = sampleInterval;
    // Whole samples, and the last line (at `span`) strictly inside.
    s.duration = (traffic->span / sampleInterval + 1) * sampleInterval;
    Actor a;
    a.name = "log";
    a.className = "log";
    a.count = std::max<std::int64_t>(1, static_cast<std::int64_t>(traffic->clients.size()));
    a.recorded = std::move(traffic);
    s.actors.push_back(std::move(a));
    return s;
}

ReplayInfo replayInfo(const RecordedTraffic& traffic) {
    ReplayInfo r;
    r.file = traffic.file;
    r.format = std::string(logFormatName(traffic.format));
    r.lines = traffic.lines;
    r.parsed = static_cast<std::int64_t>(traffic.requests.size());
    r.unparsed = traffic.unparsedCount;
    for (const UnparsedLine& u : traffic.unparsed)
        r.unparsedLines.push_back(u.line);
    r.clients = static_cast<std::int64_t>(traffic.clients.size());
    r.hostNames = traffic.hostNames;
    r.startEpochMs = traffic.startEpochMs;
    return r;
}

}  // namespace ratelab::sim
