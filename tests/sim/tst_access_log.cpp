// Access-log replay (app/sim/access_log.cpp) on the bundled samples in tests/data/logs: time
// zones, out-of-order and equal timestamps, IPv6 and IPv4-mapped clients, host names, unparsed
// lines by number, and what a policy decides for each line.

#include <QtTest>

#include <map>

#include "sim/access_log.h"
#include "sim/scenario_runner.h"
#include "sim_fixture.h"

using namespace ratelab;
using namespace ratelab::sim;
using namespace ratelab::simtest;

namespace {

std::string logPath(const char* name) {
    return std::string(RATELAB_SOURCE_DIR) + "/tests/data/logs/" + name;
}

RecordedTraffic load(const char* name, std::optional<LogFormat> format) {
    std::string error;
    std::optional<RecordedTraffic> t = loadAccessLog(logPath(name), format, error);
    if (!t) qFatal("%s", error.c_str());
    return std::move(*t);
}

std::vector<std::uint32_t> lineOrder(const RecordedTraffic& t) {
    std::vector<std::uint32_t> lines;
    for (const RecordedRequest& r : t.requests)
        lines.push_back(r.line);
    return lines;
}

struct Decisions final : DecisionSink {
    std::vector<std::pair<std::string, bool>> all;
    std::vector<int> statuses;
    void onDecision(const DecisionRecord& d) override {
        all.emplace_back(std::string(d.key), d.allowed);
        statuses.push_back(d.status);
    }
};

// Every line's status, replaying `csv` through `policies`.
std::vector<int> replayStatuses(const std::string& csv, const PolicySet& policies) {
    auto t = std::make_shared<const RecordedTraffic>(parseAccessLog(csv, LogFormat::Csv, "t.csv"));
    Decisions sink;
    RunnerOptions options;
    options.decisions = &sink;
    ScenarioRunner runner(makeReplayScenario(t, kNanosPerSecond), policies, options);
    runner.runToEnd();
    return sink.statuses;
}

}  // namespace

class TestAccessLog : public QObject {
    Q_OBJECT

private slots:
    void timesWithZones_data();
    void timesWithZones();
    void combinedSample();
    void combinedSampleAsCommon();
    void commonSample();
    void csvSample();
    void detectsTheFormat();
    void replayDecidesEachLine_data();
    void replayDecidesEachLine();
    void quotedCsvFieldsReadAsUnquoted_data();
    void quotedCsvFieldsReadAsUnquoted();
    void timesOutOfRange();
    void longLogsGetLongerSamples();
    void unreadableFile();
};

void TestAccessLog::timesWithZones_data() {
    QTest::addColumn<QString>("time");
    QTest::addColumn<qint64>("epochMs");  // -1: refused
    // The same instant written in three zones.
    QTest::newRow("-0700") << "10/Oct/2000:13:55:36 -0700" << qint64(971211336000);
    QTest::newRow("+0000") << "10/Oct/2000:20:55:36 +0000" << qint64(971211336000);
    QTest::newRow("+0530, next day") << "11/Oct/2000:02:25:36 +0530" << qint64(971211336000);
    QTest::newRow("leap day, +1400") << "29/Feb/2024:23:59:59 +1400" << qint64(1709200799000);
    QTest::newRow("epoch") << "01/Jan/1970:00:00:00 +0000" << qint64(0);
    QTest::newRow("no leap day in 2023") << "29/Feb/2023:00:00:00 +0000" << qint64(-1);
    QTest::newRow("unknown month") << "10/Foo/2000:13:55:36 -0700" << qint64(-1);
    QTest::newRow("hour 24") << "10/Oct/2000:24:00:00 -0700" << qint64(-1);
    QTest::newRow("zone +1500") << "10/Oct/2000:13:55:36 +1500" << qint64(-1);
    QTest::newRow("no zone") << "10/Oct/2000:13:55:36" << qint64(-1);
}

void TestAccessLog::timesWithZones() {
    QFETCH(QString, time);
    QFETCH(qint64, epochMs);
    const std::string line = "192.0.2.1 - - [" + time.toStdString() + "] \"GET / HTTP/1.1\" 200 1";
    RecordedTraffic t = parseAccessLog(line, LogFormat::Common, "t.log");
    if (epochMs < 0) {
        QCOMPARE(t.unparsedCount, std::int64_t(1));
        QCOMPARE(t.unparsed[0].line, std::int64_t(1));
        QVERIFY(t.requests.empty());
    } else {
        QCOMPARE(t.requests.size(), std::size_t(1));
        QCOMPARE(t.startEpochMs, std::int64_t(epochMs));
    }
}

