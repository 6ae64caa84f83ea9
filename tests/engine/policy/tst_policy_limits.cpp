// This round's policy fields through the loader: what each compiles to, what the writer writes
// back (and that it reads back equal), and the lint on each trap with its near misses.
// Calendar-aligned windows: align, calendar_unit.

#include <QtTest>

#include "ratelab/policy_file.h"

using namespace ratelab;

namespace {

// A file with one policy whose members are `members` (JSON text without braces).
std::string onePolicy(const std::string& members, const std::string& top = "") {
    return "{\"version\": 1, " + top + "\"policies\": [{\"name\": \"p\", " + members + "}]}";
}

QString dump(const PolicyLoadResult& r) {
    return QString::fromStdString(formatDiagnostics(r.diagnostics));
}

std::vector<Diagnostic> warningsOf(const PolicyLoadResult& r) {
    std::vector<Diagnostic> out;
    for (std::size_t i = 0; i < r.diagnostics.size(); ++i) {
        if (r.diagnostics[i].severity == Diagnostic::Severity::Warning &&
            r.levels[i] == CheckLevel::Lint) {
            out.push_back(r.diagnostics[i]);
        }
    }
    return out;
}

// Loads `text`, saves it, and loads the saved text: both loads must succeed and agree.
PolicySet roundTrip(const std::string& text, std::string* saved = nullptr) {
    PolicyLoadResult first = parsePolicyText(text, "first.json");
    if (!first.ok()) qFatal("%s", qPrintable(dump(first)));
    const std::string written = savePolicyText(*first.policies);
    PolicyLoadResult second = parsePolicyText(written, "saved.json");
    if (!second.ok()) qFatal("%s", qPrintable(dump(second)));
    if (!(*second.policies == *first.policies)) qFatal("the saved file reads back different");
    if (saved) *saved = written;
    return *first.policies;
}

const std::string kFixedWindow = "\"algorithm\": \"fixed_window\", \"capacity\": 100, ";

}  // namespace

