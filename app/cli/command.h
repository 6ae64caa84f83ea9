#pragma once

// ratelab-cli subcommands: each is one cmd_*.cpp file that describes its arguments in a Command
// and registers it with RATELAB_CLI_COMMAND. The framework (command_line.cpp) parses every
// command line the same way, prints every help the same way (`CMD --help`, `help CMD`), and
// checks what a description can say: required options, value counts, and that standard input
// and standard output ("-") are each claimed by one argument at most. A command's run function
// sees only a parsed, checked Arguments.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ratelab::cli {

/// Exit codes shared by every subcommand (listed by `--help` and in the README).
enum ExitCode : int {
    kSuccess = 0,            ///< done; every expectation met, every policy valid
    kExpectationFailed = 1,  ///< run, sweep: a scenario's expectation does not hold
    kInvalidInput = 2,       ///< a policy, scenario or log has errors (FILE:LINE:COLUMN), or an
                             ///< export target cannot express the policy
    kOverLimit = 1,          ///< rls-ask: the rate limit service answered OVER_LIMIT
    kUsage = 64,             ///< the command line is wrong (sysexits.h EX_USAGE)
    kUnavailable = 69,       ///< rls-ask: the service cannot be reached or does not answer in
                             ///< time (sysexits.h EX_UNAVAILABLE)
    kIoError = 74,           ///< a file cannot be read or written, a store or port cannot be
                             ///< reached (sysexits.h EX_IOERR)
};

/// One option of a command. Build with the factories: Option::input("policy", "P.json", "...").
struct Option {
    enum class Kind : std::uint8_t {
        Flag,    ///< takes no value
        Value,   ///< takes a value
        Input,   ///< names a file to read; "-" is standard input
        Output,  ///< names a file to write; "-" is standard output
    };
    std::string name;       ///< the long name without dashes: "policy"
    char shortName = 0;     ///< 'o' for -o; 0 for none
    std::string valueName;  ///< "P.json"; empty for flags
    std::string help;       ///< one sentence or two
    Kind kind = Kind::Value;
    bool required = false;
    bool repeatable = false;

    static Option flag(std::string name, std::string help);
    static Option value(std::string name, std::string valueName, std::string help);
    static Option input(std::string name, std::string valueName, std::string help);
    static Option output(std::string name, std::string valueName, std::string help);
    /// Options several commands share, worded once.
    static Option quiet();           ///< --quiet: print nothing on success but errors
    static Option seed();            ///< --seed N, read with Arguments::seed()
    static Option scenarioPolicy();  ///< --policy P.json, the scenario's own by default
    /// A policy file input (read by readPolicyArgument): its help says that KIND:PATH imports
    /// another product's configuration.
    static Option policy(std::string name, std::string valueName, std::string help);

    Option asRequired() &&;       ///< the command cannot run without it
    Option asRepeated() &&;       ///< may be given several times; Arguments::values() has all
    Option withShort(char c) &&;  ///< also spelled -c
};

/// A positional argument, in order. Only the last may take several values.
struct Positional {
    std::string name;  ///< "P.json"
    std::string help;
    Option::Kind kind = Option::Kind::Input;  ///< Value, Input or Output
    bool many = false;                        ///< one or more values
};

class Arguments;

struct Command {
    std::string name;         ///< "validate"
    std::string summary;      ///< one line for `ratelab-cli --help`
    std::string description;  ///< the paragraph `--help` prints under the usage line
    std::vector<Positional> positionals;
    std::vector<Option> options;   ///< -h/--help is added by the framework
    bool hasExpectations = false;  ///< exit 1 means an expectation failed
    /// What this command's own exit codes mean, beside the shared ones (rls-ask's 1 and 69).
    std::vector<std::pair<int, std::string>> exitStatuses;
    /// Runs the command; returns its ExitCode. REQUIRES: `arguments` checked by the framework.
    int (*run)(const Arguments& arguments) = nullptr;
};

/// A command line parsed and checked against its Command.
class Arguments {
public:
    /// True when the option was given (for flags: the flag is on).
    bool isSet(std::string_view option) const;
    /// The option's value (the last one given), or `fallback` when it was not given.
    std::string value(std::string_view option, std::string_view fallback = {}) const;
    /// Every value of a repeated option, in order.
    std::vector<std::string> values(std::string_view option) const;
    /// Reads a whole-number option, from `min` to `max`, into `out`, which keeps its value when
    /// the option was not given. False, the usage error printed ("--top \"x\": expected a whole
    /// number from 0 to 10000"), when the value is not such a number.
    bool wholeNumber(std::string_view option, std::int64_t min, std::int64_t max,
                     std::int64_t& out) const;
    template <class Int>
    bool wholeNumber(std::string_view option, Int min, Int max, Int& out) const {
        std::int64_t n = static_cast<std::int64_t>(out);
        if (!wholeNumber(option, static_cast<std::int64_t>(min), static_cast<std::int64_t>(max),
                         n)) {
            return false;
        }
        out = static_cast<Int>(n);
        return true;
    }
    /// Reads a number option (decimals allowed), from `min` to `max`, into `out`, which keeps
    /// its value when the option was not given. False, the usage error printed ("--scale
    /// \"x\": expected 0.001 to 1000"; `unit` follows the range), when it is not such a number.
    bool number(std::string_view option, double min, double max, double& out,
                std::string_view unit = {}) const;
    /// --seed (Option::seed()) into `out` when given. False, the usage error printed, when it is
    /// not a whole number of at least 0.
    bool seed(std::optional<std::uint64_t>& out) const;
    /// The positional arguments, in order.
    const std::vector<std::string>& positionals() const { return positionals_; }
    /// True when an output argument is "-": stdout carries that output, so the command prints
    /// nothing else there.
    bool stdoutTaken() const { return stdoutTaken_; }

private:
    friend class CommandLine;
    std::vector<std::pair<std::string, std::string>> values_;  // option name, value
    std::vector<std::string> flags_;
    std::vector<std::string> positionals_;
    bool stdoutTaken_ = false;
};

/// Adds a command at static initialisation; see RATELAB_CLI_COMMAND.
bool registerCommand(Command command);

/// Every registered command, sorted by name.
std::vector<const Command*> commands();

/// Prints "ratelab-cli CMD: message" on stderr, CMD being the running command, and returns
/// `code`. The one way a command reports a failure that is not a diagnostic.
ExitCode fail(ExitCode code, std::string_view message);

}  // namespace ratelab::cli

#define RATELAB_CLI_CONCAT_(a, b) a##b
#define RATELAB_CLI_CONCAT(a, b) RATELAB_CLI_CONCAT_(a, b)
/// RATELAB_CLI_COMMAND(makeValidateCommand()); the argument is a Command.
#define RATELAB_CLI_COMMAND(...)                                                          \
    [[maybe_unused]] static const bool RATELAB_CLI_CONCAT(ratelabCliCommand_, __LINE__) = \
        ::ratelab::cli::registerCommand(__VA_ARGS__)