// 17 lines, one empty: 12 parse; 7 (junk), 10 (month), 15 (client) and 17 (no referer and
// user agent in a combined log) do not.
void TestAccessLog::combinedSample() {
    RecordedTraffic t = load("sample_combined.log", LogFormat::Combined);
    QCOMPARE(t.lines, std::int64_t(16));
    QCOMPARE(t.requests.size(), std::size_t(12));
    QCOMPARE(t.unparsedCount, std::int64_t(4));
    std::vector<std::int64_t> unparsed;
    for (const UnparsedLine& u : t.unparsed)
        unparsed.push_back(u.line);
    QCOMPARE(unparsed, (std::vector<std::int64_t>{7, 10, 15, 17}));
    QVERIFY(t.unparsed[0].reason.find("no [time] field") != std::string::npos);
    QVERIFY(t.unparsed[1].reason.find("names no month") != std::string::npos);
    QVERIFY(t.unparsed[2].reason.find("neither an IP address nor a host name") !=
            std::string::npos);
    QVERIFY(t.unparsed[3].reason.find("referer") != std::string::npos);
    // Sorted by time; the four lines at 20:55:36 UTC (three zones) keep their file order.
    QCOMPARE(lineOrder(t), (std::vector<std::uint32_t>{9, 1, 3, 4, 5, 2, 8, 11, 14, 16, 6, 13}));
    QCOMPARE(t.startEpochMs, std::int64_t(971211335000));
    QCOMPARE(t.span, 6 * kNanosPerSecond);
    QCOMPARE(t.requests[1].at, kNanosPerSecond);
    QCOMPARE(t.requests[4].at, kNanosPerSecond);
    // Clients as written: IPv4, three IPv6 in one /64, another /64, IPv4-mapped, a host name.
    QCOMPARE(t.clients.size(), std::size_t(8));
    QCOMPARE(t.hostNames, std::int64_t(1));
    std::map<std::string, const RecordedClient*> byText;
    for (const RecordedClient& c : t.clients)
        byText[c.text] = &c;
    QVERIFY(byText.at("::ffff:198.51.100.7")->address->isV4());
    QCOMPARE(*byText.at("::ffff:198.51.100.7")->address, *byText.at("198.51.100.7")->address);
    QVERIFY(!byText.at("2001:db8:1:2::11")->address->isV4());
    QVERIFY(!byText.at("piweba3y.prodigy.com")->address);
    // Request lines: an absolute URI keeps its path; a query is dropped; "-" becomes "/".
    auto pathOfLine = [&](std::uint32_t line) {
        for (const RecordedRequest& r : t.requests) {
            if (r.line == line) return t.methods[r.method] + " " + t.paths[r.path];
        }
        return std::string();
    };
    QCOMPARE(pathOfLine(8), std::string("GET /api/items"));
    QCOMPARE(pathOfLine(2), std::string("GET /api/items"));
    QCOMPARE(pathOfLine(4), std::string("POST /login"));
    QCOMPARE(pathOfLine(13), std::string("- /"));
}

// Read as common, the referer and user agent are not required: line 17 parses too.
void TestAccessLog::combinedSampleAsCommon() {
    RecordedTraffic t = load("sample_combined.log", LogFormat::Common);
    QCOMPARE(t.requests.size(), std::size_t(13));
    QCOMPARE(t.unparsedCount, std::int64_t(3));
}

void TestAccessLog::commonSample() {
    RecordedTraffic t = load("sample_common.log", std::nullopt);
    QCOMPARE(t.format, LogFormat::Common);
    QCOMPARE(lineOrder(t), (std::vector<std::uint32_t>{3, 1, 2}));
    QCOMPARE(t.startEpochMs, std::int64_t(1709251200000));
    QCOMPARE(t.span, Nanos(3599) * kNanosPerSecond);
    QCOMPARE(t.unparsedCount, std::int64_t(1));
    QCOMPARE(t.unparsed[0].line, std::int64_t(4));
    QVERIFY(t.unparsed[0].reason.find("status field \"abc\"") != std::string::npos);
}

