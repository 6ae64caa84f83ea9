// Access-log replay (app/sim/log_stream.cpp, access_log.cpp) on the fixtures in tests/data/logs
// and on logs written here: rotated gzip files as one stream, the reorder window, damaged and
// unparsed lines by number, binary and wrong-format files refused early, identity through the
// policy's own key rules, and what a policy decides for each line.

#include <QtTest>

#include <zlib.h>

#include <fstream>
#include <map>
#include <set>

#include "ratelab/memory_store.h"

#include "ratelab/limiter.h"
#include "sim/access_log.h"
#include "sim/report.h"
#include "sim/scenario_runner.h"
#include "sim_fixture.h"

using namespace ratelab;
using namespace ratelab::sim;
using namespace ratelab::simtest;

namespace {

std::string fixture(const char* name) {
    return std::string(RATELAB_SOURCE_DIR) + "/tests/data/logs/" + name;
}

std::shared_ptr<RecordedTraffic> load(std::vector<std::string> files, LogReading& reading,
                                      std::optional<LogFormat> format = std::nullopt,
                                      Nanos window = 60 * kNanosPerSecond) {
    ReplayInput input;
    input.files = std::move(files);
    if (format) input.format = LogFormatOptions{*format, {}, {}};
    input.reorderWindow = window;
    return loadAccessLog(input, reading);
}

std::vector<std::int64_t> lineOrder(const RecordedTraffic& t) {
    std::vector<std::int64_t> lines;
    for (const RecordedRequest& r : t.requests)
        lines.push_back(r.line);
    return lines;
}

std::vector<std::int64_t> noteLines(const std::vector<LineNote>& notes) {
    std::vector<std::int64_t> lines;
    for (const LineNote& n : notes)
        lines.push_back(n.line);
    return lines;
}

struct Decisions final : DecisionSink {
    std::vector<std::string> keys;
    std::vector<std::string> clients;
    std::vector<int> statuses;
    std::vector<std::pair<std::uint32_t, std::int64_t>> lines;
    void onDecision(const DecisionRecord& d) override {
        keys.emplace_back(d.key);
        clients.emplace_back(d.client);
        statuses.push_back(d.status);
        lines.emplace_back(d.logFile, d.logLine);
    }
};

Decisions replay(std::shared_ptr<const RecordedLog> log, const PolicySet& policies,
                 RunTotals* totals = nullptr) {
    Decisions sink;
    RunnerOptions options;
    options.decisions = &sink;
    ScenarioRunner runner(makeReplayScenario(std::move(log), kNanosPerSecond), policies, options);
    runner.runToEnd();
    if (totals) *totals = runner.totals();
    return sink;
}

}  // namespace

class TestAccessLog : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }
    void combinedSample();
    void commonSample();
    void csvSample();
    void rotatedFilesReplayAsOneStream();
    void rotatedFilesOutOfOrderAreRefused();
    void reorderWindow();
    void damagedLineIsReplayedWithAWarning();
    void binaryFileIsRefusedAtOnce();
    void wrongFormatIsRefusedAfterAFewLines();
    void gzipCutOffIsAWarning();
    void corruptGzipIsAnError();
    void directoryIsRefused();
    void proxiedLinesAreKeyedByTheClient();
    void replayDecidesEachLine_data();
    void replayDecidesEachLine();
    void quotedCsvFieldsReadAsUnquoted_data();
    void quotedCsvFieldsReadAsUnquoted();
    void timesOutOfRange();
    void streamAndMemoryGiveTheSameReport();
    void longLogsGetLongerSamples();
    void replaySettlesWithTheLoggedStatus();

private:
    std::string write(const char* name, const std::string& text) {
        const std::string path = dir_.filePath(name).toStdString();
        std::ofstream(path, std::ios::binary) << text;
        return path;
    }
    std::string writeGzip(const char* name, const std::string& text) {
        const std::string path = dir_.filePath(name).toStdString();
        gzFile f = gzopen(path.c_str(), "wb");
        gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
        gzclose(f);
        return path;
    }
    QTemporaryDir dir_;
};

