// Scenario files (app/sim/scenario/scenario_file.cpp): every field read into the model, and every kind
// of mistake reported at its FILE:LINE:COLUMN with what is wrong.

#include <QtTest>

#include "fixtures/file_errors_fixture.h"
#include "sim/scenario/scenario.h"
#include "fixtures/sim_fixture.h"

using namespace ratelab;
using namespace ratelab::sim;
using namespace ratelab::simtest;

namespace {

constexpr const char* kFull = R"({
  "name": "full",
  "title": "Every field",
  "description": "A scenario that sets everything.",
  "seed": 18446744073709551615,
  "duration_s": 12.5,
  "sample_ms": 250,
  "replicas": 3,
  "shared_store": false,
  "max_buckets": 5000,
  "policy": "policies/p.json",
  "actors": [
    { "name": "users", "class": "legit", "count": 40,
      "arrival": { "kind": "burst", "size": 6, "every_s": 10, "spacing_ms": 20 },
      "request": { "method": "post", "path": "/login", "headers": { "x-account": "alice" }, "cost": 2 },
      "identity": { "peer": { "kind": "ipv4_pool", "cidr": "198.51.100.0/24" },
                    "authorization": "fixed", "principal": "fixed",
                    "attributes": { "plan": "premium" } },
      "response": { "success_rate": 0.95, "failure_status": 403 },
      "start_s": 1, "stop_s": 11 },
    { "name": "proxied", "class": "attacker",
      "response": { "statuses": { "401": 0.75, "200": 0.2, "422": 0.05 } },
      "arrival": { "kind": "ramp", "from_per_s": 1, "to_per_s": 50, "over_s": 5 },
      "identity": { "peer": { "kind": "ipv6_prefix_rotate", "cidr": "2001:db8::/48", "prefix_len": 56 },
                    "forwarded_for": "via_proxy", "proxy": "10.0.0.5", "forwarded_header": "Forwarded" } }
  ],
  "events": [
    { "kind": "store_outage", "failure": "timeout", "from_s": 2, "to_s": 3, "replica": 1 },
    { "kind": "store_latency", "latency_ms": 750, "from_s": 4, "to_s": 5 },
    { "kind": "policy_change", "at_s": 6, "policy": "api", "set": { "capacity": 7, "mode": "shadow" } }
  ],
  "expect": [ { "metric": "attacker.allowed_per_s", "max": 2 },
              { "metric": "legit.throttled_fraction", "min": 0, "max": 0.01 } ]
})";

}  // namespace

class TestScenarioFile : public QObject {
    Q_OBJECT

private slots:
    void readsEveryField();
    void reportsMistakesWhereTheyAre_data();
    void reportsMistakesWhereTheyAre();
    void reportsEveryProblemAtOnce();
    void unreadableFile();
    void missingPolicyPointsAtTheScenario();
    void policyChangeNamesAnExistingPolicy();
};

