// Combined and common log format lines (nginx and Apache).

#include "sim/log/format/format_internal.h"

namespace ratelab::sim::format {

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

}  // namespace ratelab::sim::format
