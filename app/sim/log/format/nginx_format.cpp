// nginx access logs in the server's own log_format: the format string compiled once, then
// each line read item by item.

#include "sim/log/format/format_internal.h"

#include <algorithm>
#include <optional>

namespace ratelab::sim::format {

namespace {

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

}  // namespace

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

}  // namespace ratelab::sim::format
