// ScenarioRunner (app/sim/run/scenario_runner.cpp): arrival processes, sampling, slicing, faults,
// policy changes, replicas, decisions and the log, all on the virtual clock.

#include <QtTest>

#include <map>

#include "fixtures/sim_fixture.h"
#include "sim/run/scenario_runner.h"
#include "sim/scenario/scenario_writer.h"

using namespace ratelab;
using namespace ratelab::sim;
using namespace ratelab::simtest;

namespace {

constexpr Nanos kSecond = kNanosPerSecond;

// One actor at `arrival`, from one IPv4 address, for `seconds`.
std::string oneActor(
    const std::string& arrival, int seconds, const std::string& extra = "",
    const std::string& identity = R"({ "peer": { "kind": "ipv4", "address": "198.51.100.7" } })") {
    return R"({ "name": "t", "seed": 3, "duration_s": )" + std::to_string(seconds) +
           R"(, "actors": [ { "name": "a", "class": "legit", "arrival": )" + arrival +
           R"(, "identity": )" + identity + R"( } ])" + extra + "}";
}

struct Collected final : DecisionSink {
    std::vector<DecisionRecord> all;
    std::vector<std::string> keys;
    void onDecision(const DecisionRecord& d) override {
        all.push_back(d);
        keys.emplace_back(d.key);
    }
};

ClassCounters sumOf(const std::vector<Sample>& samples, std::size_t cls) {
    ClassCounters c;
    for (const Sample& s : samples)
        c += s.classes[cls];
    return c;
}

// A memory store whose every consumption takes `cost` nanoseconds on a manual clock.
class TimedStore final : public Store {
public:
    TimedStore(Nanos* clock, Nanos cost) : clock_(clock), cost_(cost) {}
    ConsumeResult consume(const ConsumeRequest& request) override {
        *clock_ += cost_;
        return inner_->consume(request);
    }
    void consumeBatch(std::span<const ConsumeRequest> requests,
                      std::span<ConsumeResult> results) override {
        *clock_ += cost_ * static_cast<Nanos>(requests.size());
        inner_->consumeBatch(requests, results);
    }
    KeyspaceStats keyspace() const override { return inner_->keyspace(); }
    KeyspaceStats keyspaceAt(Nanos now) const override { return inner_->keyspaceAt(now); }
    std::string_view kind() const override { return inner_->kind(); }

private:
    Nanos* clock_;
    Nanos cost_;
    std::shared_ptr<Store> inner_ = makeMemoryStore({});
};

// Work of the runner's own: 1 us on the manual clock per decision it hands out.
struct SlowSink final : DecisionSink {
    Nanos* clock = nullptr;
    void onDecision(const DecisionRecord&) override { *clock += 1000; }
};

}  // namespace

class TestScenarioRunner : public QObject {
    Q_OBJECT

private slots:
    void constantArrivalAgainstTokenBucket();
    void arrivalCounts_data();
    void arrivalCounts();
    void slicingDoesNotChangeTheRun();
    void policyChangeAppliesAtItsTime();
    void retuneTakesEffectOnTheNextRequest();
    void storeFaults_data();
    void storeFaults();
    void replicasWithLocalOrSharedStores_data();
    void replicasWithLocalOrSharedStores();
    void decisionsStreamWithHashedKeys();
    void logIsBoundedAndHashed();
    void addingAnActorDoesNotPerturbAnother();
    void identityBehaviours_data();
    void identityBehaviours();
    void forwardedThroughATrustedProxy_data();
    void forwardedThroughATrustedProxy();
    void instanceTemplates_data();
    void instanceTemplates();
    void burstPhase();
    void engineTimePerDecision_data();
    void engineTimePerDecision();
    void scenarioStaysAsGiven();
};

