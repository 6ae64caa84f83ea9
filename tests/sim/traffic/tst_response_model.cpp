// The simulator's response model (ResponseModel in app/sim/scenario/scenario.h, drawn in traffic.cpp) and
// what the runner does with it (scenario_runner.cpp): each request's status comes from its
// actor's own seeded stream, leaves the arrivals as they were, and settles the policies that
// charge by outcome, while policy sets that never settle decide as before.

#include <QtTest>

#include <map>

#include "sim/run/scenario_runner.h"
#include "fixtures/sim_fixture.h"

using namespace ratelab;
using namespace ratelab::sim;
using namespace ratelab::simtest;

namespace {

// One actor of `count` instances at `rate_per_s` each, for `seconds`, with `response`.
std::string oneActor(const std::string& response, int seconds, double rate = 1.0, int count = 1) {
    std::string actor =
        R"({ "name": "users", "class": "legit", "count": )" + std::to_string(count) +
        R"(, "arrival": { "kind": "constant", "rate_per_s": )" + std::to_string(rate) +
        R"( }, "request": { "method": "POST", "path": "/login" },
        "identity": { "peer": { "kind": "ipv4_pool", "cidr": "198.51.100.0/24" } })";
    if (!response.empty()) actor += R"(, "response": )" + response;
    return R"({ "name": "t", "seed": 16, "duration_s": )" + std::to_string(seconds) +
           R"(, "actors": [ )" + actor + " } ] }";
}

struct Answers final : DecisionSink {
    std::vector<std::pair<Nanos, int>> all;
    void onDecision(const DecisionRecord& d) override { all.emplace_back(d.at, d.answer); }
};

// Every request of the scenario, under a policy that never settles: its time and the status
// it carries.
std::vector<std::pair<Nanos, int>> traffic(const Scenario& s) {
    Answers sink;
    RunnerOptions options;
    options.decisions = &sink;
    ScenarioRunner runner(s, policySet({tokenBucket("api", 1000, 1000.0)}), options);
    runner.runToEnd();
    return sink.all;
}

// A login limit of 5 that never refills within a test, charging `rule`.
PolicySet fiveLogins(ChargeRule rule) {
    Policy p = tokenBucket("login", 5, 0.001);
    p.charge.rule = rule;
    return policySet({p});
}

struct Run {
    std::int64_t allowed = 0;
    std::int64_t throttled = 0;
    std::vector<std::pair<bool, int>> decisions;  // allowed, answer
};

Run run(const Scenario& s, const PolicySet& policies) {
    struct Sink final : DecisionSink {
        std::vector<std::pair<bool, int>> all;
        void onDecision(const DecisionRecord& d) override { all.emplace_back(d.allowed, d.answer); }
    } sink;
    RunnerOptions options;
    options.decisions = &sink;
    ScenarioRunner runner(s, policies, options);
    runner.runToEnd();
    const RunTotals t = runner.totals();
    return Run{t.classes[0].allowed, t.classes[0].throttled, std::move(sink.all)};
}

std::map<int, int> histogram(const std::vector<std::pair<Nanos, int>>& requests) {
    std::map<int, int> h;
    for (const auto& [at, status] : requests)
        h[status] += 1;
    return h;
}

}  // namespace

class TestResponseModel : public QObject {
    Q_OBJECT

private slots:
    void statusesComeFromTheSeed();
    void aModelLeavesTheArrivalsAlone();
    void passesAreSettledWithTheirStatus();
    void settlingAndBatchedLanesSideBySide();
};

