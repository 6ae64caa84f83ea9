#include "cli/command_line.h"

#include <QCommandLineParser>
#include <algorithm>
#include <charconv>
#include <cstdio>

#include "ratelab/number_text.h"

namespace ratelab::cli {

namespace {

constexpr int kWidth = 100;

std::vector<Command>& registry() {
    static std::vector<Command> commands;
    return commands;
}

// The command being run, for fail()'s messages.
const Command* running = nullptr;

void appendWrapped(std::string& out, std::string_view text, std::size_t indent,
                   std::size_t firstColumn) {
    std::size_t column = firstColumn;
    bool first = true;
    while (!text.empty()) {
        const std::size_t space = text.find(' ');
        const std::string_view word = text.substr(0, space);
        text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
        if (!first && column + 1 + word.size() > kWidth) {
            out += "\n" + std::string(indent, ' ');
            column = indent;
        } else if (!first) {
            out += ' ';
            ++column;
        }
        out += word;
        column += word.size();
        first = false;
    }
    out += '\n';
}

std::string spelling(const Option& o) {
    std::string s = o.shortName ? std::string("-") + o.shortName + ", --" + o.name : "--" + o.name;
    if (o.kind != Option::Kind::Flag) s += " " + o.valueName;
    return s;
}

std::string positionalSpelling(const Positional& p) {
    return p.many ? p.name + "..." : p.name;
}

// "- reads standard input" and the like, after an argument's own help.
std::string withDash(std::string help, Option::Kind kind) {
    if (kind == Option::Kind::Input) help += " Use - for standard input.";
    if (kind == Option::Kind::Output) help += " Use - for standard output.";
    return help;
}

void appendTable(std::string& out, const std::vector<std::pair<std::string, std::string>>& rows) {
    std::size_t width = 0;
    for (const auto& [left, right] : rows)
        width = std::max(width, left.size());
    width = std::min<std::size_t>(width, 28);
    for (const auto& [left, right] : rows) {
        out += "  " + left;
        std::size_t column = 2 + left.size();
        if (left.size() > width) {
            out += "\n" + std::string(width + 4, ' ');
        } else {
            out += std::string(width + 4 - column, ' ');
        }
        appendWrapped(out, right, width + 4, width + 4);
    }
}

// `own`: a command's own codes, which say what the shared ones of the same number mean for it
// (with `replace`), or come beside them (the program's help).
std::string exitStatusText(bool hasExpectations,
                           const std::vector<std::pair<int, std::string>>& own = {},
                           bool replace = false) {
    std::string out = "Exit status:\n";
    std::vector<std::pair<int, std::string>> codes = {{0, "success"}};
    if (hasExpectations) codes.push_back({1, "an expectation of the scenario failed"});
    codes.push_back(
        {2,
         "an input is invalid: a policy, scenario or log has errors (FILE:LINE:COLUMN), or "
         "an export target cannot express the policy"});
    codes.push_back({64, "the command line is wrong"});
    codes.push_back({74, "a file cannot be read or written, or a store or port cannot be reached"});
    if (replace) {
        std::erase_if(codes, [&own](const auto& shared) {
            return std::any_of(own.begin(), own.end(),
                               [&shared](const auto& o) { return o.first == shared.first; });
        });
    }
    codes.insert(codes.end(), own.begin(), own.end());
    std::stable_sort(codes.begin(), codes.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::pair<std::string, std::string>> rows;
    for (const auto& [code, meaning] : codes)
        rows.push_back({std::to_string(code), meaning});
    appendTable(out, rows);
    return out;
}

int usageError(const Command& command, std::string_view problem) {
    std::fprintf(stderr, "ratelab-cli %s: %.*s\n%s", command.name.c_str(),
                 static_cast<int>(problem.size()), problem.data(), usageLine(command).c_str());
    std::fprintf(stderr, "Try 'ratelab-cli help %s'.\n", command.name.c_str());
    return kUsage;
}

}  // namespace

Option Option::flag(std::string name, std::string help) {
    return Option{std::move(name), 0, {}, std::move(help), Kind::Flag};
}
Option Option::value(std::string name, std::string valueName, std::string help) {
    return Option{std::move(name), 0, std::move(valueName), std::move(help), Kind::Value};
}
Option Option::input(std::string name, std::string valueName, std::string help) {
    return Option{std::move(name), 0, std::move(valueName), std::move(help), Kind::Input};
}
Option Option::output(std::string name, std::string valueName, std::string help) {
    return Option{std::move(name), 0, std::move(valueName), std::move(help), Kind::Output};
}
Option Option::quiet() {
    return flag("quiet", "Print nothing on success but errors.");
}
Option Option::seed() {
    return value("seed", "N", "Override the scenario's seed.");
}
Option Option::scenarioPolicy() {
    return policy("policy", "P.json", "The policy file (default: the scenario's).");
}
Option Option::policy(std::string name, std::string valueName, std::string help) {
    return input(std::move(name), std::move(valueName),
                 std::move(help) +
                     " KIND:PATH imports another product's configuration instead (see "
                     "`import --help`).");
}
Option Option::asRequired() && {
    required = true;
    return std::move(*this);
}
Option Option::asRepeated() && {
    repeatable = true;
    return std::move(*this);
}
Option Option::withShort(char c) && {
    shortName = c;
    return std::move(*this);
}

bool Arguments::isSet(std::string_view option) const {
    if (std::find(flags_.begin(), flags_.end(), option) != flags_.end()) return true;
    return std::any_of(values_.begin(), values_.end(),
                       [&](const auto& v) { return v.first == option; });
}

std::string Arguments::value(std::string_view option, std::string_view fallback) const {
    for (auto it = values_.rbegin(); it != values_.rend(); ++it) {
        if (it->first == option) return it->second;
    }
    return std::string(fallback);
}

bool Arguments::wholeNumber(std::string_view option, std::int64_t min, std::int64_t max,
                            std::int64_t& out) const {
    if (!isSet(option)) return true;
    const std::string text = value(option);
    std::int64_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || n < min || n > max) {
        fail(kUsage, "--" + std::string(option) + " \"" + text +
                         "\": expected a whole number from " + std::to_string(min) + " to " +
                         std::to_string(max));
        return false;
    }
    out = n;
    return true;
}

bool Arguments::number(std::string_view option, double min, double max, double& out,
                       std::string_view unit) const {
    if (!isSet(option)) return true;
    const std::string text = value(option);
    double x = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
    if (ec != std::errc() || end != text.data() + text.size() || !(x >= min) || !(x <= max)) {
        fail(kUsage, "--" + std::string(option) + " \"" + text + "\": expected " + numberText(min) +
                         " to " + numberText(max) + (unit.empty() ? "" : " " + std::string(unit)));
        return false;
    }
    out = x;
    return true;
}

bool Arguments::seed(std::optional<std::uint64_t>& out) const {
    if (!isSet("seed")) return true;
    const std::string text = value("seed");
    std::uint64_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size()) {
        fail(kUsage, "--seed \"" + text + "\": expected a whole number >= 0");
        return false;
    }
    out = n;
    return true;
}