// 17 lines, one empty: 13 replay, one of them (17, no referer or user agent in a combined log)
// with a warning; 7 (junk), 10 (month) and 15 (client) do not.
void TestAccessLog::combinedSample() {
    LogReading r;
    auto t = load({fixture("sample_combined.log")}, r, LogFormat::Combined);
    QVERIFY(t);
    QCOMPARE(r.lines, std::int64_t(16));
    QCOMPARE(r.replayed, std::int64_t(13));
    QCOMPARE(noteLines(r.unparsed), (std::vector<std::int64_t>{7, 10, 15}));
    QCOMPARE(noteLines(r.damaged), (std::vector<std::int64_t>{17}));
    QVERIFY(r.unparsed[0].message.find("no [time] field") != std::string::npos);
    QVERIFY(r.unparsed[1].message.find("names no month") != std::string::npos);
    QVERIFY(r.unparsed[2].message.find("neither an IP address nor a host name") !=
            std::string::npos);
    QVERIFY(r.damaged[0].message.find("referer") != std::string::npos);
    // Sorted by time; the four lines at 20:55:36 UTC (three zones) keep their file order.
    QCOMPARE(lineOrder(*t),
             (std::vector<std::int64_t>{9, 1, 3, 4, 5, 2, 8, 11, 14, 16, 17, 6, 13}));
    QCOMPARE(r.startEpochMicros, std::int64_t(971211335000000));
    QCOMPARE(t->spanNanos, 6 * kNanosPerSecond);
    QCOMPARE(t->requests[1].at, kNanosPerSecond);
    // Clients as written: IPv4, three IPv6 in one /64, another /64, IPv4-mapped, a host name.
    QCOMPARE(r.clients, std::int64_t(9));
    QCOMPARE(r.hostNames, std::int64_t(1));
    std::map<std::string, const RecordedClient*> byText;
    for (const RecordedClient& c : t->clients)
        byText[c.text] = &c;
    QVERIFY(byText.at("::ffff:198.51.100.7")->address->isV4());
    QVERIFY(!byText.at("piweba3y.prodigy.com")->address);
    auto request = [&](std::int64_t line) {
        for (const RecordedRequest& q : t->requests) {
            if (q.line == line) return t->strings[q.method] + " " + t->strings[q.path];
        }
        return std::string();
    };
    QCOMPARE(request(8), std::string("GET /api/items"));
    QCOMPARE(request(4), std::string("POST /login"));
    QCOMPARE(request(13), std::string("- /"));
    // Detected, and said so.
    LogReading detected;
    QVERIFY(load({fixture("sample_combined.log")}, detected));
    QCOMPARE(detected.format, std::string("combined"));
    QVERIFY(detected.detection.starts_with("combined, detected"));
}

void TestAccessLog::commonSample() {
    // Line 3 is an hour older than line 2, read before it: past the default window of 60 s,
    // it is listed, not replayed; a window of an hour sorts it first.
    LogReading r;
    auto t = load({fixture("sample_common.log")}, r);
    QVERIFY(t);
    QCOMPARE(r.format, std::string("common"));
    QCOMPARE(lineOrder(*t), (std::vector<std::int64_t>{1, 4, 2}));
    QCOMPARE(noteLines(r.outOfWindow), (std::vector<std::int64_t>{3}));
    QVERIFY2(
        r.outOfWindow[0].message.find("3599.0 s before the latest line read") != std::string::npos,
        r.outOfWindow[0].message.c_str());
    // Line 4's status is not a number: replayed with a warning.
    QCOMPARE(noteLines(r.damaged), (std::vector<std::int64_t>{4}));
    QVERIFY(r.damaged[0].message.find("status field \"abc\"") != std::string::npos);
    LogReading hour;
    t = load({fixture("sample_common.log")}, hour, std::nullopt, 3600 * kNanosPerSecond);
    QCOMPARE(lineOrder(*t), (std::vector<std::int64_t>{3, 1, 4, 2}));
    QCOMPARE(hour.startEpochMicros, std::int64_t(1709251200000000));
}

