#pragma once

// HTTP/1.1 request framing on one connection, on top of libhttp-parser (Debian's
// libhttp-parser 2.9.4): bytes in, complete requests out, with the limits a server facing
// hostile clients needs. The parser keeps only the bytes it still has to look at (the head of an
// unfinished request and unparsed pipelined input); bodies are counted and dropped, never
// buffered, since a decision never needs them.

#include <http_parser.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ratelab/request.h"

namespace ratelab::serve {

/// What one request may hold. Each limit answers with its own status.
struct RequestLimits {
    std::size_t maxTargetBytes = 8 * 1024;   ///< request-target; longer: 414
    std::size_t maxHeadBytes = 16 * 1024;    ///< request line and header lines together: 431
    std::size_t maxHeaders = 100;            ///< header lines: 431
    std::uint64_t maxBodyBytes = 64 * 1024;  ///< declared or streamed body: 413
};

/// One complete request. Views into the parser's buffer: valid during the callback only.
struct ParsedRequest {
    std::string_view method;  ///< "GET"
    std::string_view target;  ///< the request-target as sent: "/api/items?x=1"
    int versionMinor = 1;     ///< HTTP/1.<versionMinor>
    std::span<const Header> headers;
    bool keepAlive = true;  ///< the client allows another request on this connection
    bool head = false;      ///< method HEAD: the answer has no body
};

/// Why a request cannot be answered normally, and the status that says so.
struct RequestError {
    int status = 0;           ///< 400, 405, 408, 413, 414, 417, 431, 501 or 505; 0: none
    std::string_view reason;  ///< static text for logs: "header block over 16384 bytes"
};

/// Receives what the parser finds. Called from inside feed()/resume().
class RequestSink {
public:
    virtual ~RequestSink() = default;
    /// A complete request. Return false to stop parsing after it (back-pressure, or the sink
    /// decided to close): the remaining bytes wait for resume().
    virtual bool onRequest(const ParsedRequest& request) = 0;
    /// The client sent "Expect: 100-continue" with a body the limits accept: it waits for an
    /// interim "100 Continue" before sending the body.
    virtual void onContinue() = 0;
};

/// Frames requests on one connection. Not thread-safe; one per connection.
class RequestParser {
public:
    enum class Status : std::uint8_t {
        Ok,        ///< every byte looked at; call feed() with the next ones
        Paused,    ///< the sink stopped it; call resume() when it is ready for more
        Error,     ///< error() says which status to answer with; the connection must close
        Upgraded,  ///< the last request asked to switch protocols (or CONNECT): close after it
    };

    explicit RequestParser(const RequestLimits& limits);
    RequestParser(const RequestParser&) = delete;
    RequestParser& operator=(const RequestParser&) = delete;

    /// Parses `bytes`, calling the sink for each complete request. REQUIRES: status() is Ok.
    Status feed(std::string_view bytes, RequestSink& sink);
    /// Continues after Paused with the bytes kept from earlier feeds.
    Status resume(RequestSink& sink);

    Status status() const { return status_; }
    const RequestError& error() const { return error_; }
    /// A request has begun and not ended (some of its bytes arrived).
    bool inRequest() const { return inMessage_; }
    /// The current request's headers are complete and its body is arriving.
    bool inBody() const { return inMessage_ && headersDone_; }
    /// Bytes held between calls (an unfinished head, unparsed pipelined requests).
    std::size_t keptBytes() const { return kept_.size() + methodLine_.size(); }
    /// Bytes held in reserve by the buffers, for memory accounting.
    std::size_t keptCapacity() const { return kept_.capacity() + methodLine_.capacity(); }

private:
    struct Span {
        std::uint32_t offset = 0;
        std::uint32_t length = 0;
        std::uint32_t end() const { return offset + length; }
    };
    struct HeaderSpans {
        Span name;
        Span value;
    };
    enum class Last : std::uint8_t { None, Target, Name, Value };

    static int onMessageBegin(http_parser* p);
    static int onUrl(http_parser* p, const char* at, std::size_t length);
    static int onHeaderField(http_parser* p, const char* at, std::size_t length);
    static int onHeaderValue(http_parser* p, const char* at, std::size_t length);
    static int onHeadersComplete(http_parser* p);
    static int onBody(http_parser* p, const char* at, std::size_t length);
    static int onMessageComplete(http_parser* p);
    static const http_parser_settings& settings();

    // Runs the parser over base_[from, to) and keeps what later calls need.
    Status run(std::size_t from, std::size_t to, RequestSink& sink);
    // Records the next piece of the target, a name or a value; false after setting error_.
    bool extend(Span& span, Last kind, const char* at, std::size_t length);
    bool checkHeadSize(const Span& span);
    int headersComplete();
    void messageComplete();
    RequestError classifyParserError() const;
    // A method the parser does not know: 501 or 400 once the request line is whole, so that the
    // answer never depends on how the line was cut into reads. False while the line is short.
    bool classifyMethodLine(std::size_t parsedTo, std::size_t from, std::size_t to);
    void keepMethodBytes(std::size_t parsedTo, std::size_t from);
    Status awaitMethodLine(std::string_view bytes);
    std::size_t unparsedKept() const { return unparsed_; }
    void keep(std::size_t parsedTo, std::size_t to);
    void rebase(std::size_t by);
    void resetMessage();
    std::string_view text(const Span& span) const {
        return std::string_view((headOwned_ ? ownedHead_.data() : base_) + span.offset,
                                span.length);
    }
    bool fail(int status, std::string_view reason);

    RequestLimits limits_;
    http_parser parser_;
    RequestSink* sink_ = nullptr;
    const char* base_ = nullptr;  // the buffer offsets point into while parsing
    std::string kept_;            // bytes held between calls; offsets point here between calls
    std::size_t unparsed_ = 0;    // the tail of kept_ the parser has not looked at yet
    Status status_ = Status::Ok;
    RequestError error_;

    // The request being parsed.
    bool inMessage_ = false;
    bool headersDone_ = false;
    bool expectContinue_ = false;
    bool hostSeen_ = false;
    bool badHost_ = false;
    std::uint64_t bodyBytes_ = 0;
    Last last_ = Last::None;
    Span target_;
    std::uint32_t headEnd_ = 0;  // end of the last span: the head kept while the request lasts
    // A head whose body goes on past the bytes at hand is copied here, so that the body's bytes
    // are parsed where they lie and never copied or kept.
    bool headOwned_ = false;
    std::string ownedHead_;
    std::vector<HeaderSpans> headerSpans_;
    std::vector<Header> headers_;  // materialised for the sink
    // The method's bytes the parser took in earlier reads, and after it refused the method, the
    // request line so far: the parser keeps neither.
    std::string methodLine_;
    bool awaitingMethodLine_ = false;
};

/// The reason phrase of a status the server sends ("Too Many Requests"); "" when unknown.
std::string_view reasonPhrase(int status);

}  // namespace ratelab::serve
