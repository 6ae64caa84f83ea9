#pragma once

// The one argument parser and help printer of ratelab-cli (see command.h).

#include <QStringList>
#include <optional>
#include <string>

#include "cli/command.h"

namespace ratelab::cli {

class CommandLine {
public:
    /// Parses a command's arguments (without the program and command names) against its
    /// description. Nullopt when the command must not run: `exitCode` is kSuccess after
    /// printing --help, kUsage after printing what is wrong and the usage line on stderr.
    static std::optional<Arguments> parse(const Command& command, const QStringList& arguments,
                                          int& exitCode);
};

/// "usage: ratelab-cli validate [--previous OLD.json] [--json] P.json...", wrapped, with "\n".
std::string usageLine(const Command& command);

/// What `ratelab-cli help CMD` and `ratelab-cli CMD --help` print.
std::string helpText(const Command& command);

/// What `ratelab-cli --help` prints: the commands, the conventions, the exit codes.
std::string programHelp();

/// The whole CLI: `arguments` without the program name. Returns the process's exit code.
int runCommandLine(const QStringList& arguments);

}  // namespace ratelab::cli
