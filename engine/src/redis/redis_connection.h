#pragma once

// One connection to one Redis server, hiredis underneath: hiredis connects and parses replies;
// this class writes the (trivial) RESP requests and owns the waiting. The socket is non-blocking
// and every wait is a ppoll() bounded by the caller's deadline, so the bound holds for connect,
// send and receive alike and survives reconnects (hiredis' redisReconnect() forgets
// redisSetTimeout(), and a socket timeout bounds each read, not a whole call). Sends use
// MSG_NOSIGNAL, so a server that died never raises SIGPIPE in the host process.

#include <hiredis/hiredis.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "redis/endpoint.h"

namespace ratelab::redis {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

/// Frees a reply read through a Connection. Its objects come from a per-thread pool (a pipelined
/// decision's reply is 8 hiredis objects; calloc and free for each were a tenth of the client's
/// CPU), so replies must be freed with this, never with freeReplyObject().
void releaseReply(void* reply);

struct ReplyDeleter {
    void operator()(redisReply* reply) const {
        if (reply) releaseReply(reply);
    }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

/// Why a connection stopped working. Each one is a transport failure.
enum class Failure : std::uint8_t {
    None,
    Connect,   ///< refused, unreachable, or not established within the deadline
    Timeout,   ///< established, but the server did not answer within the deadline
    Closed,    ///< the server closed the connection
    Io,        ///< a send or receive error (reset, broken pipe)
    Protocol,  ///< the reply could not be parsed
};

/// Not thread-safe: one caller at a time.
class Connection {
public:
    /// Connects within `deadline`. On failure returns null and sets *error and *failure.
    static std::unique_ptr<Connection> open(const Endpoint& endpoint, Deadline deadline,
                                            std::string* error);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    /// Queues one command (one argument per view, binary-safe), as RESP.
    void append(std::span<const std::string_view> args);
    /// Sends everything queued. False when the connection failed (see failure()).
    bool flush(Deadline deadline);
    /// The next reply, waiting until `deadline`. Null when the connection failed.
    Reply read(Deadline deadline);
    /// append + flush + read.
    Reply call(std::span<const std::string_view> args, Deadline deadline);

    bool ok() const { return failure_ == Failure::None; }
    Failure failure() const { return failure_; }
    const std::string& error() const { return error_; }
    /// Bytes the kernel accepted since the last resetSent(). Non-zero after a failure: a command
    /// may have reached the server and run.
    std::size_t sent() const { return sent_; }
    void resetSent() { sent_ = 0; }

    /// A non-blocking look at an idle connection: true when the server closed it or sent bytes
    /// nobody asked for (either way it must not be used).
    bool stale();

    Clock::time_point lastUse;  ///< the last flush()

private:
    explicit Connection(redisContext* context) : context_(context) {}
    bool wait(short events, Deadline deadline);
    void fail(Failure failure, std::string error);

    redisContext* context_;
    std::string output_;
    std::size_t sent_ = 0;
    bool justSent_ = false;  ///< nothing read since the last flush()
    Failure failure_ = Failure::None;
    std::string error_;
};

}  // namespace ratelab::redis
