// Access-log replay (app/sim/log/record_stream.cpp, recorded_traffic.cpp) on the fixtures in
// tests/data/logs and on logs written here: each format's sample, identity through the policy's own
// key rules, and what a policy decides for each line. Logs as they are stored (rotated, gzipped,
// out of order, damaged) are tst_log_reading's.

#include <QtTest>

#include <algorithm>
#include <map>
#include <set>

#include "fixtures/access_log_fixture.h"
#include "fixtures/sim_fixture.h"
#include "ratelab/limiter.h"
#include "ratelab/memory_store.h"
#include "sim/report/report.h"

using namespace ratelab;
using namespace ratelab::sim;
using namespace ratelab::simtest;

class TestAccessLog : public LogFileTest {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }
    void combinedSample();
    void commonSample();
    void csvSample();
    void proxiedLinesAreKeyedByTheClient();
    void replayDecidesEachLine_data();
    void replayDecidesEachLine();
    void quotedCsvFieldsReadAsUnquoted_data();
    void quotedCsvFieldsReadAsUnquoted();
    void streamAndMemoryGiveTheSameReport();
    void clientTimelinesAddUpToTheClients();
    void longLogsGetLongerSamples();
    void streamedReplayKeepsItsScenario();
    void replaySettlesWithTheLoggedStatus();
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
    // And each client's key and first and last request alike: 192.0.2.1 sent lines 0, 9, ...,
    // 2997, 337 ms apart.
    QCOMPARE(fromStream.clientsSeen(0).size(), std::size_t(9));
    for (std::size_t i = 0; i < 9; ++i) {
        const ClientSeen& m = fromMemory.clientsSeen(0)[i];
        const ClientSeen& st = fromStream.clientsSeen(0)[i];
        QVERIFY(!m.key.empty());
        QCOMPARE(st.key, m.key);
        QCOMPARE(st.firstSeen, m.firstSeen);
        QCOMPARE(st.lastSeen, m.lastSeen);
    }
    QCOMPARE(fromMemory.clientsSeen(0)[0].firstSeen, Nanos(0));
    QCOMPARE(fromMemory.clientsSeen(0)[0].lastSeen, Nanos(2997) * 337 * kNanosPerMilli);
    QCOMPARE(fromMemory.clientsSeen(0)[8].firstSeen, Nanos(8) * 337 * kNanosPerMilli);
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

// A streamed replay's runner ends the run with the log's traffic and doubles its sample interval
// past kMaxReplaySamples, and still returns the scenario as it was given.
void TestAccessLog::streamedReplayKeepsItsScenario() {
    const std::int64_t tenYearsMs = 10LL * 365 * 86'400'000;
    const std::string path = write(
        "kept.csv", "0,192.0.2.1\n1000,192.0.2.1\n" + std::to_string(tenYearsMs) + ",192.0.2.1\n");
    ReplayInput input;
    input.files = {path};
    LogReading reading;
    const Scenario given = makeReplayScenario(
        std::make_shared<StreamedLog>(std::make_shared<LogStream>(input, reading), path),
        kNanosPerSecond);
    QVERIFY(given.endsWithTraffic);
    ScenarioRunner runner(given, policySet({tokenBucket("api", 1, 1.0)}));
    runner.runToEnd();
    QCOMPARE(runner.totals().classes[0].allowed, std::int64_t(3));
    QVERIFY(runner.duration() < given.duration);
    QVERIFY(runner.sampleInterval() > given.sampleInterval);
    const Scenario& kept = runner.scenario();
    QCOMPARE(kept.duration, given.duration);
    QCOMPARE(kept.sampleInterval, given.sampleInterval);
    QCOMPARE(kept.endsWithTraffic, true);
    QCOMPARE(kept.maxSamples, given.maxSamples);
}

// With RunnerOptions::clientTimelines, each replayed client's allowed and throttled requests
// per sample interval: ascending intervals that sum to the client's totals, alike read from memory
// or streamed; nothing kept without the option. 192.0.2.1 sends every ninth line, 337 ms apart:
// one request every 3.033 s, so each of its intervals (of 250 ms) holds one.
void TestAccessLog::clientTimelinesAddUpToTheClients() {
    std::string csv;
    for (int i = 0; i < 3000; ++i)
        csv += std::to_string(1000 + i * 337) + ",192.0.2." + std::to_string(i % 9 + 1) + "\n";
    const std::string path = write("timeline.csv", csv);
    const PolicySet policies = policySet({tokenBucket("api", 1, 0.2)});  // 0.6 tokens a gap
    RunnerOptions options;
    options.clientTimelines = true;
    LogReading memoryReading;
    auto memory = load({path}, memoryReading);
    ScenarioRunner fromMemory(makeReplayScenario(memory, 250 * kNanosPerMilli), policies, options);
    fromMemory.runToEnd();
    ReplayInput input;
    input.files = {path};
    LogReading streamReading;
    auto stream = std::make_shared<LogStream>(input, streamReading);
    ScenarioRunner fromStream(
        makeReplayScenario(std::make_shared<StreamedLog>(stream, path), 250 * kNanosPerMilli),
        policies, options);
    while (!fromStream.finished())
        fromStream.advance(fromStream.duration(), 1000);
    std::int64_t throttledSeen = 0;
    for (std::size_t i = 0; i < 9; ++i) {
        const auto line = fromMemory.clientTimeline(0, static_cast<std::int64_t>(i));
        const InstanceCounters& totals = fromMemory.instances(0)[i];
        std::int64_t allowed = 0;
        std::int64_t throttled = 0;
        for (std::size_t k = 0; k < line.size(); ++k) {
            if (k > 0) QVERIFY(line[k].interval > line[k - 1].interval);
            QCOMPARE(line[k].allowed + line[k].throttled, std::int64_t(1));
            allowed += line[k].allowed;
            throttled += line[k].throttled;
        }
        QCOMPARE(static_cast<std::int64_t>(line.size()), totals.offered);
        QCOMPARE(allowed, totals.allowed);
        QCOMPARE(throttled, totals.throttled);
        throttledSeen += throttled;
        const auto streamed = fromStream.clientTimeline(0, static_cast<std::int64_t>(i));
        QVERIFY(std::equal(line.begin(), line.end(), streamed.begin(), streamed.end()));
    }
    QVERIFY(throttledSeen > 0);
    // 192.0.2.1's first request at 0, its second 3.033 s later: intervals 0 and 12.
    QCOMPARE(fromMemory.clientTimeline(0, 0)[1].interval, std::int64_t(12));
    QVERIFY(fromMemory.clientTimeline(0, 9).empty());  // no tenth client

    ScenarioRunner without(makeReplayScenario(memory, 250 * kNanosPerMilli), policies);
    without.runToEnd();
    QVERIFY(without.clientTimeline(0, 0).empty());
}

QTEST_APPLESS_MAIN(TestAccessLog)
#include "tst_recorded_traffic.moc"
