// Scenarios fitted to logs (sim/fit/log_fit.h): the fitted scenario loads, names its rule, keys
// clients as the replay does without writing a logged credential, and run under the policy it
// gives per-class figures within 10% of replaying the log itself.

#include <QtTest>

#include <QTemporaryDir>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "sim/log/recorded_traffic.h"
#include "sim/fit/fit_rule.h"
#include "sim/fit/log_fit.h"
#include "sim/scenario/scenario_writer.h"
#include "sim/run/scenario_runner.h"
#include "fixtures/sim_fixture.h"

using namespace ratelab;
using namespace ratelab::sim;

namespace {

std::string logPath(const char* name) {
    return std::string(RATELAB_SOURCE_DIR) + "/tests/data/logs/" + name;
}

ReplayInput logInput(const std::string& path) {
    ReplayInput input;
    input.files = {path};
    return input;
}

std::shared_ptr<const RecordedTraffic> load(const std::string& path) {
    LogReading reading;
    std::shared_ptr<RecordedTraffic> t = loadAccessLog(logInput(path), reading);
    if (!t) qFatal("cannot load %s", path.c_str());
    return t;
}

FitResult fitLog(const std::string& path, const PolicySet& policies, const FitOptions& options) {
    LogReading reading;
    std::optional<FitResult> r = fitScenario(logInput(path), policies, options, reading);
    if (!r) qFatal("cannot fit %s", path.c_str());
    return std::move(*r);
}

ClassRule rule(const char* text) {
    std::string error;
    std::optional<ClassRule> r = ClassRule::parse(text, error);
    if (!r) qFatal("rule %s: %s", text, error.c_str());
    return *r;
}

// Replays the log and counts each request under the class the fit gave its client.
class ClassTally final : public DecisionSink {
public:
    explicit ClassTally(const FitResult& fit) : fit_(fit), counts(fit.classes.size()) {}
    void onDecision(const DecisionRecord& d) override {
        ClassCounters& c = counts[fit_.classOf(d)];
        c.offered += 1;
        (d.allowed ? c.allowed : c.throttled) += 1;
    }
    const FitResult& fit_;
    std::vector<ClassCounters> counts;
};

std::vector<ClassCounters> replayByClass(std::shared_ptr<const RecordedTraffic> t,
                                         const PolicySet& policies, const FitResult& fit) {
    ClassTally tally(fit);
    RunnerOptions options;
    options.decisions = &tally;
    options.measureWallTime = false;
    ScenarioRunner runner(makeReplayScenario(t, kNanosPerSecond), policies, options);
    runner.runToEnd();
    return tally.counts;
}

// The fitted scenario as a user gets it: written, read back from the file, run.
RunTotals runFitted(const FitResult& fit, const PolicySet& policies, Scenario* loaded = nullptr) {
    ScenarioLoadResult r = parseScenarioText(scenarioJson(fit.scenario), "fitted.json");
    if (!r.ok()) {
        qFatal("the fitted scenario does not load:\n%s", formatDiagnostics(r.diagnostics).c_str());
    }
    if (loaded) *loaded = *r.scenario;
    RunnerOptions options;
    options.measureWallTime = false;
    ScenarioRunner runner(*r.scenario, policies, options);
    runner.runToEnd();
    return runner.totals();
}

bool within10(std::int64_t fitted, std::int64_t replayed) {
    return std::abs(static_cast<double>(fitted - replayed)) <= 0.10 * static_cast<double>(replayed);
}

}  // namespace

class TestLogFit : public QObject {
    Q_OBJECT

private slots:
    void rules_data();
    void rules();
    void badRules_data();
    void badRules();
    void percentiles();
    void fittedRunMatchesReplay();
    void attackerByStatusRatio();
    void credentialsAreSynthetic();
    void changedBetweenReadings();
    void writerRoundTrips();
};

