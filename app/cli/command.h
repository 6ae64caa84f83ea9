#pragma once

// ratelab-cli subcommands register themselves here, one file each (cmd_run.cpp, ...), so the
// dispatcher in main.cpp knows none of them by name.

#include <QStringList>
#include <functional>

namespace ratelab::cli {

/// Exit codes shared by every subcommand.
enum ExitCode : int {
    kSuccess = 0,          ///< done; every expectation met, the policy is valid
    kExpectationFailed = 1,
    kBadInput = 2,         ///< the message names FILE:LINE:COLUMN and what is wrong
    kUsage = 64,           ///< the command line is wrong (sysexits.h EX_USAGE); fit only, so far
};

struct Command {
    const char* name;      ///< "run"
    const char* synopsis;  ///< "run SCENARIO.json [--policy P.json] ..."
    const char* summary;   ///< one line for `ratelab-cli --help`
    /// Runs the command; `arguments` excludes the program and command names.
    std::function<int(const QStringList& arguments)> run;
};

/// Adds a command at static initialisation; see RATELAB_CLI_COMMAND.
bool registerCommand(Command command);

}  // namespace ratelab::cli

#define RATELAB_CLI_CONCAT_(a, b) a##b
#define RATELAB_CLI_CONCAT(a, b) RATELAB_CLI_CONCAT_(a, b)
/// RATELAB_CLI_COMMAND({"check", "check --policy P.json ...", "decide one request", &runCheck});
#define RATELAB_CLI_COMMAND(...)                                                               \
    [[maybe_unused]] static const bool RATELAB_CLI_CONCAT(ratelabCliCommand_, __LINE__) =     \
        ::ratelab::cli::registerCommand(::ratelab::cli::Command __VA_ARGS__)
