#include "serve/http/event_loop.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <optional>

#include "serve/http/client_connection.h"

namespace ratelab::serve::detail {

namespace {

// epoll tags below this are not connections: 0 is the wake-up eventfd, 1 + i listener i.
constexpr std::uint64_t kFirstPointerTag = 4096;
constexpr int kEventsPerWait = 256;
constexpr int kAcceptsPerEvent = 64;

std::optional<IpAddress> peerOf(const sockaddr_storage& address) {
    if (address.ss_family == AF_INET) {
        const auto& in = reinterpret_cast<const sockaddr_in&>(address);
        return IpAddress::fromV4(ntohl(in.sin_addr.s_addr));
    }
    if (address.ss_family == AF_INET6) {
        const auto& in6 = reinterpret_cast<const sockaddr_in6&>(address);
        std::array<std::uint8_t, 16> bytes;
        std::copy(std::begin(in6.sin6_addr.s6_addr), std::end(in6.sin6_addr.s6_addr),
                  bytes.begin());
        return IpAddress::fromBytes(bytes);
    }
    return std::nullopt;
}

}  // namespace

void LoopCounters::countRefusal(int status) {
    for (std::size_t i = 0; i < std::size(kStatuses); ++i) {
        if (kStatuses[i] == status) {
            refusedByStatus[i].fetch_add(1, std::memory_order_relaxed);
            return;
        }
    }
}

EventLoop::EventLoop(SharedState& shared, unsigned index, std::vector<int> listeners)
    : shared_(shared)
    , index_(index)
    , listeners_(std::move(listeners))
    , scratch_(new char[kScratchBytes]) {
    epoll_ = epoll_create1(EPOLL_CLOEXEC);
    wakeFd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    reserveFd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.u64 = 0;
    epoll_ctl(epoll_, EPOLL_CTL_ADD, wakeFd_, &e);
    for (std::size_t i = 0; i < listeners_.size(); ++i) {
        e.data.u64 = 1 + i;
        epoll_ctl(epoll_, EPOLL_CTL_ADD, listeners_[i], &e);
    }
    const HttpServerOptions& o = shared_.options;
    Nanos shortest = std::min({o.headerTimeout, o.bodyTimeout, o.idleTimeout, o.writeTimeout,
                               o.lingerTimeout, o.drainIdleGrace});
    // Timeouts are looked at every quarter of the shortest one, between 1 ms and 250 ms.
    tick_ = std::clamp<Nanos>(shortest / 4, kNanosPerMilli, 250 * kNanosPerMilli);
}

EventLoop::~EventLoop() {
    connections_.clear();
    closeListeners();
    if (reserveFd_ >= 0) ::close(reserveFd_);
    if (wakeFd_ >= 0) ::close(wakeFd_);
    if (epoll_ >= 0) ::close(epoll_);
}

void EventLoop::wake() {
    const std::uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wakeFd_, &one, sizeof one);
}

std::string_view EventLoop::date() {
    timespec ts;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    if (ts.tv_sec != dateSecond_) {
        dateSecond_ = ts.tv_sec;
        formatHttpDate(ts.tv_sec, date_);
    }
    return std::string_view(date_, sizeof date_);
}

bool EventLoop::watch(int fd, std::uint32_t events, void* tag) {
    epoll_event e{};
    e.events = events;
    e.data.ptr = tag;
    return epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &e) == 0;
}

bool EventLoop::rewatch(int fd, std::uint32_t events, void* tag) {
    epoll_event e{};
    e.events = events;
    e.data.ptr = tag;
    return epoll_ctl(epoll_, EPOLL_CTL_MOD, fd, &e) == 0;
}

void EventLoop::retire(Connection* connection) {
    retired_.push_back(connection);
}

void EventLoop::freeRetired() {
    for (Connection* c : retired_) {
        const std::size_t slot = c->slot;
        if (slot != connections_.size() - 1) {
            std::swap(connections_[slot], connections_.back());
            connections_[slot]->slot = slot;
        }
        connections_.pop_back();
        shared_.openConnections.fetch_sub(1, std::memory_order_relaxed);
    }
    retired_.clear();
}

void EventLoop::answerHeld() {
    while (!held_.empty()) {
        answering_.swap(held_);
        heldRequests_.clear();
        heldResponses_.clear();
        std::size_t kept = 0;
        for (Connection* c : answering_) {
            if (c->retired() || !c->holding()) continue;  // closed meanwhile: nothing to answer
            answering_[kept++] = c;
            heldRequests_.push_back(c->heldRequest());
            heldResponses_.push_back(c->heldResponse());
        }
        answering_.resize(kept);
        if (kept > 0) shared_.handler->handleBatch(heldRequests_, heldResponses_);
        for (std::size_t i = 0; i < kept; ++i)
            answering_[i]->finishHeld(heldResponses_[i]);
        answering_.clear();
    }
}