// 10 requests/s for 10 s against capacity 5, refill 1/s: 5 from the burst, then one per
// second of refill over the 9.9 s between the first and the last request.
void TestScenarioRunner::constantArrivalAgainstTokenBucket() {
    ScenarioRunner runner(scenarioFrom(oneActor(R"({"kind":"constant","rate_per_s":10})", 10)),
                          policySet({tokenBucket("api", 5, 1.0)}));
    runner.runToEnd();
    QVERIFY(runner.finished());
    RunTotals t = runner.totals();
    QCOMPARE(t.requests, std::int64_t(100));
    QCOMPARE(t.classes[0].offered, std::int64_t(100));
    QCOMPARE(t.classes[0].allowed, std::int64_t(14));
    QCOMPARE(t.classes[0].throttled, std::int64_t(86));
    QCOMPARE(runner.samples().size(), std::size_t(10));
    for (const Sample& s : runner.samples())
        QCOMPARE(s.classes[0].offered, std::int64_t(10));
    QCOMPARE(sumOf(runner.samples(), 0), t.classes[0]);
    QCOMPARE(runner.samples()[0].classes[0].allowed, std::int64_t(5));
    QCOMPARE(runner.samples()[0].keyspace.buckets, std::int64_t(1));
    QCOMPARE(t.maxBuckets, std::int64_t(1));
}

void TestScenarioRunner::arrivalCounts_data() {
    QTest::addColumn<QString>("arrival");
    QTest::addColumn<int>("count");
    QTest::addColumn<int>("seconds");
    QTest::addColumn<double>("expected");
    QTest::addColumn<double>("tolerance");
    // 50 instances at 0.5/s for 60 s: 1500 expected, sd 39; 5 sd of slack.
    QTest::newRow("poisson") << R"({"kind":"poisson","rate_per_s":0.5})" << 50 << 60 << 1500.0
                             << 195.0;
    // 10 page loads of 6 every 10 s, over 60 s: exactly 360.
    QTest::newRow("burst") << R"({"kind":"burst","size":6,"every_s":10,"spacing_ms":50})" << 10
                           << 60 << 360.0 << 0.0;
    // 0 to 100/s over 10 s: the area under the ramp, 500 (one arrival of rounding).
    QTest::newRow("ramp up") << R"({"kind":"ramp","from_per_s":0,"to_per_s":100})" << 1 << 10
                             << 500.0 << 1.0;
    QTest::newRow("ramp down") << R"({"kind":"ramp","from_per_s":100,"to_per_s":20})" << 2 << 10
                               << 1200.0 << 1.0;
    // A ramp over 5 s of a 10 s run holds the final rate afterwards: 250 + 500.
    QTest::newRow("ramp then hold")
        << R"({"kind":"ramp","from_per_s":0,"to_per_s":100,"over_s":5})" << 1 << 10 << 750.0 << 1.0;
    QTest::newRow("constant, 3 instances")
        << R"({"kind":"constant","rate_per_s":2.5})" << 3 << 8 << 60.0 << 0.0;
}

void TestScenarioRunner::arrivalCounts() {
    QFETCH(QString, arrival);
    QFETCH(int, count);
    QFETCH(int, seconds);
    QFETCH(double, expected);
    QFETCH(double, tolerance);
    std::string json =
        R"({ "name": "t", "seed": 11, "duration_s": )" + std::to_string(seconds) +
        R"(, "actors": [ { "name": "a", "count": )" + std::to_string(count) + R"(, "arrival": )" +
        arrival.toStdString() +
        R"(, "identity": { "peer": { "kind": "ipv4_pool", "cidr": "10.0.0.0/16" } } } ] })";
    Collected sink;
    RunnerOptions options;
    options.decisions = &sink;
    ScenarioRunner runner(scenarioFrom(json), policySet({tokenBucket("api", 1000, 1000)}), options);
    runner.runToEnd();
    const double n = static_cast<double>(runner.totals().requests);
    QVERIFY2(
        std::abs(n - expected) <= tolerance,
        qPrintable(QString("%1 requests, expected %2 ± %3").arg(n).arg(expected).arg(tolerance)));
    for (std::size_t i = 1; i < sink.all.size(); ++i)
        QVERIFY(sink.all[i].at >= sink.all[i - 1].at);
    QVERIFY(sink.all.empty() || sink.all.back().at < seconds * kSecond);
}

