// Session and empirical arrivals (sim/traffic/instance_arrivals.h): the loader reads them and
// refuses what it must at FILE:LINE:COLUMN, the writer writes them back to the same bytes, and
// each instance of a crowd sends its own sessions: bursts as drawn, totals dealt over the crowd,
// activities compressed to fit rather than cut, times at the arrival's resolution.

#include <QtTest>

#include <map>
#include <set>

#include "fixtures/sim_fixture.h"
#include "sim/scenario/scenario_writer.h"
#include "sim/traffic/instance_arrivals.h"

using namespace ratelab;
using namespace ratelab::sim;

namespace {

// A scenario of one actor with this arrival (JSON text), `count` instances, over `seconds`.
std::string withArrival(const std::string& arrival, int count = 1, int seconds = 600) {
    return R"({ "name": "s", "duration_s": )" + std::to_string(seconds) +
           R"(, "actors": [
  { "name": "a", "count": )" +
           std::to_string(count) + R"(, "arrival": )" + arrival +
           R"(,
    "identity": {"peer": {"kind": "ipv4_pool", "cidr": "10.0.0.0/8"}} } ] })";
}

struct Sent {
    Nanos at;
    std::int64_t instance;
};

// Every request the scenario's first actor sends, in order.
std::vector<Sent> arrivals(const Scenario& s, std::uint64_t seed = 1) {
    const Actor& a = s.actors.front();
    InstanceArrivals gen(a, seed, a.start, a.stop.value_or(s.duration));
    std::vector<Sent> out;
    while (!gen.done()) {
        out.push_back({gen.nextTime(), gen.nextInstance()});
        gen.advance();
    }
    return out;
}

}  // namespace

class TestInstanceArrivals : public QObject {
    Q_OBJECT

private slots:
    void readsAndWritesBack();
    void refusals_data();
    void refusals();
    void sessionsKeepTheirBursts();
    void crowdIsIndividuals();
    void totalsAreDealtOverTheCrowd();
    void dealsShowTheWholeDistribution();
    void longActivityIsCompressedNotCut();
    void resolutionRoundsDown();
    void empiricalGaps();
};

void TestInstanceArrivals::readsAndWritesBack() {
    const Scenario s = simtest::scenarioFrom(R"({ "name": "s", "duration_s": 3600, "actors": [
  { "name": "visitors", "count": 40,
    "arrival": {"kind": "session", "sessions": [1, 2, 4], "requests_per_session": [3, 8, [400, 0.01]],
                "session_s": [0.5, 1.5, 60], "idle_s": [30, 120.5], "resolution_s": 1},
    "identity": {"peer": {"kind": "ipv4_pool", "cidr": "10.1.0.0/16"}} },
  { "name": "poller", "arrival": {"kind": "empirical", "requests": 500, "gap_s": [1.95, 2, 2.05]} },
  { "name": "one-visit", "arrival": {"kind": "session", "requests_per_session": 12, "session_s": 1} }
] })");
    const Arrival& v = s.actors[0].arrival;
    QCOMPARE(v.kind, Arrival::Kind::Session);
    QVERIFY(v.perInstance());
    QCOMPARE(v.total->values, (std::vector<double>{1, 2, 4}));
    QCOMPARE(v.sessionSize.values, (std::vector<double>{3, 8, 400}));
    // The plain values share what the heavy one leaves: 0.495 each.
    QCOMPARE(v.sessionSize.probabilities, (std::vector<double>{0, 0, 0.01}));
    QCOMPARE(v.sessionSize.probability(0), 0.495);
    QCOMPARE(v.sessionSize.mean(), 0.495 * 3 + 0.495 * 8 + 0.01 * 400);
    QCOMPARE(v.sessionSpan.values, (std::vector<double>{0.5, 1.5, 60}));
    QCOMPARE(v.idle->values, (std::vector<double>{30, 120.5}));
    QCOMPARE(v.resolution, kNanosPerSecond);
    const Arrival& p = s.actors[1].arrival;
    QCOMPARE(p.kind, Arrival::Kind::Empirical);
    QCOMPARE(p.total->values, std::vector<double>{500});
    QCOMPARE(p.gaps.values, (std::vector<double>{1.95, 2, 2.05}));
    QCOMPARE(p.resolution, Nanos(0));
    QVERIFY(!s.actors[2].arrival.total);
    QVERIFY(!s.actors[2].arrival.idle);

    const std::string once = scenarioJson(s);
    const Scenario again = simtest::scenarioFrom(once);
    QCOMPARE(scenarioJson(again), once);
    QCOMPARE(again.actors[0].arrival.sessionSize, v.sessionSize);
    QCOMPARE(again.actors[1].arrival.gaps, p.gaps);
}