void TestScenarioFile::readsEveryField() {
    Scenario s = scenarioFrom(kFull, "/x/scenarios/full.json");
    QCOMPARE(s.name, std::string("full"));
    QCOMPARE(s.title, std::string("Every field"));
    QCOMPARE(s.seed, std::uint64_t(18446744073709551615ULL));
    QCOMPARE(s.duration, Nanos(12'500'000'000));
    QCOMPARE(s.sampleInterval, Nanos(250'000'000));
    QCOMPARE(s.replicas, 3);
    QCOMPARE(s.sharedStore, false);
    QCOMPARE(s.maxBuckets, std::int64_t(5000));
    QCOMPARE(s.policyPath, std::string("/x/scenarios/policies/p.json"));
    QCOMPARE(s.actors.size(), std::size_t(2));
    const Actor& users = s.actors[0];
    QCOMPARE(users.count, std::int64_t(40));
    QCOMPARE(users.arrival.kind, Arrival::Kind::Burst);
    QCOMPARE(users.arrival.burstSize, std::int64_t(6));
    QCOMPARE(users.arrival.burstEvery, 10 * kNanosPerSecond);
    QCOMPARE(users.arrival.burstSpacing, 20 * kNanosPerMilli);
    QCOMPARE(users.method, std::string("POST"));
    QCOMPARE(users.path, std::string("/login"));
    QCOMPARE(users.headers.size(), std::size_t(1));
    QCOMPARE(users.cost, std::int64_t(2));
    QCOMPARE(users.identity.peer.kind, PeerSpec::Kind::Ipv4Pool);
    QCOMPARE(users.identity.peer.cidr.toString(), std::string("198.51.100.0/24"));
    QCOMPARE(users.identity.authorization, AuthorizationMode::Fixed);
    QCOMPARE(users.identity.principal, PrincipalMode::Fixed);
    QCOMPARE(users.identity.attributes.at(0).second, std::string("premium"));
    QCOMPARE(users.start, kNanosPerSecond);
    QCOMPARE(*users.stop, 11 * kNanosPerSecond);
    QCOMPARE(users.response.kind, ResponseModel::Kind::SuccessRate);
    QCOMPARE(users.response.successRate, 0.95);
    QCOMPARE(users.response.failureStatus, 403);
    QCOMPARE(users.response.status(0.9499), 200);
    QCOMPARE(users.response.status(0.95), 403);
    const Actor& proxied = s.actors[1];
    QCOMPARE(proxied.className, std::string("attacker"));
    QCOMPARE(proxied.arrival.kind, Arrival::Kind::Ramp);
    QCOMPARE(proxied.arrival.rampOver, 5 * kNanosPerSecond);
    QCOMPARE(proxied.identity.peer.prefixLength, 56);
    QCOMPARE(proxied.identity.forwarded.kind, ForwardedSpec::Kind::ViaProxy);
    QCOMPARE(proxied.identity.forwarded.proxy.toString(), std::string("10.0.0.5"));
    QCOMPARE(proxied.identity.forwarded.header, std::string("forwarded"));
    QCOMPARE(proxied.response.kind, ResponseModel::Kind::Statuses);
    QCOMPARE(proxied.response.statuses,
             (std::vector<std::pair<int, double>>{{401, 0.75}, {200, 0.2}, {422, 0.05}}));
    // In file order over [0, 1): 401 below 0.75, 200 below 0.95, 422 above.
    QCOMPARE(proxied.response.status(0.0), 401);
    QCOMPARE(proxied.response.status(0.7499), 401);
    QCOMPARE(proxied.response.status(0.75), 200);
    QCOMPARE(proxied.response.status(0.9499), 200);
    QCOMPARE(proxied.response.status(0.96), 422);
    QCOMPARE(s.actors[1].response.status(0.999999), 422);
    QCOMPARE(s.events.size(), std::size_t(3));
    QCOMPARE(s.events[0].failure, StoreFailure::Timeout);
    QCOMPARE(s.events[0].replica, 1);
    QCOMPARE(s.events[1].latency, 750 * kNanosPerMilli);
    QCOMPARE(*s.events[2].change.capacity, std::int64_t(7));
    QCOMPARE(*s.events[2].change.mode, PolicyMode::Shadow);
    QCOMPARE(s.expectations.size(), std::size_t(2));
    QCOMPARE(*s.expectations[1].max, 0.01);
    QCOMPARE(s.classNames(), (std::vector<std::string>{"legit", "attacker"}));
}

void TestScenarioFile::reportsMistakesWhereTheyAre_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("message");
    const QString actor = R"({ "name": "a", "arrival": {"kind":"constant","rate_per_s":1} })";
    auto scenario = [&](const QString& rest) {
        return QString("{ \"name\": \"s\", \"duration_s\": 10,\n  \"actors\": [%1]%2 }")
            .arg(actor, rest);
    };
    QTest::newRow("syntax") << "{ \"name\": \"s\",\n  \"duration_s\": 10,, }"
                            << "bad.json:2:20:"
                            << "";
    QTest::newRow("unknown key with suggestion")
        << "{ \"name\": \"s\", \"duration_s\": 10,\n  \"acters\": [] }"
        << "bad.json:2:3:"
        << "unknown key \"acters\"; did you mean \"actors\"?";
    QTest::newRow("missing duration") << "{ \"name\": \"s\", \"actors\": [" + actor + "] }"
                                      << "bad.json:1:1:"
                                      << "missing required key \"duration_s\"";
    QTest::newRow("duration type")
        << "{ \"name\": \"s\",\n \"duration_s\": \"60\", \"actors\": [" + actor + "] }"
        << "bad.json:2:16:"
        << "expected a number, found a string";
    QTest::newRow("negative duration")
        << "{ \"name\": \"s\", \"duration_s\": -1, \"actors\": [" + actor + "] }"
        << "bad.json:1:30:"
        << "duration_s must be above 0";
    QTest::newRow("too many samples")
        << "{ \"name\": \"s\", \"duration_s\": 100000, \"sample_ms\": 1, \"actors\": [" + actor +
               "] }"
        << "bad.json:1:51:"
        << "more than 1000000 samples";
    QTest::newRow("unknown arrival kind")
        << "{ \"name\": \"s\", \"duration_s\": 10, \"actors\": [\n  { \"name\": \"a\", "
           "\"arrival\": {\"kind\":\"steady\"} } ] }"
        << "bad.json:2:37:"
        << "\"steady\" is not one of \"constant\", \"poisson\", \"burst\", \"ramp\"";
    QTest::newRow("rate on a burst")
        << "{ \"name\": \"s\", \"duration_s\": 10, \"actors\": [\n  { \"name\": \"a\", "
           "\"arrival\": {\"kind\":\"burst\",\"size\":6,\"every_s\":5,\"rate_per_s\":3} } ] }"
        << "bad.json:2:79:"
        << "rate_per_s does not apply to arrival kind \"burst\"";
    QTest::newRow("zero rate")
        << "{ \"name\": \"s\", \"duration_s\": 10, \"actors\": [\n  { \"name\": \"a\", "
           "\"arrival\": {\"kind\":\"poisson\",\"rate_per_s\":0} } ] }"
        << "bad.json:2:60:"
        << "rate_per_s must be above 0";
    QTest::newRow("bad cidr")
        << "{ \"name\": \"s\", \"duration_s\": 10, \"actors\": [\n  { \"name\": \"a\", \"count\": "
           "3, "
           "\"arrival\": {\"kind\":\"constant\",\"rate_per_s\":1}, \"identity\": { \"peer\": "
           "{\"kind\":\"ipv4_pool\",\"cidr\":\"198.51.100.7/24\"} } } ] }"
        << "bad.json:2:126:"
        << "no host bits set";
    QTest::newRow("pool smaller than the crowd")
        << "{ \"name\": \"s\", \"duration_s\": 10, \"actors\": [\n  { \"name\": \"a\", \"count\": "
           "300, "
           "\"arrival\": {\"kind\":\"constant\",\"rate_per_s\":1}, \"identity\": { \"peer\": "
           "{\"kind\":\"ipv4_pool\",\"cidr\":\"198.51.100.0/24\"} } } ] }"
        << "bad.json:2:128:"
        << "the pool holds 256 addresses, fewer than the actor's 300";
    // 2,000,000 a second for 10,000 s: 2e10 requests, beyond the 1e10 a run may send.
    QTest::newRow("astronomical volume")
        << "{ \"name\": \"s\", \"duration_s\": 10000, \"actors\": [\n  { \"name\": \"a\", "
           "\"count\": 1000, \"arrival\": {\"kind\":\"constant\",\"rate_per_s\":2000} } ] }"
        << "bad.json:1:47:"
        << "would send about 2e+10 requests; a scenario may send at most 1e+10";
    QTest::newRow("ipv6 address for nat")
        << "{ \"name\": \"s\", \"duration_s\": 10, \"actors\": [\n  { \"name\": \"a\", "
           "\"arrival\": {\"kind\":\"constant\",\"rate_per_s\":1}, \"identity\": { \"peer\": "
           "{\"kind\":\"nat\",\"address\":\"2001:db8::1\"} } } ] }"
        << "bad.json:2:111:"
        << "peer kind \"nat\" needs an IPv4 address";
    QTest::newRow("ipv6 network for ipv4_rotate")
        << "{ \"name\": \"s\", \"duration_s\": 10, \"actors\": [\n  { \"name\": \"a\", "
           "\"arrival\": {\"kind\":\"constant\",\"rate_per_s\":1}, \"identity\": { \"peer\": "
           "{\"kind\":\"ipv4_rotate\",\"cidr\":\"2001:db8::/32\"} } } ] }"
        << "bad.json:2:116:"
        << "ipv4_rotate needs an IPv4 network";
    QTest::newRow("proxy without via_proxy")
        << "{ \"name\": \"s\", \"duration_s\": 10, \"actors\": [\n  { \"name\": \"a\", "
           "\"arrival\": {\"kind\":\"constant\",\"rate_per_s\":1}, \"identity\": { \"proxy\": "
           "\"10.0.0.1\" } } ] }"
        << "bad.json:2:88:"
        << "proxy applies only with forwarded_for";
    QTest::newRow("duplicate actor") << "{ \"name\": \"s\", \"duration_s\": 10, \"actors\": [\n  " +
                                            actor + ",\n  " + actor + " ] }"
                                     << "bad.json:3:13:"
                                     << "another actor is named \"a\"";
    QTest::newRow("unknown metric")
        << scenario(", \"expect\": [\n  { \"metric\": \"attacker.allowed_per_s\", \"max\": 1 } ]")
        << "bad.json:3:15:"
        << "unknown metric \"attacker.allowed_per_s\"";
    QTest::newRow("metric typo")
        << scenario(", \"expect\": [\n  { \"metric\": \"legit.throttled_fration\", \"max\": 1 } ]")
        << "bad.json:3:15:"
        << "did you mean \"legit.throttled_fraction\"?";
    QTest::newRow("expectation without bounds")
        << scenario(", \"expect\": [\n  { \"metric\": \"legit.allowed\" } ]") << "bad.json:3:3:"
        << "an expectation needs min or max";
    QTest::newRow("outage ends before it starts")
        << scenario(
               ", \"events\": [\n  { \"kind\": \"store_outage\", \"failure\": \"transport\", "
               "\"from_s\": 5, \"to_s\": 2 } ]")
        << "bad.json:3:74:"
        << "to_s must be after from_s";
    QTest::newRow("unknown failure")
        << scenario(
               ", \"events\": [\n  { \"kind\": \"store_outage\", \"failure\": \"oom\", "
               "\"from_s\": 1, \"to_s\": 2 } ]")
        << "bad.json:3:40:"
        << "\"oom\" is not one of \"transport\", \"timeout\", \"refusal\"";
    QTest::newRow("replica out of range")
        << scenario(
               ", \"events\": [\n  { \"kind\": \"store_latency\", \"latency_ms\": 5, "
               "\"from_s\": 1, \"to_s\": 2, \"replica\": 2 } ]")
        << "bad.json:3:82:"
        << "replica 2 does not exist: the scenario has 1";
    // A response model on line 3, its value from column 17.
    auto responding = [](const QString& response) {
        return "{ \"name\": \"s\", \"duration_s\": 10, \"actors\": [\n  { \"name\": \"a\", "
               "\"arrival\": {\"kind\":\"constant\",\"rate_per_s\":1},\n    \"response\": " +
               response + " } ] }";
    };
    QTest::newRow("success rate above one")
        << responding(R"({"success_rate": 1.5})") << "bad.json:3:34:"
        << "success_rate must be at least 0 and at most 1, found 1.5";
    QTest::newRow("response without a model") << responding("{}") << "bad.json:3:17:"
                                              << "a response needs success_rate or statuses";
    QTest::newRow("failure status 200")
        << responding(R"({"success_rate": 0.9, "failure_status": 200})") << "bad.json:3:57:"
        << "failure_status must differ from 200";
    QTest::newRow("status not a number")
        << responding(R"({"statuses": {"200": 0.5, "2xx": 0.5}})") << "bad.json:3:43:"
        << "\"2xx\" is not an HTTP status (100 to 599)";
    QTest::newRow("probabilities short of one")
        << responding(R"({"statuses": {"200": 0.9, "401": 0.05}})") << "bad.json:3:30:"
        << "the probabilities add up to 0.95, not 1";
    QTest::newRow("policy_change with from_s")
        << scenario(
               ", \"events\": [\n  { \"kind\": \"policy_change\", \"from_s\": 1, \"set\": "
               "{\"capacity\": 2} } ]")
        << "bad.json:3:40:"
        << "from_s does not apply to a policy_change event";
    QTest::newRow("policy_change sets an unknown field")
        << scenario(
               ", \"events\": [\n  { \"kind\": \"policy_change\", \"at_s\": 1, \"set\": "
               "{\"capacty\": 2} } ]")
        << "bad.json:3:49:"
        << "unknown key \"capacty\"; did you mean \"capacity\"?";
}

void TestScenarioFile::reportsMistakesWhereTheyAre() {
    QFETCH(QString, text);
    QFETCH(QString, where);
    QFETCH(QString, message);
    ScenarioLoadResult r = parseScenarioText(text.toStdString(), "bad.json");
    QVERIFY(!r.ok());
    QVERIFY(!r.diagnostics.empty());
    const std::string first = formatDiagnostic(r.diagnostics.front());
    QVERIFY2(first.starts_with(where.toStdString()), first.c_str());
    QVERIFY2(first.find(message.toStdString()) != std::string::npos, first.c_str());
    QVERIFY2(first.find(": error: ") != std::string::npos, first.c_str());
}

// One pass finds every problem, each at its own place.
void TestScenarioFile::reportsEveryProblemAtOnce() {
    const char* text = R"({ "name": "s", "duration_s": 0, "sample_ms": 1.5,
  "actors": [ { "name": "a", "count": 0, "arrival": { "kind": "constant" } } ],
  "expect": [ { "metric": "nobody.allowed", "max": 1 } ] })";
    ScenarioLoadResult r = parseScenarioText(text, "many.json");
    QVERIFY(!r.ok());
    std::vector<std::string> lines;
    for (const Diagnostic& d : r.diagnostics)
        lines.push_back(formatDiagnostic(d));
    auto has = [&](const std::string& prefix) {
        return std::any_of(lines.begin(), lines.end(),
                           [&](const std::string& l) { return l.starts_with(prefix); });
    };
    QVERIFY(has("many.json:1:30: error: duration_s must be above 0"));
    QVERIFY(has("many.json:1:46: error: sample_ms must be a whole number"));
    QVERIFY(has("many.json:2:39: error: count must be between 1 and 1000000"));
    QVERIFY(has("many.json:2:53: error: missing required key \"rate_per_s\""));
    QVERIFY(has("many.json:3:27: error: unknown metric \"nobody.allowed\""));
    QCOMPARE(lines.size(), std::size_t(5));
}