void TestAccessLog::csvSample() {
    LogReading r;
    auto t = load({fixture("sample.csv")}, r);
    QVERIFY(t);
    QCOMPARE(r.format, std::string("csv"));
    QCOMPARE(r.lines, std::int64_t(6));  // the header is not a line of traffic
    QCOMPARE(lineOrder(*t), (std::vector<std::int64_t>{3, 2, 4, 7}));
    QCOMPARE(noteLines(r.unparsed), (std::vector<std::int64_t>{5, 6}));
    QCOMPARE(r.startEpochMicros, std::int64_t(500000));
    QCOMPARE(t->clients[t->requests[2].client].text, std::string("2001:db8::1"));
    QCOMPARE(t->strings[t->requests[2].method], std::string("POST"));
    QCOMPARE(t->strings[t->requests[3].path], std::string("/x"));
    QCOMPARE(r.hostNames, std::int64_t(1));
}

// nginx behind a balancer, rotated into two gzip files: one stream, sorted across the seam
// (the newer file's third line is 3 s older than its first).
void TestAccessLog::rotatedFilesReplayAsOneStream() {
    LogReading r;
    auto t = load({fixture("nginx-proxy.log.2.gz"), fixture("nginx-proxy.log.1.gz")}, r);
    QVERIFY2(t, r.error ? r.error->message.c_str() : "");
    QVERIFY(r.format.starts_with("nginx '$remote_addr"));
    QCOMPARE(r.lines, std::int64_t(40));
    QCOMPARE(r.replayed, std::int64_t(40));
    QCOMPARE(r.outOfWindowCount, std::int64_t(0));
    std::vector<std::pair<std::uint32_t, std::int64_t>> order;
    for (const RecordedRequest& q : t->requests)
        order.emplace_back(q.file, q.line);
    // Line 3 of the second file (12:00:17) goes back across the seam, after the first file's
    // line 18 (12:00:17 too, and earlier in the input) and before its lines 19 and 20.
    const auto at = [&](std::uint32_t file, std::int64_t line) {
        return std::find(order.begin(), order.end(), std::make_pair(file, line)) - order.begin();
    };
    QCOMPARE(at(1, 3), at(0, 18) + 1);
    QCOMPARE(at(0, 19), at(1, 3) + 1);
    QCOMPARE(at(1, 1), at(0, 20) + 1);
    for (std::size_t i = 1; i < t->requests.size(); ++i)
        QVERIFY(t->requests[i - 1].at <= t->requests[i].at);
    QCOMPARE(t->spanNanos, 32 * kNanosPerSecond);
}

void TestAccessLog::rotatedFilesOutOfOrderAreRefused() {
    LogReading r;
    QVERIFY(!load({fixture("nginx-proxy.log.1.gz"), fixture("nginx-proxy.log.2.gz")}, r));
    QVERIFY(r.error);
    QCOMPARE(r.error->file, fixture("nginx-proxy.log.2.gz"));
    QCOMPARE(r.error->line, 1);
    QVERIFY2(r.error->message.find("give rotated logs oldest first") != std::string::npos,
             r.error->message.c_str());
}

// Lines a little out of order are sorted; one older than the window is listed and not replayed.
void TestAccessLog::reorderWindow() {
    std::string csv = "ts_ms,client\n";
    for (int i = 0; i < 200; ++i) {
        int ms = 100'000 + i * 1000;
        if (i == 50) ms -= 30'000;   // 30 s early: inside a 60 s window
        if (i == 120) ms -= 90'000;  // 90 s early: outside it
        csv += std::to_string(ms) + ",192.0.2." + std::to_string(i % 7 + 1) + "\n";
    }
    const std::string path = write("window.csv", csv);
    LogReading r;
    auto t = load({path}, r);
    QVERIFY(t);
    QCOMPARE(r.replayed, std::int64_t(199));
    QCOMPARE(r.outOfWindowCount, std::int64_t(1));
    QCOMPARE(noteLines(r.outOfWindow), (std::vector<std::int64_t>{122}));
    QVERIFY(r.outOfWindow[0].message.find("60.0 s reorder window") != std::string::npos);
    for (std::size_t i = 1; i < t->requests.size(); ++i)
        QVERIFY(t->requests[i - 1].at <= t->requests[i].at);
    // Line 52 (i == 50) moved up 30 places, behind line 22 of the same time.
    QCOMPARE(t->requests[20].line, std::int64_t(22));
    QCOMPARE(t->requests[21].line, std::int64_t(52));
    // A window of two minutes takes both.
    LogReading wide;
    auto all = load({path}, wide, std::nullopt, 120 * kNanosPerSecond);
    QCOMPARE(wide.replayed, std::int64_t(200));
    QCOMPARE(wide.outOfWindowCount, std::int64_t(0));
    QCOMPARE(all->requests.front().line, std::int64_t(2));
}

