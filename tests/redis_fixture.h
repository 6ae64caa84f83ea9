#pragma once

// Throwaway Redis servers for tests and benchmarks: /usr/bin/redis-server started as a child
// process on a unix socket in a temporary directory (or a free loopback port), memory only
// (--save '' --appendonly no), DEBUG allowed from local connections; stopped by its process id.
// And a three-node loopback Redis Cluster built from such servers, with the steps of a slot
// migration. No Qt: the benchmarks use it too.
//
// Nothing here sleeps on wall time: readiness is read from the server's own log ("ready to
// accept connections", "Cluster state changed: ok"), waited for with a deadline.

#include <hiredis/hiredis.h>
#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace ratelab::testing {

struct ReplyFree {
    void operator()(redisReply* r) const {
        if (r) freeReplyObject(r);
    }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyFree>;

/// One redis-server child process. Not thread-safe (drive it from the test's thread). The server
/// is killed when the thread that started it exits (PR_SET_PDEATHSIG), so start it from a thread
/// that outlives its use, such as the test's main thread.
class RedisServer {
public:
    struct Options {
        bool tcp = false;      ///< listen on a free 127.0.0.1 port instead of a unix socket
        bool cluster = false;  ///< cluster-enabled (implies tcp)
        std::vector<std::string> extraArgs;
    };

    RedisServer() = default;
    ~RedisServer();
    RedisServer(const RedisServer&) = delete;
    RedisServer& operator=(const RedisServer&) = delete;

    /// Starts the server and waits (up to 10 s) until it accepts connections.
    bool start(const Options& options, std::string* error);
    bool start(std::string* error) { return start(Options{}, error); }
    /// SIGKILL, then reaps the process. The directory, socket path and port stay for restart().
    void kill();
    /// Starts a new process on the same socket or port (its data is gone: no persistence).
    bool restart(std::string* error);
    /// SIGSTOP, returning once the server is stopped: connects still succeed (kernel backlog),
    /// commands hang.
    void pause();
    void resume();  ///< SIGCONT
    /// The server's scheduling state from /proc ("T" stopped, "S" sleeping, "R" running...),
    /// for failure messages.
    std::string processState() const;

    bool running() const { return pid_ > 0; }
    pid_t pid() const { return pid_; }
    int port() const { return port_; }
    const std::string& socketPath() const { return socket_; }
    const std::string& directory() const { return dir_; }
    /// "unix:///tmp/.../redis.sock" or "redis://127.0.0.1:PORT".
    std::string url() const;

    /// Runs one command on a fresh blocking connection (2 s timeout). Null on a transport error.
    ReplyPtr command(const std::vector<std::string>& args) const;
    /// The reply as text: status, string, integer, "(nil)", or "ERR ..." for an error; on a
    /// transport error "<transport error: ...>".
    std::string commandText(const std::vector<std::string>& args) const;

    /// Waits until the current process has logged a line containing `text`.
    bool waitForLog(std::string_view text, std::chrono::milliseconds timeout);

private:
    bool spawn(std::string* error);
    void readLog(int fd);
    void stopReader();

    Options options_;
    std::string dir_;
    std::string socket_;
    int port_ = 0;
    pid_t pid_ = -1;
    std::thread reader_;
    std::mutex logMutex_;
    std::condition_variable logChanged_;
    std::string log_;
    bool logClosed_ = true;
};

/// A loopback Redis Cluster of three masters, no replicas, slots split evenly.
class RedisCluster {
public:
    bool start(std::string* error, int nodes = 3);
    int size() const { return static_cast<int>(nodes_.size()); }
    RedisServer& node(int i) { return *nodes_[static_cast<std::size_t>(i)]; }
    /// Seed URLs, one per node.
    std::vector<std::string> urls() const;
    std::string nodeId(int i) const;
    /// The node index owning `slot`, as node 0 sees it; -1 if unknown.
    int owner(int slot);

    // A live slot migration, step by step (cluster-spec "Cluster live reconfiguration"):
    /// SETSLOT IMPORTING on `to`, SETSLOT MIGRATING on `from`.
    bool beginMigration(int slot, int from, int to, std::string* error);
    /// MIGRATEs every key of the slot from `from` to `to` in one command. Returns how many.
    int migrateKeys(int slot, int from, int to, std::string* error);
    /// SETSLOT NODE on every node: `to` owns the slot.
    bool finishMigration(int slot, int to, std::string* error);

private:
    std::vector<std::unique_ptr<RedisServer>> nodes_;
};

}  // namespace ratelab::testing
