#include "serve/grpc/grpc_server.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>

#include <chrono>

namespace ratelab::serve {

namespace {

int millis(Nanos n) {
    const Nanos ms = n / kNanosPerMilli;
    return ms > INT32_MAX ? INT32_MAX : static_cast<int>(ms);
}

}  // namespace

void applyServerLimits(grpc::ServerBuilder& builder, const GrpcServerOptions& options) {
    builder.SetMaxReceiveMessageSize(static_cast<int>(options.maxMessageBytes));
    builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                               static_cast<int>(options.maxConcurrentStreams));
    builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                               millis(options.handshakeTimeout));
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, millis(options.idleTimeout));
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, millis(options.keepaliveTime));
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, millis(options.keepaliveTimeout));
    // grpc sets SO_REUSEPORT by default, which lets a second server bind the same port and take
    // half its connections without an error.
    builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    grpc::ResourceQuota quota("ratelab-grpc");
    quota.Resize(options.memoryBytes);
    builder.SetResourceQuota(quota);
}

std::unique_ptr<GrpcServer> GrpcServer::create(const GrpcServerOptions& options,
                                               const std::vector<grpc::Service*>& services,
                                               std::string* error) {
    grpc::ServerBuilder builder;
    applyServerLimits(builder, options);
    int port = 0;
    builder.AddListeningPort(options.listen.toString(), grpc::InsecureServerCredentials(), &port);
    for (grpc::Service* s : services)
        builder.RegisterService(s);
    std::unique_ptr<GrpcServer> server(new GrpcServer);
    server->server_ = builder.BuildAndStart();
    if (!server->server_ || port == 0) {
        *error = "cannot listen for gRPC on " + options.listen.toString();
        return nullptr;
    }
    server->address_ = options.listen;
    server->address_.port = static_cast<std::uint16_t>(port);
    return server;
}

GrpcServer::~GrpcServer() {
    cut();
    wait();
}

void GrpcServer::drain(Nanos grace, Nanos timeout) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (draining_) return;
    draining_ = true;
    drainer_ = std::thread([this, grace, timeout] { shutdownAfterGrace(grace, timeout); });
}

void GrpcServer::cut() {
    drain(0, 0);
    std::lock_guard<std::mutex> lock(mutex_);
    cut_ = true;
    graceEnded_.notify_all();
}

void GrpcServer::shutdownAfterGrace(Nanos grace, Nanos timeout) {
    {
        std::unique_lock<std::mutex> lock(mutex_);
        graceEnded_.wait_for(lock, std::chrono::nanoseconds(grace), [this] { return cut_; });
    }
    // Stops taking calls (GOAWAY), waits for those in flight until the deadline, cancels the
    // rest.
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::nanoseconds(timeout));
}

void GrpcServer::wait() {
    std::call_once(waited_, [this] {
        drainer_.join();
        server_->Wait();
    });
}

}  // namespace ratelab::serve