class TestPolicyLimits : public QObject {
    Q_OBJECT

private slots:
    void calendarWindowsCompile() {
        std::string saved;
        PolicySet set = roundTrip(
            onePolicy(kFixedWindow + "\"window_ms\": 31622400000, \"align\": \"calendar\""),
            &saved);
        Limit l = compileLimit(set.policies[0]);
        QCOMPARE(l.align, WindowAlign::Calendar);
        QCOMPARE(l.calendarUnit, CalendarUnit::None);
        QCOMPARE(l.window, 366 * 86'400 * kNanosPerSecond);  // beyond 90 days when aligned
        QVERIFY(saved.find("\"align\": \"calendar\"") != std::string::npos);
        QVERIFY(saved.find("\"calendar_unit\"") == std::string::npos);

        set = roundTrip(
            onePolicy(kFixedWindow + "\"align\": \"calendar\", \"calendar_unit\": \"month\""),
            &saved);
        l = compileLimit(set.policies[0]);
        QCOMPARE(l.align, WindowAlign::Calendar);
        QCOMPARE(l.calendarUnit, CalendarUnit::Month);
        QVERIFY(saved.find("\"calendar_unit\": \"month\"") != std::string::npos);
        QVERIFY(saved.find("\"window_ms\"") == std::string::npos);  // a month has its own length

        // The default writes neither field, so files written before keep their bytes.
        set = roundTrip(onePolicy(kFixedWindow + "\"window_ms\": 1000"), &saved);
        QCOMPARE(compileLimit(set.policies[0]).align, WindowAlign::FirstRequest);
        QVERIFY(saved.find("\"align\"") == std::string::npos);
    }

    void calendarLints_data() {
        QTest::addColumn<qint64>("windowMs");
        QTest::addColumn<QString>("message");  // "" for none
        QTest::newRow("30 days") << qint64(2'592'000'000LL)
                                 << "30-day blocks counted from 1970-01-01, not calendar months "
                                    "(Envoy's MONTH); for calendar months write "
                                    "\"calendar_unit\": \"month\"";
        QTest::newRow("365 days") << qint64(31'536'000'000LL)
                                  << "write \"calendar_unit\": \"year\" without window_ms";
        QTest::newRow("a week") << qint64(604'800'000)
                                << "windows of 7 days that start on a Thursday, 00:00 UTC";
        QTest::newRow("7 hours")
            << qint64(25'200'000)
            << "neither divides a day nor is a whole number of days: its windows start at "
               "another time of day each day";
        QTest::newRow("an hour") << qint64(3'600'000) << "";
        QTest::newRow("90 seconds") << qint64(90'000) << "";  // divides a day
        QTest::newRow("two days") << qint64(172'800'000) << "";
        QTest::newRow("31 days") << qint64(2'678'400'000LL) << "";
    }
    void calendarLints() {
        QFETCH(qint64, windowMs);
        QFETCH(QString, message);
        PolicyLoadResult r =
            parsePolicyText(onePolicy(kFixedWindow + "\"window_ms\": " + std::to_string(windowMs) +
                                      ", \"align\": \"calendar\", \"key\": {\"source\": \"peer\"}"),
                            "lint.json");
        QVERIFY2(r.ok(), qPrintable(dump(r)));
        const std::vector<Diagnostic> warnings = warningsOf(r);
        if (message.isEmpty()) {
            QVERIFY2(warnings.empty(), qPrintable(dump(r)));
            return;
        }
        QVERIFY2(warnings.size() == 1, qPrintable(dump(r)));
        QCOMPARE(warnings[0].pointer, std::string("/policies/0/window_ms"));
        QVERIFY2(QString::fromStdString(warnings[0].message).contains(message),
                 qPrintable(dump(r)));
    }

    // nginx's rate in thousandths of a request per second: a rate with more digits runs
    // truncated, and lint says to what; nginx's own rates do not warn.
    void leakyRateLint_data() {
        QTest::addColumn<QString>("refill");
        QTest::addColumn<QString>("message");  // "" for none
        QTest::newRow("7r/m as 7/60") << "0.11666666666666667"
                                      << "refill_per_second 0.11666666666666667 runs as 0.116 "
                                         "per second: the leaky bucket counts its rate in "
                                         "thousandths of a request per second";
        QTest::newRow("7r/m as nginx holds it") << "0.116"
                                                << "";
        QTest::newRow("9r/m") << "0.15"
                              << "";
        QTest::newRow("6r/s") << "6"
                              << "";
        QTest::newRow("0.0005") << "0.0005"
                                << "runs as 0.001 per second";
    }
    void leakyRateLint() {
        QFETCH(QString, refill);
        QFETCH(QString, message);
        PolicyLoadResult r = parsePolicyText(
            onePolicy("\"algorithm\": \"leaky_bucket\", \"capacity\": 10, \"nodelay\": true, "
                      "\"refill_per_second\": " +
                      refill.toStdString() + ", \"key\": {\"source\": \"peer\"}"),
            "leaky.json");
        QVERIFY2(r.ok(), qPrintable(dump(r)));
        const std::vector<Diagnostic> warnings = warningsOf(r);
        if (message.isEmpty()) {
            QVERIFY2(warnings.empty(), qPrintable(dump(r)));
            return;
        }
        QVERIFY2(warnings.size() == 1, qPrintable(dump(r)));
        QCOMPARE(warnings[0].pointer, std::string("/policies/0/refill_per_second"));
        QVERIFY2(QString::fromStdString(warnings[0].message).contains(message),
                 qPrintable(dump(r)));
    }

    // A month's windows are not 90 days long, but a first-request window still is bounded.
    void windowBeyondNinetyDaysNeedsTheCalendar() {
        PolicyLoadResult r = parsePolicyText(
            onePolicy("\"algorithm\": \"sliding_log\", \"capacity\": 5, \"window_ms\": 8000000000"),
            "long.json");
        QVERIFY(r.passed(CheckLevel::Schema));
        QVERIFY(!r.ok());
        QVERIFY2(dump(r).contains("window_ms 8000000000 ms (93 days) is beyond the engine's "
                                  "90-day limit"),
                 qPrintable(dump(r)));
        r = parsePolicyText(onePolicy(kFixedWindow + "\"align\": \"calendar\", \"calendar_unit\": "
                                                     "\"year\", \"tiers\": {\"attribute\": "
                                                     "\"plan\", \"default\": \"a\", \"limits\": "
                                                     "{\"a\": {\"capacity\": 5, \"window_ms\": "
                                                     "1000}}}"),
                            "tier.json");
        QVERIFY(!r.ok());
        QVERIFY2(dump(r).contains("tier \"a\": window_ms has no meaning with calendar_unit "
                                  "\"year\""),
                 qPrintable(dump(r)));
    }
};

QTEST_APPLESS_MAIN(TestPolicyLimits)
#include "tst_policy_limits.moc"
