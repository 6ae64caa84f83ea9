// The simulator on a real Redis (a throwaway redis-server on a unix socket) in caller-time mode:
// Redis decides on the virtual clock exactly as the memory store does, injected faults still
// apply, a killed server fails open, and ratelab-cli run --store redis:// gives the same report.

#include <QtTest>

#include <QTemporaryDir>
#include <nlohmann/json.hpp>

#include "fixtures/cli_fixture.h"
#include "ratelab/redis_store.h"
#include "fixtures/redis_fixture.h"
#include "sim/run/scenario_runner.h"
#include "fixtures/sim_fixture.h"

using namespace ratelab;
using namespace ratelab::sim;
using namespace ratelab::simtest;

namespace {

constexpr Nanos kSecond = kNanosPerSecond;

// Browsers with tokens, a rotator, an IPv6 rotator and a NAT crowd: budgets, fallbacks and
// several key kinds, 20 s of virtual time.
constexpr const char* kMix = R"({ "name": "mix", "seed": 3, "duration_s": 20, "actors": [
  { "name": "browsers", "count": 30, "arrival": {"kind":"poisson","rate_per_s":2},
    "identity": { "peer": {"kind":"ipv4_pool","cidr":"198.51.100.0/24"}, "authorization": "fixed" } },
  { "name": "rotator", "class": "attacker", "arrival": {"kind":"constant","rate_per_s":60},
    "identity": { "peer": {"kind":"ipv4","address":"203.0.113.7"}, "authorization": "rotate" } },
  { "name": "v6", "class": "attacker", "arrival": {"kind":"constant","rate_per_s":40},
    "identity": { "peer": {"kind":"ipv6_rotate","prefix":"2001:db8:1:2::/64"} } },
  { "name": "office", "count": 50, "arrival": {"kind":"poisson","rate_per_s":0.5},
    "identity": { "peer": {"kind":"nat","address":"192.0.2.44"} } } ] })";

PolicySet mixPolicy() {
    Policy p = tokenBucket("api", 10, 2.0);
    p.budget.perPeer = 16;
    return policySet({p});
}

}  // namespace

class TestSimRedis : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void sameDecisionsAsTheMemoryStore();
    void pipelinedEqualsInOrder_data();
    void pipelinedEqualsInOrder();
    void injectedFaultsStillApply();
    void aKilledServerFailsOpen();
    void cliRunsOnRedis();

private:
    std::shared_ptr<Store> redisStore(const std::string& keyNamespace);
    testing::RedisServer server_;
};

void TestSimRedis::initTestCase() {
    std::string error;
    QVERIFY2(server_.start(&error), error.c_str());
}

std::shared_ptr<Store> TestSimRedis::redisStore(const std::string& keyNamespace) {
    RedisStoreOptions options;
    options.urls = {server_.url()};
    options.timeSource = RedisTimeSource::Caller;
    options.keyNamespace = keyNamespace;
    std::string error;
    std::unique_ptr<Store> store = makeRedisStore(options, &error);
    if (!store) qFatal("%s", error.c_str());
    return store;
}

// Sample by sample, class by class, Redis on the virtual clock decides as memory does.
void TestSimRedis::sameDecisionsAsTheMemoryStore() {
    ScenarioRunner memory(scenarioFrom(kMix), mixPolicy());
    memory.runToEnd();
    RunnerOptions options;
    options.store = redisStore("sim-equivalence");
    ScenarioRunner redis(scenarioFrom(kMix), mixPolicy(), options);
    redis.runToEnd();
    QCOMPARE(redis.totals().requests, memory.totals().requests);
    QVERIFY(memory.totals().requests > 3000);
    QCOMPARE(redis.samples().size(), memory.samples().size());
    for (std::size_t i = 0; i < memory.samples().size(); ++i) {
        QCOMPARE(redis.samples()[i].classes, memory.samples()[i].classes);
    }
    QCOMPARE(redis.totals().storeErrors, std::int64_t(0));
    // The budget was at work: the rotator was throttled, the browsers were not.
    const ClassCounters attacker = redis.totals().classes[1];
    QVERIFY(attacker.throttled > attacker.allowed);
    QVERIFY(redis.samples().back().keyspace.buckets > 0);
}