std::vector<std::string> Arguments::values(std::string_view option) const {
    std::vector<std::string> out;
    for (const auto& [name, value] : values_) {
        if (name == option) out.push_back(value);
    }
    return out;
}

bool registerCommand(Command command) {
    registry().push_back(std::move(command));
    return true;
}

std::vector<const Command*> commands() {
    std::vector<const Command*> out;
    for (const Command& c : registry())
        out.push_back(&c);
    std::sort(out.begin(), out.end(),
              [](const Command* a, const Command* b) { return a->name < b->name; });
    return out;
}

ExitCode fail(ExitCode code, std::string_view message) {
    std::fprintf(stderr, "ratelab-cli%s%s: %.*s\n", running ? " " : "",
                 running ? running->name.c_str() : "", static_cast<int>(message.size()),
                 message.data());
    if (code == kUsage && running) {
        std::fprintf(stderr, "Try 'ratelab-cli help %s'.\n", running->name.c_str());
    }
    return code;
}

std::string usageLine(const Command& command) {
    std::string line = "ratelab-cli " + command.name;
    for (const Option& o : command.options) {
        std::string part = "--" + o.name;
        if (o.kind != Option::Kind::Flag) part += " " + o.valueName;
        if (o.repeatable) part += "...";
        line += " " + (o.required ? part : "[" + part + "]");
    }
    for (const Positional& p : command.positionals)
        line += " " + positionalSpelling(p);
    std::string out = "usage: ";
    appendWrapped(out, line, 7 + command.name.size() + 13, 7);
    return out;
}