void EventLoop::refuse(int fd) {
    // Counted before the client can learn of it: counted after the close, a client (or a test)
    // that had its 503 could still read a count without it.
    counters_.refused.fetch_add(1, std::memory_order_relaxed);
    std::string answer;
    writeServerError(answer, 503, "too many connections", date());
    [[maybe_unused]] ssize_t n =
        ::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    ::close(fd);
}

void EventLoop::acceptFrom(int listener) {
    for (int i = 0; i < kAcceptsPerEvent; ++i) {
        sockaddr_storage address{};
        socklen_t length = sizeof address;
        const int fd = ::accept4(listener, reinterpret_cast<sockaddr*>(&address), &length,
                                 SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if ((errno == EMFILE || errno == ENFILE) && reserveFd_ >= 0) {
                // Out of descriptors: free the reserve to take the connection off the queue and
                // refuse it, rather than have the listener report readiness forever.
                ::close(reserveFd_);
                const int excess = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
                if (excess >= 0) refuse(excess);
                reserveFd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
                continue;
            }
            return;  // EAGAIN, or an error the next readiness retries
        }
        const auto limit = static_cast<std::int64_t>(shared_.options.maxConnections);
        if (shared_.openConnections.fetch_add(1, std::memory_order_relaxed) >= limit) {
            shared_.openConnections.fetch_sub(1, std::memory_order_relaxed);
            refuse(fd);
            continue;
        }
        const int on = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        const std::optional<IpAddress> peer = peerOf(address);
        auto connection = std::make_unique<Connection>(*this, fd, peer ? &*peer : nullptr);
        if (!watch(fd, EPOLLIN, connection.get())) {
            shared_.openConnections.fetch_sub(1, std::memory_order_relaxed);
            continue;  // the destructor closes it
        }
        connection->slot = connections_.size();
        connections_.push_back(std::move(connection));
        counters_.accepted.fetch_add(1, std::memory_order_relaxed);
    }
}

void EventLoop::closeListeners() {
    for (int& fd : listeners_) {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
}

void EventLoop::startDrain() {
    drainStarted_ = true;
    drainStart_ = now_;
    // Connections already queued on the listeners were made before the drain: serve them.
    for (int fd : listeners_) {
        if (fd >= 0) acceptFrom(fd);
    }
    closeListeners();
}

void EventLoop::sweep() {
    for (std::size_t i = 0; i < connections_.size(); ++i) {
        connections_[i]->checkTimers(now_, drainStart_);
    }
    freeRetired();
}

int EventLoop::waitMillis() const {
    if (connections_.empty() && !drainStarted_) return -1;
    const Nanos left = std::max<Nanos>(nextSweep_ - now_, 0);
    return static_cast<int>(std::min<Nanos>(ceilMillis(left), tick_ / kNanosPerMilli + 1));
}

void EventLoop::run() {
    epoll_event events[kEventsPerWait];
    now_ = shared_.clock->now();
    nextSweep_ = now_ + tick_;
    for (;;) {
        const int n = epoll_wait(epoll_, events, kEventsPerWait, waitMillis());
        now_ = shared_.clock->now();
        bool woken = false;
        for (int i = 0; i < n; ++i) {
            const std::uint64_t tag = events[i].data.u64;
            if (tag == 0) {
                std::uint64_t count;
                [[maybe_unused]] ssize_t r = ::read(wakeFd_, &count, sizeof count);
                woken = true;
            } else if (tag < kFirstPointerTag) {
                const int fd = listeners_[tag - 1];
                if (fd >= 0) acceptFrom(fd);
            } else {
                auto* connection = static_cast<Connection*>(events[i].data.ptr);
                if (!connection->retired()) connection->onEvent(events[i].events);
            }
        }
        answerHeld();
        freeRetired();
        if (!drainStarted_ && shared_.draining.load(std::memory_order_acquire)) startDrain();
        if (woken || now_ >= nextSweep_) {
            sweep();
            nextSweep_ = now_ + tick_;
        }
        if (drainStarted_) {
            if (connections_.empty()) break;
            if (now_ >= shared_.drainDeadline.load(std::memory_order_relaxed)) {
                counters_.cutByDrain.fetch_add(static_cast<std::int64_t>(connections_.size()),
                                               std::memory_order_relaxed);
                for (auto& c : connections_)
                    c->cut();
                freeRetired();
                break;
            }
        }
    }
}

}  // namespace ratelab::serve::detail