void TestAccessLog::damagedLineIsReplayedWithAWarning() {
    LogReading r;
    auto t = load({fixture("truncated-agent.log")}, r);
    QVERIFY(t);
    QCOMPARE(r.format, std::string("combined"));
    QCOMPARE(r.replayed, std::int64_t(12));
    QCOMPARE(r.damagedCount, std::int64_t(1));
    QCOMPARE(r.damaged[0].line, std::int64_t(7));
    QCOMPARE(r.damaged[0].column, 106);
    QCOMPARE(r.where(r.damaged[0]), fixture("truncated-agent.log") + ":7:106");
    const std::vector<Diagnostic> d = readingDiagnostics(r, 20);
    QCOMPARE(d.size(), std::size_t(1));
    QCOMPARE(formatDiagnostic(d[0]), fixture("truncated-agent.log") +
                                         ":7:106: warning: replayed with damage: the user-agent "
                                         "field is cut off");
}

void TestAccessLog::binaryFileIsRefusedAtOnce() {
    LogReading r;
    QVERIFY(!load({fixture("binary.log")}, r, LogFormat::Combined));
    QVERIFY(r.error);
    QVERIFY2(r.error->message.starts_with("binary data, not a text log"), r.error->message.c_str());
    QCOMPARE(r.lines, std::int64_t(0));
    LogReading detected;
    QVERIFY(!load({fixture("binary.log")}, detected));
    QVERIFY(detected.error->message.starts_with("binary data"));
}

// Text, but not a log: refused after ten lines, not read as thousands of garbage lines.
void TestAccessLog::wrongFormatIsRefusedAfterAFewLines() {
    std::string text;
    for (int i = 0; i < 5000; ++i)
        text += "INFO worker " + std::to_string(i) + " started in 12 ms\n";
    const std::string path = write("app.log", text);
    LogReading r;
    QVERIFY(!load({path}, r, LogFormat::Combined));
    QCOMPARE(r.lines, std::int64_t(kLinesBeforeRefusal));
    QCOMPARE(r.error->line, 1);
    QVERIFY2(r.error->message.find("not a combined log: none of its first 10 lines") !=
                 std::string::npos,
             r.error->message.c_str());
    LogReading detected;
    QVERIFY(!load({path}, detected));
    QVERIFY(detected.error->message.find("give --format") != std::string::npos);
}

