// The simulator's response model (ResponseModel in app/sim/scenario.h, drawn in traffic.cpp) and
// what the runner does with it (scenario_runner.cpp): each request's status comes from its
// actor's own seeded stream, leaves the arrivals as they were, and settles the policies that
// charge by outcome, while policy sets that never settle decide as before.

#include <QtTest>

#include <map>

#include "sim/scenario_runner.h"
#include "sim_fixture.h"

using namespace ratelab;
using namespace ratelab::sim;
using namespace ratelab::simtest;

namespace {

// One actor of `count` instances at `rate_per_s` each, for `seconds`, with `response`.
std::string oneActor(const std::string& response, int seconds, double rate = 1.0,
                     int count = 1) {
    std::string actor = R"({ "name": "users", "class": "legit", "count": )" +
                        std::to_string(count) +
                        R"(, "arrival": { "kind": "constant", "rate_per_s": )" +
                        std::to_string(rate) +
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
    QCOMPARE(histogram(traffic(scenarioFrom(oneActor("", 100)))),
             (std::map<int, int>{{200, 100}}));
}

// The statuses have a stream of their own: adding a model, or changing it, moves no arrival.
void TestResponseModel::aModelLeavesTheArrivalsAlone() {
    auto times = [](const std::string& response) {
        std::vector<Nanos> out;
        for (const auto& [at, status] :
             traffic(scenarioFrom(oneActor(response, 60, 3, 7))))
            out.push_back(at);
        return out;
    };
    const std::vector<Nanos> plain = times("");
    QCOMPARE(plain.size(), std::size_t(1260));
    QCOMPARE(times(R"({ "success_rate": 0.5 })"), plain);
    QCOMPARE(times(R"({ "statuses": { "403": 0.25, "200": 0.75 } })"), plain);
}

QTEST_APPLESS_MAIN(TestResponseModel)
#include "tst_response_model.moc"
