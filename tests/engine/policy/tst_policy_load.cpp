// Loading policy files in process: defaults, compiled limits, lint rules, version comparisons,
// checks on sets built in code, Redis URLs in the store block (their grammar: tst_redis_url),
// and route patterns against their regex translation.

#include <sys/stat.h>

#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>
#include <cstdio>
#include <thread>

#include <string>

#include "fixtures/file_errors_fixture.h"
#include "policy/policy_paths.h"
#include "ratelab/policy_file.h"

using namespace ratelab;

namespace {

// A file with one policy whose members are `members` (JSON text without braces).
std::string onePolicy(const std::string& members, const std::string& top = "") {
    return "{\"version\": 1, " + top + "\"policies\": [{\"name\": \"p\", " + members + "}]}";
}

std::vector<Diagnostic> warningsOf(const PolicyLoadResult& r) {
    std::vector<Diagnostic> out;
    for (std::size_t i = 0; i < r.diagnostics.size(); ++i) {
        if (r.diagnostics[i].severity == Diagnostic::Severity::Warning) {
            out.push_back(r.diagnostics[i]);
            if (r.levels[i] != CheckLevel::Lint) out.back().message = "NOT A LINT";
        }
    }
    return out;
}

QString dump(const PolicyLoadResult& r) {
    return QString::fromStdString(formatDiagnostics(r.diagnostics));
}

}  // namespace

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

    // Each lint rule fires on its trap, at the field to change, and says what to do.
    void lintRules_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("pointer");
        QTest::addColumn<QString>("message");
        auto row = [](const char* name, const std::string& file, const char* pointer,
                      const char* message) {
            QTest::newRow(name) << QString::fromStdString(file) << pointer << message;
        };
        row("rate looks like a period", onePolicy("\"capacity\": 2, \"refill_per_second\": 4"),
            "/policies/0/refill_per_second",
            "refill_per_second 4 with capacity 2 refills the whole burst in 500 ms: if you meant "
            "one token every 4 seconds (tower_governor's per_second(4)), write refill_per_second "
            "0.25");
        row("capacity 1", onePolicy("\"capacity\": 1, \"refill_per_second\": 1"),
            "/policies/0/capacity",
            "capacity 1 lets only one request through at a time: a page load of 6 parallel "
            "requests sees 5 of them throttled");
        row("capacity below cost twice", onePolicy("\"capacity\": 5, \"cost\": 3"),
            "/policies/0/capacity", "raise capacity to at least 18");
        row("nginx burst 0",
            onePolicy(
                "\"algorithm\": \"leaky_bucket\", \"capacity\": 0, \"refill_per_second\": 10"),
            "/policies/0/capacity", "burst 0 (nginx's default) lets only one request through");
        row("nanosecond rounding",
            onePolicy("\"capacity\": 1000000, \"refill_per_second\": 300000000"),
            "/policies/0/refill_per_second",
            "refill_per_second 300000000 runs as one token every 3 ns, i.e. 333333333.3333333 per "
            "second (+11.1111%)");
        row("shadow mode", onePolicy("\"mode\": \"shadow\""), "/policies/0/mode",
            "set mode to \"enforce\"");
        row("fail open on login", onePolicy("\"match\": {\"path_prefix\": \"/api/Auth/token\"}"),
            "/policies/0/on_store_error",
            "guards a login-like route (\"/api/Auth/token\") but lets requests through when the "
            "store is unreachable");
        row("fail open on password pattern",
            onePolicy(
                "\"match\": {\"path_prefix\": null, \"path_pattern\": \"/users/*/password\"}"),
            "/policies/0/on_store_error", "set on_store_error to \"deny\"");
        row("NAT crowd", onePolicy("\"budget\": {\"per_peer\": 16}"), "/policies/0/budget/per_peer",
            "budget.per_peer 16 lets one address hold 16 Authorization keys");
        row("NAT crowd over a /24",
            onePolicy("\"key\": {\"ipv4_prefix\": 24}, \"budget\": {\"per_peer\": 4096}"),
            "/policies/0/budget/per_peer",
            "lets one /24 (256 addresses) hold 16 Authorization keys per address");
        row("delay not below burst",
            onePolicy(
                "\"algorithm\": \"leaky_bucket\", \"capacity\": 10, \"refill_per_second\": 10, "
                "\"delay\": 10"),
            "/policies/0/delay", "delay 10 is not below burst 10");
        row("star in a prefix", onePolicy("\"match\": {\"path_prefix\": \"/files/*\"}"),
            "/policies/0/match/path_prefix", "use path_pattern for wildcards");
        row("header key without budget",
            onePolicy("\"key\": {\"source\": \"header\", \"header\": \"X-Api-Key\"}, "
                      "\"budget\": {\"enabled\": false}"),
            "/policies/0/budget/enabled", "set budget.enabled to true");
        const std::string slow = "\"capacity\": 20, \"refill_per_second\": 0.01, ";
        const std::string smallStore = "\"store\": {\"kind\": \"memory\", \"max_buckets\": 1000}, ";
        row("minted /64s fill the store",
            onePolicy(slow + "\"budget\": {\"ipv6_prefixes\": []}", smallStore),
            "/policies/0/budget/ipv6_prefixes",
            "until the store is full every minted key passes up to 20 requests (20000 in all); "
            "once it is full, the fair-share rule charges the attacker's new keys to its "
            "network's bucket");
        row("a /32's cap reaches max_buckets",
            onePolicy(slow + "\"budget\": {\"ipv6_prefixes\": [{\"prefix\": 48, \"cap\": 64}, "
                             "{\"prefix\": 32, \"cap\": 5000}]}",
                      smallStore),
            "/policies/0/budget/ipv6_prefixes/1/cap",
            "one /32 (a provider's whole allocation) may hold 5001 buckets under this cap");
        row("trusting everyone",
            onePolicy("\"mode\": \"enforce\"", "\"trusted_proxies\": {\"cidrs\": [\"::/0\"]}, "),
            "/trusted_proxies/cidrs/0", "trusting ::/0 lets every client write its own");
    }
    void lintRules() {
        QFETCH(QString, file);
        QFETCH(QString, pointer);
        QFETCH(QString, message);
        PolicyLoadResult r = parsePolicyText(file.toStdString(), "lint.json");
        QVERIFY2(r.ok(), qPrintable(dump(r)));
        std::vector<Diagnostic> warnings = warningsOf(r);
        QVERIFY2(warnings.size() == 1, qPrintable(dump(r)));
        QCOMPARE(QString::fromStdString(warnings[0].pointer), pointer);
        QVERIFY2(QString::fromStdString(warnings[0].message).contains(message),
                 qPrintable(dump(r)));
    }

    // Near misses of each rule stay quiet.
    void lintNearMisses_data() {
        QTest::addColumn<QString>("members");
        QTest::newRow("rate below capacity") << "\"capacity\": 20, \"refill_per_second\": 10";
        QTest::newRow("fractional rate") << "\"capacity\": 2, \"refill_per_second\": 2.5";
        QTest::newRow("rate above a day") << "\"capacity\": 50000, \"refill_per_second\": 100000";
        QTest::newRow("leaky numbers from nginx")
            << "\"algorithm\": \"leaky_bucket\", \"capacity\": 5, \"refill_per_second\": 10, "
               "\"nodelay\": true";
        QTest::newRow("capacity 2") << "\"capacity\": 2, \"refill_per_second\": 1";
        QTest::newRow("rounding within a millionth")
            << "\"capacity\": 10, \"refill_per_second\": 3";
        QTest::newRow("login failing closed")
            << "\"match\": {\"path_prefix\": \"/login\"}, \"on_store_error\": \"deny\"";
        QTest::newRow("budget of 32") << "\"budget\": {\"per_peer\": 32}";
        QTest::newRow("budget off for peers")
            << "\"key\": {\"source\": \"peer\"}, \"budget\": {\"per_peer\": 1}";
        QTest::newRow("delay below burst")
            << "\"algorithm\": \"leaky_bucket\", \"capacity\": 10, \"refill_per_second\": 10, "
               "\"delay\": 9";
    }
    void lintNearMisses() {
        QFETCH(QString, members);
        PolicyLoadResult r = parsePolicyText(onePolicy(members.toStdString()), "quiet.json");
        QVERIFY2(r.ok() && r.diagnostics.empty(), qPrintable(dump(r)));
    }

    // A key that is no address has no address budget and nothing to mint addresses with: the
    // store-fill rule stays quiet for a header, a principal and a composite without the peer,
    // however small the store and slow the refill.
    void storeFillRuleSkipsKeysThatAreNoAddress_data() {
        QTest::addColumn<QString>("key");
        QTest::newRow("header") << "{\"source\": \"header\", \"header\": \"X-Api-Key\"}";
        QTest::newRow("principal") << "{\"source\": \"principal\"}";
        QTest::newRow("composite without the peer")
            << "{\"source\": \"composite\", \"parts\": [\"route\", \"header:x-tenant\"]}";
    }
    void storeFillRuleSkipsKeysThatAreNoAddress() {
        QFETCH(QString, key);
        PolicyLoadResult r = parsePolicyText(
            onePolicy("\"capacity\": 20, \"refill_per_second\": 0.01, \"key\": " +
                          key.toStdString() + ", \"budget\": {\"ipv6_prefixes\": []}",
                      "\"store\": {\"kind\": \"memory\", \"max_buckets\": 1000}, "),
            "quiet.json");
        QVERIFY2(r.ok() && r.diagnostics.empty(), qPrintable(dump(r)));
    }

    void shippedPoliciesHaveNoWarnings_data() {
        QTest::addColumn<QString>("file");
        for (const char* f : {"default", "login", "tiers", "nginx-compatible"})
            QTest::newRow(f) << f;
    }
    void shippedPoliciesHaveNoWarnings() {
        QFETCH(QString, file);
        PolicyLoadResult r = loadPolicyFile(
            (QStringLiteral(RATELAB_SOURCE_DIR "/resources/policies/") + file + ".json")
                .toStdString());
        QVERIFY2(r.ok() && r.diagnostics.empty(), qPrintable(dump(r)));
    }

    void changesUnderTheSameNameNeedThePreviousVersion_data() {
        QTest::addColumn<QString>("before");
        QTest::addColumn<QString>("after");
        QTest::addColumn<QString>("pointer");  // "" when no warning is expected
        QTest::addColumn<QString>("message");
        const std::string window = "\"algorithm\": \"fixed_window\", \"capacity\": 10, ";
        QTest::newRow("window changed")
            << QString::fromStdString(onePolicy(window + "\"window_ms\": 60000"))
            << QString::fromStdString(onePolicy(window + "\"window_ms\": 30000"))
            << "/policies/0/window_ms"
            << "window_ms changed from 60000 to 30000 under the same name \"p\"";
        QTest::newRow("algorithm changed")
            << QString::fromStdString(onePolicy("\"capacity\": 10"))
            << QString::fromStdString(onePolicy(window + "\"window_ms\": 60000"))
            << "/policies/0/algorithm"
            << "algorithm changed from token_bucket to fixed_window under the same name \"p\"";
        QTest::newRow("tier window changed")
            << QString::fromStdString(onePolicy(
                   window +
                   "\"key\": {\"source\": \"principal\"}, \"tiers\": {\"attribute\": "
                   "\"plan\", \"default\": \"a\", \"limits\": {\"a\": {\"capacity\": 5}}}"))
            << QString::fromStdString(onePolicy(
                   window + "\"key\": {\"source\": \"principal\"}, \"tiers\": {\"attribute\": "
                            "\"plan\", \"default\": \"a\", \"limits\": {\"a\": {\"capacity\": 5, "
                            "\"window_ms\": 1000}}}"))
            << "/policies/0/tiers/limits/a/window_ms"
            << "tier \"a\": window changed from 60000 to 1000";
        QTest::newRow("quota changed is fine")
            << QString::fromStdString(onePolicy(window + "\"window_ms\": 60000"))
            << QString::fromStdString(
                   onePolicy("\"algorithm\": \"fixed_window\", \"capacity\": 20, "
                             "\"window_ms\": 60000"))
            << ""
            << "";
        QTest::newRow("rate changed is fine")
            << QString::fromStdString(onePolicy("\"capacity\": 10, \"refill_per_second\": 1"))
            << QString::fromStdString(onePolicy("\"capacity\": 10, \"refill_per_second\": 2")) << ""
            << "";
    }
    void changesUnderTheSameNameNeedThePreviousVersion() {
        QFETCH(QString, before);
        QFETCH(QString, after);
        QFETCH(QString, pointer);
        QFETCH(QString, message);
        PolicyLoadResult old = parsePolicyText(before.toStdString(), "old.json");
        QVERIFY(old.ok());
        PolicyLoadResult alone = parsePolicyText(after.toStdString(), "new.json");
        QVERIFY(alone.ok() && alone.diagnostics.empty());
        PolicyLoadResult compared =
            parsePolicyText(after.toStdString(), "new.json", PolicyCheckOptions{&*old.policies});
        QVERIFY(compared.ok());
        if (pointer.isEmpty()) {
            QVERIFY2(compared.diagnostics.empty(), qPrintable(dump(compared)));
            return;
        }
        QCOMPARE(compared.diagnostics.size(), std::size_t(1));
        QCOMPARE(QString::fromStdString(compared.diagnostics[0].pointer), pointer);
        QVERIFY2(QString::fromStdString(compared.diagnostics[0].message).contains(message),
                 qPrintable(dump(compared)));
        QVERIFY(QString::fromStdString(compared.diagnostics[0].message).contains("\"p-v2\""));
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
