#pragma once

// HAProxy's configuration as HAProxy 2.6 reads it: lines of words (spaces and TABs between
// them; '...' strong and "..." weak quoting, which may join with text around them into one
// word; backslash escapes; an unquoted '#' ends the line), grouped into sections (global,
// defaults, frontend, backend, listen, peers, ...) by the keywords that open them. Every word
// keeps FILE:LINE:COLUMN.

#include <string>
#include <string_view>
#include <vector>

#include "formats/import/import_common.h"

namespace ratelab::formats::haproxy {

struct HaproxyWord {
    std::string text;  ///< after quotes and escapes
    SourcePos at;
};

struct HaproxyLine {
    std::vector<HaproxyWord> words;  ///< never empty
    const std::string& keyword() const { return words[0].text; }
    SourcePos at() const { return words[0].at; }
};

struct HaproxySection {
    std::string kind;  ///< "global", "defaults", "frontend", "backend", "listen", "peers", ...
    std::string name;  ///< empty when the section has none
    SourcePos at;
    std::vector<HaproxyLine> lines;  ///< the lines after the section's own
};

struct HaproxyConfig {
    std::vector<HaproxySection> sections;
    bool unreadable = false;  ///< a named file could not be opened
};

/// Reads `files` in order, as `haproxy -f A -f B` does. Problems go to `log`. Thread-safe.
HaproxyConfig readHaproxyConfig(const std::vector<std::string>& files, ImportLog& log);

/// The same on text in memory, named `name` in diagnostics.
void parseHaproxyText(std::string_view text, const std::string& name, HaproxyConfig& config,
                      ImportLog& log);

/// The keywords that open a section.
bool isSectionKeyword(std::string_view word);

}  // namespace ratelab::formats::haproxy