std::string helpText(const Command& command) {
    std::string out = usageLine(command) + "\n";
    appendWrapped(out, command.description, 0, 0);
    if (!command.positionals.empty()) {
        out += "\nArguments:\n";
        std::vector<std::pair<std::string, std::string>> rows;
        for (const Positional& p : command.positionals) {
            rows.push_back({positionalSpelling(p), withDash(p.help, p.kind)});
        }
        appendTable(out, rows);
    }
    out += "\nOptions:\n";
    std::vector<std::pair<std::string, std::string>> rows;
    for (const Option& o : command.options) {
        std::string help = withDash(o.help, o.kind);
        if (o.repeatable) help += " Repeatable.";
        rows.push_back({spelling(o), help});
    }
    rows.push_back({"-h, --help", "Show this help."});
    appendTable(out, rows);
    out += "\n" + exitStatusText(command.hasExpectations, command.exitStatuses, true);
    return out;
}

std::string programHelp() {
    std::string out = "usage: ratelab-cli COMMAND [ARGS...]\n\nCommands:\n";
    std::vector<std::pair<std::string, std::string>> rows;
    for (const Command* c : commands())
        rows.push_back({c->name, c->summary});
    appendTable(out, rows);
    out += "\n";
    appendWrapped(out,
                  "'ratelab-cli help COMMAND' or 'ratelab-cli COMMAND --help' shows a command's "
                  "arguments; 'ratelab-cli --version' (-V) prints the version. Every file "
                  "argument takes - for standard input, every output - for standard output.",
                  0, 0);
    std::vector<std::pair<int, std::string>> own;
    for (const Command* c : commands()) {
        for (const auto& [code, meaning] : c->exitStatuses)
            own.push_back({code, c->name + ": " + meaning});
    }
    out += "\n" + exitStatusText(true, own);
    return out;
}