void TestSimRedis::pipelinedEqualsInOrder_data() {
    QTest::addColumn<bool>("chained");
    QTest::newRow("one policy, budgets") << false;
    QTest::newRow("two policies: a request waits for its first answer") << true;
}

// Batches go to Redis as pipelines (256 scripts a round trip); deciding one request per round
// trip gives the same decisions, field for field, and the same log. Keyspace figures are left
// out: Redis counts the keys of both runs' namespaces, and expires them on its own clock.
void TestSimRedis::pipelinedEqualsInOrder() {
    QFETCH(bool, chained);
    PolicySet policies = mixPolicy();
    if (chained) {
        Policy address = tokenBucket("address", 30, 5.0);
        address.key.source = KeySource::Peer;
        address.algorithm = Algorithm::Gcra;
        policies = policySet({policies.policies[0], address});
    }
    struct Run {
        std::vector<std::string> decisions;
        std::vector<std::string> log;
        std::vector<std::vector<ClassCounters>> samples;
        RunTotals totals;
    };
    class Sink final : public DecisionSink {
    public:
        explicit Sink(std::vector<std::string>& out) : out_(out) {}
        void onDecision(const DecisionRecord& d) override {
            out_.push_back(std::to_string(d.seq) + " " + std::to_string(d.at) + " " +
                           std::to_string(d.allowed) + " " + std::to_string(d.status) + " " +
                           std::to_string(d.remaining) + " " + std::to_string(d.retryAfter) + " " +
                           std::to_string(d.actor) + " " + std::to_string(d.replica) + " " +
                           std::string(d.key));
        }

    private:
        std::vector<std::string>& out_;
    };
    auto run = [&](std::size_t batchSize, const std::string& ns) {
        Run r;
        Sink sink(r.decisions);
        RunnerOptions options;
        options.store = redisStore(ns);
        options.batchSize = batchSize;
        options.decisions = &sink;
        options.logCapacity = 100'000;
        ScenarioRunner runner(scenarioFrom(kMix), policies, options);
        runner.runToEnd();
        for (const LogEntry& e : runner.takeLog()) {
            r.log.push_back(std::to_string(e.at) + " " + e.actor + " " + e.policy + " " +
                            std::string(policyOutcomeName(e.outcome)) + " " + e.keyHash + " " +
                            std::to_string(e.retryAfter) + " " + e.error);
        }
        for (const Sample& s : runner.samples())
            r.samples.push_back(s.classes);
        r.totals = runner.totals();
        return r;
    };
    const std::string tag = chained ? "chained" : "single";
    const Run inOrder = run(1, "sim-in-order-" + tag);
    const Run pipelined = run(0, "sim-pipelined-" + tag);
    QVERIFY(inOrder.decisions.size() > 3000);
    QCOMPARE(pipelined.decisions.size(), inOrder.decisions.size());
    for (std::size_t i = 0; i < inOrder.decisions.size(); ++i)
        QCOMPARE(pipelined.decisions[i], inOrder.decisions[i]);
    QVERIFY(inOrder.log.size() > 1000);
    QCOMPARE(pipelined.log, inOrder.log);
    QCOMPARE(pipelined.samples, inOrder.samples);
    QCOMPARE(pipelined.totals.classes, inOrder.totals.classes);
    QCOMPARE(pipelined.totals.peakAllowed, inOrder.totals.peakAllowed);
    QCOMPARE(pipelined.totals.storeErrors, std::int64_t(0));
}

// The fault decorator sits in front of Redis as in front of memory.
void TestSimRedis::injectedFaultsStillApply() {
    const std::string json = R"({ "name": "t", "duration_s": 4, "actors": [ { "name": "a",
        "arrival": {"kind":"constant","rate_per_s":10},
        "identity": { "peer": {"kind":"ipv4","address":"198.51.100.9"} } } ],
        "events": [ { "kind": "store_outage", "failure": "refusal", "from_s": 1, "to_s": 2 } ] })";
    RunnerOptions options;
    options.store = redisStore("sim-faults");
    ScenarioRunner runner(scenarioFrom(json), policySet({tokenBucket("api", 100, 1.0)}), options);
    runner.runToEnd();
    const ClassCounters c = runner.totals().classes[0];
    QCOMPARE(c.offered, std::int64_t(40));
    QCOMPARE(c.failedClosed, std::int64_t(10));
    QCOMPARE(c.allowed, std::int64_t(30));
    QCOMPARE(runner.totals().storeErrors, std::int64_t(10));
}

