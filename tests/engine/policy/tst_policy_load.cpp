// Loading policy files in process: defaults, compiled limits, checks on sets built in code,
// Redis URLs in the store block (their grammar: tst_redis_url) and route patterns against their
// regex translation. The lint rules and version comparisons: tst_policy_lint.

#include <sys/stat.h>

#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>
#include <cstdio>
#include <thread>

#include <string>

#include "fixtures/file_errors_fixture.h"
#include "fixtures/policy_text_fixture.h"
#include "policy/policy_paths.h"
#include "ratelab/policy_file.h"

using namespace ratelab;
using namespace ratelab::testing;

class TestPolicyLoad : public QObject {
    Q_OBJECT

private slots:
    void minimalFileGetsEveryDefault() {
        PolicyLoadResult r =
            parsePolicyText("{\"version\":1,\"policies\":[{\"name\":\"a\"}]}", "m.json");
        QVERIFY2(r.ok(), qPrintable(dump(r)));
        QVERIFY(r.diagnostics.empty());
        PolicySet expected;
        expected.policies.emplace_back().name = "a";
        QVERIFY(*r.policies == expected);
        const Policy& p = r.policies->policies[0];
        QCOMPARE(p.capacity, std::int64_t(20));
        QCOMPARE(compileLimit(p).emissionInterval, kNanosPerSecond);
        QCOMPARE(p.budget.perPeer, 128u);
        QCOMPARE(p.storeTimeout, 500 * kNanosPerMilli);
        QCOMPARE(r.policies->store.maxBuckets, std::int64_t(1'000'000));
        QCOMPARE(r.policies->trustedProxies.header, std::string("x-forwarded-for"));
    }

    void limitsAreCompiled_data() {
        QTest::addColumn<QString>("members");
        QTest::addColumn<qint64>("capacity");
        QTest::addColumn<qint64>("interval");
        QTest::addColumn<qint64>("window");
        QTest::addColumn<qint64>("delay");
        QTest::newRow("token bucket 5/s") << "\"capacity\": 10, \"refill_per_second\": 5" << 10ll
                                          << 200'000'000ll << 60'000'000'000ll << 0ll;
        QTest::newRow("rounded 3/s") << "\"capacity\": 10, \"refill_per_second\": 3" << 10ll
                                     << 333'333'333ll << 60'000'000'000ll << 0ll;
        QTest::newRow("fixed window 1.5 s")
            << "\"algorithm\": \"fixed_window\", \"capacity\": 7, \"window_ms\": 1500" << 7ll
            << 1'000'000'000ll << 1'500'000'000ll << 0ll;
        QTest::newRow("leaky nodelay")
            << "\"algorithm\": \"leaky_bucket\", \"capacity\": 0, \"refill_per_second\": 10, "
               "\"nodelay\": true"
            << 0ll << 100'000'000ll << 60'000'000'000ll << qint64(kNoDelay);
        QTest::newRow("leaky delay=4")
            << "\"algorithm\": \"leaky_bucket\", \"capacity\": 9, \"refill_per_second\": 0.5, "
               "\"delay\": 4"
            << 9ll << 2'000'000'000ll << 60'000'000'000ll << 4ll;
    }
    void limitsAreCompiled() {
        QFETCH(QString, members);
        QFETCH(qint64, capacity);
        QFETCH(qint64, interval);
        QFETCH(qint64, window);
        QFETCH(qint64, delay);
        PolicyLoadResult r = parsePolicyText(onePolicy(members.toStdString()), "l.json");
        QVERIFY2(r.ok(), qPrintable(dump(r)));
        const Limit limit = compileLimit(r.policies->policies[0]);
        QCOMPARE(limit.capacity, capacity);
        QCOMPARE(limit.emissionInterval, interval);
        QCOMPARE(limit.window, window);
        QCOMPARE(limit.delay, delay);
    }