void TestLogFit::rules_data() {
    QTest::addColumn<QString>("rule");
    QTest::addColumn<int>("requests");
    QTest::addColumn<int>("unauthorized");
    QTest::addColumn<bool>("matches");
    // Clients over a 100 s log: requests, of which 401; rates are requests / 100.
    QTest::newRow("rate above") << "rate>2" << 300 << 0 << true;
    QTest::newRow("rate not above") << "rate>2" << 200 << 0 << false;
    QTest::newRow("rate at least") << "rate>=2" << 200 << 0 << true;
    QTest::newRow("requests below") << "requests<10" << 9 << 0 << true;
    QTest::newRow("ratio above") << "status=401 ratio>0.5" << 100 << 51 << true;
    QTest::newRow("ratio at half") << "status=401 ratio>0.5" << 100 << 50 << false;
    QTest::newRow("status class") << "status=4xx ratio>=0.5" << 100 << 50 << true;
    QTest::newRow("status list") << "status=403,401 count>10" << 100 << 11 << true;
    QTest::newRow("status alone") << "status=401" << 100 << 1 << true;
    QTest::newRow("status alone, none") << "status=401" << 100 << 0 << false;
    QTest::newRow("both terms") << "rate>1 status=401 ratio>0.5" << 100 << 90 << false;
    QTest::newRow("both terms hold") << "rate>0.5 status=401 ratio>0.5" << 100 << 90 << true;
}

void TestLogFit::rules() {
    QFETCH(QString, rule);
    QFETCH(int, requests);
    QFETCH(int, unauthorized);
    QFETCH(bool, matches);
    ClassRule r = ::rule(rule.toUtf8().constData());
    ClientFigures c;
    c.requests = requests;
    c.ratePerSecond = requests / 100.0;
    if (unauthorized > 0) c.statuses.emplace_back(401, unauthorized);
    if (requests > unauthorized) c.statuses.emplace_back(200, requests - unauthorized);
    r.resolve({c});
    QCOMPARE(r.matches(c), matches);
    QCOMPARE(QString::fromStdString(r.text()), rule);
}

void TestLogFit::badRules_data() {
    QTest::addColumn<QString>("rule");
    QTest::addColumn<QString>("error");
    QTest::newRow("empty") << ""
                           << "the rule is empty; expected rate, requests, status=CODES, "
                              "ratio or count";
    QTest::newRow("unknown term")
        << "rate>1 speed>2"
        << "column 8: unknown term \"speed>2\"; expected rate, requests, status=CODES, ratio or "
           "count";
    QTest::newRow("no operator") << "rate"
                                 << "column 5: expected >, >=, <, <= or = after rate";
    QTest::newRow("not a number")
        << "rate>fast"
        << "column 6: \"fast\": expected a number or a percentile such as P99.9";
    QTest::newRow("bad percentile") << "rate>P101"
                                    << "column 6: \"P101\": a percentile is P0 to P100, e.g. P99.9";
    QTest::newRow("ratio without status")
        << "ratio>0.5"
        << "column 1: ratio compares the requests of a status: write status=CODES before it, "
           "e.g. status=401 ratio>0.5";
    QTest::newRow("ratio above one") << "status=401 ratio>2"
                                     << "column 18: \"2\": a ratio is between 0 and 1";
    QTest::newRow("bad status")
        << "status=41 ratio>0.5"
        << "column 8: \"41\" is not a status: expected three digits (401) or a class (4xx)";
}

void TestLogFit::badRules() {
    QFETCH(QString, rule);
    QFETCH(QString, error);
    std::string message;
    QVERIFY(!ClassRule::parse(rule.toStdString(), message));
    QCOMPARE(QString::fromStdString(message), error);
}

void TestLogFit::percentiles() {
    // Linear between the closest ranks, as numpy's default.
    QCOMPARE(percentile({1, 2, 3, 4}, 50), 2.5);
    QCOMPARE(percentile({4, 1, 3, 2}, 100), 4.0);
    QCOMPARE(percentile({1, 2, 3, 4}, 0), 1.0);
    QCOMPARE(percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90), 9.1);
    QCOMPARE(percentile({}, 99), 0.0);
}