// A real fault: the server is killed half-way. The rest of the run fails open (transport errors
// under fail_open_on_transport), and nothing is refused for it.
void TestSimRedis::aKilledServerFailsOpen() {
    testing::RedisServer doomed;
    std::string error;
    QVERIFY2(doomed.start(&error), error.c_str());
    RedisStoreOptions options;
    options.urls = {doomed.url()};
    options.timeSource = RedisTimeSource::Caller;
    options.timeout = 100 * kNanosPerMilli;
    std::shared_ptr<Store> store = makeRedisStore(options, &error);
    QVERIFY(store);
    RunnerOptions runnerOptions;
    runnerOptions.store = store;
    const std::string json = R"({ "name": "t", "duration_s": 4, "actors": [ { "name": "a",
        "arrival": {"kind":"constant","rate_per_s":10},
        "identity": { "peer": {"kind":"ipv4","address":"198.51.100.9"} } } ] })";
    ScenarioRunner runner(scenarioFrom(json), policySet({tokenBucket("api", 1, 0.001)}),
                          runnerOptions);
    runner.advance(2 * kSecond);
    QCOMPARE(runner.totals().classes[0].allowed, std::int64_t(1));
    QCOMPARE(runner.totals().classes[0].throttled, std::int64_t(19));
    doomed.kill();
    runner.runToEnd();
    const ClassCounters c = runner.totals().classes[0];
    QCOMPARE(c.offered, std::int64_t(40));
    QCOMPARE(c.failedOpen, std::int64_t(20));
    QCOMPARE(c.allowed, std::int64_t(21));
    QCOMPARE(c.failedClosed, std::int64_t(0));
    QCOMPARE(runner.totals().storeErrors, std::int64_t(20));
}

// ratelab-cli run --store redis://... decides what the memory store decides, and counts its
// keyspace alike (Store::keyspaceAt, on the run's clock): header-rotation's expectations,
// its keyspace one included, hold on both stores with the same figures, bytes aside.
void TestSimRedis::cliRunsOnRedis() {
    const QString scenario = QString(RATELAB_SOURCE_DIR) + "/scenarios/header-rotation.json";
    QTemporaryDir dir;
    auto run = [&](const QStringList& extra, const QString& out) {
        return testing::runCli(QStringList{"run", scenario, "--json", out, "--quiet"} + extra)
            .exitCode;
    };
    QCOMPARE(run({}, dir.filePath("memory.json")), 0);
    QCOMPARE(run({"--store", QString::fromStdString(server_.url())}, dir.filePath("redis.json")),
             0);
    auto read = [](const QString& path) {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(path));
        return nlohmann::json::parse(f.readAll().toStdString());
    };
    const nlohmann::json memory = read(dir.filePath("memory.json"));
    const nlohmann::json redis = read(dir.filePath("redis.json"));
    QCOMPARE(redis["classes"].dump(), memory["classes"].dump());
    QCOMPARE(redis["requests"], memory["requests"]);
    QCOMPARE(redis["expectations"].dump(), memory["expectations"].dump());
    QCOMPARE(redis["expectations"][2]["metric"], "keyspace.max_buckets");
    for (const char* field : {"max_buckets", "max_budget_slots", "final_buckets"})
        QCOMPARE(redis["keyspace"][field], memory["keyspace"][field]);
    // An unreachable server is an I/O error, found before the run.
    const testing::CliRun unreachable =
        testing::runCli({"run", scenario, "--store", "redis://127.0.0.1:1"});
    QCOMPARE(unreachable.exitCode, 74);
    QVERIFY(unreachable.err.contains("--store \"redis://127.0.0.1:1\""));
}

QTEST_GUILESS_MAIN(TestSimRedis)
#include "tst_sim_redis.moc"
