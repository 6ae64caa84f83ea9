#include "serve/http/client_connection.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace ratelab::serve::detail {

namespace {

// An answer buffer that grew past this (a burst of pipelined answers) is released once sent.
constexpr std::size_t kReleaseOutputAbove = 64 * 1024;
// Reads per readiness event before other connections get their turn.
constexpr int kReadsPerEvent = 4;

}  // namespace

Connection::Connection(EventLoop& loop, int fd, const IpAddress* peer)
    : loop_(loop)
    , fd_(fd)
    , hasPeer_(peer != nullptr)
    , peer_(peer ? *peer : IpAddress())
    , parser_(loop.shared().options.limits)
    , idleSince_(loop.now()) {}

Connection::~Connection() {
    if (fd_ >= 0) ::close(fd_);
}

void Connection::close() {
    if (retired_) return;
    retired_ = true;
    ::close(fd_);  // also leaves the epoll set
    fd_ = -1;
    loop_.retire(this);
}

void Connection::updateInterest() {
    std::uint32_t events = 0;
    if (!readPaused_ || lingering_) events |= EPOLLIN;
    if (writeArmed_) events |= EPOLLOUT;
    if (!loop_.rewatch(fd_, events, this)) close();
}

void Connection::onEvent(std::uint32_t events) {
    if (events & EPOLLOUT) {
        flush();
        if (retired_) return;
    }
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
        if (readPaused_ && !lingering_) {
            // Not reading now; a hang-up cannot wait for the answers to drain.
            if (events & (EPOLLERR | EPOLLHUP)) close();
            return;
        }
        readable();
    }
}

void Connection::readable() {
    char* scratch = loop_.scratch();
    for (int round = 0; round < kReadsPerEvent; ++round) {
        const ssize_t n = ::recv(fd_, scratch, EventLoop::kScratchBytes, 0);
        if (n > 0) {
            if (lingering_) {
                lingered_ += static_cast<std::size_t>(n);
                if (lingered_ > loop_.shared().options.lingerBytes) {
                    close();
                    return;
                }
                continue;
            }
            // The head timeout runs from the first byte of a request, and for a connection's
            // first request from accept: a slow client cannot hold a connection by waiting
            // before its first byte either.
            if (!parser_.inRequest() && parser_.keptBytes() == 0) {
                requestStart_ = servedAny_ ? loop_.now() : idleSince_;
            }
            afterParse(parser_.feed(std::string_view(scratch, static_cast<std::size_t>(n)), *this));
            if (retired_) return;
            if (readPaused_ || closeAfterWrite_ || holding_) break;
            if (static_cast<std::size_t>(n) < EventLoop::kScratchBytes) break;
            continue;
        }
        if (n == 0) {
            // The client is done sending. Answers to complete requests still go out; an
            // unfinished request can never be answered.
            if (lingering_ || (!pending() && !holding_ && !closeAfterWrite_) ||
                parser_.inRequest()) {
                close();
                return;
            }
            peerClosed_ = true;
            closeAfterWrite_ = true;
            break;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        close();
        return;
    }
    flush();
}

void Connection::afterParse(RequestParser::Status status) {
    switch (status) {
        case RequestParser::Status::Ok:
            if (parser_.inBody() && !bodyClockStarted_) {
                bodyClockStarted_ = true;
                headersAt_ = loop_.now();
            }
            break;
        case RequestParser::Status::Paused:
            // A held request resumes the parser itself once answered (finishHeld).
            if (!closeAfterWrite_ && !readPaused_ && !holding_) {
                readPaused_ = true;
                updateInterest();
            }
            break;
        case RequestParser::Status::Error:
            answerError(parser_.error().status, parser_.error().reason);
            break;
        case RequestParser::Status::Upgraded:
            closeAfterWrite_ = true;
            break;
    }
}

bool Connection::onRequest(const ParsedRequest& request) {
    SharedState& shared = loop_.shared();
    const bool keepAlive = request.keepAlive && !shared.draining.load(std::memory_order_relaxed);
    if (shared.handler->batches(loop_.index())) {
        hold(request, keepAlive);
        return false;  // nothing more parsed until it is answered
    }
    const ResponseFraming framing{keepAlive, keepAlive && request.versionMinor == 0, request.head,
                                  loop_.date()};
    Response response(out_, framing);
    const ServerRequest serverRequest{request, hasPeer_ ? &peer_ : nullptr, loop_.now(),
                                      loop_.index()};
    shared.handler->handle(serverRequest, response);
    if (!response.started()) response.start(500);
    if (!response.finished()) response.finish("", "");
    loop_.counters().requests.fetch_add(1, std::memory_order_relaxed);
    servedAny_ = true;
    idleSince_ = loop_.now();
    bodyClockStarted_ = false;
    if (!keepAlive) {
        closeAfterWrite_ = true;
        return false;
    }
    return out_.size() - outSent_ < shared.options.maxPendingOutput;
}

void Connection::hold(const ParsedRequest& request, bool keepAlive) {
    Held& h = held_;
    std::size_t size = request.method.size() + request.target.size();
    for (const Header& header : request.headers)
        size += header.name.size() + header.value.size();
    h.bytes.clear();
    h.bytes.reserve(size);
    // Offsets first: views into h.bytes are taken once it has stopped growing.
    h.bytes.append(request.method);
    h.bytes.append(request.target);
    for (const Header& header : request.headers) {
        h.bytes.append(header.name);
        h.bytes.append(header.value);
    }
    const char* at = h.bytes.data();
    auto take = [&at](std::size_t n) {
        const std::string_view view(at, n);
        at += n;
        return view;
    };
    h.request = request;
    h.request.method = take(request.method.size());
    h.request.target = take(request.target.size());
    h.headers.clear();
    for (const Header& header : request.headers) {
        const std::string_view name = take(header.name.size());
        h.headers.push_back(Header{name, take(header.value.size())});
    }
    h.request.headers = h.headers;
    h.framing = ResponseFraming{keepAlive, keepAlive && request.versionMinor == 0, request.head, {}};
    h.now = loop_.now();
    h.closeAfter = !keepAlive;
    holding_ = true;
    servedAny_ = true;
    idleSince_ = loop_.now();
    bodyClockStarted_ = false;
    loop_.hold(this);
}

ServerRequest Connection::heldRequest() const {
    return ServerRequest{held_.request, hasPeer_ ? &peer_ : nullptr, held_.now, loop_.index()};
}

Response Connection::heldResponse() {
    held_.framing.date = loop_.date();
    return Response(out_, held_.framing);
}

void Connection::finishHeld(Response& response) {
    if (!response.started()) response.start(500);
    if (!response.finished()) response.finish("", "");
    loop_.counters().requests.fetch_add(1, std::memory_order_relaxed);
    holding_ = false;
    if (retired_) return;
    if (held_.closeAfter) closeAfterWrite_ = true;
    if (!closeAfterWrite_) {
        if (out_.size() - outSent_ >= loop_.shared().options.maxPendingOutput) {
            // As onRequest's back-pressure: the answers drain before more input is parsed.
            readPaused_ = true;
            updateInterest();
            if (retired_) return;
        } else {
            afterParse(parser_.resume(*this));
            if (retired_) return;
        }
    }
    flush();
}

void Connection::onContinue() {
    out_ += "HTTP/1.1 100 Continue\r\n\r\n";
}

void Connection::answerError(int status, std::string_view reason) {
    loop_.counters().countRefusal(status);
    writeServerError(out_, status, reason, loop_.date());
    closeAfterWrite_ = true;
}

void Connection::flush() {
    for (;;) {
        while (pending()) {
            const ssize_t n = ::send(fd_, out_.data() + outSent_, out_.size() - outSent_,
                                     MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0) {
                outSent_ += static_cast<std::size_t>(n);
                continue;
            }
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                if (!writeArmed_) {
                    writeArmed_ = true;
                    writeStalledSince_ = loop_.now();
                    updateInterest();
                }
                return;
            }
            close();
            return;
        }
        out_.clear();
        outSent_ = 0;
        if (out_.capacity() > kReleaseOutputAbove) out_ = std::string();
        if (writeArmed_) {
            writeArmed_ = false;
            updateInterest();
            if (retired_) return;
        }
        if (holding_) return;  // its answer comes at the end of the loop's turn
        if (closeAfterWrite_) {
            if (peerClosed_) {
                close();
            } else if (!lingering_) {
                startLinger();
            }
            return;
        }
        if (!readPaused_) return;
        // Answers drained: take up the pipelined input that waited for them.
        readPaused_ = false;
        updateInterest();
        if (retired_) return;
        afterParse(parser_.resume(*this));
        if (retired_) return;
    }
}

