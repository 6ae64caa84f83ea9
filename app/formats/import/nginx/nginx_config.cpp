#include "formats/import/nginx/nginx_config.h"

#include <glob.h>

#include <algorithm>
#include <optional>

namespace ratelab::formats::nginx {

namespace {

// nginx reads a configuration through a 4096-byte buffer; a word that fills it is an error.
constexpr std::size_t kMaxWord = 4095;
// nginx has neither bound (a file that includes itself recurses until it runs out of files);
// these keep a hostile file from exhausting the stack.
constexpr int kMaxIncludeDepth = 32;
constexpr int kMaxBlockDepth = 100;

// Directives whose shape this reader checks, as nginx checks it: a block directive must open a
// block, a simple one must end in ";". Any other directive is accepted in either shape.
bool knownBlock(std::string_view name) {
    // ("server" is a block in http and a simple directive in upstream: checked by its context.)
    for (std::string_view n : {"http", "location", "events", "upstream", "if", "limit_except",
                               "map", "geo", "types", "split_clients"}) {
        if (name == n) return true;
    }
    return false;
}

bool knownSimple(std::string_view name) {
    for (std::string_view n :
         {"include", "limit_req", "limit_req_zone", "limit_req_status", "limit_req_dry_run",
          "limit_req_log_level", "listen", "server_name", "return", "rewrite", "set",
          "set_real_ip_from", "real_ip_header", "real_ip_recursive"}) {
        if (name == n) return true;
    }
    return false;
}

bool space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// nginx's escapes inside a word, applied when the word ends: \" \' \\ become the character,
// \t \r \n the control character, any other backslash stays as written.
std::string unescape(std::string_view raw) {
    std::string out;
    out.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] == '\\' && i + 1 < raw.size()) {
            const char next = raw[i + 1];
            if (next == '"' || next == '\'' || next == '\\') {
                out.push_back(next);
                ++i;
                continue;
            }
            if (next == 't' || next == 'r' || next == 'n') {
                out.push_back(next == 't' ? '\t' : next == 'r' ? '\r' : '\n');
                ++i;
                continue;
            }
        }
        out.push_back(raw[i]);
    }
    return out;
}

std::string printable(char c) {
    return std::string(1, c);
}

enum class TokenEnd { Directive, BlockStart, BlockEnd, FileEnd, Error };

// ngx_conf_read_token: the words of the next directive and what ended it.
class Lexer {
public:
    Lexer(std::string_view text, int file, ImportLog& log) : text_(text), file_(file), log_(log) {}