void TestInstanceArrivals::refusals_data() {
    QTest::addColumn<QString>("arrival");
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("message");
    // The arrival starts on line 2 at column 41 of withArrival()'s text.
    QTest::newRow("session without session_s")
        << R"({"kind": "session", "requests_per_session": 3})"
        << "bad.json:2:41:"
        << "missing required key \"session_s\"";
    QTest::newRow("gap_s on a session")
        << R"({"kind": "session", "requests_per_session": 3, "session_s": 1, "gap_s": 2})"
        << "bad.json:2:113:"
        << "gap_s does not apply to arrival kind \"session\"";
    QTest::newRow("rate on an empirical")
        << R"({"kind": "empirical", "gap_s": 2, "rate_per_s": 1})"
        << "bad.json:2:89:"
        << "rate_per_s does not apply to arrival kind \"empirical\"";
    QTest::newRow("spans not paired with sizes")
        << R"({"kind": "session", "requests_per_session": [3, 4], "session_s": [1, 2, 3]})"
        << "bad.json:2:106:"
        << "session_s holds one value or one per requests_per_session value (2), found 3";
    QTest::newRow("sessions without idle_s")
        << R"({"kind": "session", "sessions": 3, "requests_per_session": 3, "session_s": 1})"
        << "bad.json:2:73:"
        << "sessions needs idle_s";
    QTest::newRow("sessions at one instant without end")
        << R"({"kind": "session", "requests_per_session": 3, "session_s": 0, "idle_s": 0})"
        << "bad.json:2:114:"
        << "idle_s and session_s are all 0 and no sessions bound them";
    QTest::newRow("gaps of 0 without end") << R"({"kind": "empirical", "gap_s": [0, 0]})"
                                           << "bad.json:2:72:"
                                           << "gap_s is all 0 and no requests bound it";
    QTest::newRow("session of no request")
        << R"({"kind": "session", "requests_per_session": [2, 0], "session_s": 1})"
        << "bad.json:2:89:"
        << "requests_per_session values must be at least 1 and at most 1000000, found 0";
    QTest::newRow("idle gap beyond a month")
        << R"({"kind": "session", "requests_per_session": 2, "session_s": 1, "idle_s": 2600000})"
        << "bad.json:2:114:"
        << "idle_s values must be at least 0 and at most 2592000, found 2600000";
    QTest::newRow("empty distribution") << R"({"kind": "empirical", "gap_s": []})"
                                        << "bad.json:2:72:"
                                        << "gap_s holds 1 to 64 values, found 0";
    QTest::newRow("a pair that is not one") << R"({"kind": "empirical", "gap_s": [1, [2, 0.5, 3]]})"
                                            << "bad.json:2:76:"
                                            << "expected [value, probability]";
    QTest::newRow("probabilities leaving nothing")
        << R"({"kind": "empirical", "gap_s": [1, [2, 0.6], [3, 0.4]]})"
        << "bad.json:2:72:"
        << "the probabilities add up to 1, leaving nothing to the values without one";
    QTest::newRow("spans weighted on their own")
        << R"({"kind": "session", "requests_per_session": 2, "session_s": [[1, 0.5], [2, 0.5]]})"
        << "bad.json:2:102:"
        << "expected a number, found an array";
}

void TestInstanceArrivals::refusals() {
    QFETCH(QString, arrival);
    QFETCH(QString, where);
    QFETCH(QString, message);
    ScenarioLoadResult r = parseScenarioText(withArrival(arrival.toStdString()), "bad.json");
    QVERIFY(!r.ok());
    const std::string first = formatDiagnostic(r.diagnostics.front());
    QVERIFY2(first.starts_with(where.toStdString() + " error: "), first.c_str());
    QVERIFY2(first.find(message.toStdString()) != std::string::npos, first.c_str());
}

