#pragma once

// nginx's configuration grammar, read as nginx reads it (ngx_conf_read_token and ngx_conf_parse
// in nginx 1.22): words, quotes and escapes, "#" comments, directives ended by ";", blocks in
// "{" "}", and `include` followed where it stands, relative to the main file's directory (as
// nginx resolves it, whatever file the include is written in), globs expanded in sorted order
// (a glob that matches nothing is no error). Syntax errors are reported as nginx reports them
// ("unexpected \"}\"", "unexpected end of file, expecting \";\" or \"}\"", ...), at
// FILE:LINE:COLUMN; like nginx, reading stops at the first one.

#include <string>
#include <string_view>
#include <vector>

#include "formats/import/import_common.h"

namespace ratelab::formats::nginx {

struct NginxWord {
    std::string text;  ///< after nginx's escapes (\" \' \\ \t \r \n); quotes removed
    SourcePos at;      ///< where the word starts (its opening quote, if quoted)
    bool quoted = false;
};

struct NginxDirective {
    std::vector<NginxWord> words;  ///< words[0] is the name; never empty
    bool block = false;            ///< ended by "{": `children` holds the block
    std::vector<NginxDirective> children;

    const std::string& name() const { return words[0].text; }
    SourcePos at() const { return words[0].at; }
    std::size_t argumentCount() const { return words.size() - 1; }
};

struct NginxConfig {
    std::vector<NginxDirective> directives;  ///< the main level, includes spliced in place
    bool unreadable = false;                 ///< the main file could not be opened
};

/// Reads the configuration at `path` and every file it includes. Problems go to `log` (the
/// files read are registered there); on a syntax error the directives read so far are kept.
/// Thread-safe (the log is the caller's).
NginxConfig readNginxConfig(const std::string& path, ImportLog& log);

/// The same on text in memory, named `name` in diagnostics; `include` is followed relative to
/// `includeBase` (a directory), or not at all when it is empty (a warning says so).
NginxConfig parseNginxText(std::string_view text, const std::string& name,
                           const std::string& includeBase, ImportLog& log);

}  // namespace ratelab::formats::nginx
