// The shipped scenarios (scenarios/*.json): each meets its expectations with its own policy,
// and each demonstrates something: a naive policy (tests/data/naive/<scenario>.json) fails at
// least the expectation named here.

#include <QtTest>

#include <QDir>

#include "fixtures/sim_fixture.h"
#include "sim/report/report.h"
#include "sim/run/scenario_runner.h"

using namespace ratelab;
using namespace ratelab::sim;
using namespace ratelab::simtest;

namespace {

const std::string kRoot = RATELAB_SOURCE_DIR;

Report run(const Scenario& scenario, const PolicySet& policies) {
    ScenarioRunner runner(scenario, policies);
    runner.runToEnd();
    return buildReport(runner, Timing{});
}

struct Shipped {
    const char* name;
    const char* failsUnderNaive;  // a metric the naive policy must fail
};

constexpr Shipped kShipped[] = {
    {"header-rotation", "attacker.allowed_per_s"},
    {"page-load", "legit.throttled_fraction"},
    {"ipv6-rotation", "attacker.allowed_per_s"},
    {"ipv6-prefix-rotation", "attacker.allowed_per_s"},
    {"nat-crowd", "legit.throttled_fraction"},
    {"cgnat-crowd", "legit.throttled_fraction"},
    {"forwarded-spoof", "attacker.allowed_per_s"},
    {"trusted-proxy", "legit.throttled_fraction"},
    {"credential-stuffing", "attacker.allowed"},
    {"login-failures", "legit.throttled_fraction"},
    {"store-outage", "legit.failed_closed"},
    {"store-oom", "attacker.allowed_per_s"},
    {"replicas-local", "attacker.allowed_per_s"},
    {"replicas-shared", "legit.throttled_fraction"},
    {"fixed-window-boundary", "attacker.peak_allowed_per_s"},
    {"plan-tiers", "premium.throttled_fraction"},
    {"store-outage-local", "attacker.allowed"},
    {"address-minting", "keyspace.max_buckets"},
    {"minting-ipv6-24", "attacker.allowed"},
    {"minting-ipv6-16", "attacker.allowed"},
    {"minting-ipv4-10", "attacker.allowed"},
};

const ExpectationResult* find(const Report& r, const std::string& metric, bool wantPass) {
    for (const ExpectationResult& e : r.expectations) {
        if (e.expectation.metric == metric && e.pass == wantPass) return &e;
    }
    return nullptr;
}

}  // namespace

class TestShippedScenarios : public QObject {
    Q_OBJECT

private slots:
    void everyScenarioIsCovered();
    void scenario_data();
    void scenario();
};

void TestShippedScenarios::scenario_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("failsUnderNaive");
    for (const Shipped& shipped : kShipped) {
        QTest::newRow(shipped.name) << shipped.name << shipped.failsUnderNaive;
    }
}

// Every file in scenarios/ is in the table, so none ships without its demonstration.
void TestShippedScenarios::everyScenarioIsCovered() {
    QDir dir(QString::fromStdString(kRoot + "/scenarios"));
    QStringList files;
    for (const QString& f : dir.entryList({"*.json"}, QDir::Files, QDir::Name))
        files << f.chopped(5);
    files.sort();  // "store-outage-local.json" sorts before "store-outage.json"
    QStringList covered;
    for (const Shipped& shipped : kShipped)
        covered << shipped.name;
    covered.sort();
    QCOMPARE(files, covered);
    QVERIFY(files.size() >= 12);
}

void TestShippedScenarios::scenario() {
    QFETCH(QString, name);
    QFETCH(QString, failsUnderNaive);
    const Scenario s = shippedScenario(name.toStdString());
    QCOMPARE(QString::fromStdString(s.name), name);
    QVERIFY(!s.title.empty());
    QVERIFY2(s.description.size() > 200, "a scenario explains itself in a paragraph");
    QVERIFY(!s.expectations.empty());
    QVERIFY(!s.policyPath.empty());

    const PolicySet own = policyFile(QDir(QString::fromStdString(kRoot))
                                         .relativeFilePath(QString::fromStdString(s.policyPath))
                                         .toStdString());
    QVERIFY(checkScenarioAgainstPolicy(s, own).empty());
    const Report good = run(s, own);
    for (const ExpectationResult& e : good.expectations) {
        QVERIFY2(e.pass, qPrintable(QString("%1 = %2 with %3")
                                        .arg(QString::fromStdString(e.expectation.metric))
                                        .arg(e.actual)
                                        .arg(QString::fromStdString(s.policy))));
    }
    QVERIFY(good.pass());
    QVERIFY(good.totals.requests > 0);

    const PolicySet naive = policyFile("tests/data/naive/" + name.toStdString() + ".json");
    const Report bad = run(s, naive);
    QVERIFY(!bad.pass());
    QVERIFY2(find(bad, failsUnderNaive.toStdString(), false),
             qPrintable("the naive policy should fail " + failsUnderNaive));
    QVERIFY(find(good, failsUnderNaive.toStdString(), true));
}

QTEST_APPLESS_MAIN(TestShippedScenarios)
#include "tst_shipped_scenarios.moc"
