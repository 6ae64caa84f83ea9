// CSV access logs: a header naming the columns, or the bare ts_ms,client[,path[,method]].

#include "sim/log/format/format_internal.h"

#include <algorithm>

namespace ratelab::sim::format {

namespace {

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

}  // namespace

std::vector<CsvColumn> legacyCsvColumns() {
    return {{CsvRole::TsMs, {}}, {CsvRole::Client, {}}, {CsvRole::Path, {}}, {CsvRole::Method, {}}};
}

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

}  // namespace ratelab::sim::format
