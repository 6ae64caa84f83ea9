#include "serve/http/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <thread>

#include "serve/http/event_loop.h"

namespace ratelab::serve {

namespace {

class SteadyServerClock final : public ServerClock {
public:
    Nanos now() const override {
        timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return static_cast<Nanos>(ts.tv_sec) * kNanosPerSecond + ts.tv_nsec;
    }
};

constexpr int kListenBacklog = 4096;

socklen_t fill(const ListenAddress& a, std::uint16_t port, sockaddr_storage& out) {
    std::memset(&out, 0, sizeof out);
    if (!a.v6) {
        auto& in = reinterpret_cast<sockaddr_in&>(out);
        in.sin_family = AF_INET;
        in.sin_port = htons(port);
        in.sin_addr.s_addr = htonl(a.address.v4());
        return sizeof in;
    }
    auto& in6 = reinterpret_cast<sockaddr_in6&>(out);
    in6.sin6_family = AF_INET6;
    in6.sin6_port = htons(port);
    std::memcpy(in6.sin6_addr.s6_addr, a.address.bytes().data(), 16);
    return sizeof in6;
}

std::string errnoText(int error) {
    char buffer[128];
    return strerror_r(error, buffer, sizeof buffer);
}

// A listening socket on `port` (0: any), in the SO_REUSEPORT group when `shared`.
int openListener(const ListenAddress& a, std::uint16_t port, bool shared, std::string* error) {
    const int fd =
        ::socket(a.v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *error = "socket: " + errnoText(errno);
        return -1;
    }
    const int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (shared) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on);
    if (a.v6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    sockaddr_storage address;
    const socklen_t length = fill(a, port, address);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        (shared && ::listen(fd, kListenBacklog) != 0)) {
        *error = "cannot listen on " + ListenAddress{a.address, a.v6, port}.toString() + ": " +
                 errnoText(errno);
        ::close(fd);
        return -1;
    }
    return fd;
}

std::uint16_t boundPort(int fd) {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    if (address.ss_family == AF_INET6) {
        return ntohs(reinterpret_cast<sockaddr_in6&>(address).sin6_port);
    }
    return ntohs(reinterpret_cast<sockaddr_in&>(address).sin_port);
}

// One listener per loop on `a`, all in one SO_REUSEPORT group, so the kernel spreads new
// connections over the loops. A probe bound without SO_REUSEPORT first makes sure nothing else
// listens there: a second copy of the server started by mistake must fail, not share the port.
bool openGroup(ListenAddress& a, unsigned loops, std::vector<std::vector<int>>& perLoop,
               std::string* error) {
    for (int attempt = 0; attempt < 20; ++attempt) {
        const int probe = openListener(a, a.port, false, error);
        if (probe < 0) return false;
        const std::uint16_t port = boundPort(probe);
        ::close(probe);
        std::vector<int> group;
        for (unsigned i = 0; i < loops; ++i) {
            const int fd = openListener(a, port, true, error);
            if (fd < 0) break;
            group.push_back(fd);
        }
        if (group.size() == loops) {
            a.port = port;
            for (unsigned i = 0; i < loops; ++i)
                perLoop[i].push_back(group[i]);
            return true;
        }
        for (int fd : group)
            ::close(fd);
        // With port 0 another process may have taken the probe's port meanwhile: try another.
        if (a.port != 0) return false;
    }
    return false;
}

}  // namespace

const ServerClock& steadyServerClock() {
    static const SteadyServerClock clock;
    return clock;
}

std::optional<ListenAddress> ListenAddress::parse(std::string_view text, std::string* whyNot) {
    auto refuse = [&](const std::string& why) -> std::optional<ListenAddress> {
        if (whyNot) *whyNot = why;
        return std::nullopt;
    };
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0) {
        return refuse("expected HOST:PORT, e.g. 127.0.0.1:8080");
    }
    std::string_view host = text.substr(0, colon);
    const std::string_view portText = text.substr(colon + 1);
    unsigned port = 0;
    const auto [end, ec] =
        std::from_chars(portText.data(), portText.data() + portText.size(), port);
    if (portText.empty() || ec != std::errc() || end != portText.data() + portText.size() ||
        port > 65535) {
        return refuse("the port must be a number from 0 to 65535");
    }
    ListenAddress a;
    a.port = static_cast<std::uint16_t>(port);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
        a.v6 = true;
    } else if (host.find(':') != std::string_view::npos) {
        return refuse("write an IPv6 address in brackets, e.g. [::1]:8080");
    }
    if (host == "localhost") {
        a.address = IpAddress::fromV4(0x7f000001);
        a.v6 = false;
        return a;
    }
    std::optional<IpAddress> address = IpAddress::parse(host);
    if (!address || address->isV4() == a.v6) {
        return refuse("\"" + std::string(host) + "\" is not an IP address (or localhost)");
    }
    a.address = *address;
    return a;
}

