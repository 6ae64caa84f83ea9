// Request framing (app/serve/http/request_parser.cpp) and the path a policy sees
// (app/serve/http/request_target.cpp), without sockets.

#include <QtTest>

#include "serve/http/request_parser.h"
#include "serve/http/request_target.h"

using namespace ratelab;
using namespace ratelab::serve;

namespace {

struct Seen {
    std::string method, target;
    int minor = 1;
    bool keepAlive = true;
    std::vector<std::pair<std::string, std::string>> headers;
};

class Collector : public RequestSink {
public:
    bool onRequest(const ParsedRequest& r) override {
        Seen s{std::string(r.method), std::string(r.target), r.versionMinor, r.keepAlive, {}};
        for (const Header& h : r.headers)
            s.headers.emplace_back(h.name, h.value);
        requests.push_back(std::move(s));
        return requests.size() < pauseAfter;
    }
    void onContinue() override { ++continues; }
    std::vector<Seen> requests;
    std::size_t pauseAfter = SIZE_MAX;
    int continues = 0;
};

// Feeds `input` whole, or a byte at a time while the parser takes more; the last status.
RequestParser::Status feedAll(RequestParser& parser, Collector& sink, const QByteArray& input,
                              bool byteByByte) {
    const std::string_view bytes(input.constData(), static_cast<std::size_t>(input.size()));
    if (!byteByByte) return parser.feed(bytes, sink);
    RequestParser::Status s = RequestParser::Status::Ok;
    for (std::size_t i = 0; i < bytes.size() && s == RequestParser::Status::Ok; ++i)
        s = parser.feed(bytes.substr(i, 1), sink);
    return s;
}

}  // namespace

class TestRequestParser : public QObject {
    Q_OBJECT

private slots:
    // Pipelined requests split at every possible byte come out whole and in order, with their
    // headers (values trimmed) and the keep-alive rule of each.
    void splitAnywhere() {
        const std::string input =
            "GET /a?x=1 HTTP/1.1\r\nHost: h\r\nAuthorization:  Bearer t  \r\n\r\n"
            "POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nbody"
            "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
            "GET /d HTTP/1.0\r\n\r\n";
        for (std::size_t cut = 1; cut < input.size(); ++cut) {
            RequestParser parser(RequestLimits{});
            Collector sink;
            QCOMPARE(parser.feed(std::string_view(input).substr(0, cut), sink),
                     RequestParser::Status::Ok);
            const RequestParser::Status last =
                parser.feed(std::string_view(input).substr(cut), sink);
            QCOMPARE(last, RequestParser::Status::Paused);  // HTTP/1.0 without keep-alive: the last
            QCOMPARE(sink.requests.size(), std::size_t(4));
            QCOMPARE(sink.requests[0].target, std::string("/a?x=1"));
            QCOMPARE(sink.requests[0].headers[1].second, std::string("Bearer t"));
            QCOMPARE(sink.requests[1].method, std::string("POST"));
            QCOMPARE(sink.requests[2].target, std::string("/c"));
            QCOMPARE(sink.requests[3].minor, 0);
            QVERIFY(sink.requests[2].keepAlive);
            QVERIFY(!sink.requests[3].keepAlive);
            QCOMPARE(parser.keptBytes(), std::size_t(0));
        }
    }

    // Back-pressure: the sink pauses after two requests; the rest waits in the parser and
    // comes out on resume().
    void pauseAndResume() {
        RequestParser parser(RequestLimits{});
        Collector sink;
        sink.pauseAfter = 2;
        std::string input;
        for (int i = 0; i < 5; ++i)
            input += "GET /" + std::to_string(i) + " HTTP/1.1\r\nHost: h\r\n\r\n";
        QCOMPARE(parser.feed(input, sink), RequestParser::Status::Paused);
        QCOMPARE(sink.requests.size(), std::size_t(2));
        QVERIFY(parser.keptBytes() > 0);
        sink.pauseAfter = SIZE_MAX;
        QCOMPARE(parser.resume(sink), RequestParser::Status::Ok);
        QCOMPARE(sink.requests.size(), std::size_t(5));
        QCOMPARE(sink.requests[4].target, std::string("/4"));
        QCOMPARE(parser.keptBytes(), std::size_t(0));
    }