// The fixture is two minutes of a proxied nginx log (make_fit_shape.py): 40 browsing clients,
// a heavy user, a page loader, two scrapers and three credential stuffers.
void TestLogFit::fittedRunMatchesReplay() {
    auto traffic = load(logPath("fit-shape.log.gz"));
    const PolicySet policies = simtest::policyFile("tests/data/logs/fit-token-bucket.json");
    FitOptions options;
    options.attackerIf = rule("rate>P97");
    FitResult fit = fitLog(logPath("fit-shape.log.gz"), policies, options);

    // Keyed by the real client behind the balancer, as the replay keys them: 47 clients, not
    // one balancer. Above the 97th percentile of rates: the scrapers (8 and 6 per second); the
    // heavy user (3 per second) stays legit, and is throttled.
    QCOMPARE(fit.clients, 47);
    QCOMPARE(fit.scenario.title, "Fitted to fit-shape.log.gz (attacker if rate>P97)");
    QCOMPARE(fit.scenario.duration, 120 * kNanosPerSecond);
    QCOMPARE(fit.scenario.classNames(), (std::vector<std::string>{"attacker", "legit"}));
    QCOMPARE(fit.classes[0].clients, 2);
    QCOMPARE(fit.classes[0].requests, 1680);
    QCOMPARE(fit.classes[1].clients, 45);
    QCOMPARE(fit.classes[1].requests, 2447);
    QCOMPARE(fit.scenario.actors.size(), std::size_t(26));  // 10 clients and 16 crowd groups
    const Actor& scraper = fit.scenario.actors[0];
    QCOMPARE(scraper.identity.peer.address.toString(), "203.0.113.5");
    // Whole-second times never a second apart: one session of 960 requests over 119 s, each
    // request's time rounded down to the second as the log shows it (8 each second).
    QCOMPARE(scraper.arrival.kind, Arrival::Kind::Session);
    QCOMPARE(scraper.arrival.sessionSize.values, std::vector<double>{960});
    QCOMPARE(scraper.arrival.sessionSpan.values, std::vector<double>{119});
    QVERIFY(!scraper.arrival.idle);
    QCOMPARE(scraper.arrival.resolution, kNanosPerSecond);

    const std::vector<ClassCounters> replayed = replayByClass(traffic, policies, fit);
    const RunTotals fitted = runFitted(fit, policies);
    // The replay's figures, then the fitted run's within 10% of them, class by class.
    QCOMPARE(replayed[0].offered, 1680);
    QCOMPARE(replayed[0].allowed, 516);
    QCOMPARE(replayed[0].throttled, 1164);
    QCOMPARE(replayed[1].offered, 2447);
    QCOMPARE(replayed[1].allowed, 2353);
    QCOMPARE(replayed[1].throttled, 94);
    for (std::size_t c = 0; c < 2; ++c) {
        const ClassCounters& f = fitted.classes[c];
        const ClassCounters& r = replayed[c];
        qInfo("%s: offered %lld/%lld, allowed %lld/%lld, throttled %lld/%lld (fitted/replayed)",
              fit.classes[c].name.c_str(), (long long)f.offered, (long long)r.offered,
              (long long)f.allowed, (long long)r.allowed, (long long)f.throttled,
              (long long)r.throttled);
        QVERIFY(within10(f.offered, r.offered));
        QVERIFY(within10(f.allowed, r.allowed));
        QVERIFY(within10(f.throttled, r.throttled));
    }
}

