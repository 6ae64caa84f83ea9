#pragma once

// A small HTTP/1.1 server for deciding requests fast: one epoll event loop per thread, each
// with its own SO_REUSEPORT listener, keep-alive and pipelining, and the defences a service in
// front of the internet needs (timeouts, size limits, a connection cap, lingering close). It
// knows nothing about rate limits: an HttpHandler answers each request.
//
// Why not QHttpServer: measured against nginx limit_req on this machine, QHttpServer 6.4 reached
// 0.65x the requests per second at 1.56x the CPU per request, buffered whole bodies and had no
// timeouts. Parsing is libhttp-parser's (Debian), everything else is here.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ratelab/ip_address.h"
#include "ratelab/limit.h"
#include "serve/http/request_parser.h"
#include "serve/http/response_writer.h"

namespace ratelab::serve {

/// An address to listen on. "127.0.0.1:8080", "[::1]:8080", "localhost:8080", "0.0.0.0:0"
/// (port 0: any free port).
struct ListenAddress {
    IpAddress address;
    bool v6 = false;  ///< bind an IPv6 socket (the text was an IPv6 address)
    std::uint16_t port = 0;

    /// Parses HOST:PORT; nullopt with the reason in *whyNot when it does not parse.
    static std::optional<ListenAddress> parse(std::string_view text, std::string* whyNot);
    /// "127.0.0.1:8080", "[::1]:8080".
    std::string toString() const;
};

/// Where time comes from for timeouts and for the `now` handlers see. Thread-safe.
class ServerClock {
public:
    virtual ~ServerClock() = default;
    /// Monotonic nanoseconds.
    virtual Nanos now() const = 0;
};

/// CLOCK_MONOTONIC.
const ServerClock& steadyServerClock();

struct HttpServerOptions {
    std::vector<ListenAddress> listen;
    /// Event loops, each on its own thread with its own listener per address. 0: one per core.
    int threads = 0;
    RequestLimits limits;
    /// From the first byte of a request (or from accept, before the first request) until its
    /// headers are complete; then 408 and close.
    Nanos headerTimeout = 10 * kNanosPerSecond;
    /// From the end of the headers until the end of the body; then 408 and close.
    Nanos bodyTimeout = 10 * kNanosPerSecond;
    /// A kept-alive connection waiting for its next request is closed after this.
    Nanos idleTimeout = 60 * kNanosPerSecond;
    /// Answers the client does not read for this long close the connection.
    Nanos writeTimeout = 10 * kNanosPerSecond;
    /// After a final answer, input is read and dropped this long (and up to lingerBytes) so
    /// that the client sees the answer rather than a reset.
    Nanos lingerTimeout = 2 * kNanosPerSecond;
    std::size_t lingerBytes = 1 << 20;
    /// Open connections over every loop; the excess gets 503 and is closed at once.
    std::size_t maxConnections = 10'000;
    /// Answers waiting to be written per connection before it stops reading pipelined input.
    std::size_t maxPendingOutput = 256 * 1024;
    /// While draining, a connection with no request in progress is closed after this long idle
    /// (a request already on the wire still gets its answer).
    Nanos drainIdleGrace = kNanosPerSecond;
    /// Null: steadyServerClock(). Not owned; must outlive the server.
    const ServerClock* clock = nullptr;
};

/// One request as a handler sees it.
struct ServerRequest {
    const ParsedRequest& http;
    const IpAddress* peer;  ///< the TCP peer
    Nanos now;              ///< the loop's clock when the request's bytes were read
    unsigned worker;        ///< which event loop calls: 0 .. HttpServer::workers() - 1
};

/// Answers requests. handle() and handleBatch() are called on the event loops' threads,
/// concurrently from different workers (never twice at once for the same worker index), so
/// per-worker state needs no lock. Each must write a complete response (start, headers, finish)
/// for every request it is given.
class HttpHandler {
public:
    virtual ~HttpHandler() = default;
    virtual void handle(const ServerRequest& request, Response& response) = 0;

    /// Whether loop `worker` holds its requests until the end of its turn and has them
    /// answered together by handleBatch(): for a handler whose answers wait on another process
    /// (a shared store), so that a turn's requests cost one round trip rather than one each.
    /// A connection holds one request at a time; its pipelined requests follow in the same
    /// turn. Default: every request is answered at once by handle().
    virtual bool batches(unsigned worker) const {
        (void)worker;
        return false;
    }
    /// Answers requests[i] into responses[i]: the requests loop `requests[0].worker` held
    /// during one turn, each with its views valid for the call. REQUIRES: the spans have the
    /// same size, at least 1. Default: handle() on each in turn.
    virtual void handleBatch(std::span<const ServerRequest> requests, std::span<Response> responses) {
        for (std::size_t i = 0; i < requests.size(); ++i)
            handle(requests[i], responses[i]);
    }
};

/// Monotonic counters and gauges of the server, summed over its loops.
struct HttpServerStats {
    std::int64_t openConnections = 0;
    std::int64_t acceptedConnections = 0;
    std::int64_t refusedConnections = 0;  ///< over maxConnections: 503 and closed
    std::int64_t requests = 0;            ///< answered by the handler
    /// Requests the server refused itself, by status (400, 408, 413, 414, 417, 431, 501, 505).
    std::vector<std::pair<int, std::int64_t>> refusedRequests;
    std::int64_t idleClosed = 0;  ///< keep-alive connections closed by the idle timeout
};

class HttpServer {
public:
    /// Binds every listen address (one socket per loop and address). Null with the reason in
    /// *error when an address cannot be bound. The handler must outlive the server.
    static std::unique_ptr<HttpServer> create(const HttpServerOptions& options,
                                              HttpHandler& handler, std::string* error);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    /// The bound addresses, with any port 0 replaced by the port chosen.
    const std::vector<ListenAddress>& addresses() const;
    unsigned workers() const;

    /// Starts the loops, each on its own thread.
    void start();
    /// Stops accepting, answers what is in flight (with "Connection: close"), closes idle
    /// connections after drainIdleGrace, and lets the loops end once their connections are
    /// gone, or after `timeout` whatever remains. Thread-safe; returns at once.
    void drain(Nanos timeout);
    /// Blocks until every loop has ended (after drain()).
    void wait();
    /// Makes every loop look at its timers now: for tests that move a manual clock.
    void wake();
    /// Connections a drain cut because its timeout passed.
    std::int64_t cutByDrain() const;

    HttpServerStats stats() const;

private:
    struct Impl;
    explicit HttpServer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace ratelab::serve
