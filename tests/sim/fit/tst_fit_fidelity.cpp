// A scenario fitted to a log limits like the log (sim/fit/log_fit.h): on the bursty fixture
// logs (make_bursty_logs.py: page loads, crawlers, form bots, long idle gaps, heavy clients,
// app sessions, pollers, scrapers), under a token bucket with a small burst and fixed windows of
// 1 s, 10 s and 60 s, the fitted scenario's throttled requests are within 15 % of the replay's,
// and its throttled clients within 15 % when the replay throttles 100 or more, within 25
// clients when it throttles fewer (a few heavy clients more or less). A tenfold crowd throttles
// ten times the clients, within 15 %.

#include <QtTest>

#include "fixtures/sim_fixture.h"
#include "sim/fit/log_fit.h"

using namespace ratelab;
using namespace ratelab::sim;

namespace {

const char* const kPolicies[] = {"token-bucket", "window-1s", "window-10s", "window-60s"};

std::vector<FitCheckPolicies> fidelityChecks() {
    std::vector<FitCheckPolicies> out;
    for (const char* name : kPolicies) {
        out.push_back(
            {name, simtest::policyFile(std::string("tests/data/logs/fidelity-") + name + ".json")});
    }
    return out;
}

FitResult fitChecked(const char* log, const FitOptions& given) {
    FitOptions options = given;
    options.checks = fidelityChecks();
    ReplayInput input;
    input.files = {std::string(RATELAB_SOURCE_DIR) + "/tests/data/logs/" + log};
    LogReading reading;
    std::optional<FitResult> r =
        fitScenario(input, options.checks.front().policies, options, reading);
    if (!r) qFatal("cannot fit %s", log);
    if (r->checks.size() != options.checks.size()) qFatal("a check did not run");
    return std::move(*r);
}

// A check's figures over every class.
CheckFigures total(const std::vector<CheckFigures>& classes) {
    CheckFigures t;
    for (const CheckFigures& c : classes) {
        t.requests += c.requests;
        t.throttled += c.throttled;
        t.clients += c.clients;
        t.throttledClients += c.throttledClients;
    }
    return t;
}

double off(std::int64_t fitted, std::int64_t replayed) {
    return 100.0 * static_cast<double>(fitted - replayed) / static_cast<double>(replayed);
}

}  // namespace

class TestFitFidelity : public QObject {
    Q_OBJECT

private slots:
    void throttlesLikeTheLog_data();
    void throttlesLikeTheLog();
    void tenfoldCrowdTenfoldClients();
};

void TestFitFidelity::throttlesLikeTheLog_data() {
    QTest::addColumn<QString>("log");
    QTest::addColumn<int>("attackers");  // --attacker-if rate>P99.5: two classes
    for (const char* log : {"bursty-site.log.gz", "bursty-api.csv.gz"}) {
        QTest::newRow(log) << log << 0;
        QTest::newRow(qPrintable(QString(log) + ", two classes")) << log << 1;
    }
}

void TestFitFidelity::throttlesLikeTheLog() {
    QFETCH(QString, log);
    QFETCH(int, attackers);
    FitOptions options;
    if (attackers) {
        std::string error;
        options.attackerIf = ClassRule::parse("rate>P99.5", error);
        QVERIFY(options.attackerIf);
    }
    const FitResult fit = fitChecked(qPrintable(log), options);
    for (const FitCheck& check : fit.checks) {
        const CheckFigures r = total(check.replayed);
        const CheckFigures f = total(check.fitted);
        qInfo(
            "%-13s requests %lld / %lld, throttled %lld / %lld (%+.1f %%), throttled clients "
            "%lld / %lld (%+.1f %%)",
            check.name.c_str(), (long long)r.requests, (long long)f.requests,
            (long long)r.throttled, (long long)f.throttled, off(f.throttled, r.throttled),
            (long long)r.throttledClients, (long long)f.throttledClients,
            off(f.throttledClients, r.throttledClients));
        QCOMPARE(r.requests, fit.requests);
        QCOMPARE(r.clients, fit.clients);
        // Every client of the log is a client of the fitted run, crowds as individuals.
        QCOMPARE(f.clients, r.clients);
        QVERIFY(std::abs(off(f.requests, r.requests)) <= 5);
        QVERIFY2(r.throttled > 1000, "the check must throttle");  // not a vacuous comparison
        QVERIFY2(std::abs(off(f.throttled, r.throttled)) <= 15, check.name.c_str());
        if (r.throttledClients >= 100) {
            QVERIFY2(std::abs(off(f.throttledClients, r.throttledClients)) <= 15,
                     check.name.c_str());
        } else {
            QVERIFY2(std::abs(f.throttledClients - r.throttledClients) <= 25, check.name.c_str());
        }
        // Per class too, when there are two: the attackers' throttling is theirs.
        for (std::size_t c = 0; attackers && c < check.replayed.size(); ++c) {
            const CheckFigures& rc = check.replayed[c];
            const CheckFigures& fc = check.fitted[c];
            qInfo("  %-8s throttled %lld / %lld, throttled clients %lld / %lld",
                  fit.classes[c].name.c_str(), (long long)rc.throttled, (long long)fc.throttled,
                  (long long)rc.throttledClients, (long long)fc.throttledClients);
            QVERIFY2(std::abs(fc.throttled - rc.throttled) <=
                         std::max<std::int64_t>(rc.throttled * 20 / 100, fit.requests / 200),
                     fit.classes[c].name.c_str());
        }
    }
}

// Scaling keeps the shape: ten times the crowd throttles ten times the clients and requests.
void TestFitFidelity::tenfoldCrowdTenfoldClients() {
    for (const char* log : {"bursty-site.log.gz", "bursty-api.csv.gz"}) {
        FitOptions options;
        options.top = 0;  // every client in a crowd
        const FitResult once = fitChecked(log, options);
        options.scale = 10;
        const FitResult ten = fitChecked(log, options);
        for (std::size_t k = 0; k < once.checks.size(); ++k) {
            const CheckFigures a = total(once.checks[k].fitted);
            const CheckFigures b = total(ten.checks[k].fitted);
            qInfo(
                "%s %-13s clients %lld -> %lld, throttled clients %lld -> %lld, throttled "
                "%lld -> %lld",
                log, once.checks[k].name.c_str(), (long long)a.clients, (long long)b.clients,
                (long long)a.throttledClients, (long long)b.throttledClients,
                (long long)a.throttled, (long long)b.throttled);
            QCOMPARE(b.clients, 10 * a.clients);
            QVERIFY(std::abs(off(b.requests, 10 * a.requests)) <= 5);
            QVERIFY2(std::abs(off(b.throttledClients, 10 * a.throttledClients)) <= 15,
                     once.checks[k].name.c_str());
            QVERIFY2(std::abs(off(b.throttled, 10 * a.throttled)) <= 15,
                     once.checks[k].name.c_str());
        }
    }
}

QTEST_APPLESS_MAIN(TestFitFidelity)
#include "tst_fit_fidelity.moc"
