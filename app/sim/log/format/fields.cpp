// The fields every access-log format reads: client, time, status, request line, headers, and
// the quoting and escapes servers write.

#include "sim/log/format/format_internal.h"

#include <algorithm>
#include <charconv>

#include "identity/forwarded.h"
#include "ratelab/ip_address.h"

namespace ratelab::sim::format {

namespace {

bool isHostName(std::string_view s) {
    if (s.empty() || s.size() > 253) return false;
    for (char c : s) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '-' || c == '_';
        if (!ok) return false;
    }
    return true;
}

}  // namespace

std::string clip(std::string_view s, std::size_t n) {
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

bool targetPath(std::string_view target, std::string_view& path) {
    if (target.starts_with("http://") || target.starts_with("https://")) {
        const std::size_t slash = target.find('/', target.find("//") + 2);
        target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
    }
    if (target.empty() || target.front() != '/') return false;
    path = target.substr(0, target.find_first_of("?#"));
    return true;
}

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
    if (name.empty() || value.empty() || value == "-") return;
    out.headers.push_back(Header{name, value});
}

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

}  // namespace ratelab::sim::format
