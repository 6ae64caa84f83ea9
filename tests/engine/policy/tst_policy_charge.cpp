// The charge-by-outcome fields of a policy file (charge, failure_statuses, penalty,
// penalty_statuses): every error at its exact FILE:LINE:COLUMN with its message, the lint
// warnings, and the writer's round trip.

#include <QtTest>

#include <string>

#include "fixtures/policy_text_fixture.h"
#include "ratelab/policy_file.h"

using namespace ratelab;
using ratelab::testing::dump;

namespace {

// One policy on its own line 2 of the file, so that columns are easy to count: the members
// start at column 15, after {"name": "p", .
std::string onePolicy(const std::string& members) {
    return "{\"version\": 1, \"policies\": [\n{\"name\": \"p\", " + members + "}\n]}\n";
}

}  // namespace

class TestPolicyCharge : public QObject {
    Q_OBJECT

private slots:
    void defaultsChargeAlways() {
        PolicyLoadResult r = parsePolicyText(onePolicy("\"capacity\": 5"), "d.json");
        QVERIFY2(r.ok() && r.diagnostics.empty(), qPrintable(dump(r)));
        const Policy& p = r.policies->policies[0];
        QCOMPARE(p.charge.rule, ChargeRule::Always);
        QCOMPARE(p.charge.failureStatuses, (std::vector<int>{401, 403}));
        QCOMPARE(p.charge.penalty, std::int64_t{0});
        QVERIFY(p.charge.penaltyStatuses.empty());
        QVERIFY(!chargesByOutcome(p));
        QVERIFY(!compileLimit(p).settles);
    }

    void fieldsAreRead() {
        PolicyLoadResult r = parsePolicyText(
            onePolicy("\"match\": {\"path_prefix\": \"/login\"}, \"charge\": \"failures\", "
                      "\"failure_statuses\": [401, 403, 429], \"penalty\": 5, "
                      "\"penalty_statuses\": [422]"),
            "f.json");
        QVERIFY2(r.ok(), qPrintable(dump(r)));
        const Policy& p = r.policies->policies[0];
        QCOMPARE(p.charge.rule, ChargeRule::Failures);
        QCOMPARE(p.charge.failureStatuses, (std::vector<int>{401, 403, 429}));
        QCOMPARE(p.charge.penalty, std::int64_t{5});
        QCOMPARE(p.charge.penaltyStatuses, (std::vector<int>{422}));
        QVERIFY(compileLimit(p).settles);
        // What settling adds: a 200 gives the cost back, a 401 keeps it, a 422 is given back
        // and charged 5 more.
        QCOMPARE(settleCost(p.charge, 200, 2), std::int64_t{-2});
        QCOMPARE(settleCost(p.charge, 401, 2), std::int64_t{0});
        QCOMPARE(settleCost(p.charge, 422, 2), std::int64_t{3});
    }