void TestAccessLog::gzipCutOffIsAWarning() {
    std::string csv;
    for (int i = 0; i < 20000; ++i)
        csv += std::to_string(1000 + i) + ",192.0.2." + std::to_string(i % 200 + 1) + "\n";
    const std::string whole = writeGzip("whole.csv.gz", csv);
    std::ifstream in(whole, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string cut = write("cut.csv.gz", bytes.substr(0, bytes.size() / 2));
    LogReading r;
    auto t = load({cut}, r);
    QVERIFY(t);
    QVERIFY(r.replayed > 1000 && r.replayed < 20000);
    QCOMPARE(r.warnings.size(), std::size_t(1));
    QVERIFY(r.warnings[0].find("the gzip data ends early") != std::string::npos);
    // Two gzip members back to back (cat a.gz b.gz) are one file.
    const std::string twice = write("twice.csv.gz", bytes + bytes);
    LogReading both;
    QVERIFY(load({twice}, both));
    QCOMPARE(both.lines, std::int64_t(40000));
}

void TestAccessLog::corruptGzipIsAnError() {
    std::string csv;
    for (int i = 0; i < 5000; ++i)
        csv += std::to_string(1000 + i) + ",192.0.2.1\n";
    const std::string path = writeGzip("c.csv.gz", csv);
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.write("\xff\xff\xff\xff\xff\xff\xff\xff", 8);
    f.close();
    LogReading r;
    QVERIFY(!load({path}, r));
    QVERIFY2(r.error->message.starts_with("corrupt gzip data near byte"), r.error->message.c_str());
}

void TestAccessLog::directoryIsRefused() {
    LogReading r;
    QVERIFY(!load({dir_.path().toStdString()}, r));
    QCOMPARE(formatDiagnostic(*r.error), dir_.path().toStdString() + ": error: is a directory");
    LogReading missing;
    QVERIFY(!load({"/nonexistent/access.log"}, missing));
    QCOMPARE(formatDiagnostic(*missing.error),
             std::string("/nonexistent/access.log: error: cannot open the file: No such file or "
                         "directory"));
}

// The balancer's lines are keyed by the real client, through the engine's own rules: the
// forwarded header is read because the peer is a trusted proxy, right to left.
void TestAccessLog::proxiedLinesAreKeyedByTheClient() {
    LogReading r;
    auto t = load({fixture("nginx-proxy.log.2.gz"), fixture("nginx-proxy.log.1.gz")}, r);
    const PolicySet policies = policyFile("tests/data/logs/proxied-default.json");
    Decisions d = replay(t, policies);
    QCOMPARE(d.keys.size(), std::size_t(40));
    // Each replayed request's key is what Limiter::decide derives for the same peer and
    // header, the way `ratelab-cli check` asks it.
    Limiter limiter(policies, makeMemoryStore({}));
    std::vector<Header> headers;
    for (std::size_t i = 0; i < t->requests.size(); ++i) {
        const ReplayedLine line = t->line(t->requests[i], headers);
        RequestView view;
        view.method = line.method;
        view.path = line.path;
        view.headers = line.headers;
        view.peer = &*line.address;
        const Verdict v = limiter.decide(view, 0, true);
        QCOMPARE(d.keys[i], v.check.policies()[0].key);
    }
    std::set<std::string> keys(d.keys.begin(), d.keys.end());
    QCOMPARE(keys,
             (std::set<std::string>{"ip:10.0.0.5", "ip:192.0.2.44", "ip:198.51.100.7",
                                    "ip:198.51.100.8", "ip:2001:db8:1:2::/64", "ip:203.0.113.20"}));
    // No key is a balancer's but for the line with no forwarded header (a health check), and
    // the untrusted peer is keyed on itself, whatever it wrote.
    QCOMPARE(std::count(d.keys.begin(), d.keys.end(), "ip:10.0.0.5"), std::ptrdiff_t(1));
    QCOMPARE(std::count(d.keys.begin(), d.keys.end(), "ip:192.0.2.44"), std::ptrdiff_t(1));
    // Every decision names its line.
    std::set<std::pair<std::uint32_t, std::int64_t>> lines(d.lines.begin(), d.lines.end());
    QCOMPARE(lines.size(), std::size_t(40));
    QCOMPARE(d.lines.front(), std::make_pair(std::uint32_t(0), std::int64_t(1)));
}

// Capacity 2 and no refill to speak of, per client: 198.51.100.7 (also written IPv4-mapped)
// sends 5 lines and gets 2; the /64 of 2001:db8:1:2:: sends 3 and gets 2; the host name is one
// client under either key source. A /48 rule puts both IPv6 /64s in one bucket.
void TestAccessLog::replayDecidesEachLine_data() {
    QTest::addColumn<int>("source");  // KeySource
    QTest::addColumn<int>("ipv6Prefix");
    QTest::addColumn<QString>("allowedPattern");
    QTest::newRow("default chain, /64") << int(KeySource::Default) << 64 << "YYYYNNYNYNYYY";
    QTest::newRow("peer, /64") << int(KeySource::Peer) << 64 << "YYYYNNYNYNYYY";
    QTest::newRow("peer, /48") << int(KeySource::Peer) << 48 << "YYYYNNNNYNYYY";
}

void TestAccessLog::replayDecidesEachLine() {
    QFETCH(int, source);
    QFETCH(int, ipv6Prefix);
    QFETCH(QString, allowedPattern);
    LogReading r;
    auto t = load({fixture("sample_combined.log")}, r, LogFormat::Combined);
    Policy p = tokenBucket("api", 2, 0.001);
    p.key.source = static_cast<KeySource>(source);
    p.key.ipv6Prefix = ipv6Prefix;
    RunTotals totals;
    Decisions d = replay(t, policySet({p}), &totals);
    QString pattern;
    for (int s : d.statuses)
        pattern += s == 200 ? 'Y' : 'N';
    QCOMPARE(pattern, allowedPattern);
    QCOMPARE(d.clients[0], std::string("198.51.100.7"));
    QCOMPARE(d.clients[7], std::string("::ffff:198.51.100.7"));
    QCOMPARE(d.keys[7], d.keys[0]);  // IPv4-mapped is IPv4
    QCOMPARE(d.clients[8], std::string("piweba3y.prodigy.com"));
    QCOMPARE(totals.classes[0].offered, std::int64_t(13));
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
    const auto statuses = [&](const std::string& csv, const PolicySet& policies) {
        LogReading r;
        return replay(load({write("q.csv", csv)}, r), policies).statuses;
    };
    // The shipped login policy refuses all 40 (412: its account limit needs an account the log
    // does not carry); read wrongly, the quoted lines matched no policy and passed.
    const PolicySet login = policyFile("resources/policies/login.json");
    const std::vector<int> refused = statuses(plain, login);
    QCOMPARE(refused, std::vector<int>(40, 412));
    QCOMPARE(statuses(quoted, login), refused);
    QCOMPARE(statuses(quotedKey, login), refused);
    // 20 POSTs to /login per address, then one per 1000 s: 20 pass, 20 are throttled.
    Policy perAddress = tokenBucket("login", 20, 0.001);
    perAddress.match.pathPrefix = "/login";
    perAddress.match.methods = {"POST"};
    perAddress.key.source = KeySource::Peer;
    const PolicySet limited = policySet({perAddress});
    std::vector<int> expected(20, 200);
    expected.resize(40, 429);
    QCOMPARE(statuses(plain, limited), expected);
    QCOMPARE(statuses(quoted, limited), expected);
    QCOMPARE(statuses(quotedKey, limited), expected);
}

// Times that would overflow the replay's clock are refused line by line, never wrapped.
void TestAccessLog::timesOutOfRange() {
    const std::string csv =
        "1000,192.0.2.1\n"
        "253402300800000,192.0.2.2\n"      // after 9999-12-31
        "9223372036854775807,192.0.2.3\n"  // int64 max
        "3153600001001,192.0.2.4\n"        // just over 100 x 365 days after line 1
        "3153600000000,192.0.2.5\n";       // just within them
    LogReading r;
    auto t = load({write("range.csv", csv)}, r, std::nullopt, 0);
    QVERIFY(t);
    QCOMPARE(lineOrder(*t), (std::vector<std::int64_t>{1, 5}));
    QCOMPARE(noteLines(r.unparsed), (std::vector<std::int64_t>{2, 3, 4}));
    QVERIFY(r.unparsed[2].message.find("more than 36,500 days after") != std::string::npos);
    QCOMPARE(t->spanNanos, Nanos(3153599999000) * kNanosPerMilli);
}

// A streamed replay, whose span is known only at its end, reports what the same log read into
// memory reports, samples and all.
void TestAccessLog::streamAndMemoryGiveTheSameReport() {
    std::string csv;
    for (int i = 0; i < 3000; ++i)
        csv += std::to_string(1000 + i * 337) + ",192.0.2." + std::to_string(i % 9 + 1) + "\n";
    const std::string path = write("same.csv", csv);
    const PolicySet policies = policySet({tokenBucket("api", 5, 0.5)});
    LogReading memoryReading;
    auto memory = load({path}, memoryReading);
    ScenarioRunner fromMemory(makeReplayScenario(memory, 250 * kNanosPerMilli), policies);
    fromMemory.runToEnd();

    ReplayInput input;
    input.files = {path};
    LogReading streamReading;
    auto stream = std::make_shared<LogStream>(input, streamReading);
    ScenarioRunner fromStream(
        makeReplayScenario(std::make_shared<StreamedLog>(stream, path), 250 * kNanosPerMilli),
        policies);
    while (!fromStream.finished())
        fromStream.advance(fromStream.duration(), 1000);
    QCOMPARE(fromStream.duration(), fromMemory.duration());
    QCOMPARE(fromStream.samples().size(), fromMemory.samples().size());
    // Each of the nine clients is an instance of its own in both, numbered alike.
    QCOMPARE(fromMemory.instances(0).size(), std::size_t(9));
    QCOMPARE(fromStream.instances(0).size(), std::size_t(9));
    for (std::size_t i = 0; i < 9; ++i)
        QCOMPARE(fromStream.instances(0)[i].allowed, fromMemory.instances(0)[i].allowed);
    const Report a = buildReplayReport(fromMemory, {}, memoryReading);
    const Report b = buildReplayReport(fromStream, {}, streamReading);
    QCOMPARE(QString::fromStdString(reportJson(b)), QString::fromStdString(reportJson(a)));
}

// A log spanning ten years replays in at most 100,000 samples: the interval doubles (to
// 4096 s here), streamed or in memory.
void TestAccessLog::longLogsGetLongerSamples() {
    const std::int64_t tenYearsMs = 10LL * 365 * 86'400'000;
    const std::string path = write(
        "years.csv", "0,192.0.2.1\n1000,192.0.2.1\n" + std::to_string(tenYearsMs) + ",192.0.2.1\n");
    LogReading r;
    auto t = load({path}, r);
    Scenario s = makeReplayScenario(t, kNanosPerSecond);
    QCOMPARE(s.sampleInterval, Nanos(4096) * kNanosPerSecond);
    QVERIFY(s.duration / s.sampleInterval <= kMaxReplaySamples);
    const PolicySet policies = policySet({tokenBucket("api", 1, 1.0)});
    ScenarioRunner memory(s, policies);
    memory.runToEnd();
    QCOMPARE(memory.totals().classes[0].allowed, std::int64_t(3));

    ReplayInput input;
    input.files = {path};
    LogReading streamed;
    ScenarioRunner stream(
        makeReplayScenario(
            std::make_shared<StreamedLog>(std::make_shared<LogStream>(input, streamed), path),
            kNanosPerSecond),
        policies);
    stream.runToEnd();
    QCOMPARE(stream.sampleInterval(), Nanos(4096) * kNanosPerSecond);
    QCOMPARE(stream.samples().size(), memory.samples().size());
    QCOMPARE(stream.totals().peakAllowed, memory.totals().peakAllowed);
    QCOMPARE(stream.totals().classes[0].allowed, std::int64_t(3));
}

// login-401-storms.log against 5 per address refilled at one per 25 s (the lines and the
// arithmetic: tst_cli_sim's replaySettlesWithTheLoggedStatus). Charging failures, each pass
// is settled with its logged status: the 200s are given back and only the storms are refused,
// in memory and streamed alike.
void TestAccessLog::replaySettlesWithTheLoggedStatus() {
    const std::string path = fixture("login-401-storms.log");
    auto throttled = [&](ChargeRule rule, bool streamed) {
        Policy p = testing::tokenBucketPolicy("login", 5, 0.04, "/login");
        p.charge.rule = rule;
        const PolicySet policies = policySet({p});
        LogReading reading;
        std::shared_ptr<const RecordedLog> log;
        if (streamed) {
            ReplayInput input;
            input.files = {path};
            log = std::make_shared<StreamedLog>(std::make_shared<LogStream>(input, reading), path);
        } else {
            log = load({path}, reading);
        }
        RunTotals totals;
        const Decisions d = replay(log, policies, &totals);
        std::map<std::string, int> refused;
        for (std::size_t i = 0; i < d.keys.size(); ++i)
            refused[d.keys[i]] += d.statuses[i] == 429 ? 1 : 0;
        refused["offered"] = static_cast<int>(totals.classes[0].offered);
        return std::make_pair(totals.classes[0].throttled, refused);
    };
    for (bool streamed : {false, true}) {
        const auto always = throttled(ChargeRule::Always, streamed);
        QCOMPARE(always.first, 25);
        QCOMPARE(always.second, (std::map<std::string, int>{{"ip:198.51.100.10", 2},
                                                            {"ip:198.51.100.30", 3},
                                                            {"ip:203.0.113.66", 20},
                                                            {"offered", 48}}));
        const auto failures = throttled(ChargeRule::Failures, streamed);
        QCOMPARE(failures.first, 20);
        QCOMPARE(failures.second, (std::map<std::string, int>{{"ip:198.51.100.10", 0},
                                                              {"ip:198.51.100.30", 0},
                                                              {"ip:203.0.113.66", 20},
                                                              {"offered", 48}}));
    }
}

QTEST_APPLESS_MAIN(TestAccessLog)
#include "tst_access_log.moc"