// Advancing in slices of any size, or a few requests at a time, decides exactly what one
// runToEnd() decides: the GUI's pause/step cannot change a run.
void TestScenarioRunner::slicingDoesNotChangeTheRun() {
    const std::string json = R"({ "name": "t", "seed": 5, "duration_s": 20, "sample_ms": 500,
        "actors": [
          { "name": "users", "count": 40, "arrival": {"kind":"poisson","rate_per_s":1},
            "identity": { "peer": {"kind":"ipv4_pool","cidr":"198.51.100.0/24"}, "authorization": "fixed" } },
          { "name": "bot", "class": "attacker", "arrival": {"kind":"constant","rate_per_s":300},
            "identity": { "peer": {"kind":"ipv4","address":"203.0.113.7"}, "authorization": "rotate" } } ],
        "events": [ { "kind": "policy_change", "at_s": 7.25, "set": { "capacity": 3 } } ] })";
    const PolicySet policies = policySet({tokenBucket("api", 10, 2.0)});
    ScenarioRunner whole(scenarioFrom(json), policies);
    whole.runToEnd();
    ScenarioRunner sliced(scenarioFrom(json), policies);
    std::int64_t steps = 0;
    while (!sliced.finished()) {
        sliced.advance(sliced.now() + 333 * kNanosPerMilli, 97);
        ++steps;
    }
    QVERIFY(steps > 60);
    ScenarioRunner stepped(scenarioFrom(json), policies);
    int samplesTaken = 0;
    while (!stepped.finished()) {
        stepped.step();
        samplesTaken += static_cast<int>(stepped.takeSamples().size());
    }
    QCOMPARE(samplesTaken, 40);
    for (ScenarioRunner* other : {&sliced, &stepped}) {
        QCOMPARE(other->totals().requests, whole.totals().requests);
        QCOMPARE(other->samples().size(), whole.samples().size());
        for (std::size_t i = 0; i < whole.samples().size(); ++i) {
            QCOMPARE(other->samples()[i].classes, whole.samples()[i].classes);
            QCOMPARE(other->samples()[i].keyspace.buckets, whole.samples()[i].keyspace.buckets);
        }
    }
}

// A policy_change at 5 s lowers the refill from 10/s to 2/s; 10 requests/s, capacity 5. Until
// then each request takes the token the refill brought, so the bucket holds 4 and a fraction
// at the change: with 2 tokens of refill, 6 pass in the second after it, then 2 a second.
void TestScenarioRunner::policyChangeAppliesAtItsTime() {
    ScenarioRunner runner(
        scenarioFrom(oneActor(R"({"kind":"constant","rate_per_s":10})", 10,
                              R"(, "events": [ { "kind": "policy_change", "at_s": 5,
                                   "policy": "api", "set": { "refill_per_second": 2 } } ])")),
        policySet({tokenBucket("api", 5, 10.0)}));
    runner.runToEnd();
    const auto& s = runner.samples();
    for (int i = 0; i < 5; ++i)
        QCOMPARE(s[i].classes[0].allowed, std::int64_t(10));
    QCOMPARE(s[5].classes[0].allowed, std::int64_t(6));
    for (int i = 6; i < 10; ++i)
        QCOMPARE(s[i].classes[0].allowed, std::int64_t(2));
    QCOMPARE(runner.policies().policies[0].refillPerSecond, 2.0);
}

