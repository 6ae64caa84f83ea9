#pragma once

// Writing one HTTP/1.1 response straight into a connection's output buffer: a status line,
// header lines, then the framing headers the server owns (Content-Length, Date, Connection) and
// the body. No response object is built per request.

#include <string>
#include <string_view>

namespace ratelab::serve {

/// What the server decides about a response regardless of its handler.
struct ResponseFraming {
    bool keepAlive = true;         ///< false: "Connection: close", and the server closes after it
    bool http10KeepAlive = false;  ///< an HTTP/1.0 client asked to keep the connection open
    bool omitBody = false;         ///< the request was HEAD
    std::string_view date;         ///< "Sun, 06 Nov 1994 08:49:37 GMT"
};

/// Appends one response to `out`: start(), any header() calls, then finish(). Not thread-safe.
class Response {
public:
    Response(std::string& out, const ResponseFraming& framing) : out_(out), framing_(framing) {}

    /// Writes the status line. REQUIRES: called once, first.
    void start(int status);
    /// Writes one header line. CR and LF in `value` become spaces, so no value can end the
    /// head early. REQUIRES: after start(), before finish().
    void header(std::string_view name, std::string_view value);
    /// Writes Content-Type (when not empty), Content-Length, Date and Connection, then the body
    /// (left out for HEAD). REQUIRES: after start(), once.
    void finish(std::string_view contentType, std::string_view body);

    bool started() const { return started_; }
    bool finished() const { return finished_; }
    int status() const { return status_; }

private:
    std::string& out_;
    const ResponseFraming& framing_;
    int status_ = 0;
    bool started_ = false;
    bool finished_ = false;
};

/// Appends a complete problem+json response for an error the server answers itself (400, 408,
/// 413, 414, 417, 431, 501, 503, 505) with "Connection: close".
void writeServerError(std::string& out, int status, std::string_view detail, std::string_view date);

/// Formats `unixSeconds` as an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") into `out`
/// (29 bytes, no terminator).
void formatHttpDate(long long unixSeconds, char (&out)[29]);

}  // namespace ratelab::serve
