#include "formats/import/haproxy/haproxy_config.h"

#include <optional>

namespace ratelab::formats::haproxy {

namespace {

// HAProxy refuses longer lines.
constexpr std::size_t kMaxLine = 65535;

int hexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// One line into words (parse_line in HAProxy's tools.c): false, with an error logged, on an
// unterminated quote or a bad escape.
bool splitLine(std::string_view line, int file, int lineNo, std::vector<HaproxyWord>& words,
               ImportLog& log) {
    words.clear();
    bool sQuote = false, dQuote = false, inWord = false;
    SourcePos quoteAt;
    HaproxyWord word;
    int column = 1;
    auto at = [&](int col) { return SourcePos{file, lineNo, col}; };
    for (std::size_t i = 0; i < line.size(); ++i, ++column) {
        const char c = line[i];
        if ((static_cast<unsigned char>(c) & 0xc0) == 0x80) --column;  // UTF-8 continuation
        if (!inWord && !sQuote && !dQuote && (c == ' ' || c == '\t' || c == '\r')) continue;
        if (!sQuote && !dQuote && c == '#') break;
        if (!inWord) {
            inWord = true;
            word = HaproxyWord{{}, at(column)};
        }
        if (c == '\'' && !dQuote) {
            sQuote = !sQuote;
            if (sQuote) quoteAt = at(column);
            continue;
        }
        if (c == '"' && !sQuote) {
            dQuote = !dQuote;
            if (dQuote) quoteAt = at(column);
            continue;
        }
        if (c == '\\' && !sQuote) {
            if (i + 1 >= line.size()) {
                log.error(at(column), "a backslash ends the line");
                return false;
            }
            const char next = line[i + 1];
            if (next == 'x') {
                const int hi = i + 2 < line.size() ? hexValue(line[i + 2]) : -1;
                const int lo = i + 3 < line.size() ? hexValue(line[i + 3]) : -1;
                if (hi < 0 || lo < 0) {
                    log.error(at(column), "invalid \\x sequence");
                    return false;
                }
                word.text.push_back(static_cast<char>(hi * 16 + lo));
                i += 3;
                column += 3;
                continue;
            }
            switch (next) {
                case 'n':
                    word.text.push_back('\n');
                    break;
                case 'r':
                    word.text.push_back('\r');
                    break;
                case 't':
                    word.text.push_back('\t');
                    break;
                default:
                    word.text.push_back(next);
            }
            ++i;
            ++column;
            continue;
        }
        if (!sQuote && !dQuote && (c == ' ' || c == '\t' || c == '\r')) {
            words.push_back(std::move(word));
            inWord = false;
            continue;
        }
        word.text.push_back(c);
    }
    if (sQuote || dQuote) {
        log.error(quoteAt, std::string("unmatched ") + (sQuote ? "single" : "double") + " quote");
        return false;
    }
    if (inWord) words.push_back(std::move(word));
    return true;
}

}  // namespace

bool isSectionKeyword(std::string_view word) {
    for (std::string_view k :
         {"global", "defaults", "frontend", "backend", "listen", "peers", "resolvers", "userlist",
          "program", "cache", "ring", "mailers", "http-errors", "log-forward", "dynamic-update"}) {
        if (word == k) return true;
    }
    return false;
}

void parseHaproxyText(std::string_view text, const std::string& name, HaproxyConfig& config,
                      ImportLog& log) {
    const int file = log.addFile(name);
    std::vector<HaproxyWord> words;
    int lineNo = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        ++lineNo;
        if (line.size() > kMaxLine) {
            log.error(SourcePos{file, lineNo, 1}, "line too long");
            continue;
        }
        if (!splitLine(line, file, lineNo, words, log) || words.empty()) continue;
        if (isSectionKeyword(words[0].text)) {
            HaproxySection section;
            section.kind = words[0].text;
            section.at = words[0].at;
            if (words.size() > 1) section.name = words[1].text;
            config.sections.push_back(std::move(section));
            continue;
        }
        if (config.sections.empty()) {
            log.error(words[0].at, "unknown keyword '" + words[0].text + "' out of section");
            continue;
        }
        config.sections.back().lines.push_back(HaproxyLine{std::move(words)});
        words.clear();
    }
}

HaproxyConfig readHaproxyConfig(const std::vector<std::string>& files, ImportLog& log) {
    HaproxyConfig config;
    for (const std::string& path : files) {
        std::string why;
        std::optional<std::string> text = readImportFile(path, why);
        if (!text) {
            const int file = log.addFile(path);
            log.error(SourcePos{file, 0, 0}, why);
            config.unreadable = true;
            continue;
        }
        parseHaproxyText(*text, path, config, log);
    }
    return config;
}

}  // namespace ratelab::formats::haproxy
