// Saving policy files: load -> save -> load gives an equal PolicySet, saving twice gives the
// same bytes, shipped files are already canonical, and the validation record survives. Also a
// few hundred random sets from a seeded generator.

#include <QtTest>
#include <random>

#include "fixtures/file_fixture.h"
#include "fixtures/policy_text_fixture.h"
#include "formats/policy_export.h"
#include "ratelab/policy_file.h"

using namespace ratelab;
using ratelab::testing::dump;
using ratelab::testing::readText;

namespace {

// A random policy set that validates without errors (warnings allowed).
PolicySet randomSet(std::mt19937_64& rng) {
    auto pick = [&rng](std::int64_t lo, std::int64_t hi) {
        return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
    };
    auto chance = [&rng](double p) { return std::bernoulli_distribution(p)(rng); };
    PolicySet set;
    set.store.kind = chance(0.5) ? StoreConfig::Kind::Redis : StoreConfig::Kind::Memory;
    set.store.maxBuckets = pick(1, 1'000'000'000);
    if (set.store.kind == StoreConfig::Kind::Redis) {
        int seeds = static_cast<int>(pick(1, 3));
        for (int i = 0; i < seeds; ++i) {
            set.store.urls.push_back("redis://10.0.0." + std::to_string(i + 1) + ":" +
                                     std::to_string(pick(1, 65535)) + (seeds == 1 ? "/3" : ""));
        }
        set.store.keyNamespace = "ns:" + std::to_string(pick(0, 999));
    }
    for (int i = 0, n = static_cast<int>(pick(0, 3)); i < n; ++i) {
        set.trustedProxies.cidrs.push_back(
            *Cidr::parse("10." + std::to_string(i) + ".0.0/16", true));
    }
    if (chance(0.3)) set.trustedProxies.cidrs.push_back(*Cidr::parse("2001:db8::/32", true));
    set.trustedProxies.header = chance(0.5) ? "x-real-ip" : "forwarded";

    const Algorithm algorithms[] = {Algorithm::TokenBucket, Algorithm::Gcra,
                                    Algorithm::FixedWindow, Algorithm::SlidingWindow,
                                    Algorithm::SlidingLog,  Algorithm::LeakyBucket,
                                    Algorithm::HaproxyRate};
    for (int i = 0, n = static_cast<int>(pick(1, 4)); i < n; ++i) {
        Policy& p = set.policies.emplace_back();
        p.name = "p" + std::to_string(i) + (chance(0.5) ? ".v-2" : "_x");
        p.algorithm = algorithms[pick(0, 6)];
        const bool leaky = p.algorithm == Algorithm::LeakyBucket;
        p.capacity = pick(leaky ? 0 : 1, 1000);
        // Doubles with every kind of decimal expansion: the text must read back exactly.
        p.refillPerSecond = std::uniform_real_distribution<double>(0.01, 1000.0)(rng);
        if (chance(0.3)) p.refillPerSecond = static_cast<double>(pick(1, 100));
        p.windowMs = pick(1, 86'400'000);
        p.cost = pick(1, leaky ? p.capacity + 1 : p.capacity);
        if (leaky) {
            p.nodelay = chance(0.5);
            if (!p.nodelay) p.delay = pick(0, 50);
        }
        if (p.algorithm == Algorithm::HaproxyRate) {
            p.countRefused = chance(0.5);
            p.expireMs = chance(0.5) ? 0 : pick(1, 2'147'483'647);
        }
        switch (pick(0, 4)) {
            case 0:
                p.key.source = KeySource::Default;
                break;
            case 1:
                p.key.source = KeySource::Peer;
                break;
            case 2:
                p.key.source = KeySource::Header;
                p.key.header = "X-Key-" + std::to_string(i);
                break;
            case 3:
                p.key.source = KeySource::Principal;
                break;
            default:
                p.key.source = KeySource::Composite;
                p.key.parts = {{KeyPart::Kind::Route, ""}, {KeyPart::Kind::Peer, ""}};
                if (chance(0.5)) p.key.parts.push_back({KeyPart::Kind::Header, "x-tenant"});
                if (chance(0.5)) p.key.parts.push_back({KeyPart::Kind::Attribute, "account"});
        }
        p.key.ipv4Prefix = static_cast<int>(pick(1, 32));
        p.key.ipv6Prefix = static_cast<int>(pick(1, 128));
        p.key.unverifiedAuthorization =
            chance(0.5) ? UnverifiedAuthorization::Budget : UnverifiedAuthorization::Ignore;
        p.budget.enabled = chance(0.8);
        p.budget.perPeer = static_cast<std::uint32_t>(pick(1, 4'294'967'295));
        p.budget.global = static_cast<std::uint32_t>(pick(1, 4'294'967'295));
        p.budget.slotTtl = pick(7 * 86'400'000LL, 90 * 86'400'000LL) * kNanosPerMilli;
        p.onStoreError = chance(0.5) ? StoreErrorRule::Deny : StoreErrorRule::FailOpenOnTransport;
        p.storeTimeout = pick(1, 60'000) * kNanosPerMilli;
        p.mode = chance(0.2) ? PolicyMode::Shadow : PolicyMode::Enforce;
        p.headers = static_cast<HeaderStyle>(pick(0, 3));
        if (chance(0.5)) {
            p.match.pathPattern = chance(0.5) ? "/users/*/files/**" : "/**/login";
        } else {
            p.match.pathPrefix = "/api/v" + std::to_string(pick(1, 9));
        }
        if (chance(0.5)) p.match.methods = {"GET", "POST"};
        if (chance(0.3)) p.bypass.cidrs.push_back(*Cidr::parse("192.0.2.0/24", true));
        if (chance(0.3)) p.bypass.principals = {"svc-monitor", "ops \u00e9quipe"};
        if (chance(0.3)) {
            TierConfig tiers;
            tiers.attribute = "plan";
            tiers.defaultTier = "free";
            Tier free;
            free.name = "free";
            free.capacity = pick(std::max<std::int64_t>(p.cost, 1), 1000);
            Tier pro;
            pro.name = "pro";
            pro.capacity = pick(std::max<std::int64_t>(p.cost, 1), 1000);
            if (chance(0.5)) pro.refillPerSecond = 0.125 * static_cast<double>(pick(1, 800));
            if (chance(0.5)) pro.windowMs = pick(1, 86'400'000);
            tiers.tiers = {pro, free};
            p.tiers = tiers;
        }
    }
    if (chance(0.5)) {
        ValidationRecord record;
        record.generator = "ratelab 0.1.0";
        ValidationRun run;
        run.scenario = "scenario-" + std::to_string(pick(0, 99));
        run.seed = rng();
        run.requests = pick(0, INT64_MAX);
        run.pass = chance(0.5);
        ValidationExpectation e;
        e.metric = "attacker.allowed_per_s";
        if (chance(0.5)) e.max = std::uniform_real_distribution<double>(0, 10)(rng);
        if (chance(0.5)) e.min = -std::uniform_real_distribution<double>(0, 1e-300)(rng);
        e.actual = std::uniform_real_distribution<double>(-1e300, 1e300)(rng);
        e.pass = chance(0.5);
        run.expectations = {e, e};
        record.runs = {run};
        set.validation = record;
    }
    return set;
}

}  // namespace

class TestPolicyRoundTrip : public QObject {
    Q_OBJECT

private slots:
    void filesRoundTrip_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<bool>("canonical");  // shipped files are written in canonical form
        const QString root = QStringLiteral(RATELAB_SOURCE_DIR "/");
        for (const char* f : {"default", "login", "tiers", "nginx-compatible", "haproxy-compatible",
                              "envoy-ratelimit-compatible"}) {
            QTest::newRow(f) << root + "resources/policies/" + f + ".json" << true;
        }
        for (const char* f :
             {"minimal", "everything", "integral-doubles", "unix-socket", "redis-auth",
              "redis-auth-file", "with-validation", "nginx-features", "envoy-features",
              "haproxy-features", "charge-by-outcome", "calendar-windows", "when-missing",
              "most-specific", "haproxy-rate"}) {
            QTest::newRow(f) << root + "tests/data/policies/valid/" + f + ".json"
                             << (std::string_view(f) == "with-validation");
        }
    }
    void filesRoundTrip() {
        QFETCH(QString, path);
        QFETCH(bool, canonical);
        PolicyLoadResult first = loadPolicyFile(path.toStdString());
        QVERIFY2(first.ok(), qPrintable(dump(first)));
        const std::string text = savePolicyText(*first.policies);
        QVERIFY(!text.empty() && text.back() == '\n');
        PolicyLoadResult second = parsePolicyText(text, "saved.json");
        QVERIFY2(second.ok(), qPrintable(dump(second)));
        QVERIFY(*second.policies == *first.policies);
        QCOMPARE(savePolicyText(*second.policies), text);
        if (canonical) QCOMPARE(readText(path), text);
        // Two-space indentation, no tabs, no trailing spaces.
        QVERIFY(text.rfind("{\n  \"version\": 1,\n  \"store\": {\n    \"kind\": ", 0) == 0);
        QVERIFY(text.find('\t') == std::string::npos);
        QVERIFY(text.find(" \n") == std::string::npos);
    }

    void validationRecordSurvives() {
        PolicyLoadResult r =
            loadPolicyFile(RATELAB_SOURCE_DIR "/tests/data/policies/valid/everything.json");
        QVERIFY2(r.ok(), qPrintable(dump(r)));
        const ValidationRecord& v = *r.policies->validation;
        QCOMPARE(v.generator, std::string("ratelab 0.1.0"));
        QCOMPARE(v.runs.size(), std::size_t(2));
        QCOMPARE(v.runs[0].seed, std::uint64_t(18446744073709551615ull));
        QCOMPARE(v.runs[0].requests, std::int64_t(1'200'000));
        QCOMPARE(v.runs[0].expectations[0].min.has_value(), false);
        QCOMPARE(*v.runs[0].expectations[0].max, 2.0);
        QCOMPARE(v.runs[0].expectations[0].actual, 1.25);
        QCOMPARE(v.runs[1].pass, false);
        PolicyLoadResult again = parsePolicyText(savePolicyText(*r.policies), "again.json");
        QVERIFY(again.ok());
        QVERIFY(*again.policies->validation == v);
    }

    void everyFieldIsWrittenInAFixedOrder() {
        PolicySet set;
        set.policies.emplace_back().name = "api";
        const std::string text = savePolicyText(set);
        const char* keys[] = {"\"version\"",
                              "\"store\"",
                              "\"kind\"",
                              "\"max_buckets\"",
                              "\"urls\"",
                              "\"namespace\"",
                              "\"trusted_proxies\"",
                              "\"cidrs\"",
                              "\"header\"",
                              "\"policies\"",
                              "\"name\"",
                              "\"match\"",
                              "\"path_prefix\"",
                              "\"path_pattern\"",
                              "\"methods\"",
                              "\"algorithm\"",
                              "\"capacity\"",
                              "\"refill_per_second\"",
                              "\"window_ms\"",
                              "\"delay\"",
                              "\"nodelay\"",
                              "\"cost\"",
                              "\"key\"",
                              "\"source\"",
                              "\"header\"",
                              "\"parts\"",
                              "\"ipv4_prefix\"",
                              "\"ipv6_prefix\"",
                              "\"unverified_authorization\"",
                              "\"budget\"",
                              "\"enabled\"",
                              "\"per_peer\"",
                              "\"global\"",
                              "\"slot_ttl_ms\"",
                              "\"on_store_error\"",
                              "\"store_timeout_ms\"",
                              "\"mode\"",
                              "\"headers\"",
                              "\"bypass\"",
                              "\"cidrs\"",
                              "\"principals\"",
                              "\"tiers\"",
                              "\"charge\"",
                              "\"failure_statuses\"",
                              "\"penalty\"",
                              "\"penalty_statuses\"",
                              "\"validation\""};
        std::size_t at = 0;
        for (const char* key : keys) {
            std::size_t found = text.find(key, at);
            QVERIFY2(found != std::string::npos, key);
            at = found + 1;
        }
        QVERIFY(text.find("\"refill_per_second\": 1.0,") != std::string::npos);
        QVERIFY(text.find("\"path_pattern\": null,") != std::string::npos);
        QVERIFY(text.find("\"slot_ttl_ms\": null,") != std::string::npos);  // follows the refill
        QVERIFY(text.find("\"tiers\": null,") != std::string::npos);
        QVERIFY(text.find("\"penalty_statuses\": []\n") != std::string::npos);
        QVERIFY(text.find("\"validation\": null\n}\n") != std::string::npos);
    }

    void randomSetsRoundTrip() {
        std::mt19937_64 rng(20261129);
        for (int i = 0; i < 300; ++i) {
            PolicySet set = randomSet(rng);
            const std::string text = savePolicyText(set);
            PolicyLoadResult r = parsePolicyText(text, "random.json");
            QVERIFY2(r.ok(), qPrintable(QString::number(i) + "\n" + dump(r) +
                                        QString::fromStdString(text)));
            QVERIFY2(*r.policies == set, qPrintable(QString::fromStdString(text)));
            QCOMPARE(savePolicyText(*r.policies), text);
            // Every export either succeeds with text or refuses with the reason.
            for (formats::ExportTarget t :
                 {formats::ExportTarget::Nginx, formats::ExportTarget::Envoy,
                  formats::ExportTarget::Haproxy}) {
                formats::ExportResult e = formats::exportPolicySet(set, t);
                QCOMPARE(e.ok(), !e.text.empty());
                for (const formats::ExportNote& n : e.notes) {
                    QVERIFY(!n.message.empty() && n.pointer.rfind("/", 0) == 0);
                }
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestPolicyRoundTrip)
#include "tst_policy_roundtrip.moc"
