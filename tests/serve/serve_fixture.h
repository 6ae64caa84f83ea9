#pragma once

// Shared pieces of the sidecar tests (tests/serve): a clock the test moves, raw HTTP clients
// that can misbehave on purpose, and an in-process sidecar on a temporary policy file.

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QTemporaryDir>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "serve/sidecar.h"

namespace ratelab::testing {

/// Time the test moves; the server's timeouts and the decisions run on it.
class ManualClock final : public serve::ServerClock {
public:
    Nanos now() const override { return now_.load(); }
    void advance(Nanos by) { now_ += by; }

private:
    std::atomic<Nanos> now_{kNanosPerSecond};
};

inline void writeText(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

/// A policy file with one policy per (name, path prefix, capacity) keyed by the peer, refilling
/// so slowly that no test sees a refill.
inline std::string policyText(
    const std::vector<std::tuple<std::string, std::string, int>>& policies,
    const std::string& trustedCidr = "") {
    std::string text = "{\n  \"version\": 1,\n  \"store\": { \"kind\": \"memory\" },\n";
    if (!trustedCidr.empty()) {
        text += "  \"trusted_proxies\": { \"cidrs\": [\"" + trustedCidr +
                "\"], \"header\": \"x-forwarded-for\" },\n";
    }
    text += "  \"policies\": [\n";
    for (std::size_t i = 0; i < policies.size(); ++i) {
        const auto& [name, prefix, capacity] = policies[i];
        text += "    { \"name\": \"" + name + "\", \"match\": { \"path_prefix\": \"" + prefix +
                "\" }, \"algorithm\": \"token_bucket\", \"capacity\": " + std::to_string(capacity) +
                ", \"refill_per_second\": " +
                (capacity >= 1000 ? std::to_string(capacity) : std::string("0.001")) +
                ", \"key\": { \"source\": \"peer\" }, \"headers\": \"ietf\" }";
        text += i + 1 < policies.size() ? ",\n" : "\n";
    }
    text += "  ]\n}\n";
    return text;
}

struct HttpAnswer {
    int status = 0;
    std::map<std::string, std::string> headers;  ///< names in lower case
    std::string body;
    bool ok() const { return status != 0; }
    std::string header(const std::string& lowerName) const {
        auto it = headers.find(lowerName);
        return it == headers.end() ? std::string() : it->second;
    }
};

/// A blocking TCP client with deadlines on every wait (poll), for tests only.
class RawClient {
public:
    RawClient() = default;
    explicit RawClient(std::uint16_t port) { connectTo(port); }
    ~RawClient() { closeNow(); }
    RawClient(const RawClient&) = delete;
    RawClient& operator=(const RawClient&) = delete;
    RawClient(RawClient&& other) noexcept : fd_(other.fd_), buffer_(std::move(other.buffer_)) {
        other.fd_ = -1;
    }

    bool connectTo(std::uint16_t port) {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        const int on = 1;
        setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        return ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    }
    bool valid() const { return fd_ >= 0; }
    int fd() const { return fd_; }

    bool send(const std::string& bytes) {
        std::size_t sent = 0;
        while (sent < bytes.size()) {
            const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
            if (n <= 0) return false;
            sent += static_cast<std::size_t>(n);
        }
        return true;
    }

    /// Reads one response (Content-Length framed) within `timeoutMs`. status 0 on timeout or
    /// when the server closed first.
    HttpAnswer read(int timeoutMs = 5000) {
        HttpAnswer answer;
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
        std::size_t headEnd;
        while ((headEnd = buffer_.find("\r\n\r\n")) == std::string::npos) {
            if (!fill(deadline)) return answer;
        }
        const std::string head = buffer_.substr(0, headEnd);
        std::size_t lineEnd = head.find("\r\n");
        const std::string statusLine = head.substr(0, lineEnd);
        if (statusLine.size() < 12) return answer;
        answer.status = std::stoi(statusLine.substr(9, 3));
        while (lineEnd != std::string::npos && lineEnd < head.size()) {
            const std::size_t next = head.find("\r\n", lineEnd + 2);
            const std::string line = head.substr(lineEnd + 2, next - lineEnd - 2);
            const std::size_t colon = line.find(':');
            if (colon != std::string::npos) {
                std::string name = line.substr(0, colon);
                for (char& c : name)
                    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                std::string value = line.substr(colon + 1);
                while (!value.empty() && value.front() == ' ')
                    value.erase(0, 1);
                answer.headers[name] = value;
            }
            lineEnd = next;
        }
        const std::size_t length =
            std::stoul(answer.header("content-length").empty() ? std::string("0")
                                                               : answer.header("content-length"));
        const bool interim = answer.status == 100;
        const std::size_t total = headEnd + 4 + (interim ? 0 : length);
        while (buffer_.size() < total) {
            if (!fill(deadline)) {
                answer.status = 0;
                return answer;
            }
        }
        answer.body = buffer_.substr(headEnd + 4, interim ? 0 : length);
        buffer_.erase(0, total);
        return answer;
    }

    /// True when the server closes (or resets) the connection within `timeoutMs`, after any
    /// bytes it still sends (kept in the buffer).
    bool closedBy(int timeoutMs = 5000) {
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
        for (;;) {
            const int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                  deadline - std::chrono::steady_clock::now())
                                                  .count());
            if (left <= 0) return false;
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, left) <= 0) return false;
            char chunk[4096];
            const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
            if (n <= 0) return true;
            buffer_.append(chunk, static_cast<std::size_t>(n));
        }
    }
    const std::string& buffered() const { return buffer_; }

    /// Closes with a reset (SO_LINGER 0), as an aborted client does.
    void reset() {
        if (fd_ < 0) return;
        linger l{1, 0};
        setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        closeNow();
    }
    void closeNow() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

