#pragma once

// How an access log opened in the workbench is written, as the user states it: a format, or
// detection from the first lines, and what `nginx` and `json` need. The same spellings as
// `ratelab-cli replay --format/--log-format/--field`, and checked by the same parser.

#include <QString>

#include <optional>

#include "sim/log/format/line_format.h"

namespace ratelab::gui {

struct LogFormatChoice {
    QString format;       ///< a sim::logFormatName() spelling; empty: detected from the first lines
    QString nginxFormat;  ///< nginx: the server's log_format string
    QString jsonFields;   ///< json: ROLE=PATH pairs separated by spaces, as --field takes them

    friend bool operator==(const LogFormatChoice&, const LogFormatChoice&) = default;
};

/// The reading options `choice` names into `out` (nullopt: detect the format). False with
/// `error` saying what is wrong: an unknown format, a field not ROLE=PATH, or what
/// sim::LogLineParser::make refuses (a log_format without $remote_addr, json without a time).
bool readLogFormatChoice(const LogFormatChoice& choice, std::optional<sim::LogFormatOptions>& out,
                         QString& error);

}  // namespace ratelab::gui