// retune() between two advance() calls decides the very next request under the new numbers.
void TestScenarioRunner::retuneTakesEffectOnTheNextRequest() {
    ScenarioRunner runner(scenarioFrom(oneActor(R"({"kind":"constant","rate_per_s":100})", 4)),
                          policySet({tokenBucket("api", 1000, 0.001)}));
    runner.advance(2 * kSecond);
    QCOMPARE(runner.totals().classes[0].allowed, std::int64_t(200));
    PolicyTuning tight = tuningOf(runner.policies().policies[0]);
    tight.capacity = 1;
    runner.retune(0, tight);
    runner.runToEnd();
    QCOMPARE(runner.totals().classes[0].allowed, std::int64_t(200));
    QCOMPARE(runner.totals().classes[0].throttled, std::int64_t(200));
}

void TestScenarioRunner::storeFaults_data() {
    QTest::addColumn<QString>("event");
    QTest::addColumn<QString>("onError");
    QTest::addColumn<int>("allowed");
    QTest::addColumn<int>("failedOpen");
    QTest::addColumn<int>("failedClosed");
    QTest::addColumn<int>("storeErrors");
    // 10 requests/s for 10 s, capacity 1 and no refill to speak of: one pass outside the
    // faults, so every other pass is a fail-open.
    QTest::newRow("transport, fail open")
        << R"({"kind":"store_outage","failure":"transport","from_s":2,"to_s":5})"
        << "fail_open_on_transport" << 31 << 30 << 0 << 30;
    QTest::newRow("transport, deny")
        << R"({"kind":"store_outage","failure":"transport","from_s":2,"to_s":5})"
        << "deny" << 1 << 0 << 30 << 30;
    QTest::newRow("timeout, fail open")
        << R"({"kind":"store_outage","failure":"timeout","from_s":0,"to_s":1})"
        << "fail_open_on_transport" << 11 << 10 << 0 << 10;
    // A refusal (OOM) is refused under every rule.
    QTest::newRow("refusal, fail open")
        << R"({"kind":"store_outage","failure":"refusal","from_s":2,"to_s":5})"
        << "fail_open_on_transport" << 1 << 0 << 30 << 30;
    // 600 ms of latency exceeds the 500 ms store timeout; 400 ms does not.
    QTest::newRow("latency over timeout")
        << R"({"kind":"store_latency","latency_ms":600,"from_s":8,"to_s":10})"
        << "fail_open_on_transport" << 21 << 20 << 0 << 20;
    QTest::newRow("latency under timeout")
        << R"({"kind":"store_latency","latency_ms":400,"from_s":8,"to_s":10})"
        << "fail_open_on_transport" << 1 << 0 << 0 << 0;
}

void TestScenarioRunner::storeFaults() {
    QFETCH(QString, event);
    QFETCH(QString, onError);
    QFETCH(int, allowed);
    QFETCH(int, failedOpen);
    QFETCH(int, failedClosed);
    QFETCH(int, storeErrors);
    Policy p = tokenBucket("api", 1, 0.001);
    p.onStoreError = onError == "deny" ? StoreErrorRule::Deny : StoreErrorRule::FailOpenOnTransport;
    ScenarioRunner runner(scenarioFrom(oneActor(R"({"kind":"constant","rate_per_s":10})", 10,
                                                ", \"events\": [" + event.toStdString() + "]")),
                          policySet({p}));
    runner.runToEnd();
    const ClassCounters c = runner.totals().classes[0];
    QCOMPARE(c.offered, std::int64_t(100));
    QCOMPARE(c.allowed, std::int64_t(allowed));
    QCOMPARE(c.failedOpen, std::int64_t(failedOpen));
    QCOMPARE(c.failedClosed, std::int64_t(failedClosed));
    QCOMPARE(c.allowed + c.throttled + c.refused + c.failedClosed, c.offered);
    QCOMPARE(runner.totals().storeErrors, std::int64_t(storeErrors));
    std::int64_t perSample = 0;
    for (const Sample& s : runner.samples())
        perSample += s.storeErrors;
    QCOMPARE(perSample, std::int64_t(storeErrors));
}

