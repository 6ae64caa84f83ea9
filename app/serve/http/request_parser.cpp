#include "serve/http/request_parser.h"

#include <algorithm>
#include <cstring>

namespace ratelab::serve {

namespace {

// Keeping bytes between reads is rare (a request split over reads, or pipelined input waiting
// for its turn); a buffer that grew past this is released once empty, so storms of large
// unfinished requests leave no memory behind.
constexpr std::size_t kReleaseCapacityAbove = 16 * 1024;

char lower(char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (lower(a[i]) != lower(b[i])) return false;
    }
    return true;
}

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

bool isTokenChar(char c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    return std::strchr("!#$%&'*+-.^_`|~", c) != nullptr && c != '\0';
}

// How a Transfer-Encoding value reads (RFC 9112 6.1): codings a server may know but not
// decode, codings nobody knows, or the one a request may use (chunked, last).
enum class TransferCodings : std::uint8_t { ChunkedLast, KnownOther, Unknown };

TransferCodings classifyTransferEncoding(std::string_view value) {
    bool unknown = false;
    bool chunkedLast = false;
    while (!value.empty()) {
        const std::size_t comma = value.find(',');
        std::string_view item = value.substr(0, comma);
        value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
        const std::size_t semicolon = item.find(';');  // transfer parameters
        item = trimmed(item.substr(0, semicolon));
        if (item.empty()) continue;
        chunkedLast = equalsIgnoringCase(item, "chunked");
        if (!chunkedLast && !equalsIgnoringCase(item, "gzip") &&
            !equalsIgnoringCase(item, "x-gzip") && !equalsIgnoringCase(item, "deflate") &&
            !equalsIgnoringCase(item, "compress") && !equalsIgnoringCase(item, "x-compress")) {
            unknown = true;
        }
    }
    if (unknown) return TransferCodings::Unknown;
    return chunkedLast ? TransferCodings::ChunkedLast : TransferCodings::KnownOther;
}

bool hasControlCharacter(std::string_view value) {
    for (unsigned char c : value) {
        if ((c < 0x20 && c != '\t') || c == 0x7f) return true;
    }
    return false;
}

// What the bytes of a line so far say about it: a request line ("TOKEN SP TARGET SP HTTP/D.D"
// and its line end, so a method the parser does not know), bytes that are not HTTP at all, or
// not known yet because the line goes on past them.
enum class LineShape : std::uint8_t { Partial, NotARequestLine, RequestLine };

LineShape requestLineShape(std::string_view line) {
    std::size_t i = 0;
    while (i < line.size() && isTokenChar(line[i]))
        ++i;
    if (i == line.size()) return LineShape::Partial;
    if (i == 0 || line[i] != ' ') return LineShape::NotARequestLine;
    const std::size_t targetStart = ++i;
    while (i < line.size() && line[i] != ' ' && static_cast<unsigned char>(line[i]) > 0x20)
        ++i;
    if (i == line.size()) return LineShape::Partial;
    if (i == targetStart || line[i] != ' ') return LineShape::NotARequestLine;
    // "HTTP/", a digit, '.', a digit, then CR LF or LF.
    constexpr std::string_view kVersion = "HTTP/0.0\r";
    const std::string_view version = line.substr(i + 1);
    for (std::size_t k = 0; k < version.size(); ++k) {
        const char c = version[k];
        const bool fits = k == 5 || k == 7   ? c >= '0' && c <= '9'
                          : k == 8           ? c == '\r' || c == '\n'
                          : k == 9           ? version[8] == '\r' && c == '\n'
                                             : c == kVersion[k];
        if (!fits) return LineShape::NotARequestLine;
        if (k == 9 || (k == 8 && c == '\n')) return LineShape::RequestLine;
    }
    return LineShape::Partial;
}

RequestParser& self(http_parser* p) {
    return *static_cast<RequestParser*>(p->data);
}

}  // namespace

std::string_view reasonPhrase(int status) {
    switch (status) {
        case 100:
            return "Continue";
        case 200:
            return "OK";
        case 202:
            return "Accepted";
        case 204:
            return "No Content";
        case 400:
            return "Bad Request";
        case 401:
            return "Unauthorized";
        case 403:
            return "Forbidden";
        case 404:
            return "Not Found";
        case 405:
            return "Method Not Allowed";
        case 408:
            return "Request Timeout";
        case 412:
            return "Precondition Failed";
        case 413:
            return "Content Too Large";
        case 414:
            return "URI Too Long";
        case 417:
            return "Expectation Failed";
        case 429:
            return "Too Many Requests";
        case 431:
            return "Request Header Fields Too Large";
        case 500:
            return "Internal Server Error";
        case 501:
            return "Not Implemented";
        case 503:
            return "Service Unavailable";
        case 505:
            return "HTTP Version Not Supported";
        default:
            return "";
    }
}

