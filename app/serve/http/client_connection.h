#pragma once

// One client connection of an event loop (internal): reads, frames requests, has the handler
// answer them, writes the answers, and enforces the timeouts and the close rules.

#include <cstdint>
#include <string>

#include "serve/http/event_loop.h"
#include "serve/http/request_parser.h"

namespace ratelab::serve::detail {

class Connection final : public RequestSink {
public:
    /// Takes ownership of `fd` (non-blocking). `peer` may be null (no IP peer).
    Connection(EventLoop& loop, int fd, const IpAddress* peer);
    ~Connection() override;
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    int fd() const { return fd_; }
    bool retired() const { return retired_; }
    /// Reacts to epoll readiness.
    void onEvent(std::uint32_t events);
    /// Enforces the timeouts at `now` (the loop's periodic sweep).
    void checkTimers(Nanos now, Nanos drainStart);
    /// Closes at once (the drain's deadline passed, or the loop ends).
    void cut() { close(); }

    std::size_t slot = 0;  ///< index in the loop's connection list

private:
    bool onRequest(const ParsedRequest& request) override;
    void onContinue() override;

    void readable();
    void afterParse(RequestParser::Status status);
    void flush();
    void answerError(int status, std::string_view reason);
    void startLinger();
    void updateInterest();
    void close();
    bool pending() const { return outSent_ < out_.size(); }

    EventLoop& loop_;
    int fd_;
    bool hasPeer_;
    IpAddress peer_;
    RequestParser parser_;
    std::string out_;
    std::size_t outSent_ = 0;

    bool retired_ = false;
    bool servedAny_ = false;
    bool closeAfterWrite_ = false;
    bool peerClosed_ = false;
    bool lingering_ = false;
    bool readPaused_ = false;  // back-pressure: answers must drain before more input is parsed
    bool writeArmed_ = false;
    bool bodyClockStarted_ = false;
    std::size_t lingered_ = 0;
    Nanos idleSince_;
    Nanos requestStart_ = 0;
    Nanos headersAt_ = 0;
    Nanos writeStalledSince_ = 0;
    Nanos lingerSince_ = 0;
};

}  // namespace ratelab::serve::detail