// Four replicas behind a round-robin balancer: with a store each, a client gets four
// buckets' worth; with one shared store, one bucket's worth.
void TestScenarioRunner::replicasWithLocalOrSharedStores_data() {
    QTest::addColumn<bool>("shared");
    QTest::addColumn<int>("allowed");
    QTest::newRow("local") << false << 40;
    QTest::newRow("shared") << true << 10;
}

void TestScenarioRunner::replicasWithLocalOrSharedStores() {
    QFETCH(bool, shared);
    QFETCH(int, allowed);
    const std::string json =
        std::string(R"({ "name": "t", "duration_s": 1, "replicas": 4, "shared_store": )") +
        (shared ? "true" : "false") +
        R"(, "actors": [ { "name": "a", "arrival": {"kind":"constant","rate_per_s":100},
            "identity": { "peer": {"kind":"ipv4","address":"198.51.100.7"} } } ] })";
    ScenarioRunner runner(scenarioFrom(json), policySet({tokenBucket("api", 10, 0.001)}));
    runner.runToEnd();
    QCOMPARE(runner.totals().classes[0].allowed, std::int64_t(allowed));
    QCOMPARE(runner.totals().maxBuckets, std::int64_t(shared ? 1 : 4));
}

// Every decision reaches the sink in order, with the engine's hashed key: the rotated
// tokens never appear in it.
void TestScenarioRunner::decisionsStreamWithHashedKeys() {
    Collected sink;
    RunnerOptions options;
    options.decisions = &sink;
    ScenarioRunner runner(
        scenarioFrom(oneActor(R"({"kind":"constant","rate_per_s":50})", 2, "",
                              R"({ "peer": {"kind":"ipv4","address":"203.0.113.7"},
                                   "authorization": "rotate" })")),
        policySet({tokenBucket("api", 2, 1.0)}), options);
    runner.runToEnd();
    QCOMPARE(sink.all.size(), std::size_t(100));
    for (std::size_t i = 0; i < sink.all.size(); ++i) {
        QCOMPARE(sink.all[i].seq, std::int64_t(i));
        const std::string& key = sink.keys[i];
        QVERIFY2(key.starts_with("auth:") || key == "ip:203.0.113.7", key.c_str());
        QVERIFY(key.find("Bearer") == std::string::npos);
    }
    // 100 distinct tokens: the first 100 are within the per-peer budget of 128, so each is
    // its own full bucket and passes, with one token left.
    QCOMPARE(runner.totals().classes[0].allowed, std::int64_t(100));
    QCOMPARE(sink.all[0].remaining, std::int64_t(1));
    QCOMPARE(runner.totals().maxBudgetSlots, std::int64_t(100));
}

// The log keeps the newest entries only, names the actor and never the key.
void TestScenarioRunner::logIsBoundedAndHashed() {
    RunnerOptions options;
    options.logCapacity = 8;
    ScenarioRunner runner(scenarioFrom(oneActor(R"({"kind":"constant","rate_per_s":100})", 1)),
                          policySet({tokenBucket("api", 10, 0.001)}), options);
    runner.advance(500 * kNanosPerMilli);
    std::vector<LogEntry> first = runner.takeLog();
    QCOMPARE(first.size(), std::size_t(8));
    for (const LogEntry& e : first) {
        QCOMPARE(e.actor, std::string("a"));
        QCOMPARE(e.policy, std::string("api"));
        QCOMPARE(e.outcome, PolicyOutcome::Throttled);
        QCOMPARE(e.keyHash.size(), std::size_t(16));
        QVERIFY(e.retryAfter > 0);
    }
    QCOMPARE(first.back().at, Nanos(first.front().at + 7 * 10 * kNanosPerMilli));
    QVERIFY(runner.takeLog().empty());
    runner.runToEnd();
    QCOMPARE(runner.takeLog().size(), std::size_t(8));
}