    // Each error at the value to change, FILE:LINE:COLUMN, with its message.
    void errorsAreLocated_data() {
        QTest::addColumn<QString>("members");
        QTest::addColumn<int>("column");
        QTest::addColumn<QString>("pointer");
        QTest::addColumn<QString>("message");
        auto row = [](const char* name, const char* members, int column, const char* pointer,
                      const char* message) {
            QTest::newRow(name) << members << column << pointer << message;
        };
        row("unknown rule", "\"charge\": \"never\"", 25, "/policies/0/charge",
            "\"never\" is not one of \"always\", \"failures\", \"successes\"");
        row("rule not a string", "\"charge\": 1", 25, "/policies/0/charge", "a string");
        row("empty failure list", "\"charge\": \"failures\", \"failure_statuses\": []", 57,
            "/policies/0/failure_statuses", "\"failure_statuses\" needs at least one HTTP status");
        row("status out of range", "\"failure_statuses\": [401, 99]", 41,
            "/policies/0/failure_statuses/1",
            "an HTTP status must be between 100 and 599, found 99");
        row("status above 599", "\"penalty\": 1, \"penalty_statuses\": [600]", 50,
            "/policies/0/penalty_statuses/0", "between 100 and 599, found 600");
        row("status not whole", "\"failure_statuses\": [401.5]", 36,
            "/policies/0/failure_statuses/0", "must be a whole number");
        row("status listed twice", "\"failure_statuses\": [401, 403, 401]", 46,
            "/policies/0/failure_statuses/2", "status 401 is listed twice in \"failure_statuses\"");
        row("statuses not a list", "\"failure_statuses\": 401", 35, "/policies/0/failure_statuses",
            "an array");
        row("negative penalty", "\"penalty\": -1", 26, "/policies/0/penalty",
            "must be between 0 and 1000000000, found -1");
        row("penalty without statuses", "\"penalty\": 5", 26, "/policies/0/penalty",
            "penalty 5 needs penalty_statuses: the response statuses it is charged for");
        row("failures on a sliding log", "\"algorithm\": \"sliding_log\", \"charge\": \"failures\"",
            53, "/policies/0/charge",
            "charge \"failures\" needs an algorithm that holds each charge as an amount it can "
            "give back or add to (token_bucket, gcra or fixed_window); sliding_log keeps");
        row("successes on a sliding window",
            "\"algorithm\": \"sliding_window\", \"charge\": \"successes\"", 56,
            "/policies/0/charge", "sliding_window keeps admission times or weighted counts");
        row("penalty on a leaky bucket",
            "\"algorithm\": \"leaky_bucket\", \"capacity\": 5, \"penalty\": 2, "
            "\"penalty_statuses\": [422]",
            70, "/policies/0/penalty", "a penalty needs an algorithm");
    }
    void errorsAreLocated() {
        QFETCH(QString, members);
        QFETCH(int, column);
        QFETCH(QString, pointer);
        QFETCH(QString, message);
        PolicyLoadResult r = parsePolicyText(onePolicy(members.toStdString()), "charge.json");
        QVERIFY2(!r.ok(), qPrintable(dump(r)));
        QVERIFY2(r.diagnostics.size() == 1, qPrintable(dump(r)));
        const Diagnostic& d = r.diagnostics[0];
        QCOMPARE(d.severity, Diagnostic::Severity::Error);
        QCOMPARE(d.file, std::string("charge.json"));
        QCOMPARE(d.line, 2);
        QCOMPARE(d.column, column);
        QCOMPARE(QString::fromStdString(d.pointer), pointer);
        QVERIFY2(QString::fromStdString(d.message).contains(message), qPrintable(dump(r)));
    }

    void lintWarnings_data() {
        QTest::addColumn<QString>("members");
        QTest::addColumn<QString>("pointer");
        QTest::addColumn<QString>("message");
        QTest::newRow("failures on an API route")
            << "\"match\": {\"path_prefix\": \"/api\"}, \"charge\": \"failures\""
            << "/policies/0/charge"
            << "policy \"p\" counts failures only, but its route (\"/api\") is not a login";
        QTest::newRow("statuses without a rule")
            << "\"failure_statuses\": [401]"
            << "/policies/0/failure_statuses"
            << "failure_statuses has no effect with charge \"always\"";
        QTest::newRow("penalty statuses without a penalty")
            << "\"penalty_statuses\": [422]"
            << "/policies/0/penalty_statuses"
            << "penalty_statuses has no effect without a penalty";
    }
    void lintWarnings() {
        QFETCH(QString, members);
        QFETCH(QString, pointer);
        QFETCH(QString, message);
        PolicyLoadResult r = parsePolicyText(onePolicy(members.toStdString()), "lint.json");
        QVERIFY2(r.ok(), qPrintable(dump(r)));
        QVERIFY2(r.diagnostics.size() == 1, qPrintable(dump(r)));
        QCOMPARE(r.diagnostics[0].severity, Diagnostic::Severity::Warning);
        QCOMPARE(QString::fromStdString(r.diagnostics[0].pointer), pointer);
        QVERIFY2(QString::fromStdString(r.diagnostics[0].message).contains(message),
                 qPrintable(dump(r)));
    }

