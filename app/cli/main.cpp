// ratelab-cli: headless runs, replays, sweeps, validation, export, one-request checks and a
// server. Each command is one cmd_*.cpp file; command_line.cpp parses and dispatches.

#include <QCoreApplication>

#include "cli/command_line.h"

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName("ratelab-cli");
    QCoreApplication::setApplicationVersion(RATELAB_VERSION);
    return ratelab::cli::runCommandLine(QCoreApplication::arguments().mid(1));
}
