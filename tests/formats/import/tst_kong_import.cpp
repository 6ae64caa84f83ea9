// The Kong reader and mapping: the plugin Kong runs for each route (the route's, else its
// service's, else the global one), one fixed-window policy per period, limit_by as keys, Redis
// as the store, every error at its line and column; and the imported policies deciding the
// documented traces (computed by hand from Kong's counting: calendar-aligned UTC windows,
// refused requests counted only under policy redis) on a manual clock, where they differ only
// as the import warns.

#include <QtTest>

#include "fixtures/import_fixture.h"
#include "fixtures/limiter_fixture.h"
#include "formats/import/kong/kong_import.h"
#include "ratelab/memory_store.h"

using namespace ratelab;
using namespace ratelab::formats;
using namespace ratelab::formats::kong;
using namespace ratelab::testing;

namespace {

// 2026-12-07 12:00:00 UTC, in nanoseconds since the epoch.
constexpr Nanos kNoon = Nanos{1796644800} * kNanosPerSecond;

std::string lines(const std::string& text) {
    ImportLog log;
    log.addFile("kong.yml");
    envoy::YamlParseResult parsed = envoy::parseYaml(text);
    const std::optional<PolicyJson> file = mapKongConfig(parsed.root, log);
    return file ? policyLines(*file) : formatDiagnostics(log.take());
}

// Requests at `seconds` after noon from one client on /api/x: 'P' passed, 'R' refused.
QString decide(const PolicySet& policies, const QList<int>& seconds) {
    Limiter limiter(policies, std::shared_ptr<Store>(makeMemoryStore()));
    QString out;
    for (int s : seconds) {
        TestRequest request;
        request.path = "/api/x";
        request.from("192.0.2.1");
        const Verdict v = limiter.decide(request.view(), kNoon + Nanos{s} * kNanosPerSecond);
        out += v.status == 200 ? 'P' : v.status == 429 ? 'R' : '?';
    }
    return out;
}

}  // namespace

class TestKongImport : public QObject {
    Q_OBJECT

private slots:
    // One plugin runs per request: a route's own, else its service's, else the global one.
    void whichPluginRuns() {
        const std::string yml =
            "_format_version: \"3.0\"\n"
            "services:\n"
            "  - name: api\n"
            "    plugins:\n"
            "      - name: rate-limiting\n"
            "        config: {minute: 100, limit_by: ip}\n"
            "    routes:\n"
            "      - name: v1\n"
            "        paths: [\"/api/v1/\"]\n"
            "        plugins:\n"
            "          - name: rate-limiting\n"
            "            config: {second: 5, minute: 50.5, limit_by: header, header_name: "
            "X-Api-Key}\n"
            "      - name: items\n"
            "        paths: [\"~/items/[^/]+$\"]\n"
            "        methods: [GET]\n"
            "  - name: web\n"
            "    routes:\n"
            "      - name: home\n"
            "        paths: [\"/home/\"]\n"
            "plugins:\n"
            "  - name: rate-limiting\n"
            "    config: {hour: 1000, limit_by: service}\n";
        const QString peer = "{\"source\":\"peer\",\"ipv4_prefix\":32,\"ipv6_prefix\":128}";
        QCOMPARE(QString::fromStdString(lines(yml)),
                 "v1.second /api/v1/ fixed_window capacity=5 window_ms=1000 align=\"calendar\" "
                 "key={\"source\":\"header\",\"header\":\"X-Api-Key\",\"when_missing\":\"peer\"}\n"
                 "v1.minute /api/v1/ fixed_window capacity=51 window_ms=60000 align=\"calendar\" "
                 "key={\"source\":\"header\",\"header\":\"X-Api-Key\",\"when_missing\":\"peer\"}\n"
                 "items.minute =/items/*,GET fixed_window capacity=100 window_ms=60000 "
                 "align=\"calendar\" key=" +
                     peer +
                     "\n"
                     "home.hour /home/ fixed_window capacity=1000 window_ms=3600000 "
                     "align=\"calendar\" "
                     "key={\"source\":\"composite\",\"parts\":[\"route\"]}\n");
        const ImportResult r = importKongText(yml, "kong.yml");
        QVERIFY2(r.policies, formatDiagnostics(r.diagnostics).c_str());
        const std::string warnings = formatDiagnostics(r.diagnostics);
        for (const char* expected :
             {"kong.yml:11:13: warning: Kong checks every period and counts a request in all of "
              "them only when none is exhausted",
              "kong.yml:6:26: warning: policy local counts a request only when every period "
              "lets it through; the engine's fixed window counts refused requests too"})
            QVERIFY2(warnings.find(expected) != std::string::npos, warnings.c_str());
        // The calendar windows and the fallback to the client address are the engine's own.
        for (const char* gone : {"aligned to the UTC calendar", "412"})
            QVERIFY2(warnings.find(gone) == std::string::npos, warnings.c_str());
    }

