// Access-log lines (app/sim/log/format/line_format.cpp, log_time.cpp, json_scanner.cpp): every format's fields,
// times in every syntax, damage that keeps a line against damage that loses it, and format
// detection from a log's first lines.

#include <QtTest>

#include "sim/log/format/line_format.h"
#include "sim/log/format/json_scanner.h"
#include "sim/log/format/log_time.h"

using namespace ratelab;
using namespace ratelab::sim;

namespace {

LogFormatOptions optionsFor(const QString& spec) {
    // "combined", "nginx:FORMAT", "json:role=path,role=path"
    LogFormatOptions o;
    const QString name = spec.section(':', 0, 0);
    o.format = *parseLogFormat(name.toStdString());
    if (o.format == LogFormat::Nginx) o.nginxFormat = spec.section(':', 1).toStdString();
    if (o.format == LogFormat::Json) {
        for (const QString& f : spec.section(':', 1).split(',')) {
            o.jsonFields.emplace_back(f.section('=', 0, 0).toStdString(),
                                      f.section('=', 1).toStdString());
        }
    }
    return o;
}

QString headersText(const LogRecord& r) {
    QStringList out;
    for (const Header& h : r.headers) {
        out << QString::fromUtf8(h.name.data(), static_cast<qsizetype>(h.name.size())) + "=" +
                   QString::fromUtf8(h.value.data(), static_cast<qsizetype>(h.value.size()));
    }
    return out.join(';');
}

QString text(std::string_view s) {
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

}  // namespace

class TestLogFormat : public QObject {
    Q_OBJECT

private slots:
    void times_data();
    void times();
    void lines_data();
    void lines();
    void csvHeaderNamesColumns();
    void csvHeaderPrefixWithoutAName();
    void nginxFormatsThatCannotWork_data();
    void nginxFormatsThatCannotWork();
    void jsonNeedsClientAndTime();
    void detection_data();
    void detection();
    void jsonScannerRefusesBrokenText_data();
    void jsonScannerRefusesBrokenText();
};

void TestLogFormat::times_data() {
    QTest::addColumn<QString>("time");
    QTest::addColumn<int>("syntax");
    QTest::addColumn<qint64>("micros");  // -1: refused
    const int clf = int(TimeSyntax::Clf), iso = int(TimeSyntax::Iso8601),
              sec = int(TimeSyntax::EpochSeconds), ms = int(TimeSyntax::EpochMillis),
              any = int(TimeSyntax::Any);
    const qint64 t = 971211336000000;  // 2000-10-10T20:55:36Z
    QTest::newRow("clf -0700") << "10/Oct/2000:13:55:36 -0700" << clf << t;
    QTest::newRow("clf +0530, next day") << "11/Oct/2000:02:25:36 +0530" << clf << t;
    QTest::newRow("clf leap day +1400")
        << "29/Feb/2024:23:59:59 +1400" << clf << qint64(1709200799000000);
    QTest::newRow("clf no leap day in 2023") << "29/Feb/2023:00:00:00 +0000" << clf << qint64(-1);
    QTest::newRow("clf unknown month") << "10/Foo/2000:13:55:36 -0700" << clf << qint64(-1);
    QTest::newRow("clf hour 24") << "10/Oct/2000:24:00:00 -0700" << clf << qint64(-1);
    QTest::newRow("clf zone +1500") << "10/Oct/2000:13:55:36 +1500" << clf << qint64(-1);
    QTest::newRow("clf no zone") << "10/Oct/2000:13:55:36" << clf << qint64(-1);
    QTest::newRow("clf before 1970") << "31/Dec/1969:23:59:59 +0000" << clf << qint64(-1);
    QTest::newRow("iso Z") << "2000-10-10T20:55:36Z" << iso << t;
    QTest::newRow("iso offset") << "2000-10-10T13:55:36-07:00" << iso << t;
    QTest::newRow("iso offset without colon") << "2000-10-11T02:25:36+0530" << iso << t;
    QTest::newRow("iso fraction") << "2000-10-10T20:55:36.25Z" << iso << t + 250000;
    QTest::newRow("iso nanoseconds dropped")
        << "2000-10-10T20:55:36.123456789Z" << iso << t + 123456;
    QTest::newRow("iso space") << "2000-10-10 20:55:36+00:00" << iso << t;
    QTest::newRow("iso without an offset") << "2000-10-10T20:55:36" << iso << qint64(-1);
    QTest::newRow("iso trailing text") << "2000-10-10T20:55:36Zx" << iso << qint64(-1);
    QTest::newRow("epoch seconds") << "971211336" << sec << t;
    QTest::newRow("epoch seconds, ms fraction") << "971211336.250" << sec << t + 250000;
    QTest::newRow("epoch seconds, Caddy's") << "971211336.5241024" << sec << t + 524102;
    QTest::newRow("epoch seconds, exponent") << "9.71211336e8" << sec << t;
    QTest::newRow("epoch ms") << "971211336250" << ms << t + 250000;
    QTest::newRow("epoch ms after 9999") << "253402300800000" << ms << qint64(-1);
    QTest::newRow("epoch not a number") << "97x" << sec << qint64(-1);
    QTest::newRow("any: clf") << "10/Oct/2000:13:55:36 -0700" << any << t;
    QTest::newRow("any: iso") << "2000-10-10T20:55:36Z" << any << t;
    QTest::newRow("any: seconds below 10^11") << "99999999999" << any << qint64(99999999999000000);
    QTest::newRow("any: milliseconds from 10^11") << "971211336250" << any << t + 250000;
}

void TestLogFormat::times() {
    QFETCH(QString, time);
    QFETCH(int, syntax);
    QFETCH(qint64, micros);
    std::int64_t out = 0;
    std::string error;
    const bool ok = parseLogTime(time.toStdString(), static_cast<TimeSyntax>(syntax), out, error);
    if (micros < 0) {
        QVERIFY2(!ok, qPrintable(QString::number(out)));
        QVERIFY(error.starts_with("time \""));
    } else {
        QVERIFY2(ok, error.c_str());
        QCOMPARE(out, std::int64_t(micros));
    }
}

void TestLogFormat::lines_data() {
    QTest::addColumn<QString>("format");
    QTest::addColumn<QString>("line");
    QTest::addColumn<int>("status");  // LineStatus
    QTest::addColumn<QString>("client");
    QTest::addColumn<QString>("request");  // "METHOD PATH STATUS"
    QTest::addColumn<QString>("headers");
    QTest::addColumn<QString>("problem");  // substring, and ":COLUMN"
    const int ok = int(LineStatus::Ok), damaged = int(LineStatus::Damaged),
              unparsed = int(LineStatus::Unparsed);
    const QString clf = "198.51.100.7 - - [10/Oct/2000:13:55:36 -0700] ";
    QTest::newRow("combined") << "combined"
                              << clf + "\"GET /a/b?x=1 HTTP/1.1\" 200 5 \"-\" \"curl/8\"" << ok
                              << "198.51.100.7"
                              << "GET /a/b 200"
                              << ""
                              << "";
    QTest::newRow("combined, absolute URI")
        << "combined" << clf + "\"GET http://h.example/p?q HTTP/1.1\" 404 - \"-\" \"x\"" << ok
        << "198.51.100.7"
        << "GET /p 404"
        << ""
        << "";
    QTest::newRow("combined, user agent cut off")
        << "combined" << clf + "\"GET / HTTP/1.1\" 200 5 \"-\" \"Mozilla/5.0 (X11; Lin" << damaged
        << "198.51.100.7"
        << "GET / 200"
        << ""
        << "user-agent field is cut off:74";
    QTest::newRow("combined, request cut off")
        << "combined" << clf + "\"GET /very/long/pa" << damaged << "198.51.100.7"
        << "GET /very/long/pa 0"
        << ""
        << "request field is cut off:47";
    QTest::newRow("combined, no time")
        << "combined"
        << "198.51.100.7 - - \"GET / HTTP/1.1\" 200 5" << unparsed << "198.51.100.7"
        << ""
        << ""
        << "no [time] field:14";
    QTest::newRow("combined, client not an address")
        << "combined"
        << "not#a#host - - [10/Oct/2000:13:55:36 -0700] \"GET /\" 200 5" << unparsed << ""
        << ""
        << ""
        << "neither an IP address nor a host name:1";
    QTest::newRow("combined, a host name") << "combined"
                                           << "piweba3y.prodigy.com - - "
                                              "[10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 "
                                              "1 \"-\" \"-\""
                                           << ok << "piweba3y.prodigy.com"
                                           << "GET / 200"
                                           << ""
                                           << "";
    QTest::newRow("common, status not a number")
        << "common" << clf + "\"GET / HTTP/1.1\" abc 5" << damaged << "198.51.100.7"
        << "GET / 0"
        << ""
        << "status field \"abc\" is not a number:64";
    QTest::newRow("common, junk request")
        << "common" << clf + "\"\\x16\\x03\\x01\" 400 0" << ok << "198.51.100.7"
        << "- / 400"
        << ""
        << "";
    const QString main = "nginx:" + QString::fromUtf8(kNginxMainFormat.data());
    QTest::newRow("nginx main behind a balancer")
        << main
        << "10.0.0.5 - - [10/Oct/2000:13:55:36 -0700] \"GET /api HTTP/1.1\" 200 5 \"-\" \"ua\" "
           "\"203.0.113.9, 198.51.100.7\""
        << ok << "10.0.0.5"
        << "GET /api 200"
        << "user-agent=ua;x-forwarded-for=203.0.113.9, 198.51.100.7"
        << "";
    QTest::newRow("nginx main, no forwarded-for")
        << main
        << "10.0.0.5 - - [10/Oct/2000:13:55:36 -0700] \"GET /api HTTP/1.1\" 200 5 \"-\" \"ua\" "
           "\"-\""
        << ok << "10.0.0.5"
        << "GET /api 200"
        << "user-agent=ua"
        << "";
    QTest::newRow("nginx main, agent cut off")
        << main
        << "10.0.0.5 - - [10/Oct/2000:13:55:36 -0700] \"GET /api HTTP/1.1\" 200 5 \"-\" \"ua"
        << damaged << "10.0.0.5"
        << "GET /api 200"
        << "user-agent=ua"
        << "$http_user_agent field is cut off:74";
    const QString custom =
        "nginx:$time_iso8601 $remote_addr \"$request_method $request_uri\" $status "
        "\"$http_authorization\" $http_x_api_key $upstream_addr";
    QTest::newRow("nginx, own format") << custom
                                       << "2000-10-10T13:55:36-07:00 2001:db8::1 \"POST "
                                          "/login?next=/ \" 401 \"Bearer \\x22t\\x22\" "
                                          "k-1 10.1.1.1:80"
                                       << ok << "2001:db8::1"
                                       << "POST /login 401"
                                       << "authorization=Bearer \"t\";x-api-key=k-1"
                                       << "";
    QTest::newRow("nginx, msec") << "nginx:$msec $remote_addr $request"
                                 << "971211336.250 192.0.2.1 GET /x HTTP/1.1" << ok << "192.0.2.1"
                                 << "GET /x 0"
                                 << ""
                                 << "";
    QTest::newRow("nginx, literal missing before the time")
        << "nginx:$remote_addr [$time_local] $status"
        << "192.0.2.1 10/Oct/2000:13:55:36 -0700" << unparsed << ""
        << ""
        << ""
        << "neither an IP address nor a host name:1";
    QTest::newRow("csv, legacy columns") << "csv"
                                         << "1000,198.51.100.7,/x?y,POST" << ok << "198.51.100.7"
                                         << "POST /x 0"
                                         << ""
                                         << "";
    QTest::newRow("csv, quoted") << "csv"
                                 << "1000,\"198.51.100.7\",\"/a,b\",\"GET\"" << ok << "198.51.100.7"
                                 << "GET /a,b 0"
                                 << ""
                                 << "";
    QTest::newRow("csv, path without a slash") << "csv"
                                               << "1000,198.51.100.7,x" << damaged << "198.51.100.7"
                                               << "GET / 0"
                                               << ""
                                               << "does not start with '/':19";
    QTest::newRow("csv, quote not closed") << "csv"
                                           << "1000,198.51.100.7,\"/x" << damaged << "198.51.100.7"
                                           << "GET /x 0"
                                           << ""
                                           << "not closed:19";
    QTest::newRow("csv, no client") << "csv"
                                    << "1500," << unparsed << ""
                                    << ""
                                    << ""
                                    << "the client field is empty:6";
    const QString caddyLine =
        "{\"level\":\"info\",\"ts\":971211336.5241024,\"request\":{\"remote_ip\":\"198.51.100.7\","
        "\"remote_port\":\"5\",\"method\":\"POST\",\"uri\":\"/login?x=\\u0031\",\"headers\":{"
        "\"Authorization\":[\"REDACTED\"],\"X-Forwarded-For\":[\"203.0.113.1\"],\"X-Api-Key\":"
        "[\"k\\\"1\"]}},\"status\":429}";
    QTest::newRow("caddy") << "caddy" << caddyLine << ok << "198.51.100.7"
                           << "POST /login 429"
                           << "X-Forwarded-For=203.0.113.1;X-Api-Key=k\"1"
                           << "";
    // A value without a name is no header (found by fuzz_access_log).
    QTest::newRow("caddy, header without a name")
        << "caddy"
        << "{\"ts\":971211336,\"request\":{\"remote_ip\":\"192.0.2.1\",\"uri\":\"/\","
           "\"headers\":{\"\":[\"x\"],\"X-Api-Key\":[\"k\"]}}}"
        << ok << "192.0.2.1"
        << "GET / 0"
        << "X-Api-Key=k"
        << "";
    QTest::newRow("caddy, older remote_addr with a port")
        << "caddy"
        << "{\"ts\":971211336,\"request\":{\"remote_addr\":\"[2001:db8::5]:443\",\"uri\":\"/\"}}"
        << ok << "[2001:db8::5]:443"
        << "GET / 0"
        << ""
        << "";
    QTest::newRow("caddy, cut off after client and time")
        << "caddy"
        << "{\"ts\":971211336,\"request\":{\"remote_ip\":\"192.0.2.1\",\"uri\":\"/a" << damaged
        << "192.0.2.1"
        << "GET / 0"
        << ""
        << "a string is cut off:61";
    QTest::newRow("caddy, cut off before the client")
        << "caddy"
        << "{\"ts\":971211336,\"request\":{\"remo" << unparsed << ""
        << ""
        << ""
        << "before the client and time were read:33";
    QTest::newRow("json, ISO time and nested fields")
        << "json:client=c.ip,time=t,method=r.m,path=r.p,status=s,header:authorization=a"
        << "{\"t\":\"2000-10-10T20:55:36.25Z\",\"c\":{\"ip\":\"192.0.2.9\"},\"r\":{\"m\":\"PUT\","
           "\"p\":\"/v1/x?y\"},\"s\":201,\"a\":\"Bearer z\",\"extra\":[1,{\"deep\":[true,null]}]}"
        << ok << "192.0.2.9"
        << "PUT /v1/x 201"
        << "authorization=Bearer z"
        << "";
    QTest::newRow("json, epoch ms as a number")
        << "json:client=ip,time=ms"
        << "{\"ms\":971211336250,\"ip\":\"192.0.2.9\"}" << ok << "192.0.2.9"
        << "GET / 0"
        << ""
        << "";
}

void TestLogFormat::lines() {
    QFETCH(QString, format);
    QFETCH(QString, line);
    QFETCH(int, status);
    QFETCH(QString, client);
    QFETCH(QString, request);
    QFETCH(QString, headers);
    QFETCH(QString, problem);
    std::string error;
    std::optional<LogLineParser> parser = LogLineParser::make(optionsFor(format), error);
    QVERIFY2(parser, error.c_str());
    const std::string text8 = line.toStdString();
    LogRecord r;
    LineProblem p;
    const LineStatus s = parser->parse(text8, r, p);
    QCOMPARE(int(s), status);
    if (!problem.isEmpty()) {
        const QString message = QString::fromStdString(p.message) + ":" + QString::number(p.column);
        QVERIFY2(message.contains(problem.section(':', 0, 0)), qPrintable(message));
        QCOMPARE(p.column, problem.section(':', 1).toInt());
    }
    if (s == LineStatus::Unparsed) return;
    QCOMPARE(text(r.client), client);
    QCOMPARE(text(r.method) + " " + text(r.path) + " " + QString::number(r.status), request);
    QCOMPARE(headersText(r), headers);
    if (!format.startsWith("csv")) {
        QVERIFY(r.epochMicros >= 971211336000000 && r.epochMicros < 971211337000000);
    }
}

// A header line names the columns of its file and of later files without one; a new file
// may bring its own.
void TestLogFormat::csvHeaderNamesColumns() {
    std::string error;
    std::optional<LogLineParser> p = LogLineParser::make({LogFormat::Csv, {}, {}}, error);
    LogRecord r;
    LineProblem problem;
    QCOMPARE(p->parse("time,status,ip,X_Forwarded_For,header:X-Api-Key,unknown", r, problem),
             LineStatus::Skipped);
    QCOMPARE(p->parse("2000-10-10T20:55:36Z,503,10.0.0.5,198.51.100.7,k1,zzz", r, problem),
             LineStatus::Ok);
    QCOMPARE(text(r.client), QString("10.0.0.5"));
    QCOMPARE(r.status, 503);
    QCOMPARE(headersText(r), QString("x-forwarded-for=198.51.100.7;x-api-key=k1"));
    p->startFile();
    QCOMPARE(p->parse("971211336250,198.51.100.1", r, problem), LineStatus::Unparsed);
    p->startFile();
    QCOMPARE(p->parse("path,client", r, problem), LineStatus::Unparsed);
    QVERIFY(problem.message.find("names no time column") != std::string::npos);
}

// A column named only by the prefix ("http_", "header:") names no header and is ignored (found
// by fuzz_access_log).
void TestLogFormat::csvHeaderPrefixWithoutAName() {
    std::string error;
    std::optional<LogLineParser> p = LogLineParser::make({LogFormat::Csv, {}, {}}, error);
    LogRecord r;
    LineProblem problem;
    QCOMPARE(p->parse("ts_ms,client,http_,header:,http_x_api_key", r, problem),
             LineStatus::Skipped);
    QCOMPARE(p->parse("1000,192.0.2.1,x,y,k1", r, problem), LineStatus::Ok);
    QCOMPARE(text(r.client), QString("192.0.2.1"));
    QCOMPARE(headersText(r), QString("x-api-key=k1"));
}

void TestLogFormat::nginxFormatsThatCannotWork_data() {
    QTest::addColumn<QString>("format");
    QTest::addColumn<QString>("error");
    QTest::newRow("no client") << "[$time_local] \"$request\""
                               << "has no $remote_addr";
    QTest::newRow("no time") << "$remote_addr \"$request\""
                             << "has no $time_local";
    QTest::newRow("two variables touching") << "$remote_addr$time_local"
                                            << "nothing between them";
    QTest::newRow("unclosed brace") << "$remote_addr ${time_local"
                                    << "is not closed";
    QTest::newRow("empty") << ""
                           << "needs --log-format";
}

void TestLogFormat::nginxFormatsThatCannotWork() {
    QFETCH(QString, format);
    QFETCH(QString, error);
    std::string why;
    QVERIFY(!LogLineParser::make({LogFormat::Nginx, format.toStdString(), {}}, why));
    QVERIFY2(QString::fromStdString(why).contains(error), why.c_str());
}

void TestLogFormat::jsonNeedsClientAndTime() {
    std::string why;
    QVERIFY(!LogLineParser::make({LogFormat::Json, {}, {{"client", "ip"}}}, why));
    QVERIFY(why.find("time=PATH") != std::string::npos);
    QVERIFY(!LogLineParser::make({LogFormat::Json, {}, {{"client", "ip"}, {"when", "t"}}}, why));
    QVERIFY(why.find("one of client, time") != std::string::npos);
    QVERIFY(!LogLineParser::make({LogFormat::Json, {}, {{"client", "a..b"}, {"time", "t"}}}, why));
    QVERIFY(!LogLineParser::make({LogFormat::Combined, "$remote_addr", {}}, why));
}

void TestLogFormat::detection_data() {
    QTest::addColumn<QString>("lines");
    QTest::addColumn<QString>("format");  // "" when none can be chosen
    const QString combined =
        "198.51.100.7 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 5 \"-\" \"ua\"";
    const QString common = "198.51.100.7 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 5";
    QTest::newRow("combined") << combined + "\n" + combined << "combined";
    QTest::newRow("combined with one cut-off agent")
        << combined + "\n" + combined + "\n" + combined.chopped(3) << "combined";
    QTest::newRow("common") << common + "\n" + common << "common";
    QTest::newRow("nginx main") << combined + " \"198.51.100.9\""
                                << "nginx";
    QTest::newRow("csv header") << "ts_ms,key\n1000,192.0.2.1"
                                << "csv";
    QTest::newRow("csv bare") << "1000,192.0.2.1\n1001,192.0.2.2"
                              << "csv";
    QTest::newRow("caddy") << "{\"ts\":1,\"request\":{\"remote_ip\":\"192.0.2.1\"}}"
                           << "caddy";
    QTest::newRow("other json") << "{\"time\":1,\"ip\":\"192.0.2.1\"}"
                                << "";
    QTest::newRow("prose") << "hello world\nthis is not a log"
                           << "";
}

void TestLogFormat::detection() {
    QFETCH(QString, lines);
    QFETCH(QString, format);
    std::vector<std::string> owned;
    for (const QString& l : lines.split('\n'))
        owned.push_back(l.toStdString());
    std::vector<std::string_view> views(owned.begin(), owned.end());
    const DetectedFormat d = detectLogFormat(views);
    if (format.isEmpty()) {
        QVERIFY(!d.options);
        QVERIFY2(d.explanation.find("--format") != std::string::npos, d.explanation.c_str());
    } else {
        QVERIFY2(d.options, d.explanation.c_str());
        QCOMPARE(QString::fromUtf8(logFormatName(d.options->format).data()), format);
    }
}

void TestLogFormat::jsonScannerRefusesBrokenText_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<int>("offset");  // -1: accepted
    QTest::newRow("fine") << "{\"a\":[1,-2.5e3,true,false,null,\"x\\ud83d\\ude00\"]}" << -1;
    QTest::newRow("trailing text") << "{} x" << 3;
    QTest::newRow("bad escape") << "{\"a\":\"\\q\"}" << 7;
    QTest::newRow("control character") << "{\"a\":\"\x01\"}" << 6;
    QTest::newRow("missing colon") << "{\"a\" 1}" << 5;
    QTest::newRow("empty fraction") << "{\"a\":1.}" << 7;
    QTest::newRow("deep") << QString(70, '[') << 65;
}

void TestLogFormat::jsonScannerRefusesBrokenText() {
    QFETCH(QString, json);
    QFETCH(int, offset);
    struct Nothing final : JsonVisitor {
        void value(const JsonValue&) override {}
    } visitor;
    JsonPaths paths;
    paths.add("a", 0);
    std::string scratch, error;
    std::size_t at = 0;
    const std::string s = json.toStdString();
    const bool ok = scanJsonLine(s, paths, visitor, scratch, at, error);
    QCOMPARE(ok, offset < 0);
    if (offset >= 0) QCOMPARE(int(at), offset);
}

QTEST_APPLESS_MAIN(TestLogFormat)
#include "tst_line_format.moc"