    void tiersAreCompiledOverThePolicy() {
        PolicyLoadResult r = parsePolicyText(
            onePolicy("\"algorithm\": \"fixed_window\", \"capacity\": 100, \"window_ms\": 60000, "
                      "\"key\": {\"source\": \"principal\"}, \"tiers\": {\"attribute\": \"plan\", "
                      "\"default\": \"free\", \"limits\": {\"free\": {\"capacity\": 100}, "
                      "\"pro\": {\"capacity\": 5000, \"window_ms\": 1000}}}"),
            "t.json");
        QVERIFY2(r.ok(), qPrintable(dump(r)));
        const TierConfig& tiers = *r.policies->policies[0].tiers;
        QCOMPARE(tiers.tiers.size(), std::size_t(2));
        QCOMPARE(tiers.tiers[0].name, std::string("free"));
        const std::vector<Limit> limits = compileLimits(r.policies->policies[0]);
        QCOMPARE(limits.size(), std::size_t(2));  // one per tier, in tier order
        QCOMPARE(limits[1].capacity, std::int64_t(5000));
        QCOMPARE(limits[1].window, 1000 * kNanosPerMilli);
        QCOMPARE(limits[0].window, 60'000 * kNanosPerMilli);
    }

    void semanticChecksSkipBrokenPolicies() {
        // Policy 0 has a schema error: its impossible cost is not reported on top. Policy 1 is
        // clean: its impossible cost is.
        PolicyLoadResult r = parsePolicyText(
            "{\"version\": 1, \"policies\": [\n"
            "{\"name\": \"a\", \"capacity\": 2, \"cost\": 3, \"mode\": \"loud\"},\n"
            "{\"name\": \"b\", \"capacity\": 2, \"cost\": 3}]}",
            "s.json");
        QVERIFY(!r.ok());
        QCOMPARE(r.diagnostics.size(), std::size_t(2));
        QCOMPARE(r.diagnostics[0].pointer, std::string("/policies/0/mode"));
        QCOMPARE(r.levels[0], CheckLevel::Schema);
        QCOMPARE(r.diagnostics[1].pointer, std::string("/policies/1/cost"));
        QCOMPARE(r.levels[1], CheckLevel::Semantics);
        QCOMPARE(r.diagnostics[1].line, 3);
        QCOMPARE(r.diagnostics[1].column, 38);
    }

    void budgetTtlAppliesWhereTheEngineBudgets_data() {
        QTest::addColumn<QString>("key");
        QTest::addColumn<bool>("checked");
        QTest::newRow("default chain") << "{\"source\": \"default\"}" << true;
        QTest::newRow("unverified ignored")
            << "{\"unverified_authorization\": \"ignore\"}" << false;
        QTest::newRow("header") << "{\"source\": \"header\", \"header\": \"x-k\"}" << true;
        QTest::newRow("composite with a header")
            << "{\"source\": \"composite\", \"parts\": [\"route\", \"header:x-k\"]}" << true;
        QTest::newRow("composite of route and peer")
            << "{\"source\": \"composite\", \"parts\": [\"route\", \"peer\"]}" << false;
        QTest::newRow("peer") << "{\"source\": \"peer\"}" << false;
        QTest::newRow("principal") << "{\"source\": \"principal\"}" << false;
    }
    void budgetTtlAppliesWhereTheEngineBudgets() {
        QFETCH(QString, key);
        QFETCH(bool, checked);
        // 100 tokens at 1 per second refill in 100 s, more than the 60 s slot TTL written.
        PolicyLoadResult r = parsePolicyText(
            onePolicy("\"capacity\": 100, \"budget\": {\"slot_ttl_ms\": 60000}, \"key\": " +
                      key.toStdString()),
            "b.json");
        QCOMPARE(r.ok(), !checked);
        if (checked) {
            QCOMPARE(r.diagnostics[0].pointer, std::string("/policies/0/budget/slot_ttl_ms"));
            QVERIFY(r.diagnostics[0].message.find("set slot_ttl_ms to at least 100000") !=
                    std::string::npos);
        }
    }

    void sourceMapFallsBackToTheNearestAncestor() {
        PolicyLoadResult r =
            parsePolicyText("{\"version\": 1,\n \"policies\": [\n  {\"name\": \"a\"}]}", "s.json");
        QVERIFY(r.ok());
        SourceLocation name = r.sources.locate("/policies/0/name");
        QCOMPARE(name.line, 3);
        QCOMPARE(name.column, 12);
        SourceLocation absent = r.sources.locate("/policies/0/budget/per_peer");
        QCOMPARE(absent.line, 3);
        QCOMPARE(absent.column, 3);
        QCOMPARE(r.sources.locate("/nowhere").line, 1);
    }

    void codeBuiltSetsAreCheckedByPointer() {
        PolicySet set;
        Policy& p = set.policies.emplace_back();
        p.name = "bad name";
        p.capacity = 0;
        p.budget.slotTtl = 1500 * kNanosPerMicro;
        p.mode = PolicyMode::Shadow;
        Policy& q = set.policies.emplace_back();
        q.name = "ok";
        std::vector<Diagnostic> out = validatePolicySet(set, "editor");
        QStringList seen;
        for (const Diagnostic& d : out) {
            QCOMPARE(d.line, 0);
            QCOMPARE(d.file, std::string("editor"));
            seen << QString::fromStdString(d.pointer);
        }
        QVERIFY(seen.contains("/policies/0/budget/slot_ttl_ms"));  // not a whole ms
        QVERIFY(seen.contains("/policies/0/name"));
        QVERIFY(seen.contains("/policies/0/capacity"));
        QVERIFY(hasErrors(out));
        QVERIFY(formatDiagnostic(out[0]).rfind("editor: error: ", 0) == 0);

        PolicySet good;
        good.policies.emplace_back().name = "api";
        QVERIFY(validatePolicySet(good, "editor").empty());
        good.policies[0].mode = PolicyMode::Shadow;
        std::vector<Diagnostic> lint = validatePolicySet(good, "editor");
        QCOMPARE(lint.size(), std::size_t(1));
        QCOMPARE(lint[0].severity, Diagnostic::Severity::Warning);
    }

    // A policy file is exported and committed: a URL with credentials parses, and is refused.
    void policyFilesRefuseCredentials() {
        PolicyLoadResult r = parsePolicyText(
            "{\"version\": 1, \"store\": {\"kind\": \"redis\", \"url\": "
            "\"redis://app:s3cret@cache\"}, \"policies\": [{\"name\": \"api\"}]}",
            "p.json");
        QVERIFY(!r.ok());
        QCOMPARE(r.diagnostics.size(), std::size_t(1));
        const std::string message = formatDiagnostic(r.diagnostics[0]);
        QVERIFY2(message.find("Redis URL \"redis://app:***@cache\": credentials in the URL are "
                              "refused") != std::string::npos,
                 message.c_str());
        QVERIFY(message.find("s3cret") == std::string::npos);
    }

    // A Sentinel URL names every sentinel itself: it is a store's "url", never one of a
    // Cluster's seeds; its credentials are refused like a redis:// URL's.
    void policyFilesTakeSentinelUrls() {
        PolicyLoadResult ok = parsePolicyText(
            "{\"version\": 1, \"store\": {\"kind\": \"redis\", \"url\": "
            "\"redis-sentinel://10.0.0.1,10.0.0.2:26380/cache?db=2\", \"password_env\": "
            "\"REDIS_PASSWORD\"}, \"policies\": [{\"name\": \"api\"}]}",
            "p.json");
        QVERIFY2(ok.ok(), qPrintable(dump(ok)));
        QCOMPARE(ok.policies->store.urls,
                 std::vector<std::string>{"redis-sentinel://10.0.0.1,10.0.0.2:26380/cache?db=2"});

        PolicyLoadResult seeds = parsePolicyText(
            "{\"version\": 1, \"store\": {\"kind\": \"redis\", \"urls\": "
            "[\"redis://10.0.0.1:7000\", \"redis-sentinel://10.0.0.1/cache\"]}, "
            "\"policies\": [{\"name\": \"api\"}]}",
            "p.json");
        QVERIFY(!seeds.ok());
        QCOMPARE(seeds.diagnostics.size(), std::size_t(1));
        QCOMPARE(QString::fromStdString(formatDiagnostic(seeds.diagnostics[0])),
                 QString("p.json:1:77: error: a Sentinel URL names every sentinel itself "
                         "(HOST:PORT,HOST:PORT); give it alone in \"url\", not among cluster "
                         "seeds (at /store/urls/1)"));

        PolicyLoadResult credentials = parsePolicyText(
            "{\"version\": 1, \"store\": {\"kind\": \"redis\", \"url\": "
            "\"redis-sentinel://:s3cret@10.0.0.1/cache\"}, \"policies\": [{\"name\": \"api\"}]}",
            "p.json");
        QVERIFY(!credentials.ok());
        const std::string message = formatDiagnostic(credentials.diagnostics.at(0));
        QVERIFY2(message.find("\"redis-sentinel://:***@10.0.0.1/cache\": credentials in the URL "
                              "are refused") != std::string::npos,
                 message.c_str());
        QVERIFY(message.find("s3cret") == std::string::npos);
    }

    // A file that cannot be read says why, and is told apart from an invalid one; a pipe is read
    // to its end (a process substitution has no size to seek to).
    void unreadableFilesSayWhy() {
        testing::checkUnreadableFilesSayWhy([](const std::string& p) { return loadPolicyFile(p); },
                                            "/nonexistent/p.json", RATELAB_SOURCE_DIR "/resources");
        if (QTest::currentTestFailed()) return;
        PolicyLoadResult invalid = parsePolicyText("{", "x.json");
        QVERIFY(!invalid.ok() && !invalid.unreadable);

        QTemporaryDir dir;
        const std::string fifo = dir.filePath("policy.pipe").toStdString();
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        std::thread writer([&] {
            std::FILE* out = std::fopen(fifo.c_str(), "wb");
            const std::string text = R"({ "version": 1, "policies": [ { "name": "api" } ] })";
            std::fwrite(text.data(), 1, text.size(), out);
            std::fclose(out);
        });
        PolicyLoadResult piped = loadPolicyFile(fifo);
        writer.join();
        QVERIFY2(piped.ok(), piped.diagnostics.empty() ? "" : piped.diagnostics[0].message.c_str());
        QCOMPARE(piped.policies->policies.at(0).name, std::string("api"));
    }

    // The exports translate routes to regular expressions; they must match what the engine
    // matches (RouteMatch::matches) on every path, trailing slashes and near misses included.
    void routeRegexAgreesWithRouteMatch_data() {
        QTest::addColumn<QString>("prefix");
        QTest::addColumn<QString>("pattern");
        QTest::newRow("root") << "/"
                              << "";
        QTest::newRow("prefix") << "/api"
                                << "";
        QTest::newRow("prefix with slash") << "/api/"
                                           << "";
        QTest::newRow("dotted prefix") << "/v1.2/x"
                                       << "";
        QTest::newRow("one star") << "/"
                                  << "/users/*/files";
        QTest::newRow("double star at end") << "/"
                                            << "/static/**";
        QTest::newRow("double star inside") << "/"
                                            << "/a/**/b";
        QTest::newRow("double star first") << "/"
                                           << "/**/login";
        QTest::newRow("stars mixed") << "/"
                                     << "/*/x/**";
    }
    void routeRegexAgreesWithRouteMatch() {
        QFETCH(QString, prefix);
        QFETCH(QString, pattern);
        RouteMatch match;
        match.pathPrefix = prefix.toStdString();
        match.pathPattern = pattern.toStdString();
        // PCRE, as nginx and HAProxy use (Envoy's RE2 agrees on these constructs).
        const QRegularExpression plain(QString::fromStdString(policy::pathRegex(match, false)));
        const QRegularExpression query(QString::fromStdString(policy::pathRegex(match, true)));
        QVERIFY(plain.isValid() && query.isValid());
        const char* paths[] = {"/",
                               "/api",
                               "/api/",
                               "/api/items",
                               "/apix",
                               "/ap",
                               "/v1.2/x",
                               "/v1x2/x",
                               "/v1.2/x/y",
                               "/users/7/files",
                               "/users//files",
                               "/users/7/files/",
                               "/users/7/8/files",
                               "/users/files",
                               "/static",
                               "/static/",
                               "/static/a/b.css",
                               "/staticx",
                               "/a/b",
                               "/a/x/y/b",
                               "/a/bb",
                               "/login",
                               "/x/login",
                               "/x/y/login",
                               "/loginx",
                               "/q/x",
                               "/q/x/r/s",
                               "/q/y",
                               "//",
                               "/a//b"};
        for (const char* path : paths) {
            bool engine = match.matches("GET", path);
            QVERIFY2(plain.match(path).hasMatch() == engine, path);
            QVERIFY2(query.match(path).hasMatch() == engine, path);
            QVERIFY2(query.match(QString(path) + "?a=/b").hasMatch() == engine, path);
        }
    }
};

QTEST_APPLESS_MAIN(TestPolicyLoad)
#include "tst_policy_load.moc"
