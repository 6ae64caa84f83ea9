// The policy file's lint rules (engine/src/policy/policy_lint.cpp): each fires on its trap at the
// field to change and says what to do, near misses stay quiet, the shipped policies give no
// warning, and a limit changed under the same name asks for the previous version.

#include <QtTest>

#include <string>
#include <vector>

#include "fixtures/policy_text_fixture.h"
#include "ratelab/policy_file.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

// The load's warnings; one that is not a lint gets the message "NOT A LINT".
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

}  // namespace

class TestPolicyLint : public QObject {
    Q_OBJECT

private slots:
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
        row("HAProxy expire shorter than the period",
            onePolicy("\"algorithm\": \"haproxy_rate\", \"capacity\": 10, \"window_ms\": "
                      "10000, \"expire_ms\": 5000"),
            "/policies/0/expire_ms",
            "expire_ms 5000 is shorter than the period (window_ms 10000): a key unused that "
            "long is forgotten before its period ends");
        row("HAProxy read first, capacity 0",
            onePolicy("\"algorithm\": \"haproxy_rate\", \"capacity\": 0, \"window_ms\": "
                      "10000, \"count_refused\": false"),
            "/policies/0/capacity", "capacity 0 lets only one request through at a time");
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
        QTest::newRow("HAProxy expire of a period")
            << "\"algorithm\": \"haproxy_rate\", \"capacity\": 10, \"window_ms\": 10000, "
               "\"expire_ms\": 10000";
        QTest::newRow("HAProxy read first, capacity 5")
            << "\"algorithm\": \"haproxy_rate\", \"capacity\": 5, \"window_ms\": 10000, "
               "\"count_refused\": false";
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
        for (const char* f : {"default", "login", "tiers", "nginx-compatible", "haproxy-compatible",
                              "envoy-ratelimit-compatible"})
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
};

QTEST_APPLESS_MAIN(TestPolicyLint)
#include "tst_policy_lint.moc"