    TokenEnd next(std::vector<NginxWord>& words) {
        words.clear();
        bool lastSpace = true, needSpace = false, comment = false, quoted = false;
        bool sQuoted = false, dQuoted = false, variable = false;
        std::size_t start = 0;
        SourcePos startAt;
        bool startQuoted = false;
        while (true) {
            if (pos_ >= text_.size()) {
                if (!words.empty() || !lastSpace) {
                    log_.error(here(), "unexpected end of file, expecting \";\" or \"}\"");
                    return TokenEnd::Error;
                }
                return TokenEnd::FileEnd;
            }
            const SourcePos at = here();
            charAt_ = at;
            const char ch = advance();
            if (ch == '\n' && comment) comment = false;
            if (comment) continue;
            if (quoted) {
                quoted = false;
                continue;
            }
            if (needSpace) {
                if (space(ch)) {
                    lastSpace = true;
                    needSpace = false;
                    continue;
                }
                if (ch == ';') return TokenEnd::Directive;
                if (ch == '{') return TokenEnd::BlockStart;
                if (ch == ')') {
                    lastSpace = true;
                    needSpace = false;
                } else {
                    log_.error(at, "unexpected \"" + printable(ch) + "\"");
                    return TokenEnd::Error;
                }
            }
            if (lastSpace) {
                start = pos_ - 1;
                startAt = at;
                startQuoted = false;
                if (space(ch)) continue;
                switch (ch) {
                    case ';':
                    case '{':
                        if (words.empty()) {
                            log_.error(at, "unexpected \"" + printable(ch) + "\"");
                            return TokenEnd::Error;
                        }
                        return ch == '{' ? TokenEnd::BlockStart : TokenEnd::Directive;
                    case '}':
                        if (!words.empty()) {
                            log_.error(at, "unexpected \"}\"");
                            return TokenEnd::Error;
                        }
                        return TokenEnd::BlockEnd;
                    case '#':
                        comment = true;
                        continue;
                    case '\\':
                        quoted = true;
                        lastSpace = false;
                        continue;
                    case '"':
                        ++start;
                        dQuoted = true;
                        startQuoted = true;
                        lastSpace = false;
                        continue;
                    case '\'':
                        ++start;
                        sQuoted = true;
                        startQuoted = true;
                        lastSpace = false;
                        continue;
                    case '$':
                        variable = true;
                        lastSpace = false;
                        continue;
                    default:
                        lastSpace = false;
                }
            } else {
                if (ch == '{' && variable) continue;
                variable = false;
                if (ch == '\\') {
                    quoted = true;
                    continue;
                }
                if (ch == '$') {
                    variable = true;
                    continue;
                }
                bool found = false;
                if (dQuoted) {
                    if (ch == '"') {
                        dQuoted = false;
                        needSpace = true;
                        found = true;
                    }
                } else if (sQuoted) {
                    if (ch == '\'') {
                        sQuoted = false;
                        needSpace = true;
                        found = true;
                    }
                } else if (space(ch) || ch == ';' || ch == '{') {
                    lastSpace = true;
                    found = true;
                }
                if (found) {
                    words.push_back(NginxWord{unescape(text_.substr(start, pos_ - 1 - start)),
                                              startAt, startQuoted});
                    if (ch == ';') return TokenEnd::Directive;
                    if (ch == '{') return TokenEnd::BlockStart;
                    continue;
                }
            }
            if (!lastSpace && pos_ - start > kMaxWord) {
                if (sQuoted || dQuoted) {
                    log_.error(startAt, "too long parameter, probably missing terminating \"" +
                                            std::string(sQuoted ? "'" : "\"") + "\" character");
                } else {
                    log_.error(startAt, "too long parameter \"" +
                                            std::string(text_.substr(start, 10)) + "...\" started");
                }
                return TokenEnd::Error;
            }
        }
    }

    SourcePos here() const { return SourcePos{file_, line_, column_}; }
    /// Where the last character read was: the "}" that ended a block.
    SourcePos lastChar() const { return charAt_; }

private:
    char advance() {
        const char ch = text_[pos_++];
        if (ch == '\n') {
            ++line_;
            column_ = 1;
        } else if ((static_cast<unsigned char>(ch) & 0xc0) != 0x80) {
            // The next character starts a column; UTF-8 continuation bytes do not.
            column_ += 1;
        }
        return ch;
    }

    std::string_view text_;
    std::size_t pos_ = 0;
    int file_;
    int line_ = 1;
    int column_ = 1;
    SourcePos charAt_;
    ImportLog& log_;
};

class Reader {
public:
    Reader(ImportLog& log, std::string includeBase)
        : log_(log), includeBase_(std::move(includeBase)) {}

    // ngx_conf_parse over one file's text, appending its directives to `out`.
    bool parseFile(std::string_view text, int file, std::vector<NginxDirective>& out, int depth) {
        Lexer lexer(text, file, log_);
        return parseBlock(lexer, out, false, depth, 0);
    }