    // A body is counted, never kept: a large one fed in pieces leaves only the head behind.
    void bodiesAreNotKept() {
        RequestLimits limits;
        limits.maxBodyBytes = 10'000'000;
        RequestParser parser(limits);
        Collector sink;
        QCOMPARE(
            parser.feed("POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: 5000000\r\n\r\n", sink),
            RequestParser::Status::Ok);
        const std::string chunk(100'000, 'z');
        for (int i = 0; i < 49; ++i)
            QCOMPARE(parser.feed(chunk, sink), RequestParser::Status::Ok);
        QVERIFY(parser.inBody());
        QVERIFY(parser.keptBytes() < 100);
        QCOMPARE(parser.feed(chunk, sink), RequestParser::Status::Ok);
        QCOMPARE(sink.requests.size(), std::size_t(1));
        QCOMPARE(sink.requests[0].target, std::string("/up"));
        QVERIFY(parser.keptCapacity() <= 16 * 1024);
    }

    void expectContinue() {
        RequestParser parser(RequestLimits{});
        Collector sink;
        QCOMPARE(
            parser.feed(
                "PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 2\r\n\r\n",
                sink),
            RequestParser::Status::Ok);
        QCOMPARE(sink.continues, 1);
        QCOMPARE(sink.requests.size(), std::size_t(0));
        QCOMPARE(parser.feed("ok", sink), RequestParser::Status::Ok);
        QCOMPARE(sink.requests.size(), std::size_t(1));
    }

    // Each input ends in an error with its status, whole or a byte at a time. `requests` is how
    // many requests came out before it (a request with a body, then an unknown method).
    // A method the parser does not know is 501 once its whole line has arrived: methods are
    // case-sensitive, so "get" is one of them, and "POS" only begins one the parser knows.
    void errors_data() {
        QTest::addColumn<QByteArray>("input");
        QTest::addColumn<int>("status");
        QTest::addColumn<int>("requests");
        QTest::newRow("binary") << QByteArray("\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03", 11)
                                << 400 << 0;
        QTest::newRow("not HTTP") << QByteArray("hello\r\n\r\n") << 400 << 0;
        QTest::newRow("xchunked") << QByteArray(
                                         "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: "
                                         "xchunked\r\nContent-Length: 0\r\n\r\n")
                                  << 501 << 0;
        QTest::newRow("chunked then gzip")
            << QByteArray("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n")
            << 400 << 0;
        QTest::newRow("bad length")
            << QByteArray("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 12a\r\n\r\n") << 400 << 0;
        QTest::newRow("declared over limit")
            << QByteArray("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 65537\r\n\r\n") << 413
            << 0;
        QTest::newRow("two hosts")
            << QByteArray("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n") << 400 << 0;
        QTest::newRow("NUL in value") << QByteArray(
                                             "GET / HTTP/1.1\r\nHost: a\r\nX: a\x01"
                                             "b\r\n\r\n")
                                      << 400 << 0;
        QTest::newRow("folded header")
            << QByteArray("GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n") << 400 << 0;
        QTest::newRow("HTTP/3") << QByteArray("GET / HTTP/3.0\r\nHost: a\r\n\r\n") << 505 << 0;
        QTest::newRow("target over limit")
            << QByteArray(("GET /" + std::string(8200, 'x') + " HTTP/1.1\r\n").c_str()) << 414 << 0;
        QTest::newRow("head over limit")
            << QByteArray(("GET / HTTP/1.1\r\nHost: h\r\nA: " + std::string(16400, 'y')).c_str())
            << 431 << 0;
        QTest::newRow("FETCH") << QByteArray("FETCH /x HTTP/1.1\r\nHost: h\r\n\r\n") << 501 << 0;
        QTest::newRow("lower case") << QByteArray("get / HTTP/1.1\r\nHost: h\r\n\r\n") << 501 << 0;
        QTest::newRow("prefix of POST")
            << QByteArray("POS /x HTTP/1.1\r\nHost: h\r\n\r\n") << 501 << 0;
        QTest::newRow("no target") << QByteArray("FETCH HTTP/1.1\r\n\r\n") << 400 << 0;
        QTest::newRow("after a body") << QByteArray(
                                             "POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n"
                                             "\r\nbodyPOS /c HTTP/1.1\r\nHost: h\r\n\r\n")
                                      << 501 << 1;
    }
    // A line cut inside an unknown method is not answered until it ends (or grows past what a
    // target may be): the request is still arriving, so the head timeout applies.
    void unknownMethodWaitsForItsLine() {
        RequestParser parser(RequestLimits{});
        Collector sink;
        QCOMPARE(parser.feed("FETCH /x HT", sink), RequestParser::Status::Ok);
        QVERIFY(parser.inRequest());
        QCOMPARE(parser.keptBytes(), std::size_t(11));
        QCOMPARE(parser.feed("TP/1.1\r\nHost: h\r\n", sink), RequestParser::Status::Error);
        QCOMPARE(parser.error().status, 501);

        RequestParser endless(RequestLimits{});
        QCOMPARE(endless.feed("FETCH /" + std::string(8300, 'x'), sink),
                 RequestParser::Status::Error);
        QCOMPARE(endless.error().status, 400);
    }

    void errors() {
        QFETCH(QByteArray, input);
        QFETCH(int, status);
        QFETCH(int, requests);
        // Whole, and one byte at a time: the verdict does not depend on how bytes arrive.
        for (bool byteByByte : {false, true}) {
            RequestParser parser(RequestLimits{});
            Collector sink;
            const RequestParser::Status s = feedAll(parser, sink, input, byteByByte);
            QCOMPARE(s, RequestParser::Status::Error);
            QCOMPARE(parser.error().status, status);
            QVERIFY(!parser.error().reason.empty());
            QCOMPARE(sink.requests.size(), std::size_t(requests));
        }
    }

    void normalizedPaths_data() {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("path");
        QTest::newRow("plain") << "/api/items"
                               << "/api/items";
        QTest::newRow("query") << "/login?next=/x"
                               << "/login";
        QTest::newRow("dot") << "/./login"
                             << "/login";
        QTest::newRow("dot dot") << "/static/../login"
                                 << "/login";
        QTest::newRow("above root") << "/../../login"
                                    << "/login";
        QTest::newRow("slashes") << "//login//x"
                                 << "/login/x";
        QTest::newRow("escaped letter") << "/%6Cogin"
                                        << "/login";
        QTest::newRow("escaped slash") << "/api%2Flogin"
                                       << "/api/login";
        QTest::newRow("escaped dots") << "/x/%2e%2e/login"
                                      << "/login";
        QTest::newRow("trailing slash") << "/api/"
                                        << "/api/";
        QTest::newRow("dir dots") << "/a/b/.."
                                  << "/a/";
        QTest::newRow("root") << "/"
                              << "/";
        QTest::newRow("high byte stays escaped") << "/caf%c3%a9"
                                                 << "/caf%C3%A9";
        QTest::newRow("raw high byte escaped") << QString::fromUtf8("/caf\xc3\xa9") << "/caf%C3%A9";
        QTest::newRow("absolute form") << "http://example.com/a/../b?q"
                                       << "/b";
        QTest::newRow("absolute, no path") << "https://example.com"
                                           << "/";
        QTest::newRow("escaped query mark stays escaped") << "/a%3fb?q"
                                                          << "/a%3Fb";
        QTest::newRow("escaped hash and percent stay escaped") << "/a%23b%25c"
                                                               << "/a%23b%25c";
        QTest::newRow("asterisk") << "*"
                                  << "*";
    }
    void normalizedPaths() {
        QFETCH(QString, target);
        QFETCH(QString, path);
        std::string out;
        std::string_view why;
        QVERIFY(normalizedPath(target.toStdString(), out, &why));
        QCOMPARE(QString::fromStdString(out), path);
        std::string again;  // a normalised path normalises to itself
        QVERIFY(normalizedPath(out, again, &why));
        QCOMPARE(again, out);
    }

    void pathsThatAreRefused_data() {
        QTest::addColumn<QString>("target");
        QTest::newRow("relative") << "login";
        QTest::newRow("empty") << "";
        QTest::newRow("short escape") << "/a%2";
        QTest::newRow("bad escape") << "/a%zz";
        QTest::newRow("escaped NUL") << "/a%00b";
        QTest::newRow("escaped newline") << "/a%0ab";
    }
    void pathsThatAreRefused() {
        QFETCH(QString, target);
        std::string out;
        std::string_view why;
        QVERIFY(!normalizedPath(target.toStdString(), out, &why));
        QVERIFY(!why.empty());
    }
};

QTEST_APPLESS_MAIN(TestRequestParser)
#include "tst_request_parser.moc"