void Connection::startLinger() {
    // Half-close, then read and drop what the client still sends, so that its kernel does not
    // answer our close with a reset that destroys the final answer before it is read.
    ::shutdown(fd_, SHUT_WR);
    lingering_ = true;
    lingerSince_ = loop_.now();
    readPaused_ = false;
    updateInterest();
}

void Connection::checkTimers(Nanos now, Nanos drainStart) {
    if (retired_ || holding_) return;
    const HttpServerOptions& o = loop_.shared().options;
    if (lingering_) {
        if (now - lingerSince_ >= o.lingerTimeout) close();
        return;
    }
    if (pending()) {
        if (writeArmed_ && now - writeStalledSince_ >= o.writeTimeout) close();
        return;
    }
    if (closeAfterWrite_) return;
    if (parser_.inBody()) {
        if (now - headersAt_ >= o.bodyTimeout) {
            answerError(408, "body not received in time");
            flush();
        }
        return;
    }
    if (parser_.inRequest() || parser_.keptBytes() > 0) {
        if (now - requestStart_ >= o.headerTimeout) {
            answerError(408, "request head not received in time");
            flush();
        }
        return;
    }
    if (loop_.shared().draining.load(std::memory_order_relaxed)) {
        const Nanos since = idleSince_ > drainStart ? idleSince_ : drainStart;
        if (now - since >= o.drainIdleGrace) close();
        return;
    }
    if (!servedAny_) {
        // Connected and never sent a whole request: the head timeout runs from accept.
        if (now - idleSince_ >= o.headerTimeout) {
            answerError(408, "no request received in time");
            flush();
        }
        return;
    }
    if (now - idleSince_ >= o.idleTimeout) {
        loop_.counters().idleClosed.fetch_add(1, std::memory_order_relaxed);
        close();
    }
}

}  // namespace ratelab::serve::detail
