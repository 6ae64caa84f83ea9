#pragma once

// One event loop of the HTTP server (internal): an epoll set with this loop's listeners, its
// connections and a wake-up eventfd. A connection lives on one loop for its whole life, so
// nothing here is shared between threads except the counters and the connection total.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "serve/http/http_server.h"

namespace ratelab::serve::detail {

/// What the loops share: options, the handler and the connection total for the cap.
struct SharedState {
    HttpServerOptions options;
    HttpHandler* handler = nullptr;
    const ServerClock* clock = nullptr;
    std::atomic<std::int64_t> openConnections{0};
    std::atomic<bool> draining{false};
    std::atomic<Nanos> drainDeadline{0};
};

/// Per-loop counters, written by the loop only and read by stats().
struct LoopCounters {
    static constexpr int kStatuses[] = {400, 408, 413, 414, 417, 431, 501, 505};
    std::atomic<std::int64_t> accepted{0};
    std::atomic<std::int64_t> refused{0};
    std::atomic<std::int64_t> requests{0};
    std::atomic<std::int64_t> idleClosed{0};
    std::atomic<std::int64_t> cutByDrain{0};
    std::atomic<std::int64_t> refusedByStatus[std::size(kStatuses)]{};
    void countRefusal(int status);
};

class Connection;

class EventLoop {
public:
    EventLoop(SharedState& shared, unsigned index, std::vector<int> listeners);
    ~EventLoop();
    EventLoop(const EventLoop&) = delete;
    EventLoop& operator=(const EventLoop&) = delete;

    /// Runs until a drain has finished. Call on the loop's own thread.
    void run();
    /// Wakes the loop from another thread (timers are looked at, drains noticed).
    void wake();

    const LoopCounters& counters() const { return counters_; }

    // For connections.
    SharedState& shared() { return shared_; }
    LoopCounters& counters() { return counters_; }
    unsigned index() const { return index_; }
    Nanos now() const { return now_; }
    std::string_view date();
    /// The loop's read buffer, shared by its connections (one reads at a time).
    char* scratch() { return scratch_.get(); }
    static constexpr std::size_t kScratchBytes = 64 * 1024;
    bool watch(int fd, std::uint32_t events, void* tag);
    bool rewatch(int fd, std::uint32_t events, void* tag);
    /// Closes and frees the connection at the end of the current batch of events.
    void retire(Connection* connection);
    /// The connection holds a request for the end of this turn (HttpHandler::batches).
    void hold(Connection* connection) { held_.push_back(connection); }

private:
    void acceptFrom(int listener);
    void refuse(int fd);
    void sweep();
    void startDrain();
    void closeListeners();
    void freeRetired();
    /// Has the handler answer the requests held during this turn, together, until none is
    /// left (a connection's next pipelined request may be held as its answer goes out).
    void answerHeld();
    int waitMillis() const;

    SharedState& shared_;
    const unsigned index_;
    std::vector<int> listeners_;
    int epoll_ = -1;
    int wakeFd_ = -1;
    int reserveFd_ = -1;  // given up to accept (and close) a connection when out of descriptors
    Nanos now_ = 0;
    Nanos nextSweep_ = 0;
    Nanos tick_ = 0;
    bool drainStarted_ = false;
    Nanos drainStart_ = 0;
    std::unique_ptr<char[]> scratch_;
    std::vector<std::unique_ptr<Connection>> connections_;
    std::vector<Connection*> retired_;
    std::vector<Connection*> held_;
    std::vector<Connection*> answering_;
    std::vector<ServerRequest> heldRequests_;
    std::vector<Response> heldResponses_;
    long long dateSecond_ = -1;
    char date_[29] = {};
    LoopCounters counters_;
};

}  // namespace ratelab::serve::detail