std::string ListenAddress::toString() const {
    std::string host = address.toString();
    if (v6) host = "[" + host + "]";
    return host + ":" + std::to_string(port);
}

struct HttpServer::Impl {
    detail::SharedState shared;
    std::vector<ListenAddress> addresses;
    std::vector<std::unique_ptr<detail::EventLoop>> loops;
    std::vector<std::thread> threads;
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() {
    if (!impl_->threads.empty()) {
        drain(0);
        wait();
    }
}

std::unique_ptr<HttpServer> HttpServer::create(const HttpServerOptions& options,
                                               HttpHandler& handler, std::string* error) {
    auto impl = std::make_unique<Impl>();
    impl->shared.options = options;
    impl->shared.handler = &handler;
    impl->shared.clock = options.clock ? options.clock : &steadyServerClock();
    unsigned loops = options.threads > 0 ? static_cast<unsigned>(options.threads)
                                         : std::max(1u, std::thread::hardware_concurrency());
    if (options.listen.empty()) {
        *error = "no address to listen on";
        return nullptr;
    }
    std::vector<std::vector<int>> perLoop(loops);
    impl->addresses = options.listen;
    for (ListenAddress& a : impl->addresses) {
        if (!openGroup(a, loops, perLoop, error)) {
            for (auto& fds : perLoop) {
                for (int fd : fds)
                    ::close(fd);
            }
            return nullptr;
        }
    }
    for (unsigned i = 0; i < loops; ++i) {
        impl->loops.push_back(
            std::make_unique<detail::EventLoop>(impl->shared, i, std::move(perLoop[i])));
    }
    return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

const std::vector<ListenAddress>& HttpServer::addresses() const {
    return impl_->addresses;
}

unsigned HttpServer::workers() const {
    return static_cast<unsigned>(impl_->loops.size());
}

void HttpServer::start() {
    for (auto& loop : impl_->loops) {
        impl_->threads.emplace_back([l = loop.get()] { l->run(); });
    }
}

void HttpServer::drain(Nanos timeout) {
    impl_->shared.drainDeadline.store(impl_->shared.clock->now() + timeout,
                                      std::memory_order_relaxed);
    impl_->shared.draining.store(true, std::memory_order_release);
    wake();
}

void HttpServer::wait() {
    for (std::thread& t : impl_->threads) {
        if (t.joinable()) t.join();
    }
    impl_->threads.clear();
}

void HttpServer::wake() {
    for (auto& loop : impl_->loops)
        loop->wake();
}

std::int64_t HttpServer::cutByDrain() const {
    std::int64_t n = 0;
    for (const auto& loop : impl_->loops)
        n += loop->counters().cutByDrain.load();
    return n;
}

HttpServerStats HttpServer::stats() const {
    HttpServerStats s;
    s.openConnections = impl_->shared.openConnections.load(std::memory_order_relaxed);
    for (std::size_t i = 0; i < std::size(detail::LoopCounters::kStatuses); ++i) {
        s.refusedRequests.emplace_back(detail::LoopCounters::kStatuses[i], 0);
    }
    for (const auto& loop : impl_->loops) {
        const detail::LoopCounters& c = loop->counters();
        s.acceptedConnections += c.accepted.load(std::memory_order_relaxed);
        s.refusedConnections += c.refused.load(std::memory_order_relaxed);
        s.requests += c.requests.load(std::memory_order_relaxed);
        s.idleClosed += c.idleClosed.load(std::memory_order_relaxed);
        for (std::size_t i = 0; i < s.refusedRequests.size(); ++i) {
            s.refusedRequests[i].second += c.refusedByStatus[i].load(std::memory_order_relaxed);
        }
    }
    return s;
}

}  // namespace ratelab::serve
