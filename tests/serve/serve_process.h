#pragma once

// `ratelab-cli serve` as its own process, for the tests that need the real command: signals,
// exit codes, stdout and the JSON log on stderr, and proxies in front of it.

#include <QProcess>
#include <QStringList>
#include <QTemporaryDir>
#include <csignal>
#include <string>

#include "serve_fixture.h"

namespace ratelab::testing {

inline const char* const kRatelabCli = RATELAB_CLI;

class ServeProcess {
public:
    /// Starts `ratelab-cli serve --policy POLICY ARGS... --listen 127.0.0.1:0 --admin
    /// 127.0.0.1:0` and waits for the addresses it prints. False if it does not get there.
    bool start(const std::string& policyPath, const QStringList& args) {
        QStringList all{"serve",      "--policy",    QString::fromStdString(policyPath),
                        "--listen",   "127.0.0.1:0", "--admin",
                        "127.0.0.1:0"};
        all += args;
        process_.setProcessEnvironment(environment);
        process_.start(kRatelabCli, all);
        if (!process_.waitForStarted(10'000)) return false;
        while (port == 0 || adminPort == 0) {
            if (!process_.canReadLine() && !process_.waitForReadyRead(10'000)) return false;
            while (process_.canReadLine()) {
                const QString line = QString::fromUtf8(process_.readLine()).trimmed();
                const quint16 p = line.section(':', -1).toUShort();
                if (line.startsWith("listening on ")) port = p;
                if (line.startsWith("admin on ")) adminPort = p;
            }
        }
        process_.setReadChannel(QProcess::StandardError);  // waitForLog() waits on the log
        return true;
    }

    ~ServeProcess() {
        if (process_.state() != QProcess::NotRunning) {
            process_.kill();  // our own child only
            process_.waitForFinished(10'000);
        }
    }

    /// Sends a signal to the process (SIGHUP, SIGTERM).
    /// Nothing when it is not running: kill(0, ...) would signal this whole process group.
    void signal(int number) {
        const auto pid = static_cast<pid_t>(process_.processId());
        if (pid > 0) ::kill(pid, number);
    }
    /// Waits for the exit; -1 if it is still running after `ms`.
    int waitForExit(int ms = 20'000) {
        if (!process_.waitForFinished(ms)) return -1;
        return process_.exitStatus() == QProcess::NormalExit ? process_.exitCode() : -2;
    }
    /// Everything written to stderr so far (the JSON log lines).
    std::string log() {
        log_ += process_.readAllStandardError().toStdString();
        return log_;
    }
    /// Waits until the log has a line containing `text`.
    bool waitForLog(const std::string& text, int ms = 10'000) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
        while (log().find(text) == std::string::npos) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  deadline - std::chrono::steady_clock::now())
                                  .count();
            if (left <= 0) return false;
            process_.waitForReadyRead(static_cast<int>(left));
        }
        return true;
    }

    /// Everything written to stdout so far after the listening lines.
    std::string output() { return process_.readAllStandardOutput().toStdString(); }

    std::uint16_t port = 0;
    std::uint16_t adminPort = 0;
    /// The environment start() runs the command in.
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();

private:
    QProcess process_;
    std::string log_;
};

/// GET or POST on the admin listener; the whole answer.
inline HttpAnswer adminRequest(std::uint16_t port, const std::string& method,
                               const std::string& path) {
    RawClient c(port);
    c.send(method + " " + path + " HTTP/1.1\r\nHost: admin\r\nContent-Length: 0\r\n\r\n");
    return c.read(10'000);
}

}  // namespace ratelab::testing