void TestLogFit::attackerByStatusRatio() {
    auto traffic = load(logPath("fit-shape.log.gz"));
    const PolicySet policies = simtest::policyFile("tests/data/logs/fit-token-bucket.json");
    FitOptions options;
    options.attackerIf = rule("status=401 ratio>0.5");
    FitResult fit = fitLog(logPath("fit-shape.log.gz"), policies, options);
    QCOMPARE(fit.scenario.title, "Fitted to fit-shape.log.gz (attacker if status=401 ratio>0.5)");
    // The three credential stuffers (90% 401), 240 requests each; nobody else.
    QCOMPARE(fit.scenario.classNames(), (std::vector<std::string>{"legit", "attacker"}));
    QCOMPARE(fit.classes[1].clients, 3);
    QCOMPARE(fit.classes[1].requests, 720);
    std::vector<std::string> attackers;
    for (const Actor& a : fit.scenario.actors) {
        if (a.className == "attacker") attackers.push_back(a.identity.peer.address.toString());
    }
    QCOMPARE(attackers, (std::vector<std::string>{"203.0.113.20", "203.0.113.21", "203.0.113.22"}));
    for (const Actor& a : fit.scenario.actors) {
        if (a.className == "attacker") QCOMPARE(a.method + " " + a.path, "POST /login");
    }
    // Each stuffer answers as its 240 lines were answered (counted in the log: 23, 29 and 31
    // of them 200, the rest 401).
    const std::map<std::string, int> successes = {
        {"203.0.113.20", 23}, {"203.0.113.21", 29}, {"203.0.113.22", 31}};
    for (const Actor& a : fit.scenario.actors) {
        if (a.className != "attacker") continue;
        const int ok = successes.at(a.identity.peer.address.toString());
        QCOMPARE(a.response.kind, ResponseModel::Kind::Statuses);
        QCOMPARE(a.response.statuses, (std::vector<std::pair<int, double>>{
                                          {200, ok / 240.0}, {401, (240 - ok) / 240.0}}));
    }
    // Stuffers at 2 per second never exceed the 2 per second refill: all allowed, fitted too.
    const std::vector<ClassCounters> replayed = replayByClass(traffic, policies, fit);
    const RunTotals fitted = runFitted(fit, policies);
    QCOMPARE(replayed[1].offered, 720);
    QCOMPARE(replayed[1].allowed, 720);
    QVERIFY(within10(fitted.classes[1].offered, 720));
    QCOMPARE(fitted.classes[1].throttled, 0);

    // Without a rule every client is legit.
    FitResult plain = fitLog(logPath("fit-shape.log.gz"), policies, FitOptions{});
    QCOMPARE(plain.scenario.title, "Fitted to fit-shape.log.gz (all legit)");
    QCOMPARE(plain.scenario.classNames(), std::vector<std::string>{"legit"});
    QCOMPARE(plain.classes[0].requests, 4127);
}

// A client keyed by its Authorization header becomes an actor with a generated credential and
// an address of its own; the logged secret appears nowhere in the file, nor does its hash.
void TestLogFit::credentialsAreSynthetic() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("auth.log").toStdString();
    {
        std::ofstream out(path);
        for (int i = 0; i < 30; ++i) {
            out << R"({"ts":)" << 1709294400 + i
                << R"(,"request":{"remote_ip":"198.51.100.7","method":"GET","uri":"/api",)"
                << R"("headers":{"Authorization":["Bearer s3cret-alice"]}},"status":200})"
                << "\n";
            out << R"({"ts":)" << 1709294400 + i
                << R"(.5,"request":{"remote_ip":"198.51.100.7","method":"GET","uri":"/api",)"
                << R"("headers":{"Authorization":["Bearer s3cret-bob"]}},"status":200})"
                << "\n";
        }
    }
    FitResult fit = fitLog(path, defaultFitPolicies(), FitOptions{});
    QCOMPARE(fit.clients, 2);  // one address, two credentials: two clients, as keyed
    const std::string text = scenarioJson(fit.scenario);
    QVERIFY(text.find("s3cret") == std::string::npos);
    QVERIFY(text.find("auth:") == std::string::npos);
    QVERIFY(text.find("198.51.100.7") == std::string::npos);
    QCOMPARE(fit.scenario.actors.size(), std::size_t(2));
    for (const Actor& a : fit.scenario.actors) {
        QCOMPARE(a.identity.authorization, AuthorizationMode::Fixed);
        QCOMPARE(a.identity.peer.kind, PeerSpec::Kind::Ipv4);
        QVERIFY(Cidr(IpAddress::fromV4(0xC6120000), 15).contains(a.identity.peer.address));
    }
    QVERIFY(!(fit.scenario.actors[0].identity.peer.address ==
              fit.scenario.actors[1].identity.peer.address));
    // Run under the default key, the two actors are two Authorization keys, as in the log: two
    // buckets live at once. The keyspace counts buckets not yet full again at a sample's end, so
    // the refill is slowed until neither bucket refills within the run.
    PolicySet slow = defaultFitPolicies();
    for (Policy& p : slow.policies)
        p.refillPerSecond = 0.01;
    const RunTotals fitted = runFitted(fit, slow);
    QCOMPARE(fitted.maxBuckets, 2);
}