const http_parser_settings& RequestParser::settings() {
    static const http_parser_settings s = [] {
        http_parser_settings v;
        http_parser_settings_init(&v);
        v.on_message_begin = &RequestParser::onMessageBegin;
        v.on_url = &RequestParser::onUrl;
        v.on_header_field = &RequestParser::onHeaderField;
        v.on_header_value = &RequestParser::onHeaderValue;
        v.on_headers_complete = &RequestParser::onHeadersComplete;
        v.on_body = &RequestParser::onBody;
        v.on_message_complete = &RequestParser::onMessageComplete;
        return v;
    }();
    return s;
}

RequestParser::RequestParser(const RequestLimits& limits) : limits_(limits) {
    http_parser_init(&parser_, HTTP_REQUEST);
    parser_.data = this;
}

bool RequestParser::fail(int status, std::string_view reason) {
    if (error_.status == 0) error_ = RequestError{status, reason};
    return false;
}

void RequestParser::resetMessage() {
    methodLine_.clear();
    inMessage_ = false;
    headersDone_ = false;
    expectContinue_ = false;
    hostSeen_ = false;
    badHost_ = false;
    bodyBytes_ = 0;
    last_ = Last::None;
    target_ = Span{};
    headEnd_ = 0;
    headerSpans_.clear();
    headOwned_ = false;
    ownedHead_.clear();
}

RequestParser::Status RequestParser::feed(std::string_view bytes, RequestSink& sink) {
    if (status_ != Status::Ok || bytes.empty()) return status_;
    if (awaitingMethodLine_) return awaitMethodLine(bytes);
    if (kept_.empty()) {
        // The common case: a whole request in one read, parsed where it lies, nothing copied.
        base_ = bytes.data();
        return run(0, bytes.size(), sink);
    }
    const std::size_t from = kept_.size() - unparsedKept();
    kept_.append(bytes);
    base_ = kept_.data();
    return run(from, kept_.size(), sink);
}

RequestParser::Status RequestParser::resume(RequestSink& sink) {
    if (status_ != Status::Paused) return status_;
    status_ = Status::Ok;
    http_parser_pause(&parser_, 0);
    base_ = kept_.data();
    return run(kept_.size() - unparsedKept(), kept_.size(), sink);
}

RequestParser::Status RequestParser::run(std::size_t from, std::size_t to, RequestSink& sink) {
    sink_ = &sink;
    const std::size_t parsed =
        from + http_parser_execute(&parser_, &settings(), base_ + from, to - from);
    const http_errno code = HTTP_PARSER_ERRNO(&parser_);
    if (code == HPE_PAUSED) {
        status_ = Status::Paused;
    } else if (code == HPE_INVALID_METHOD && error_.status == 0) {
        sink_ = nullptr;
        if (!classifyMethodLine(parsed, from, to)) return status_;  // the line is not whole yet
        status_ = Status::Error;
    } else if (code != HPE_OK) {
        status_ = Status::Error;
        if (error_.status == 0) error_ = classifyParserError();
    } else if (parser_.upgrade) {
        status_ = Status::Upgraded;
    }
    if (status_ == Status::Ok && inMessage_ && last_ == Last::None) keepMethodBytes(parsed, from);
    sink_ = nullptr;
    if (status_ == Status::Error || status_ == Status::Upgraded) {
        // Nothing more is parsed on this connection.
        kept_ = std::string();
        unparsed_ = 0;
        base_ = nullptr;
        return status_;
    }
    keep(parsed, to);
    return status_;
}

void RequestParser::keep(std::size_t parsedTo, std::size_t to) {
    // What later calls need: the head of the unfinished request (its spans; a body is never
    // kept) and the bytes the parser has not looked at yet (input after a pause).
    bool hasHead = inMessage_ && last_ != Last::None && !headOwned_;
    if (hasHead && headersDone_) {
        // In the body: the head moves aside and the body's bytes are not kept.
        ownedHead_.assign(base_ + target_.offset, headEnd_ - target_.offset);
        rebase(target_.offset);
        headOwned_ = true;
        hasHead = false;
    }
    // The head is kept to the last byte parsed, line ends included: a piece of a value that
    // comes in the next read then lies back to back with its first piece only when nothing came
    // between them, as in one read, so a folded line is told apart however the bytes were cut.
    const std::size_t headBegin = hasHead ? target_.offset : parsedTo;
    const std::size_t headLength = parsedTo - headBegin;
    const std::size_t unparsed = to - parsedTo;
    if (base_ == kept_.data()) {
        if (headBegin > 0) std::memmove(kept_.data(), base_ + headBegin, headLength);
        if (unparsed > 0) std::memmove(kept_.data() + headLength, base_ + parsedTo, unparsed);
        kept_.resize(headLength + unparsed);
    } else {
        kept_.assign(base_ + headBegin, headLength);
        kept_.append(base_ + parsedTo, unparsed);
    }
    if (hasHead) rebase(headBegin);
    unparsed_ = unparsed;
    if (kept_.empty() && kept_.capacity() > kReleaseCapacityAbove) kept_ = std::string();
    base_ = kept_.data();
}