    // A login route counting failures, with its own statuses, draws no warning (beyond the
    // fail-open one, which deny answers).
    void loginFailuresAreQuiet() {
        PolicyLoadResult r = parsePolicyText(
            onePolicy("\"match\": {\"path_prefix\": \"/login\"}, \"on_store_error\": \"deny\", "
                      "\"charge\": \"failures\", \"failure_statuses\": [401]"),
            "quiet.json");
        QVERIFY2(r.ok() && r.diagnostics.empty(), qPrintable(dump(r)));
    }

    // Written back and loaded again, the same policies, byte for byte on the second write; a
    // policy that charges always is written with its defaults, like every other field.
    void writerRoundTrip() {
        PolicyLoadResult r = parsePolicyText(
            onePolicy("\"algorithm\": \"gcra\", \"match\": {\"path_prefix\": \"/login\"}, "
                      "\"charge\": \"successes\", \"failure_statuses\": [500, 503], "
                      "\"penalty\": 3, \"penalty_statuses\": [422, 429]"),
            "rt.json");
        QVERIFY2(r.ok(), qPrintable(dump(r)));
        const std::string text = savePolicyText(*r.policies);
        QVERIFY(text.find("\"charge\": \"successes\"") != std::string::npos);
        PolicyLoadResult again = parsePolicyText(text, "rt2.json");
        QVERIFY2(again.ok(), qPrintable(dump(again)));
        QVERIFY(*again.policies == *r.policies);
        QCOMPARE(savePolicyText(*again.policies), text);

        PolicyLoadResult plain = parsePolicyText(onePolicy("\"capacity\": 5"), "plain.json");
        const std::string plainText = savePolicyText(*plain.policies);
        QVERIFY(plainText.find("\"charge\": \"always\"") != std::string::npos);
        QVERIFY(plainText.find("\"penalty_statuses\": []") != std::string::npos);
        PolicyLoadResult plainAgain = parsePolicyText(plainText, "plain2.json");
        QVERIFY2(plainAgain.ok() && plainAgain.diagnostics.empty(), qPrintable(dump(plainAgain)));
        QVERIFY(*plainAgain.policies == *plain.policies);
    }

    // Issue 14: a default the file never wrote must not make it invalid. No budget block, 20
    // tokens at 0.01 per second (2,000 s to refill, beyond the 60 s default slot lifetime):
    // valid, the slot lifetime follows the refill. The same numbers with slot_ttl_ms 60000
    // written are refused, at the value.
    void defaultSlotLifetimeFollowsTheRefill() {
        PolicyLoadResult r =
            parsePolicyText(onePolicy("\"capacity\": 20, \"refill_per_second\": 0.01"), "d.json");
        QVERIFY2(r.ok() && r.diagnostics.empty(), qPrintable(dump(r)));
        QCOMPARE(r.policies->policies[0].budget.slotTtl, Nanos{0});
        PolicyLoadResult nulled =
            parsePolicyText(onePolicy("\"capacity\": 20, \"refill_per_second\": 0.01, \"budget\": "
                                      "{\"slot_ttl_ms\": null}"),
                            "n.json");
        QVERIFY2(nulled.ok() && nulled.diagnostics.empty(), qPrintable(dump(nulled)));
        QVERIFY(*nulled.policies == *r.policies);
        PolicyLoadResult written =
            parsePolicyText(onePolicy("\"capacity\": 20, \"refill_per_second\": 0.01, \"budget\": "
                                      "{\"slot_ttl_ms\": 60000}"),
                            "w.json");
        QVERIFY(!written.ok());
        QCOMPARE(written.diagnostics.size(), std::size_t{1});
        QCOMPARE(written.diagnostics[0].line, 2);
        QCOMPARE(written.diagnostics[0].column, 84);
        QCOMPARE(written.diagnostics[0].message,
                 std::string("budget slot_ttl_ms 60000 is shorter than the bucket's time to "
                             "refill, 2000000 ms: a credential whose slot expired would come "
                             "back to a full bucket before its old one refilled; set "
                             "slot_ttl_ms to at least 2000000"));
    }
};

QTEST_APPLESS_MAIN(TestPolicyCharge)
#include "tst_policy_charge.moc"