// Streams are keyed by actor name: adding an actor leaves another's arrivals as they were.
void TestScenarioRunner::addingAnActorDoesNotPerturbAnother() {
    auto timesOf = [](const std::string& actors) {
        Collected sink;
        RunnerOptions options;
        options.decisions = &sink;
        ScenarioRunner runner(
            scenarioFrom(R"({ "name": "t", "seed": 9, "duration_s": 30, "actors": [)" + actors +
                         "]}"),
            policySet({tokenBucket("api", 5, 1.0)}), options);
        runner.runToEnd();
        std::vector<std::pair<Nanos, bool>> out;
        for (const DecisionRecord& d : sink.all) {
            if (sink.keys[static_cast<std::size_t>(d.seq)] == "ip:198.51.100.1") {
                out.emplace_back(d.at, d.allowed);
            }
        }
        return out;
    };
    const std::string a = R"({ "name": "a", "arrival": {"kind":"poisson","rate_per_s":3},
        "identity": { "peer": {"kind":"ipv4","address":"198.51.100.1"} } })";
    const std::string b =
        R"({ "name": "b", "count": 7, "arrival": {"kind":"poisson","rate_per_s":9},
        "identity": { "peer": {"kind":"ipv4_pool","cidr":"10.1.0.0/24"} } })";
    auto alone = timesOf(a);
    QVERIFY(alone.size() > 50);
    QCOMPARE(timesOf(b + "," + a), alone);
    QCOMPARE(timesOf(a + "," + b), alone);
}

// Identity behaviours reach the engine as written: one bucket per pool address, one per /64
// however the address rotates inside it, one per rotated /64, one for a whole NAT crowd.
void TestScenarioRunner::identityBehaviours_data() {
    QTest::addColumn<QString>("identity");
    QTest::addColumn<int>("count");
    QTest::addColumn<int>("buckets");
    QTest::newRow("ipv4 pool") << R"({ "peer": {"kind":"ipv4_pool","cidr":"198.51.100.0/24"} })"
                               << 20 << 20;
    QTest::newRow("nat") << R"({ "peer": {"kind":"nat","address":"192.0.2.1"} })" << 20 << 1;
    QTest::newRow("nat with tokens")
        << R"({ "peer": {"kind":"nat","address":"192.0.2.1"}, "authorization": "fixed" })" << 20
        << 20;
    QTest::newRow("ipv6 rotate in a /64")
        << R"({ "peer": {"kind":"ipv6_rotate","prefix":"2001:db8:1:2::/64"} })" << 1 << 1;
    // A new /64 per request inside a /40: 24 bits of /64s, so 200 draws do not collide.
    QTest::newRow("new /64 per request")
        << R"({ "peer": {"kind":"ipv6_prefix_rotate","cidr":"2001:db8::/40","prefix_len":64} })"
        << 1 << 200;
    // A new IPv4 address per request: 200 draws from a /10's 2^22 addresses do not collide,
    // and a /30 has only four.
    QTest::newRow("ipv4 rotate in a /10")
        << R"({ "peer": {"kind":"ipv4_rotate","cidr":"100.64.0.0/10"} })" << 1 << 200;
    QTest::newRow("ipv4 rotate in a /30")
        << R"({ "peer": {"kind":"ipv4_rotate","cidr":"192.0.2.4/30"} })" << 1 << 4;
    QTest::newRow("principal")
        << R"({ "peer": {"kind":"nat","address":"192.0.2.1"}, "principal": "fixed" })" << 20 << 20;
    QTest::newRow("spoofed xff, untrusted peer")
        << R"({ "peer": {"kind":"ipv4","address":"203.0.113.7"}, "forwarded_for": "spoof_random" })"
        << 1 << 1;
}