void RequestParser::rebase(std::size_t by) {
    const auto shift = static_cast<std::uint32_t>(by);
    target_.offset -= shift;
    for (HeaderSpans& h : headerSpans_) {
        h.name.offset -= shift;
        h.value.offset -= shift;
    }
    headEnd_ -= shift;
}

bool RequestParser::checkHeadSize(const Span& span) {
    if (last_ == Last::Target && span.length > limits_.maxTargetBytes) {
        return fail(414, "request target too long");
    }
    if (span.end() - target_.offset > limits_.maxHeadBytes) {
        return fail(431, "request head too large");
    }
    return true;
}

bool RequestParser::extend(Span& span, Last kind, const char* at, std::size_t length) {
    const auto offset = static_cast<std::uint32_t>(at - base_);
    if (last_ == kind) {
        // The same item continued. Pieces arrive back to back; one that does not is a folded
        // (obs-fold) line, which RFC 9112 lets a server refuse.
        if (span.end() != offset) return fail(400, "obsolete line folding");
        span.length += static_cast<std::uint32_t>(length);
    } else {
        span = Span{offset, static_cast<std::uint32_t>(length)};
        last_ = kind;
    }
    headEnd_ = span.end();
    return checkHeadSize(span);
}

int RequestParser::onMessageBegin(http_parser* p) {
    RequestParser& r = self(p);
    r.resetMessage();
    r.inMessage_ = true;
    return 0;
}

int RequestParser::onUrl(http_parser* p, const char* at, std::size_t length) {
    RequestParser& r = self(p);
    r.methodLine_.clear();  // the method is known: its bytes are no longer needed
    return r.extend(r.target_, Last::Target, at, length) ? 0 : -1;
}

int RequestParser::onHeaderField(http_parser* p, const char* at, std::size_t length) {
    RequestParser& r = self(p);
    if (r.last_ != Last::Name) {
        if (r.headerSpans_.size() >= r.limits_.maxHeaders) {
            return r.fail(431, "too many header lines") ? 0 : -1;
        }
        r.headerSpans_.emplace_back();
    }
    return r.extend(r.headerSpans_.back().name, Last::Name, at, length) ? 0 : -1;
}

int RequestParser::onHeaderValue(http_parser* p, const char* at, std::size_t length) {
    RequestParser& r = self(p);
    if (r.headerSpans_.empty()) return r.fail(400, "header value without a name") ? 0 : -1;
    return r.extend(r.headerSpans_.back().value, Last::Value, at, length) ? 0 : -1;
}

int RequestParser::onHeadersComplete(http_parser* p) {
    return self(p).headersComplete();
}

int RequestParser::headersComplete() {
    if (parser_.method == HTTP_CONNECT) return fail(501, "CONNECT is not supported") ? 0 : -1;
    if (parser_.http_major != 1) return fail(505, "only HTTP/1.x is supported") ? 0 : -1;
    int hosts = 0;
    bool expectOther = false;
    for (const HeaderSpans& h : headerSpans_) {
        const std::string_view name = text(h.name);
        const std::string_view value = text(h.value);
        if (hasControlCharacter(value)) return fail(400, "control character in a header") ? 0 : -1;
        if (equalsIgnoringCase(name, "host")) {
            ++hosts;
        } else if (equalsIgnoringCase(name, "transfer-encoding")) {
            if (classifyTransferEncoding(value) == TransferCodings::Unknown) {
                return fail(501, "unknown transfer coding") ? 0 : -1;
            }
        } else if (equalsIgnoringCase(name, "expect")) {
            if (equalsIgnoringCase(trimmed(value), "100-continue")) {
                expectContinue_ = true;
            } else {
                expectOther = true;
            }
        }
    }
    if (parser_.http_minor >= 1 && hosts != 1) {
        return fail(400, hosts == 0 ? "HTTP/1.1 request without Host" : "several Host headers")
                   ? 0
                   : -1;
    }
    if (hosts > 1) return fail(400, "several Host headers") ? 0 : -1;
    if (expectOther) return fail(417, "unsupported expectation") ? 0 : -1;
    const bool chunked = (parser_.flags & F_CHUNKED) != 0;
    const bool declared = (parser_.flags & F_CONTENTLENGTH) != 0;
    if (declared && parser_.content_length > limits_.maxBodyBytes) {
        return fail(413, "declared body over the limit") ? 0 : -1;
    }
    headersDone_ = true;
    if (expectContinue_ && (chunked || (declared && parser_.content_length > 0))) {
        sink_->onContinue();
    }
    return 0;
}

