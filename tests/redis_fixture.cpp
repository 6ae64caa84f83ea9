#include "redis_fixture.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

namespace ratelab::testing {

namespace {

constexpr const char* kRedisServer = "/usr/bin/redis-server";
constexpr auto kStartTimeout = std::chrono::seconds(10);

std::string makeTempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "ratelab-redis-XXXXXX").string();
    if (!mkdtemp(pattern.data())) return {};
    return pattern;
}

// A port that is free now, with port + 10000 (the cluster bus) free too. Another process may
// take it before redis-server binds: start() then retries with another.
int freePort() {
    thread_local std::mt19937 rng{std::random_device{}()};
    std::uniform_int_distribution<int> pick(20000, 39999);
    for (int attempt = 0; attempt < 200; ++attempt) {
        const int port = pick(rng);
        bool free = true;
        for (int p : {port, port + 10000}) {
            const int fd = socket(AF_INET, SOCK_STREAM, 0);
            sockaddr_in addr{};
            addr.sin_family = AF_INET;
            addr.sin_port = htons(static_cast<std::uint16_t>(p));
            addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            free = free && bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
            close(fd);
        }
        if (free) return port;
    }
    return 0;
}

std::string replyText(const redisReply* r) {
    switch (r->type) {
        case REDIS_REPLY_INTEGER:
            return std::to_string(r->integer);
        case REDIS_REPLY_NIL:
            return "(nil)";
        case REDIS_REPLY_ARRAY: {
            std::string s = "[";
            for (std::size_t i = 0; i < r->elements; ++i)
                s += (i ? " " : "") + replyText(r->element[i]);
            return s + "]";
        }
        default:
            return std::string(r->str, r->len);
    }
}

}  // namespace

RedisServer::~RedisServer() {
    kill();
    if (!dir_.empty()) {
        std::error_code ignored;
        std::filesystem::remove_all(dir_, ignored);
    }
}

std::string RedisServer::url() const {
    if (!socket_.empty()) return "unix://" + socket_;
    return "redis://127.0.0.1:" + std::to_string(port_);
}

bool RedisServer::start(const Options& options, std::string* error) {
    options_ = options;
    if (options_.cluster) options_.tcp = true;
    dir_ = makeTempDir();
    if (dir_.empty()) {
        *error = "mkdtemp failed: " + std::string(std::strerror(errno));
        return false;
    }
    if (!options_.tcp) {
        socket_ = dir_ + "/redis.sock";
        return spawn(error);
    }
    for (int attempt = 0; attempt < 10; ++attempt) {
        port_ = freePort();
        if (port_ == 0) break;
        if (spawn(error)) return true;
        kill();  // most likely the port was taken meanwhile; try another
    }
    *error = "could not start redis-server on a free port: " + *error;
    return false;
}

bool RedisServer::restart(std::string* error) {
    kill();
    return spawn(error);
}

bool RedisServer::spawn(std::string* error) {
    std::vector<std::string> args = {kRedisServer, "--save",      "",   "--appendonly",
                                     "no",         "--dir",       dir_, "--enable-debug-command",
                                     "local",      "--daemonize", "no"};
    if (options_.tcp) {
        args.insert(args.end(), {"--bind", "127.0.0.1", "--port", std::to_string(port_)});
    } else {
        args.insert(args.end(),
                    {"--port", "0", "--unixsocket", socket_, "--unixsocketperm", "700"});
    }
    if (options_.cluster) {
        args.insert(args.end(), {"--cluster-enabled", "yes", "--cluster-config-file",
                                 dir_ + "/nodes.conf", "--cluster-node-timeout", "2000"});
        std::error_code ignored;
        std::filesystem::remove(dir_ + "/nodes.conf", ignored);
    }
    args.insert(args.end(), options_.extraArgs.begin(), options_.extraArgs.end());
    std::vector<char*> argv;
    for (std::string& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    int pipeFds[2];
    if (pipe2(pipeFds, O_CLOEXEC) != 0) {
        *error = "pipe: " + std::string(std::strerror(errno));
        return false;
    }
    // fork + exec rather than posix_spawn, for PR_SET_PDEATHSIG: the server dies with the thread
    // that started it, so a crashed test or benchmark leaves no redis-server behind. Between fork
    // and exec the child only makes async-signal-safe calls.
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);  // the parent died before prctl
        dup2(pipeFds[1], 1);
        dup2(pipeFds[1], 2);
        execv(kRedisServer, argv.data());
        _exit(127);
    }
    close(pipeFds[1]);
    if (pid < 0) {
        close(pipeFds[0]);
        *error = "fork: " + std::string(std::strerror(errno));
        return false;
    }
    pid_ = pid;
    {
        std::lock_guard<std::mutex> lock(logMutex_);
        log_.clear();
        logClosed_ = false;
    }
    reader_ = std::thread([this, fd = pipeFds[0]] { readLog(fd); });
    if (!waitForLog("eady to accept connections", kStartTimeout)) {
        std::lock_guard<std::mutex> lock(logMutex_);
        *error = "redis-server did not become ready; its log:\n" + log_;
        return false;
    }
    return true;
}