std::optional<Arguments> CommandLine::parse(const Command& command, const QStringList& arguments,
                                            int& exitCode) {
    QCommandLineParser parser;
    parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    const QCommandLineOption help({"h", "help"}, "help");
    parser.addOption(help);
    for (const Option& o : command.options) {
        QStringList names;
        if (o.shortName) names << QString(QChar(o.shortName));
        names << QString::fromStdString(o.name);
        QCommandLineOption q(names, QString::fromStdString(o.help));
        if (o.kind != Option::Kind::Flag) q.setValueName(QString::fromStdString(o.valueName));
        parser.addOption(q);
    }
    if (!parser.parse(QStringList{"ratelab-cli"} + arguments)) {
        exitCode = usageError(command, parser.errorText().toStdString());
        return std::nullopt;
    }
    if (parser.isSet(help)) {
        std::fputs(helpText(command).c_str(), stdout);
        exitCode = kSuccess;
        return std::nullopt;
    }

    Arguments out;
    int stdinUsers = 0;
    int stdoutUsers = 0;
    auto claim = [&](Option::Kind kind, const std::string& value) {
        if (value != "-") return;
        if (kind == Option::Kind::Input) ++stdinUsers;
        if (kind == Option::Kind::Output) ++stdoutUsers;
    };
    for (const Option& o : command.options) {
        const QString name = QString::fromStdString(o.name);
        if (!parser.isSet(name)) {
            if (o.required) {
                exitCode = usageError(command, "--" + o.name + " " + o.valueName + " is required");
                return std::nullopt;
            }
            continue;
        }
        if (o.kind == Option::Kind::Flag) {
            out.flags_.push_back(o.name);
            continue;
        }
        const QStringList values = parser.values(name);
        if (values.size() > 1 && !o.repeatable) {
            exitCode = usageError(command, "--" + o.name + " is given more than once");
            return std::nullopt;
        }
        for (const QString& v : values) {
            std::string value = v.toStdString();
            if (value.empty()) {
                exitCode = usageError(command, "--" + o.name + " needs a non-empty value");
                return std::nullopt;
            }
            claim(o.kind, value);
            out.values_.emplace_back(o.name, std::move(value));
        }
    }

    const QStringList given = parser.positionalArguments();
    std::size_t next = 0;
    for (const Positional& p : command.positionals) {
        if (next >= static_cast<std::size_t>(given.size())) {
            exitCode = usageError(command, "missing " + p.name);
            return std::nullopt;
        }
        const std::size_t last = p.many ? static_cast<std::size_t>(given.size()) : next + 1;
        for (; next < last; ++next) {
            out.positionals_.push_back(given[static_cast<qsizetype>(next)].toStdString());
            claim(p.kind, out.positionals_.back());
        }
    }
    if (next < static_cast<std::size_t>(given.size())) {
        // Not echoed: an unquoted header value (a credential) may have been split off here.
        exitCode = usageError(command, "unexpected argument (quote values that hold spaces)");
        return std::nullopt;
    }
    if (stdinUsers > 1) {
        exitCode = usageError(command, "standard input (-) can be read by one argument only");
        return std::nullopt;
    }
    if (stdoutUsers > 1) {
        exitCode = usageError(command, "standard output (-) can take one output only");
        return std::nullopt;
    }
    out.stdoutTaken_ = stdoutUsers > 0;
    return out;
}

int runCommandLine(const QStringList& arguments) {
    auto find = [](const QString& name) -> const Command* {
        for (const Command* c : commands()) {
            if (name == QString::fromStdString(c->name)) return c;
        }
        return nullptr;
    };
    auto unknown = [](const QString& name) {
        std::fprintf(stderr, "ratelab-cli: unknown command \"%s\"\n\n%s", qPrintable(name),
                     programHelp().c_str());
        return kUsage;
    };
    if (arguments.isEmpty()) {
        std::fputs(programHelp().c_str(), stderr);
        return kUsage;
    }
    const QString& first = arguments.front();
    if (first == "--help" || first == "-h" || (first == "help" && arguments.size() == 1)) {
        std::fputs(programHelp().c_str(), stdout);
        return kSuccess;
    }
    if (first == "--version" || first == "-V") {
        std::printf("ratelab-cli %s\n", RATELAB_VERSION);
        return kSuccess;
    }
    if (first == "help") {
        if (arguments.size() > 2) {
            std::fprintf(stderr, "ratelab-cli help: expected one command name\n");
            return kUsage;
        }
        const Command* command = find(arguments[1]);
        if (!command) return unknown(arguments[1]);
        std::fputs(helpText(*command).c_str(), stdout);
        return kSuccess;
    }
    const Command* command = find(first);
    if (!command) return unknown(first);
    int exitCode = kSuccess;
    std::optional<Arguments> parsed = CommandLine::parse(*command, arguments.mid(1), exitCode);
    if (!parsed) return exitCode;
    running = command;
    const int result = command->run(*parsed);
    running = nullptr;
    return result;
}

}  // namespace ratelab::cli