void TestScenarioRunner::identityBehaviours() {
    QFETCH(QString, identity);
    QFETCH(int, count);
    QFETCH(int, buckets);
    const std::string json =
        R"({ "name": "t", "duration_s": 1, "actors": [ { "name": "a", "count": )" +
        std::to_string(count) + R"(, "arrival": {"kind":"constant","rate_per_s":)" +
        std::to_string(200 / count) + R"(}, "identity": )" + identity.toStdString() + " } ] }";
    ScenarioRunner runner(scenarioFrom(json), policySet({tokenBucket("api", 1000, 1.0)}));
    runner.runToEnd();
    QCOMPARE(runner.totals().requests, std::int64_t(200));
    QCOMPARE(runner.totals().maxBuckets, std::int64_t(buckets));
}

// Through a trusted proxy the engine keys on the forwarded client; from anywhere else the
// header is ignored. A client that spoofs a hop in front of the proxy gains nothing: the
// walk stops at the proxy's own entry.
void TestScenarioRunner::forwardedThroughATrustedProxy_data() {
    QTest::addColumn<QString>("forwarded");
    QTest::addColumn<int>("buckets");
    QTest::newRow("via proxy") << "via_proxy" << 20;
    QTest::newRow("spoof via proxy") << "spoof_via_proxy" << 20;
}

void TestScenarioRunner::forwardedThroughATrustedProxy() {
    QFETCH(QString, forwarded);
    QFETCH(int, buckets);
    PolicySet set = policySet({tokenBucket("api", 1000, 1.0)});
    set.trustedProxies.cidrs.push_back(*Cidr::parse("10.0.0.0/8"));
    const std::string json =
        R"({ "name": "t", "duration_s": 1, "actors": [ { "name": "a", "count": 20,
        "arrival": {"kind":"constant","rate_per_s":10},
        "identity": { "peer": {"kind":"ipv4_pool","cidr":"198.51.100.0/24"},
                      "forwarded_for": ")" +
        forwarded.toStdString() + R"(", "proxy": "10.0.0.5" } } ] })";
    ScenarioRunner runner(scenarioFrom(json), set);
    runner.runToEnd();
    QCOMPARE(runner.totals().maxBuckets, std::int64_t(buckets));
    QCOMPARE(runner.totals().classes[0].refused, std::int64_t(0));
}

// "{instance}" in a header or attribute gives each instance its own value: 20 accounts behind
// one NAT address are 20 composite keys; without the template they are one.
void TestScenarioRunner::instanceTemplates_data() {
    QTest::addColumn<QString>("field");
    QTest::addColumn<int>("kind");  // KeyPart::Kind
    QTest::addColumn<int>("buckets");
    QTest::newRow("header")
        << R"("request": { "headers": { "x-account": "user{instance}@example.com" } })"
        << int(KeyPart::Kind::Header) << 20;
    QTest::newRow("attribute") << R"("identity": { "peer": {"kind":"nat","address":"192.0.2.1"},
                                       "attributes": { "x-account": "u{instance}" } })"
                               << int(KeyPart::Kind::Attribute) << 20;
    QTest::newRow("fixed header") << R"("request": { "headers": { "x-account": "victim" } })"
                                  << int(KeyPart::Kind::Header) << 1;
}

void TestScenarioRunner::instanceTemplates() {
    QFETCH(QString, field);
    QFETCH(int, kind);
    QFETCH(int, buckets);
    Policy p = tokenBucket("login", 1000, 1.0);
    p.key.source = KeySource::Composite;
    p.key.parts = {KeyPart{KeyPart::Kind::Route, ""},
                   KeyPart{static_cast<KeyPart::Kind>(kind), "x-account"}};
    p.budget.enabled = false;
    std::string json = R"({ "name": "t", "duration_s": 1, "actors": [ { "name": "a", "count": 20,
        "arrival": {"kind":"constant","rate_per_s":5}, )" +
                       field.toStdString();
    if (!field.contains("identity"))
        json += R"(, "identity": { "peer": {"kind":"nat","address":"192.0.2.1"} })";
    json += " } ] }";
    ScenarioRunner runner(scenarioFrom(json), policySet({p}));
    runner.runToEnd();
    QCOMPARE(runner.totals().requests, std::int64_t(100));
    QCOMPARE(runner.totals().classes[0].refused, std::int64_t(0));
    QCOMPARE(runner.totals().maxBuckets, std::int64_t(buckets));
}