int RequestParser::onBody(http_parser* p, const char*, std::size_t length) {
    RequestParser& r = self(p);
    r.bodyBytes_ += length;
    if (r.bodyBytes_ > r.limits_.maxBodyBytes) return r.fail(413, "body over the limit") ? 0 : -1;
    return 0;
}

int RequestParser::onMessageComplete(http_parser* p) {
    self(p).messageComplete();
    return 0;
}

void RequestParser::messageComplete() {
    headers_.clear();
    for (const HeaderSpans& h : headerSpans_) {
        headers_.push_back(Header{text(h.name), trimmed(text(h.value))});
    }
    ParsedRequest request;
    request.method = http_method_str(static_cast<http_method>(parser_.method));
    request.target = text(target_);
    request.versionMinor = parser_.http_minor;
    request.headers = headers_;
    request.keepAlive = http_should_keep_alive(&parser_) != 0 && !parser_.upgrade;
    request.head = parser_.method == HTTP_HEAD;
    const bool more = sink_->onRequest(request) && request.keepAlive;
    resetMessage();
    // After the last request of a connection nothing more is parsed; otherwise the sink may
    // ask for a pause to let its answers drain first.
    if (!more) http_parser_pause(&parser_, 1);
}

RequestError RequestParser::classifyParserError() const {
    const http_errno code = HTTP_PARSER_ERRNO(&parser_);
    switch (code) {
        case HPE_HEADER_OVERFLOW:
            return RequestError{431, "request head too large"};
        case HPE_UNEXPECTED_CONTENT_LENGTH:
        case HPE_INVALID_TRANSFER_ENCODING:
            for (const HeaderSpans& h : headerSpans_) {
                if (equalsIgnoringCase(text(h.name), "transfer-encoding") &&
                    classifyTransferEncoding(text(h.value)) == TransferCodings::Unknown) {
                    return RequestError{501, "unknown transfer coding"};
                }
            }
            return RequestError{400, code == HPE_UNEXPECTED_CONTENT_LENGTH
                                         ? "Content-Length with Transfer-Encoding"
                                         : "Transfer-Encoding without chunked last"};
        case HPE_INVALID_CONTENT_LENGTH:
            return RequestError{400, "malformed Content-Length"};
        case HPE_INVALID_VERSION:
            return RequestError{400, "malformed HTTP version"};
        default:
            return RequestError{400, http_errno_description(code)};
    }
}

void RequestParser::keepMethodBytes(std::size_t parsedTo, std::size_t from) {
    // http_parser counts the method's bytes it matched in `index` and keeps none of them.
    const std::size_t matched = parser_.index;
    if (matched <= methodLine_.size()) return;
    const std::size_t here = std::min(matched - methodLine_.size(), parsedTo - from);
    methodLine_.append(base_ + parsedTo - here, here);
}

bool RequestParser::classifyMethodLine(std::size_t parsedTo, std::size_t from, std::size_t to) {
    // The parser stopped at the byte that no method it knows has there; the line starts with
    // the bytes it matched before, in this read or earlier ones (none when it stopped at the
    // first byte, before the request began).
    if (inMessage_ && last_ == Last::None) {
        keepMethodBytes(parsedTo, from);
    } else {
        methodLine_.clear();
    }
    methodLine_.append(base_ + parsedTo, to - parsedTo);
    kept_ = std::string();
    unparsed_ = 0;
    base_ = nullptr;
    awaitingMethodLine_ = true;
    inMessage_ = true;  // a request is arriving, even when its first byte was the one refused
    return awaitMethodLine({}) != Status::Ok;
}

RequestParser::Status RequestParser::awaitMethodLine(std::string_view bytes) {
    methodLine_.append(bytes);
    LineShape shape = requestLineShape(methodLine_);
    // A line longer than a target may be is not waited for.
    if (shape == LineShape::Partial && methodLine_.size() > limits_.maxTargetBytes + 32) {
        shape = LineShape::NotARequestLine;
    }
    if (shape == LineShape::Partial) return status_;
    // A well-formed line with a method the parser does not know is 501 (RFC 9110 9.1);
    // anything else is not HTTP.
    error_ = shape == LineShape::RequestLine ? RequestError{501, "unknown method"}
                                             : RequestError{400, "malformed request line"};
    status_ = Status::Error;
    awaitingMethodLine_ = false;
    methodLine_ = std::string();
    return status_;
}

}  // namespace ratelab::serve