    void errors_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("error");
        const QString route =
            "services:\n  - name: s\n    routes:\n      - name: r\n        paths: [\"/\"]\n";
        QTest::newRow("no version") << route << "kong.yml:1:1: error: no _format_version";
        QTest::newRow("bad version") << "_format_version: \"4.0\"\n" + route
                                     << "kong.yml:1:18: error: _format_version \"4.0\"";
        QTest::newRow("yaml") << "_format_version: \"3.0\"\nservices: [\n"
                              << "kong.yml:3:1: error: ";
        QTest::newRow("not a number")
            << "_format_version: \"3.0\"\n" + route +
                   "plugins:\n  - name: rate-limiting\n    config: {minute: many}\n"
            << "kong.yml:9:22: error: minute: expected a number, not \"many\"";
        QTest::newRow("header without name")
            << "_format_version: \"3.0\"\n" + route +
                   "plugins:\n  - name: rate-limiting\n    config: {minute: 1, limit_by: "
                   "header}\n"
            << "kong.yml:8:5: error: limit_by header needs header_name";
        QTest::newRow("no period")
            << "_format_version: \"3.0\"\n" + route +
                   "plugins:\n  - name: rate-limiting\n    config: {limit_by: ip}\n"
            << "kong.yml:8:5: error: rate-limiting: no period";
        QTest::newRow("no plugin")
            << "_format_version: \"3.0\"\n" + route << "kong.yml: error: no rate limit";
    }
    void errors() {
        QFETCH(QString, text);
        QFETCH(QString, error);
        const ImportResult r = importKongText(text.toStdString(), "kong.yml");
        QVERIFY(!r.policies);
        const std::string all = formatDiagnostics(r.diagnostics);
        QVERIFY2(all.find(error.toStdString()) != std::string::npos, all.c_str());
    }

    // Kong's documented traces. {minute: 3, policy: local, limit_by: ip}, one client, at
    // 12:00:10, :20, :30, :40, :50, 12:01:05 UTC: Kong passes three, refuses two, and passes
    // 12:01:05 in the next calendar minute; the engine's window is the calendar minute too.
    void decidesKongsTraces_data() {
        QTest::addColumn<QString>("config");
        QTest::addColumn<QList<int>>("seconds");
        QTest::addColumn<QString>("kong");
        QTest::addColumn<QString>("ratelab");
        QTest::addColumn<QList<int>>("warned");  // the requests that differ, as warned
        QTest::newRow("minute 3, local") << "{minute: 3, policy: local, limit_by: ip}"
                                         << QList<int>{10, 20, 30, 40, 50, 65} << "PPPRRP"
                                         << "PPPRRP" << QList<int>{};
        // A window that starts on the minute in both: the same answers.
        QTest::newRow("minute 3, from :00") << "{minute: 3, policy: local, limit_by: ip}"
                                            << QList<int>{0, 20, 30, 40, 50, 65} << "PPPRRP"
                                            << "PPPRRP" << QList<int>{};
        // policy redis counts every request in every period, refused ones too: {minute: 3,
        // hour: 5} at :10 ... :50, 12:01:10, :20, :30: Kong passes three and refuses the rest
        // (the hour's counter reaches 5 with the two the minute refused). The engine's minute
        // is the calendar minute, whose count refuses :40 and :50 as Kong's does; but it stops
        // at the minute's refusal, so the hour has counted 3, not 5, and passes 12:01:10 and :20
        // (the difference warned of for several periods).
        QTest::newRow("minute 3, hour 5, redis")
            << "{minute: 3, hour: 5, policy: redis, redis: {host: 127.0.0.1}, limit_by: ip}"
            << QList<int>{10, 20, 30, 40, 50, 70, 80, 90} << "PPPRRRRR"
            << "PPPRRPPR" << QList<int>{5, 6};
        // {month: 2}: the calendar month, in both; 2 116 800 s after noon is 2027-01-01 00:00.
        QTest::newRow("month 2") << "{month: 2, policy: local, limit_by: ip}"
                                 << QList<int>{0, 10, 20, 2116799, 2116800} << "PPRRP"
                                 << "PPRRP" << QList<int>{};
    }
    void decidesKongsTraces() {
        QFETCH(QString, config);
        QFETCH(QList<int>, seconds);
        QFETCH(QString, kong);
        QFETCH(QString, ratelab);
        QFETCH(QList<int>, warned);
        const std::string yml =
            "_format_version: \"3.0\"\nroutes:\n  - name: api\n    paths: [\"/api/\"]\n"
            "    plugins:\n      - name: rate-limiting\n        config: " +
            config.toStdString() + "\n";
        const ImportResult r = importKongText(yml, "kong.yml");
        QVERIFY2(r.policies, formatDiagnostics(r.diagnostics).c_str());
        QVERIFY(formatDiagnostics(r.diagnostics).find("aligned to the UTC calendar") ==
                std::string::npos);
        const QString decided = decide(*r.policies, seconds);
        QCOMPARE(decided, ratelab);
        for (int i = 0; i < kong.size(); ++i)
            QCOMPARE(decided[i] != kong[i], warned.contains(i));
    }
};

QTEST_GUILESS_MAIN(TestKongImport)
#include "tst_kong_import.moc"
