#pragma once

// One client connection of an event loop (internal): reads, frames requests, has the handler
// answer them, writes the answers, and enforces the timeouts and the close rules.

#include <cstdint>
#include <string>
#include <vector>

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

    /// A request held for the end of the loop's turn (HttpHandler::batches), waiting for its
    /// answer; nothing more is read or parsed on the connection meanwhile.
    bool holding() const { return holding_; }
    /// The held request, and the response that answers it. REQUIRES: holding().
    ServerRequest heldRequest() const;
    Response heldResponse();
    /// The handler wrote `response` for the held request: sends it and goes on with the
    /// connection's input (the next pipelined request may be held in turn).
    void finishHeld(Response& response);

private:
    // A held request's own copy: the parser's buffers move on once it returns.
    struct Held {
        std::string bytes;
        std::vector<Header> headers;
        ParsedRequest request;
        ResponseFraming framing;
        Nanos now = 0;
        bool closeAfter = false;  ///< the last request the connection may send
    };
    void hold(const ParsedRequest& request, bool keepAlive);

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
    bool holding_ = false;
    Held held_;
    std::size_t lingered_ = 0;
    Nanos idleSince_;
    Nanos requestStart_ = 0;
    Nanos headersAt_ = 0;
    Nanos writeStalledSince_ = 0;
    Nanos lingerSince_ = 0;
};

}  // namespace ratelab::serve::detail
