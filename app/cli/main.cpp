// ratelab-cli: headless runs, replays, sweeps, validation, export and one-request checks.

#include <QCoreApplication>
#include <QTextStream>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "cli/command.h"

namespace ratelab::cli {

namespace {
std::vector<Command>& registry() {
    static std::vector<Command> commands;
    return commands;
}

void printUsage(FILE* out) {
    std::fprintf(out, "usage: ratelab-cli COMMAND [ARGS...]\n\ncommands:\n");
    std::vector<Command> sorted = registry();
    std::sort(sorted.begin(), sorted.end(),
              [](const Command& a, const Command& b) { return std::string_view(a.name) < b.name; });
    for (const Command& c : sorted) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
    std::fprintf(out, "\nratelab-cli COMMAND --help shows a command's options.\n"
                      "exit codes: 0 success, 1 an expectation failed, 2 bad input, "
                      "64 a wrong command line (fit)\n");
}
}  // namespace

bool registerCommand(Command command) {
    registry().push_back(std::move(command));
    return true;
}

}  // namespace ratelab::cli

int main(int argc, char** argv) {
    using namespace ratelab::cli;
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName("ratelab-cli");
    QCoreApplication::setApplicationVersion(RATELAB_VERSION);
    QStringList arguments = QCoreApplication::arguments();
    if (arguments.size() < 2 || arguments[1] == "--help" || arguments[1] == "-h") {
        printUsage(arguments.size() < 2 ? stderr : stdout);
        return arguments.size() < 2 ? kBadInput : kSuccess;
    }
    if (arguments[1] == "--version") {
        std::printf("ratelab-cli %s\n", RATELAB_VERSION);
        return kSuccess;
    }
    for (const Command& command : registry()) {
        if (arguments[1] == QLatin1String(command.name)) {
            return command.run(arguments.mid(2));
        }
    }
    std::fprintf(stderr, "ratelab-cli: unknown command \"%s\"\n\n", qPrintable(arguments[1]));
    printUsage(stderr);
    return kBadInput;
}
