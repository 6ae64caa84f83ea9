#pragma once

// The gRPC listener: plaintext HTTP/2 on one address, grpc++'s callback services, and the
// limits that keep a hostile client from slowing the others (concurrent streams a connection,
// message size, the time to the first HTTP/2 settings, idle connections, keepalive, a memory
// quota for every connection's buffers). Draining follows the HTTP listener's rule: health
// turns NOT_SERVING at once (the caller's flag), calls keep being answered for a grace period
// so that clients notice, then the server stops taking calls and answers those in flight.

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ratelab/limit.h"
#include "serve/http/http_server.h"

namespace grpc {
class Server;
class ServerBuilder;
class Service;
}  // namespace grpc

namespace ratelab::serve {

struct GrpcServerOptions {
    ListenAddress listen;
    /// Calls one connection may have open at once (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS);
    /// the client queues the rest.
    std::uint32_t maxConcurrentStreams = 100;
    /// Largest request message; a larger one is refused (RESOURCE_EXHAUSTED).
    std::size_t maxMessageBytes = 64 * 1024;
    /// From accept until the client's HTTP/2 settings; then the connection is closed.
    Nanos handshakeTimeout = 10 * kNanosPerSecond;
    /// A connection without a call this long is sent GOAWAY and closed.
    Nanos idleTimeout = 60 * kNanosPerSecond;
    /// The server pings a connection quiet this long, and closes it when the ping goes
    /// unanswered for keepaliveTimeout.
    Nanos keepaliveTime = 60 * kNanosPerSecond;
    Nanos keepaliveTimeout = 20 * kNanosPerSecond;
    /// Memory every connection's buffers may take together; past it the server reads less and
    /// refuses new calls.
    std::size_t memoryBytes = std::size_t(256) << 20;
};

/// The options above on a builder: the RLS listener and the benchmark's empty server use the
/// very same settings.
void applyServerLimits(grpc::ServerBuilder& builder, const GrpcServerOptions& options);

/// Thread-safe.
class GrpcServer {
public:
    /// Binds the address and starts serving `services` (not owned; they must outlive the
    /// server). Null with the reason in *error when the address cannot be bound.
    static std::unique_ptr<GrpcServer> create(const GrpcServerOptions& options,
                                              const std::vector<grpc::Service*>& services,
                                              std::string* error);
    ~GrpcServer();
    GrpcServer(const GrpcServer&) = delete;
    GrpcServer& operator=(const GrpcServer&) = delete;

    /// The bound address, the port chosen in place of 0.
    const ListenAddress& address() const { return address_; }

    /// Answers calls for `grace` more, then stops taking calls and gives those in flight until
    /// `timeout` to finish (cancelling what is left). Returns at once; a second call does
    /// nothing.
    void drain(Nanos grace, Nanos timeout);
    /// Ends the grace at once (drains first when no drain began).
    void cut();
    /// Blocks until the server has stopped. REQUIRES: drain() or cut() called before.
    void wait();

private:
    GrpcServer() = default;
    void shutdownAfterGrace(Nanos grace, Nanos timeout);

    std::unique_ptr<grpc::Server> server_;
    ListenAddress address_;
    std::mutex mutex_;
    std::condition_variable graceEnded_;
    bool draining_ = false;
    bool cut_ = false;
    std::thread drainer_;
    std::once_flag waited_;
};

}  // namespace ratelab::serve
