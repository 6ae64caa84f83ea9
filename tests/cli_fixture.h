#pragma once

// Runs the built ratelab-cli as a user or CI runs it: arguments, standard input, the exit code
// and both streams. For suites registered with ratelab_add_test(... CLI), which defines
// RATELAB_CLI as the binary's path.

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace ratelab::testing {

struct CliRun {
    int exitCode = -1;  ///< -1 when the process crashed or did not finish
    QString out;
    QString err;
    QJsonObject json() const { return QJsonDocument::fromJson(out.toUtf8()).object(); }
};

inline QString cliPath() {
    return QStringLiteral(RATELAB_CLI);
}

inline CliRun finish(QProcess& process, int timeoutMs) {
    CliRun run;
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        return run;
    }
    run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    run.out = QString::fromUtf8(process.readAllStandardOutput());
    run.err = QString::fromUtf8(process.readAllStandardError());
    return run;
}

/// Runs ratelab-cli with `arguments`, writing `input` to its standard input (then closing it).
inline CliRun runCli(const QStringList& arguments, const QByteArray& input = {},
                     int timeoutMs = 120'000) {
    QProcess process;
    process.start(cliPath(), arguments);
    process.write(input);
    process.closeWriteChannel();
    return finish(process, timeoutMs);
}

/// Runs `script` under bash with $CLI naming ratelab-cli: for pipes and process substitutions
/// (<(...)), which only a shell makes.
inline CliRun runCliInShell(const QString& script, int timeoutMs = 120'000) {
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("CLI", cliPath());
    process.setProcessEnvironment(environment);
    process.start("bash", {"-c", script});
    process.closeWriteChannel();
    return finish(process, timeoutMs);
}

}  // namespace ratelab::testing