void RedisServer::readLog(int fd) {
    char buffer[4096];
    for (;;) {
        const ssize_t n = read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        std::lock_guard<std::mutex> lock(logMutex_);
        if (n <= 0) {
            logClosed_ = true;
            logChanged_.notify_all();
            break;
        }
        log_.append(buffer, static_cast<std::size_t>(n));
        if (log_.size() > (1 << 20)) log_.erase(0, log_.size() - (1 << 19));
        logChanged_.notify_all();
    }
    close(fd);
}

bool RedisServer::waitForLog(std::string_view text, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(logMutex_);
    return logChanged_.wait_for(lock, timeout, [&] {
        return log_.find(text) != std::string::npos || logClosed_;
    }) && log_.find(text) != std::string::npos;
}

void RedisServer::stopReader() {
    if (reader_.joinable()) reader_.join();
}

void RedisServer::kill() {
    if (pid_ > 0) {
        ::kill(pid_, SIGCONT);  // a stopped process must run to die cleanly
        ::kill(pid_, SIGKILL);
        int status = 0;
        while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        pid_ = -1;
    }
    stopReader();  // the pipe closes with the process
}

void RedisServer::pause() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGSTOP);
    // The stop takes effect when the kernel next schedules the server: wait for it, so that no
    // command sent after pause() returns can still be answered. WEXITED too, or a server that
    // had died would be waited for forever; WNOWAIT leaves its status to kill().
    siginfo_t info{};
    while (waitid(P_PID, static_cast<id_t>(pid_), &info, WSTOPPED | WEXITED | WNOWAIT) < 0 &&
           errno == EINTR) {
    }
}

std::string RedisServer::processState() const {
    if (pid_ <= 0) return "not running";
    std::FILE* f = std::fopen(("/proc/" + std::to_string(pid_) + "/stat").c_str(), "r");
    if (!f) return "unknown (no /proc entry)";
    char line[512] = {};
    const std::size_t n = std::fread(line, 1, sizeof line - 1, f);
    std::fclose(f);
    // "pid (comm) S ...": the state follows the command's closing parenthesis.
    const char* close = std::strrchr(line, ')');
    if (n == 0 || !close || close[1] != ' ' || close[2] == '\0') return "unknown";
    return std::string(1, close[2]);
}

void RedisServer::resume() {
    if (pid_ > 0) ::kill(pid_, SIGCONT);
}

ReplyPtr RedisServer::command(const std::vector<std::string>& args) const {
    const timeval timeout{2, 0};
    redisContext* c = socket_.empty() ? redisConnectWithTimeout("127.0.0.1", port_, timeout)
                                      : redisConnectUnixWithTimeout(socket_.c_str(), timeout);
    if (!c) return nullptr;
    if (c->err) {
        redisFree(c);
        return nullptr;
    }
    redisSetTimeout(c, timeout);
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    for (const std::string& a : args) {
        argv.push_back(a.data());
        lengths.push_back(a.size());
    }
    auto* reply = static_cast<redisReply*>(
        redisCommandArgv(c, static_cast<int>(args.size()), argv.data(), lengths.data()));
    redisFree(c);
    return ReplyPtr(reply);
}

std::string RedisServer::commandText(const std::vector<std::string>& args) const {
    ReplyPtr reply = command(args);
    if (!reply) return "<transport error>";
    return replyText(reply.get());
}