    bool includeFollowed = true;

private:
    bool parseBlock(Lexer& lexer, std::vector<NginxDirective>& out, bool inBlock, int includeDepth,
                    int blockDepth) {
        std::vector<NginxWord> words;
        while (true) {
            const TokenEnd end = lexer.next(words);
            switch (end) {
                case TokenEnd::Error:
                    return false;
                case TokenEnd::FileEnd:
                    if (inBlock) {
                        log_.error(lexer.here(), "unexpected end of file, expecting \"}\"");
                        return false;
                    }
                    return true;
                case TokenEnd::BlockEnd:
                    if (!inBlock) {
                        log_.error(lexer.lastChar(), "unexpected \"}\"");
                        return false;
                    }
                    return true;
                case TokenEnd::Directive:
                case TokenEnd::BlockStart:
                    break;
            }
            NginxDirective d;
            d.words = std::move(words);
            words.clear();
            d.block = end == TokenEnd::BlockStart;
            const std::string& name = d.name();
            if (d.block && knownSimple(name)) {
                log_.error(d.at(), "directive \"" + name + "\" is not terminated by \";\"");
                return false;
            }
            if (!d.block && knownBlock(name)) {
                log_.error(d.at(), "directive \"" + name + "\" has no opening \"{\"");
                return false;
            }
            if (d.block) {
                if (blockDepth + 1 > kMaxBlockDepth) {
                    log_.error(d.at(), "blocks nested more than " + std::to_string(kMaxBlockDepth) +
                                           " deep");
                    return false;
                }
                const bool ok = parseBlock(lexer, d.children, true, includeDepth, blockDepth + 1);
                out.push_back(std::move(d));
                if (!ok) return false;
                continue;
            }
            if (name == "include") {
                if (!include(d, out, includeDepth)) return false;
                continue;
            }
            out.push_back(std::move(d));
        }
    }

    // ngx_conf_include: the files named, parsed in place; a relative name is relative to the
    // main file's directory, a glob (any of * ? [) may match nothing.
    bool include(const NginxDirective& d, std::vector<NginxDirective>& out, int depth) {
        if (d.argumentCount() != 1) {
            log_.error(d.at(), "invalid number of arguments in \"include\" directive");
            return false;
        }
        const NginxWord& word = d.words[1];
        if (includeBase_.empty()) {
            if (includeFollowed) {
                log_.warning(word.at, "include \"" + word.text + "\" is not followed here");
            }
            return true;
        }
        if (depth + 1 > kMaxIncludeDepth) {
            log_.error(d.at(), "include nested more than " + std::to_string(kMaxIncludeDepth) +
                                   " deep (does a file include itself?)");
            return false;
        }
        std::string path = word.text;
        if (path.empty() || path.front() != '/') path = includeBase_ + "/" + path;
        std::vector<std::string> files;
        if (path.find_first_of("*?[") == std::string::npos) {
            files.push_back(path);
        } else {
            glob_t matches{};
            const int rc = glob(path.c_str(), 0, nullptr, &matches);
            if (rc == 0) {
                for (std::size_t i = 0; i < matches.gl_pathc; ++i)
                    files.emplace_back(matches.gl_pathv[i]);
            }
            globfree(&matches);
            if (rc != 0 && rc != GLOB_NOMATCH) {
                log_.error(word.at, "glob() \"" + path + "\" failed");
                return false;
            }
        }
        for (const std::string& file : files) {
            std::string why;
            std::optional<std::string> text = readImportFile(file, why);
            if (!text) {
                log_.error(word.at, "include \"" + file + "\": " + why);
                return false;
            }
            const int index = log_.addFile(file);
            if (!parseFile(*text, index, out, depth + 1)) return false;
        }
        return true;
    }

    ImportLog& log_;
    std::string includeBase_;
};

std::string directoryOf(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

}  // namespace

NginxConfig readNginxConfig(const std::string& path, ImportLog& log) {
    NginxConfig config;
    std::string why;
    std::optional<std::string> text = readImportFile(path, why);
    const int file = log.addFile(path);
    if (!text) {
        log.error(SourcePos{file, 0, 0}, why);
        config.unreadable = true;
        return config;
    }
    Reader reader(log, directoryOf(path));
    reader.parseFile(*text, file, config.directives, 0);
    return config;
}

NginxConfig parseNginxText(std::string_view text, const std::string& name,
                           const std::string& includeBase, ImportLog& log) {
    NginxConfig config;
    const int file = log.addFile(name);
    Reader reader(log, includeBase);
    reader.parseFile(text, file, config.directives, 0);
    return config;
}

}  // namespace ratelab::formats::nginx