// A burst with phase_s fires every instance at start + phase, then every every_s.
void TestScenarioRunner::burstPhase() {
    Collected sink;
    RunnerOptions options;
    options.decisions = &sink;
    ScenarioRunner runner(
        scenarioFrom(
            oneActor(R"({"kind":"burst","size":3,"every_s":5,"spacing_ms":100,"phase_s":2})", 10)),
        policySet({tokenBucket("api", 10, 1.0)}), options);
    runner.runToEnd();
    std::vector<Nanos> times;
    for (const DecisionRecord& d : sink.all)
        times.push_back(d.at);
    const Nanos ms = kNanosPerMilli;
    QCOMPARE(times, (std::vector<Nanos>{2000 * ms, 2100 * ms, 2200 * ms, 7000 * ms, 7100 * ms,
                                        7200 * ms}));
}

// The runner keeps the scenario as it was given; what the run goes by instead is duration()
// and sampleInterval(). 40 s in samples of 1 s, at most 8 of them: the interval doubles at 8 s,
// 16 s and 32 s, so the run ends on 8 s samples (four of them, then 32-40 s).
void TestScenarioRunner::scenarioStaysAsGiven() {
    Scenario given = scenarioFrom(oneActor(R"({"kind":"constant","rate_per_s":10})", 40));
    given.maxSamples = 8;
    ScenarioRunner runner(given, policySet({tokenBucket("api", 5, 1.0)}));
    runner.runToEnd();
    QCOMPARE(runner.sampleInterval(), 8 * kSecond);
    QCOMPARE(runner.samples().size(), std::size_t(5));
    QCOMPARE(runner.duration(), 40 * kSecond);
    const Scenario& kept = runner.scenario();
    QCOMPARE(kept.sampleInterval, kSecond);
    QCOMPARE(kept.duration, 40 * kSecond);
    QCOMPARE(kept.maxSamples, std::int64_t(8));
    QCOMPARE(kept.endsWithTraffic, false);
    QCOMPARE(QString::fromStdString(scenarioJson(kept)),
             QString::fromStdString(scenarioJson(given)));
}

QTEST_APPLESS_MAIN(TestScenarioRunner)
#include "tst_scenario_runner.moc"

void TestScenarioRunner::engineTimePerDecision_data() {
    QTest::addColumn<int>("batchSize");
    QTest::newRow("one by one") << 1;
    QTest::newRow("batches of 16") << 16;
}

// The chart's figure is what the engine's calls took per decision (here the store's 150 ns a
// consumption, on a manual clock), never the runner's own work around them (the sink's 1 us).
void TestScenarioRunner::engineTimePerDecision() {
    QFETCH(int, batchSize);
    Nanos clock = 0;
    SlowSink sink;
    sink.clock = &clock;
    RunnerOptions options;
    options.store = std::make_shared<TimedStore>(&clock, 150);
    options.engineClock = [&clock] { return clock; };
    options.decisions = &sink;
    options.batchSize = static_cast<std::size_t>(batchSize);
    ScenarioRunner runner(scenarioFrom(oneActor(R"({"kind":"constant","rate_per_s":10})", 4)),
                          policySet({tokenBucket("api", 5, 1.0)}), options);
    runner.runToEnd();
    QCOMPARE(runner.totals().requests, std::int64_t(40));
    QCOMPARE(runner.samples().size(), std::size_t(4));
    for (const Sample& s : runner.samples())
        QCOMPARE(s.engineNanosPerDecision, 150.0);
    QCOMPARE(clock, Nanos(40 * 150 + 40 * 1000));
}
