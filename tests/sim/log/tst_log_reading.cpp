// Logs as they are stored, read by the replay (app/sim/log/record_stream.cpp, line_reader.cpp): rotated
// gzip files as one stream, the reorder window, damaged and unparsed lines by number, binary,
// wrong-format, cut-off and corrupt files refused early or reported, and times out of range.

#include <QtTest>


#include "fixtures/access_log_fixture.h"

using namespace ratelab;
using namespace ratelab::sim;
using namespace ratelab::simtest;

class TestLogReading : public LogFileTest {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }
    void rotatedFilesReplayAsOneStream();
    void rotatedFilesOutOfOrderAreRefused();
    void reorderWindow();
    void damagedLineIsReplayedWithAWarning();
    void binaryFileIsRefusedAtOnce();
    void wrongFormatIsRefusedAfterAFewLines();
    void gzipCutOffIsAWarning();
    void corruptGzipIsAnError();
    void directoryIsRefused();
    void timesOutOfRange();
};

// nginx behind a balancer, rotated into two gzip files: one stream, sorted across the seam
// (the newer file's third line is 3 s older than its first).
void TestLogReading::rotatedFilesReplayAsOneStream() {
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

void TestLogReading::rotatedFilesOutOfOrderAreRefused() {
    LogReading r;
    QVERIFY(!load({fixture("nginx-proxy.log.1.gz"), fixture("nginx-proxy.log.2.gz")}, r));
    QVERIFY(r.error);
    QCOMPARE(r.error->file, fixture("nginx-proxy.log.2.gz"));
    QCOMPARE(r.error->line, 1);
    QVERIFY2(r.error->message.find("give rotated logs oldest first") != std::string::npos,
             r.error->message.c_str());
}

// Lines a little out of order are sorted; one older than the window is listed and not replayed.
void TestLogReading::reorderWindow() {
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

void TestLogReading::damagedLineIsReplayedWithAWarning() {
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

void TestLogReading::binaryFileIsRefusedAtOnce() {
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
void TestLogReading::wrongFormatIsRefusedAfterAFewLines() {
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

void TestLogReading::gzipCutOffIsAWarning() {
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

void TestLogReading::corruptGzipIsAnError() {
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

void TestLogReading::directoryIsRefused() {
    LogReading r;
    QVERIFY(!load({dir_.path().toStdString()}, r));
    QCOMPARE(formatDiagnostic(*r.error), dir_.path().toStdString() + ": error: is a directory");
    LogReading missing;
    QVERIFY(!load({"/nonexistent/access.log"}, missing));
    QCOMPARE(formatDiagnostic(*missing.error),
             std::string("/nonexistent/access.log: error: cannot open the file: No such file or "
                         "directory"));
}

// Times that would overflow the replay's clock are refused line by line, never wrapped.
void TestLogReading::timesOutOfRange() {
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

QTEST_APPLESS_MAIN(TestLogReading)
#include "tst_log_reading.moc"