// Sessions of 5 requests over 2 s, a minute apart: 4 bursts of 5, each 0.5 s apart inside.
void TestInstanceArrivals::sessionsKeepTheirBursts() {
    const Scenario s = simtest::scenarioFrom(withArrival(
        R"({"kind": "session", "sessions": 4, "requests_per_session": 5, "session_s": 2,
            "idle_s": 60})"));
    const std::vector<Sent> sent = arrivals(s);
    QCOMPARE(sent.size(), std::size_t(20));
    for (std::size_t i = 0; i < sent.size(); ++i) {
        const Nanos gap = i == 0 ? 0 : sent[i].at - sent[i - 1].at;
        if (i % 5 != 0) QCOMPARE(gap, 500 * kNanosPerMilli);
        if (i % 5 == 0 && i > 0) QCOMPARE(gap, 60 * kNanosPerSecond);
    }
    // Placed at random where the whole activity (3 x 60 s + 4 x 2 s) fits.
    QVERIFY(sent.back().at < 600 * kNanosPerSecond);
    QCOMPARE(sent.back().at - sent.front().at, 188 * kNanosPerSecond);
}

// A crowd of 1,000 is 1,000 clients, each with its own session at its own time: not one rate.
void TestInstanceArrivals::crowdIsIndividuals() {
    const Scenario s = simtest::scenarioFrom(withArrival(
        R"({"kind": "session", "requests_per_session": 8, "session_s": 1})", 1000, 3600));
    const std::vector<Sent> sent = arrivals(s);
    QCOMPARE(sent.size(), std::size_t(8000));
    std::map<std::int64_t, std::vector<Nanos>> byInstance;
    for (const Sent& r : sent)
        byInstance[r.instance].push_back(r.at);
    QCOMPARE(byInstance.size(), std::size_t(1000));
    std::set<Nanos> starts;
    for (const auto& [instance, times] : byInstance) {
        QCOMPARE(times.size(), std::size_t(8));
        QCOMPARE(times.back() - times.front(), 7 * (kNanosPerSecond / 7));  // its burst of 8
        starts.insert(times.front());
    }
    QCOMPARE(starts.size(), std::size_t(1000));  // each at a time of its own
    // Spread over the hour: a tenth of the clients in each tenth of it, within four standard
    // deviations (9.5 clients) of 100.
    std::vector<int> tenths(10, 0);
    for (Nanos t : starts)
        tenths[static_cast<std::size_t>(t / (360 * kNanosPerSecond))] += 1;
    for (int n : tenths)
        QVERIFY2(n >= 62 && n <= 138, qPrintable(QString::number(n)));
    // Another seed, other times; the same seed, the same.
    QCOMPARE(arrivals(s, 1).front().at, sent.front().at);
    QVERIFY(arrivals(s, 2).front().at != sent.front().at);
}

// The instances' totals are dealt: 100 instances over 10 equally likely totals send each total
// exactly 10 times, so the crowd sends exactly its clients' requests.
void TestInstanceArrivals::totalsAreDealtOverTheCrowd() {
    const Scenario s = simtest::scenarioFrom(withArrival(
        R"({"kind": "empirical", "requests": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "gap_s": 1})", 100,
        600));
    std::map<std::int64_t, int> perInstance;
    for (const Sent& r : arrivals(s))
        perInstance[r.instance] += 1;
    QCOMPARE(perInstance.size(), std::size_t(100));
    std::map<int, int> instancesSending;
    int total = 0;
    for (const auto& [instance, n] : perInstance) {
        instancesSending[n] += 1;
        total += n;
    }
    QCOMPARE(total, 550);
    for (int n = 1; n <= 10; ++n)
        QCOMPARE(instancesSending[n], 10);
}

