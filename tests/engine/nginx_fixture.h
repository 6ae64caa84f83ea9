#pragma once

// An nginx of the test's own for the export tests: `nginx -t` on a configuration, and a live
// nginx serving on a unix socket in a temporary directory (no root-owned paths, loopback only).

#include <poll.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "policy_export_fixture.h"

namespace ratelab::testing {

// An nginx.conf around an http-level snippet, with every path inside `dir` so that neither
// `nginx -t` nor a test server needs root-owned files.
inline std::string nginxConf(const QString& dir, const std::string& http, const std::string& server,
                             bool serve) {
    std::string d = dir.toStdString();
    std::string out = "pid " + d + "/nginx.pid;\nerror_log " + d + "/error.log;\n";
    if (serve) out += "daemon off;\nmaster_process off;\n";
    out += "events { worker_connections 64; }\nhttp {\n";
    for (const char* temp : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"}) {
        out += std::string("    ") + temp + "_temp_path " + d + "/" + temp + ";\n";
    }
    out += "    access_log off;\n" + http + "\n    server {\n        listen unix:" + d +
           "/nginx.sock;\n" + server + "    }\n}\n";
    return out;
}

struct NginxCheck {
    int exitCode = -1;
    QString output;
};

inline NginxCheck nginxTest(const std::string& exported) {
    QTemporaryDir dir;
    writeFile(dir.filePath("export.conf"), exported);
    writeFile(
        dir.filePath("nginx.conf"),
        nginxConf(dir.path(), "    include " + dir.filePath("export.conf").toStdString() + ";",
                  "        location / { return 204; }\n", false));
    QProcess nginx;
    nginx.start(kNginx, {"-t", "-p", dir.path(), "-c", dir.filePath("nginx.conf"), "-e",
                         dir.filePath("error.log")});
    NginxCheck check;
    if (!nginx.waitForFinished(60'000)) return check;
    check.exitCode = nginx.exitStatus() == QProcess::NormalExit ? nginx.exitCode() : -2;
    check.output = QString::fromUtf8(nginx.readAllStandardError());
    return check;
}

// nginx in the foreground, single process, serving on a unix socket in a temporary directory.
// Requests say which client they come from in X-Real-IP (the realip module trusts the socket).
class LiveNginx {
public:
    bool start(const std::string& http, const std::string& server) {
        if (!dir_.isValid()) return false;
        std::string realip = "    set_real_ip_from unix:;\n    real_ip_header X-Real-IP;\n";
        QDir(dir_.path()).mkdir("html");
        writeFile(dir_.filePath("html/ok"), "ok\n");
        writeFile(dir_.filePath("nginx.conf"), nginxConf(dir_.path(), realip + http, server, true));
        // nginx writes its pid file once its sockets listen: wait for it without sleeping.
        int watch = inotify_init1(IN_CLOEXEC);
        if (watch < 0 || inotify_add_watch(watch, dir_.path().toLocal8Bit().constData(),
                                           IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
            return false;
        }
        process_.setProcessChannelMode(QProcess::ForwardedChannels);
        process_.start(kNginx, {"-p", dir_.path(), "-c", dir_.filePath("nginx.conf"), "-e",
                                dir_.filePath("error.log")});
        bool ready = false;
        for (int round = 0; round < 100 && !ready; ++round) {
            pollfd p{watch, POLLIN, 0};
            if (poll(&p, 1, 100) <= 0) {
                if (process_.state() == QProcess::NotRunning) break;
                continue;
            }
            alignas(inotify_event) char buffer[4096];
            ssize_t n = read(watch, buffer, sizeof buffer);
            for (ssize_t at = 0; at < n;) {
                auto* e = reinterpret_cast<inotify_event*>(buffer + at);
                if (e->len && std::string_view(e->name) == "nginx.pid") ready = true;
                at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
            }
        }
        close(watch);
        if (!ready) qWarning("%s", readFile(dir_.filePath("error.log")).c_str());
        return ready;
    }

    ~LiveNginx() {
        if (process_.state() != QProcess::NotRunning) {
            process_.terminate();  // our own child only
            if (!process_.waitForFinished(10'000)) process_.kill();
            process_.waitForFinished(10'000);
        }
    }

    struct Response {
        int status = 0;
        std::string head;  ///< status line and header lines, as sent
        std::string body;
    };

    /// The directory served as the document root, for `root` in a location.
    std::string htmlRoot() const { return dir_.filePath("html").toStdString(); }

    /// One HTTP/1.0 request from `client` (an address, through X-Real-IP); `extra` holds more
    /// header lines, each ending in CRLF.
    Response get(const std::string& method, const std::string& path, const std::string& client,
                 const std::string& extra = "") {
        Response response;
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::string socketPath = dir_.filePath("nginx.sock").toStdString();
        std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socketPath.c_str());
        timeval timeout{10, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
        if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
            close(fd);
            return response;
        }
        std::string request = method + " " + path +
                              " HTTP/1.0\r\nHost: test\r\nX-Real-IP: " + client + "\r\n" + extra +
                              "\r\n";
        if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
            close(fd);
            return response;
        }
        std::string reply;
        char buffer[4096];
        for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;)
            reply.append(buffer, n);
        close(fd);
        if (reply.rfind("HTTP/1.1 ", 0) == 0) response.status = std::atoi(reply.c_str() + 9);
        std::size_t body = reply.find("\r\n\r\n");
        if (body != std::string::npos) {
            response.head = reply.substr(0, body);
            response.body = reply.substr(body + 4);
        }
        return response;
    }

private:
    QTemporaryDir dir_;
    QProcess process_;
};

}  // namespace ratelab::testing