// An unreadable file says why, in the system's words; a directory says it is one.
void TestScenarioFile::unreadableFile() {
    testing::checkUnreadableFilesSayWhy([](const std::string& p) { return loadScenarioFile(p); },
                                        "/nonexistent/scenario.json",
                                        RATELAB_SOURCE_DIR "/scenarios");
    if (QTest::currentTestFailed()) return;
    QVERIFY(!loadScenarioFile("/nonexistent/scenario.json").ok());
}

// A policy file the scenario names but that cannot be read is reported at the scenario's line
// that names it, not as a file nobody mentioned.
void TestScenarioFile::missingPolicyPointsAtTheScenario() {
    Scenario s = scenarioFrom(R"({ "name": "s", "duration_s": 10,
  "policy": "policies/gone.json",
  "actors": [ { "name": "a", "arrival": {"kind":"constant","rate_per_s":1} } ] })",
                              "/tmp/ratelab-nowhere/s.json");
    PolicyLoadResult loaded = loadScenarioPolicy(s);
    QVERIFY(!loaded.ok());
    QVERIFY(loaded.unreadable);
    QCOMPARE(loaded.diagnostics.size(), std::size_t(1));
    QCOMPARE(formatDiagnostic(loaded.diagnostics[0]),
             std::string("/tmp/ratelab-nowhere/s.json:2:13: error: policy file "
                         "\"policies/gone.json\" (/tmp/ratelab-nowhere/policies/gone.json): cannot "
                         "open the file: No such file or directory (at /policy)"));
}

void TestScenarioFile::policyChangeNamesAnExistingPolicy() {
    Scenario s = scenarioFrom(R"({ "name": "s", "duration_s": 10,
  "actors": [ { "name": "a", "arrival": {"kind":"constant","rate_per_s":1} } ],
  "events": [
    { "kind": "policy_change", "at_s": 1, "policy": "login", "set": { "capacity": 2 } },
    { "kind": "policy_change", "at_s": 1, "policy": "api", "set": { "window_ms": 2000 } } ] })",
                              "change.json");
    std::vector<Diagnostic> d =
        checkScenarioAgainstPolicy(s, policySet({tokenBucket("api", 5, 1.0)}));
    QCOMPARE(d.size(), std::size_t(2));
    QCOMPARE(formatDiagnostic(d[0]),
             std::string("change.json:4:5: error: policy_change names policy \"login\", which the "
                         "policy file does not define"));
    QVERIFY(
        formatDiagnostic(d[1]).starts_with("change.json:5:5: error: policy_change sets "
                                           "window_ms on \"api\", which uses token_bucket"));
}

QTEST_APPLESS_MAIN(TestScenarioFile)
#include "tst_scenario_file.moc"