void TestInstanceArrivals::dealsShowTheWholeDistribution() {
    // Equally likely: every round of 4 deals holds each value once, in orders of their own.
    Distribution equal{{1, 2, 3, 4}, {}};
    const Picker p(equal, 1);
    std::set<std::vector<std::size_t>> orders;
    for (std::int64_t round = 0; round < 50; ++round) {
        std::vector<std::size_t> dealt;
        for (std::int64_t j = 0; j < 4; ++j)
            dealt.push_back(p.deal(7, round * 4 + j, 0));
        std::vector<std::size_t> sorted = dealt;
        std::sort(sorted.begin(), sorted.end());
        QCOMPARE(sorted, (std::vector<std::size_t>{0, 1, 2, 3}));
        orders.insert(dealt);
    }
    QVERIFY2(orders.size() >= 10, qPrintable(QString::number(orders.size())));
    // A value of probability 1/1000 beside plain ones comes once in each 1,000 deals: the
    // 600-request session of a crawler's 1,000 comes once, not 0 or 3 times.
    Distribution heavy{{1, 2, 600}, {0, 0, 0.001}};
    const Picker h(heavy, 1);
    std::uint64_t stream = 99;
    for (std::int64_t round = 0; round < 5; ++round) {
        int rare = 0;
        for (std::int64_t j = 0; j < 1000; ++j)
            rare += h.deal(3, round * 1000 + j, InstanceArrivals::draw(stream)) == 2 ? 1 : 0;
        QCOMPARE(rare, 1);
    }
    // A count's mean is its value's: 2.25 rounds up a quarter of the time.
    const Picker c(Distribution{{2.25}, {}}, 1);
    std::int64_t sum = 0;
    for (int i = 0; i < 40'000; ++i)
        sum += c.count(0, InstanceArrivals::draw(stream));
    QVERIFY2(std::abs(static_cast<double>(sum) / 40'000 - 2.25) < 0.01,
             qPrintable(QString::number(sum)));
}

// 10 sessions of 10 requests over 1 s, 100 s apart, is 910 s of activity; given 300 s, the idle
// gaps shrink to fit and every request is still sent, each session still a burst of 1 s.
void TestInstanceArrivals::longActivityIsCompressedNotCut() {
    const Scenario s = simtest::scenarioFrom(withArrival(
        R"({"kind": "session", "sessions": 10, "requests_per_session": 10, "session_s": 1,
            "idle_s": 100})",
        1, 300));
    const std::vector<Sent> sent = arrivals(s);
    QCOMPARE(sent.size(), std::size_t(100));
    QVERIFY(sent.back().at < 300 * kNanosPerSecond);
    for (std::size_t i = 0; i < sent.size(); i += 10) {
        QCOMPARE(sent[i + 9].at - sent[i].at, 9 * (kNanosPerSecond / 9));
        if (i > 0) {
            const Nanos idle = sent[i].at - sent[i - 1].at;
            QVERIFY2(idle > 32 * kNanosPerSecond && idle < 33 * kNanosPerSecond,
                     qPrintable(QString::number(idle)));
        }
    }
}

// A log of whole seconds is replayed at whole seconds: so is an arrival fitted to it.
void TestInstanceArrivals::resolutionRoundsDown() {
    const Scenario s = simtest::scenarioFrom(withArrival(
        R"({"kind": "session", "requests_per_session": [3, 7], "session_s": [0.6, 1.8],
            "idle_s": [4, 9.3], "resolution_s": 1})",
        20, 120));
    const std::vector<Sent> sent = arrivals(s);
    QVERIFY(sent.size() > 200);
    for (std::size_t i = 0; i < sent.size(); ++i) {
        QCOMPARE(sent[i].at % kNanosPerSecond, Nanos(0));
        if (i > 0) QVERIFY(sent[i].at >= sent[i - 1].at);
    }
}

// Empirical gaps, until stop: a poller's jittered two seconds.
void TestInstanceArrivals::empiricalGaps() {
    const Scenario s =
        simtest::scenarioFrom(withArrival(R"({"kind": "empirical", "gap_s": [1.9, 2, 2.1]})"));
    const std::vector<Sent> sent = arrivals(s);
    // 600 s at 2 s a request, the first somewhere in the first gap.
    QVERIFY2(sent.size() >= 298 && sent.size() <= 301, qPrintable(QString::number(sent.size())));
    std::map<Nanos, int> gaps;
    for (std::size_t i = 1; i < sent.size(); ++i)
        gaps[sent[i].at - sent[i - 1].at] += 1;
    QCOMPARE(gaps.size(), std::size_t(3));
    for (const auto& [gap, n] : gaps)  // dealt: a third each, to within one
        QVERIFY2(std::abs(n - static_cast<int>(sent.size() - 1) / 3) <= 1,
                 qPrintable(QString::number(n)));
}

QTEST_APPLESS_MAIN(TestInstanceArrivals)
#include "tst_instance_arrivals.moc"