void TestAccessLog::csvSample() {
    RecordedTraffic t = load("sample.csv", std::nullopt);
    QCOMPARE(t.format, LogFormat::Csv);
    QCOMPARE(t.lines, std::int64_t(6));  // the header is not a line of traffic
    QCOMPARE(lineOrder(t), (std::vector<std::uint32_t>{3, 2, 4, 7}));
    QCOMPARE(t.unparsedCount, std::int64_t(2));
    QCOMPARE(t.unparsed[0].line, std::int64_t(5));
    QCOMPARE(t.unparsed[1].line, std::int64_t(6));
    QCOMPARE(t.startEpochMs, std::int64_t(500));
    QCOMPARE(t.clients[t.requests[2].client].text, std::string("2001:db8::1"));
    QCOMPARE(t.methods[t.requests[2].method], std::string("POST"));
    QCOMPARE(t.paths[t.requests[3].path], std::string("/x"));
    QCOMPARE(t.hostNames, std::int64_t(1));
}

void TestAccessLog::detectsTheFormat() {
    QCOMPARE(detectLogFormat("\n1000,198.51.100.7\n"), LogFormat::Csv);
    QCOMPARE(detectLogFormat("ts_ms,key\n"), LogFormat::Csv);
    QCOMPARE(detectLogFormat("1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1 "
                             "\"-\" \"agent\"\n"),
             LogFormat::Combined);
    QCOMPARE(detectLogFormat("1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1\n"),
             LogFormat::Common);
}

// Capacity 2 and no refill to speak of, per client: 198.51.100.7 (also written IPv4-mapped)
// sends 5 lines and gets 2; the /64 of 2001:db8:1:2:: sends 3 and gets 2; the host name is one
// client under either key source. A /48 rule puts both IPv6 /64s in one bucket.
void TestAccessLog::replayDecidesEachLine_data() {
    QTest::addColumn<int>("source");  // KeySource
    QTest::addColumn<int>("ipv6Prefix");
    QTest::addColumn<QString>("allowedPattern");
    QTest::newRow("default chain, /64") << int(KeySource::Default) << 64 << "YYYYNNYNYNYY";
    QTest::newRow("peer, /64") << int(KeySource::Peer) << 64 << "YYYYNNYNYNYY";
    QTest::newRow("peer, /48") << int(KeySource::Peer) << 48 << "YYYYNNNNYNYY";
}

void TestAccessLog::replayDecidesEachLine() {
    QFETCH(int, source);
    QFETCH(int, ipv6Prefix);
    QFETCH(QString, allowedPattern);
    auto traffic =
        std::make_shared<const RecordedTraffic>(load("sample_combined.log", LogFormat::Combined));
    Policy p = tokenBucket("api", 2, 0.001);
    p.key.source = static_cast<KeySource>(source);
    p.key.ipv6Prefix = ipv6Prefix;
    Decisions sink;
    RunnerOptions options;
    options.decisions = &sink;
    ScenarioRunner runner(makeReplayScenario(traffic, kNanosPerSecond), policySet({p}), options);
    runner.runToEnd();
    QVERIFY(runner.finished());
    QCOMPARE(runner.samples().size(), std::size_t(7));
    QString pattern;
    for (const auto& [key, allowed] : sink.all)
        pattern += allowed ? 'Y' : 'N';
    QCOMPARE(pattern, allowedPattern);
    // The decisions name each line's client as written in the log.
    QCOMPARE(sink.all[0].first, std::string("198.51.100.7"));
    QCOMPARE(sink.all[7].first, std::string("::ffff:198.51.100.7"));
    QCOMPARE(sink.all[8].first, std::string("piweba3y.prodigy.com"));
    const ClassCounters c = runner.totals().classes[0];
    QCOMPARE(c.offered, std::int64_t(12));
    QCOMPARE(c.allowed, std::int64_t(allowedPattern.count('Y')));
    QCOMPARE(c.refused, std::int64_t(0));
}

// Quoted fields are copied out of the line; each must survive until the line is recorded (a
// quoted path once viewed a buffer freed on return, and the method overwrote it).
void TestAccessLog::quotedCsvFieldsReadAsUnquoted_data() {
    QTest::addColumn<QString>("path");
    QTest::newRow("short path, in the string's own buffer") << "/login";
    QTest::newRow("long path, on the heap") << "/login/a-path-longer-than-fifteen-characters";
}