// 10,000 requests at success_rate 0.98: the seed fixes exactly which fail (the same run twice,
// the count written out), and the count is where a fair coin puts it (98% +- 0.7%, 5 standard
// deviations). A distribution draws each status in its share.
void TestResponseModel::statusesComeFromTheSeed() {
    const Scenario rate = scenarioFrom(oneActor(R"({ "success_rate": 0.98 })", 1000, 10));
    const auto requests = traffic(rate);
    QCOMPARE(requests.size(), std::size_t(10'000));
    QCOMPARE(traffic(rate), requests);
    const std::map<int, int> h = histogram(requests);
    QCOMPARE(h.size(), std::size_t(2));
    QVERIFY(h.at(200) >= 9'730 && h.at(200) <= 9'870);
    QCOMPARE(h.at(200), 9'777);  // seed 16
    QCOMPARE(h.at(200) + h.at(401), 10'000);

    const Scenario table = scenarioFrom(
        oneActor(R"({ "statuses": { "200": 0.5, "401": 0.3, "422": 0.2 } })", 1000, 10));
    const std::map<int, int> t = histogram(traffic(table));
    QCOMPARE(t.size(), std::size_t(3));
    QVERIFY(t.at(200) >= 4'750 && t.at(200) <= 5'250);
    QVERIFY(t.at(401) >= 2'770 && t.at(401) <= 3'230);
    QVERIFY(t.at(422) >= 1'800 && t.at(422) <= 2'200);

    // Without a model every request answers 200.
    QCOMPARE(histogram(traffic(scenarioFrom(oneActor("", 100)))), (std::map<int, int>{{200, 100}}));
}

// The statuses have a stream of their own: adding a model, or changing it, moves no arrival.
void TestResponseModel::aModelLeavesTheArrivalsAlone() {
    auto times = [](const std::string& response) {
        std::vector<Nanos> out;
        for (const auto& [at, status] : traffic(scenarioFrom(oneActor(response, 60, 3, 7))))
            out.push_back(at);
        return out;
    };
    const std::vector<Nanos> plain = times("");
    QCOMPARE(plain.size(), std::size_t(1260));
    QCOMPARE(times(R"({ "success_rate": 0.5 })"), plain);
    QCOMPARE(times(R"({ "statuses": { "403": 0.25, "200": 0.75 } })"), plain);
}

// One address signing in once a second for 100 s against 5 that do not refill. Charging
// always, 5 pass whatever the answers; charging failures, every success is given back: all
// 100 pass when all succeed, 5 when all fail, and with one in ten failing, every request up
// to the 5th failure passes and none after it (a refused request has no answer to settle).
void TestResponseModel::passesAreSettledWithTheirStatus() {
    const Scenario successes = scenarioFrom(oneActor(R"({ "success_rate": 1 })", 100));
    const Scenario failures = scenarioFrom(oneActor(R"({ "statuses": { "401": 1 } })", 100));
    const Scenario mostly = scenarioFrom(oneActor(R"({ "success_rate": 0.9 })", 100));
    QCOMPARE(run(successes, fiveLogins(ChargeRule::Always)).allowed, 5);
    QCOMPARE(run(mostly, fiveLogins(ChargeRule::Always)).allowed, 5);
    const Run allGood = run(successes, fiveLogins(ChargeRule::Failures));
    QCOMPARE(allGood.allowed, 100);
    QCOMPARE(allGood.throttled, 0);
    QCOMPARE(run(failures, fiveLogins(ChargeRule::Failures)).allowed, 5);

    const Run mixed = run(mostly, fiveLogins(ChargeRule::Failures));
    QCOMPARE(mixed.decisions.size(), std::size_t(100));
    std::size_t fifthFailure = 0;
    for (int seen = 0; seen < 5; ++fifthFailure)
        seen += mixed.decisions[fifthFailure].second == 401 ? 1 : 0;
    QVERIFY(fifthFailure > 5 && fifthFailure < 100);
    for (std::size_t i = 0; i < mixed.decisions.size(); ++i)
        QCOMPARE(mixed.decisions[i].first, i < fifthFailure);
    QCOMPARE(mixed.allowed, std::int64_t(fifthFailure));
}

// Two lanes on the very same requests, one charging always (decided in batches) and one
// charging failures (decided and settled one by one): each decides exactly as it does alone.
void TestResponseModel::settlingAndBatchedLanesSideBySide() {
    const Scenario s = scenarioFrom(oneActor(R"({ "success_rate": 0.8 })", 120, 2, 30));
    const PolicySet always = fiveLogins(ChargeRule::Always);
    const PolicySet failures = fiveLogins(ChargeRule::Failures);
    ScenarioRunner both(s, std::vector<PolicySet>{always, failures});
    both.runToEnd();
    const RunTotals a = both.totals(0), f = both.totals(1);
    QCOMPARE(a.classes[0].offered, 7200);
    QCOMPARE(a.classes[0].allowed, run(s, always).allowed);
    QCOMPARE(f.classes[0].allowed, run(s, failures).allowed);
    QCOMPARE(a.classes[0].allowed, 30 * 5);
    QVERIFY(f.classes[0].allowed > 30 * 20);
}

QTEST_APPLESS_MAIN(TestResponseModel)
#include "tst_response_model.moc"