// A fit reads the log twice (the clients, then the gaps of the busiest); a log that grows in
// between is refused with both counts, not fitted to a mix of the two, and a fit told to stop
// stops without an error.
void TestLogFit::changedBetweenReadings() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("growing.log").toStdString();
    std::filesystem::copy_file(logPath("login-401-storms.log"), path);
    bool appended = false;
    bool duringFirst = false;
    auto grow = [&](std::int64_t done, std::int64_t total) {
        if (!appended) {
            duringFirst = done * 2 <= total;
            std::ofstream(path, std::ios::app)
                << "198.51.100.30 - - [01/Mar/2026:10:08:28 +0000] \"POST /login HTTP/1.1\" 200 "
                   "512 \"-\" \"python-requests/2.31\"\n";
            appended = true;
        }
        return true;
    };
    LogReading reading;
    QVERIFY(!fitScenario(logInput(path), defaultFitPolicies(), FitOptions{}, reading, grow));
    QVERIFY(duringFirst);
    QVERIFY(reading.error);
    QCOMPARE(reading.error->file, path);
    QCOMPARE(reading.error->message,
             "the log changed while it was fitted: 48 requests on the first reading, 49 on the "
             "second");
    QCOMPARE(reading.replayed, 48);  // what the first reading found

    LogReading stopped;
    QVERIFY(!fitScenario(logInput(path), defaultFitPolicies(), FitOptions{}, stopped,
                         [](std::int64_t, std::int64_t) { return false; }));
    QVERIFY(!stopped.error);
    // Read whole, the grown log fits.
    QCOMPARE(fitLog(path, defaultFitPolicies(), FitOptions{}).requests, 49);
}

void TestLogFit::writerRoundTrips() {
    const Scenario s = simtest::scenarioFrom(R"({
        "name": "round-trip", "title": "T", "seed": 7, "duration_s": 12.5, "sample_ms": 250,
        "replicas": 2, "shared_store": false, "max_buckets": 1000,
        "actors": [
            {"name": "a", "class": "attacker", "count": 4, "start_s": 1.5, "stop_s": 10,
             "arrival": {"kind": "burst", "size": 3, "every_s": 2, "spacing_ms": 5,
                         "phase_s": 0.5},
             "request": {"method": "POST", "path": "/login", "headers": {"x-k": "v{instance}"},
                         "cost": 2},
             "identity": {"peer": {"kind": "ipv4_pool", "cidr": "203.0.113.0/29"},
                          "authorization": "rotate", "principal": "fixed",
                          "forwarded_for": "spoof_via_proxy", "proxy": "10.0.0.1",
                          "forwarded_header": "x-real-ip", "attributes": {"plan": "gold"}}},
            {"name": "b", "arrival": {"kind": "ramp", "from_per_s": 1, "to_per_s": 5,
                                      "over_s": 4},
             "identity": {"peer": {"kind": "ipv6_prefix_rotate", "cidr": "2001:db8::/48",
                                   "prefix_len": 56}}}
        ],
        "events": [
            {"kind": "store_outage", "from_s": 1, "to_s": 2, "failure": "timeout", "replica": 1},
            {"kind": "store_latency", "from_s": 3, "to_s": 4, "latency_ms": 20},
            {"kind": "policy_change", "at_s": 5, "set": {"capacity": 9, "mode": "shadow"}}
        ],
        "expect": [{"metric": "attacker.allowed", "max": 100}]
    })");
    const std::string once = scenarioJson(s);
    const Scenario again = simtest::scenarioFrom(once);
    QCOMPARE(scenarioJson(again), once);
    QCOMPARE(again.actors.size(), std::size_t(2));
    QCOMPARE(again.actors[0].arrival.burstSpacing, 5 * kNanosPerMilli);
    QCOMPARE(again.actors[0].identity.forwarded.header, "x-real-ip");
    QCOMPARE(again.events.size(), std::size_t(3));
    QCOMPARE(again.events[2].change.capacity, std::optional<std::int64_t>(9));
    QCOMPARE(again.duration, 12'500 * kNanosPerMilli);
    QVERIFY(once.find("\"seed\": 7") != std::string::npos);
}

QTEST_APPLESS_MAIN(TestLogFit)
#include "tst_log_fit.moc"