void TestAccessLog::quotedCsvFieldsReadAsUnquoted() {
    QFETCH(QString, path);
    const std::string p = path.toStdString();
    std::string plain, quoted, quotedKey;
    for (int i = 0; i < 40; ++i) {
        const std::string ts = std::to_string(1000 + i);
        plain += ts + ",198.51.100.7," + p + ",POST\n";
        quoted += ts + ",198.51.100.7,\"" + p + "\",\"POST\"\n";
        quotedKey += ts + ",\"198.51.100.7\",\"" + p + "\",POST\n";
    }
    // The shipped login policy refuses all 40 (412: its account limit needs an account the log
    // does not carry); read wrongly, the quoted lines matched no policy and passed.
    const PolicySet login = policyFile("resources/policies/login.json");
    const std::vector<int> refused = replayStatuses(plain, login);
    QCOMPARE(refused, std::vector<int>(40, 412));
    QCOMPARE(replayStatuses(quoted, login), refused);
    QCOMPARE(replayStatuses(quotedKey, login), refused);
    // 20 POSTs to /login per address, then one per 1000 s: 20 pass, 20 are throttled.
    Policy perAddress = tokenBucket("login", 20, 0.001);
    perAddress.match.pathPrefix = "/login";
    perAddress.match.methods = {"POST"};
    perAddress.key.source = KeySource::Peer;
    const PolicySet limited = policySet({perAddress});
    std::vector<int> expected(20, 200);
    expected.resize(40, 429);
    QCOMPARE(replayStatuses(plain, limited), expected);
    QCOMPARE(replayStatuses(quoted, limited), expected);
    QCOMPARE(replayStatuses(quotedKey, limited), expected);

    RecordedTraffic t = parseAccessLog(quoted, LogFormat::Csv, "t.csv");
    QCOMPARE(t.paths, std::vector<std::string>{p});
    QCOMPARE(t.methods, std::vector<std::string>{"POST"});
}

// Times that would overflow the replay's clock are refused line by line, never wrapped.
void TestAccessLog::timesOutOfRange() {
    const char* csv =
        "1000,192.0.2.1\n"
        "253402300800000,192.0.2.2\n"      // after 9999-12-31
        "9223372036854775807,192.0.2.3\n"  // int64 max
        "3153600001001,192.0.2.4\n"        // just over 100 x 365 days after line 1
        "3153600000000,192.0.2.5\n";       // just within them
    RecordedTraffic t = parseAccessLog(csv, LogFormat::Csv, "t.csv");
    QCOMPARE(lineOrder(t), (std::vector<std::uint32_t>{1, 5}));
    QCOMPARE(t.unparsedCount, std::int64_t(3));
    QCOMPARE(t.unparsed[0].line, std::int64_t(2));
    QCOMPARE(t.unparsed[1].line, std::int64_t(3));
    QCOMPARE(t.unparsed[2].line, std::int64_t(4));
    QVERIFY(t.unparsed[2].reason.find("more than 36,500 days after") != std::string::npos);
    QCOMPARE(t.span, Nanos(3153599999000) * kNanosPerMilli);
}

// A log spanning ten years replays in at most 100,000 samples of whole seconds.
void TestAccessLog::longLogsGetLongerSamples() {
    const std::int64_t tenYearsMs = 10LL * 365 * 86'400'000;
    const std::string csv = "0,192.0.2.1\n" + std::to_string(tenYearsMs) + ",192.0.2.1\n";
    auto t = std::make_shared<const RecordedTraffic>(parseAccessLog(csv, LogFormat::Csv, "t.csv"));
    Scenario s = makeReplayScenario(t, kNanosPerSecond);
    QCOMPARE(s.sampleInterval, Nanos(3154) * kNanosPerSecond);
    QVERIFY(s.duration / s.sampleInterval <= kMaxReplaySamples);
    ScenarioRunner runner(s, policySet({tokenBucket("api", 1, 1.0)}));
    runner.runToEnd();
    QCOMPARE(runner.totals().classes[0].allowed, std::int64_t(2));
    QVERIFY(runner.samples().size() <= std::size_t(kMaxReplaySamples));
}

void TestAccessLog::unreadableFile() {
    std::string error;
    QVERIFY(!loadAccessLog("/nonexistent/access.log", std::nullopt, error));
    QCOMPARE(error, std::string("/nonexistent/access.log: cannot open the file"));
}

QTEST_APPLESS_MAIN(TestAccessLog)
#include "tst_access_log.moc"