private:
    bool fill(std::chrono::steady_clock::time_point deadline) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        if (left <= 0) return false;
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
        char chunk[16384];
        const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
        if (n <= 0) return false;
        buffer_.append(chunk, static_cast<std::size_t>(n));
        return true;
    }

    int fd_ = -1;
    std::string buffer_;
};

inline std::string get(const std::string& path, const std::string& extra = "") {
    return "GET " + path + " HTTP/1.1\r\nHost: test\r\n" + extra + "\r\n";
}

/// Resident memory of this process, in bytes.
inline std::int64_t residentBytes() {
    std::ifstream statm("/proc/self/statm");
    std::int64_t size = 0, resident = 0;
    statm >> size >> resident;
    return resident * sysconf(_SC_PAGESIZE);
}

/// A sidecar in this process on a policy file in a temporary directory, with the test's clock
/// and its log lines captured.
class SidecarUnderTest {
public:
    explicit SidecarUnderTest(const std::string& policy,
                              std::function<void(serve::SidecarOptions&)> tune = {}) {
        path_ = dir_.filePath("policy.json").toStdString();
        writeText(path_, policy);
        serve::SidecarOptions options;
        options.policyPath = path_;
        options.version = "test";
        options.http.listen = {*serve::ListenAddress::parse("127.0.0.1:0", nullptr)};
        options.http.threads = 2;
        options.http.clock = &clock;
        options.admin = serve::ListenAddress::parse("127.0.0.1:0", nullptr);
        options.logSink = [this](std::string_view line) {
            std::lock_guard<std::mutex> lock(logMutex_);
            logLines_.emplace_back(line);
        };
        if (tune) tune(options);
        std::vector<Diagnostic> diagnostics;
        sidecar = serve::Sidecar::open(options, &diagnostics, &error);
        error += formatDiagnostics(diagnostics);
        if (sidecar) sidecar->start();
    }
    ~SidecarUnderTest() {
        if (sidecar) {
            sidecar->drain();
            sidecar->cut();
            sidecar->wait();
        }
    }

    std::uint16_t port() const { return sidecar->addresses().front().port; }
    std::uint16_t adminPort() const { return sidecar->adminAddresses().front().port; }
    const std::string& policyPath() const { return path_; }
    std::vector<std::string> logLines() {
        std::lock_guard<std::mutex> lock(logMutex_);
        return logLines_;
    }
    /// Waits (without sleeping: on the server's own count) until `n` connections are open,
    /// so that a clock move that follows finds them all. False after 10 s of real time.
    bool waitForOpenConnections(std::int64_t n) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (sidecar->decisionServer().stats().openConnections != n) {
            if (std::chrono::steady_clock::now() > deadline) return false;
            std::this_thread::yield();
        }
        return true;
    }
    /// Moves the clock and has the loops look at their timers.
    void advance(Nanos by) {
        clock.advance(by);
        sidecar->decisionServer().wake();
    }

    ManualClock clock;
    std::unique_ptr<serve::Sidecar> sidecar;
    std::string error;

private:
    QTemporaryDir dir_;
    std::string path_;
    std::mutex logMutex_;
    std::vector<std::string> logLines_;
};

}  // namespace ratelab::testing