bool RedisCluster::start(std::string* error, int nodes) {
    RedisServer::Options options;
    options.cluster = true;
    for (int i = 0; i < nodes; ++i) {
        nodes_.push_back(std::make_unique<RedisServer>());
        if (!nodes_.back()->start(options, error)) return false;
    }
    // Even slot ranges, distinct config epochs (as redis-cli --cluster create does), then MEET.
    for (int i = 0; i < nodes; ++i) {
        const int first = i * 16384 / nodes;
        const int last = (i + 1) * 16384 / nodes - 1;
        for (const auto& args : std::vector<std::vector<std::string>>{
                 {"CLUSTER", "ADDSLOTSRANGE", std::to_string(first), std::to_string(last)},
                 {"CLUSTER", "SET-CONFIG-EPOCH", std::to_string(i + 1)}}) {
            const std::string answer = node(i).commandText(args);
            if (answer != "OK") {
                *error = "node " + std::to_string(i) + ": " + args[1] + ": " + answer;
                return false;
            }
        }
    }
    for (int i = 1; i < nodes; ++i) {
        const std::string answer =
            node(0).commandText({"CLUSTER", "MEET", "127.0.0.1", std::to_string(node(i).port())});
        if (answer != "OK") {
            *error = "CLUSTER MEET: " + answer;
            return false;
        }
    }
    for (int i = 0; i < nodes; ++i) {
        if (!node(i).waitForLog("Cluster state changed: ok", std::chrono::seconds(20))) {
            *error = "node " + std::to_string(i) + " never reached cluster_state:ok";
            return false;
        }
    }
    return true;
}

std::vector<std::string> RedisCluster::urls() const {
    std::vector<std::string> urls;
    for (const auto& n : nodes_)
        urls.push_back(n->url());
    return urls;
}

std::string RedisCluster::nodeId(int i) const {
    return nodes_[static_cast<std::size_t>(i)]->commandText({"CLUSTER", "MYID"});
}

int RedisCluster::owner(int slot) {
    ReplyPtr slots = node(0).command({"CLUSTER", "SLOTS"});
    if (!slots || slots->type != REDIS_REPLY_ARRAY) return -1;
    for (std::size_t i = 0; i < slots->elements; ++i) {
        const redisReply* e = slots->element[i];
        if (e->element[0]->integer <= slot && slot <= e->element[1]->integer) {
            const long long port = e->element[2]->element[1]->integer;
            for (int n = 0; n < size(); ++n)
                if (node(n).port() == port) return n;
        }
    }
    return -1;
}

bool RedisCluster::beginMigration(int slot, int from, int to, std::string* error) {
    const std::string s = std::to_string(slot);
    std::string answer = node(to).commandText({"CLUSTER", "SETSLOT", s, "IMPORTING", nodeId(from)});
    if (answer == "OK")
        answer = node(from).commandText({"CLUSTER", "SETSLOT", s, "MIGRATING", nodeId(to)});
    if (answer != "OK") *error = "SETSLOT IMPORTING/MIGRATING: " + answer;
    return answer == "OK";
}

int RedisCluster::migrateKeys(int slot, int from, int to, std::string* error) {
    ReplyPtr keys =
        node(from).command({"CLUSTER", "GETKEYSINSLOT", std::to_string(slot), "100000"});
    if (!keys || keys->type != REDIS_REPLY_ARRAY) {
        *error = "GETKEYSINSLOT failed";
        return -1;
    }
    if (keys->elements == 0) return 0;
    std::vector<std::string> args = {
        "MIGRATE", "127.0.0.1", std::to_string(node(to).port()), "", "0", "5000", "KEYS"};
    for (std::size_t i = 0; i < keys->elements; ++i)
        args.emplace_back(keys->element[i]->str, keys->element[i]->len);
    const std::string answer = node(from).commandText(args);
    if (answer != "OK") {
        *error = "MIGRATE: " + answer;
        return -1;
    }
    return static_cast<int>(keys->elements);
}

bool RedisCluster::finishMigration(int slot, int to, std::string* error) {
    const std::string id = nodeId(to);
    // The new owner first (it bumps its config epoch), then everyone else.
    std::vector<int> order = {to};
    for (int i = 0; i < size(); ++i)
        if (i != to) order.push_back(i);
    for (int i : order) {
        const std::string answer =
            node(i).commandText({"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", id});
        if (answer != "OK") {
            *error = "SETSLOT NODE on node " + std::to_string(i) + ": " + answer;
            return false;
        }
    }
    return true;
}

}  // namespace ratelab::testing
