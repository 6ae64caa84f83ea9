// identity/key_deriver: the default key chain (principal, Authorization, peer), other
// single sources, budget numbers, and a context that computes once and reuses its buffers.

#include <QtTest>

#include <string>

#include "fixtures/key_deriver_fixture.h"

using namespace ratelab;
using namespace ratelab::identity;
using namespace ratelab::identity::test;

class TestKeyDeriver : public QObject {
    Q_OBJECT

private slots:
    void defaultChain_data() {
        QTest::addColumn<QString>("principal");
        QTest::addColumn<QString>("authorization");  // "" for none
        QTest::addColumn<QString>("peer");           // "" for none
        QTest::addColumn<int>("v4Prefix");
        QTest::addColumn<bool>("ignoreAuthorization");
        QTest::addColumn<bool>("budgetEnabled");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("partition");
        QTest::addColumn<QString>("scope");
        QTest::addColumn<QString>("fallback");
        QTest::addColumn<int>("cap");
        const QString auth = "auth:" + qtSha("Bearer t-1");
        const QString princ = "princ:" + qtSha("alice");

        QTest::newRow("principal wins")
            << "alice"
            << "Bearer t-1"
            << "198.51.100.7" << 32 << false << true << kOk << princ << princ << ""
            << "" << 0;
        QTest::newRow("authorization and peer")
            << ""
            << "Bearer t-1"
            << "198.51.100.7" << 32 << false << true << kOk << auth << "ip:198.51.100.7"
            << "peer:198.51.100.7"
            << "ip:198.51.100.7" << 128;
        QTest::newRow("authorization, OWS trimmed")
            << ""
            << "  Bearer t-1\t"
            << "198.51.100.7" << 32 << false << true << kOk << auth << "ip:198.51.100.7"
            << "peer:198.51.100.7"
            << "ip:198.51.100.7" << 128;
        QTest::newRow("authorization, no peer")
            << ""
            << "Bearer t-1"
            << "" << 32 << false << true << kOk << auth << "global"
            << "global"
            << "overflow" << 8192;
        QTest::newRow("authorization, v6 peer") << ""
                                                << "Bearer t-1"
                                                << "2001:db8:1:2:dead:beef:0:1" << 32 << false
                                                << true << kOk << auth << "ip:2001:db8:1:2::/64"
                                                << "peer:2001:db8:1:2::/64"
                                                << "ip:2001:db8:1:2::/64" << 128;
        QTest::newRow("authorization, v4 /24")
            << ""
            << "Bearer t-1"
            << "198.51.100.7" << 24 << false << true << kOk << auth << "ip:198.51.100.0/24"
            << "peer:198.51.100.0/24"
            << "ip:198.51.100.0/24" << 128;
        QTest::newRow("peer only")
            << ""
            << ""
            << "198.51.100.7" << 32 << false << true << kOk << "ip:198.51.100.7"
            << "ip:198.51.100.7"
            << ""
            << "" << 0;
        QTest::newRow("mapped peer is v4")
            << ""
            << ""
            << "::ffff:198.51.100.7" << 32 << false << true << kOk << "ip:198.51.100.7"
            << "ip:198.51.100.7"
            << ""
            << "" << 0;
        QTest::newRow("loopback v6 per address") << ""
                                                 << ""
                                                 << "::1" << 32 << false << true << kOk << "ip:::1"
                                                 << "ip:::1"
                                                 << ""
                                                 << "" << 0;
        QTest::newRow("v6 peer aggregated")
            << ""
            << ""
            << "2001:db8:1:2::99" << 32 << false << true << kOk << "ip:2001:db8:1:2::/64"
            << "ip:2001:db8:1:2::/64"
            << ""
            << "" << 0;
        QTest::newRow("blank authorization is absent")
            << ""
            << "   "
            << "198.51.100.7" << 32 << false << true << kOk << "ip:198.51.100.7"
            << "ip:198.51.100.7"
            << ""
            << "" << 0;
        QTest::newRow("neither") << ""
                                 << ""
                                 << "" << 32 << false << true << kNoIdentity << ""
                                 << ""
                                 << ""
                                 << "" << 0;
        QTest::newRow("ignore: keyed on the peer")
            << ""
            << "Bearer t-1"
            << "198.51.100.7" << 32 << true << true << kOk << "ip:198.51.100.7"
            << "ip:198.51.100.7"
            << ""
            << "" << 0;
        QTest::newRow("ignore, no peer") << ""
                                         << "Bearer t-1"
                                         << "" << 32 << true << true << kNoIdentity << ""
                                         << ""
                                         << ""
                                         << "" << 0;
        QTest::newRow("budget disabled")
            << ""
            << "Bearer t-1"
            << "198.51.100.7" << 32 << false << false << kOk << auth << auth << ""
            << "" << 0;
    }
    void defaultChain() {
        QFETCH(QString, principal);
        QFETCH(QString, authorization);
        QFETCH(QString, peer);
        QFETCH(int, v4Prefix);
        QFETCH(bool, ignoreAuthorization);
        QFETCH(bool, budgetEnabled);
        QFETCH(int, status);
        QFETCH(QString, key);
        QFETCH(QString, partition);
        QFETCH(QString, scope);
        QFETCH(QString, fallback);
        QFETCH(int, cap);

        KeyConfig config;
        config.ipv4Prefix = v4Prefix;
        if (ignoreAuthorization) config.unverifiedAuthorization = UnverifiedAuthorization::Ignore;
        BudgetConfig budget;
        budget.enabled = budgetEnabled;
        budget.slotTtl = 90 * kNanosPerSecond;
        budget.ipv6Prefixes.clear();  // address budgets: addressBudgetChains
        KeyDeriver deriver(config, budget);

        Request request;
        request.principalIs(principal.toStdString());
        if (!authorization.isEmpty()) request.header("Authorization", authorization.toStdString());
        if (!peer.isEmpty()) request.from(peer.toLatin1().constData());
        Outcome out = derive(deriver, request);
        QCOMPARE(statusCode(out.status), status);
        if (status != kOk) return;
        QCOMPARE(QString::fromStdString(out.key.key), key);
        QCOMPARE(QString::fromStdString(std::string(out.key.partition())), partition);
        QCOMPARE(QString::fromStdString(std::string(out.key.scope())), scope);
        QCOMPARE(out.key.hasBudget(), !scope.isEmpty());
        if (out.key.hasBudget()) {
            QCOMPARE(out.key.levelCount, std::size_t(1));  // IPv4: no address budget by default
            QCOMPARE(str(out.key.levels[0].fallbackKey), fallback);
            QCOMPARE(int(out.key.levels[0].cap), cap);
            QCOMPARE(out.key.slotTtl, 90 * kNanosPerSecond);
            std::array<BucketBudget, kMaxBudgetLevels> chain;
            const BucketBudget* b = out.key.budget(chain);
            QVERIFY(b != nullptr);
            QCOMPARE(b->scope, out.key.scope());
            QCOMPARE(b->fallbackKey, std::string_view(out.key.levels[0].fallbackKey));
            QCOMPARE(int(b->cap), cap);
            QVERIFY(b->next == nullptr);
        }
        // Nothing but hashes and addresses reaches a key.
        QVERIFY(out.key.key.find("t-1") == std::string::npos);
        QVERIFY(out.key.key.find("alice") == std::string::npos);
    }

    void budgetNumbersComeFromTheConfig() {
        BudgetConfig budget;
        budget.perPeer = 3;
        budget.global = 5;
        KeyDeriver deriver(KeyConfig{}, budget);
        Request withPeer;
        withPeer.header("authorization", "k").from("203.0.113.1");
        QCOMPARE(int(derive(deriver, withPeer).key.levels[0].cap), 3);
        Request withoutPeer;
        withoutPeer.header("authorization", "k");
        QCOMPARE(int(derive(deriver, withoutPeer).key.levels[0].cap), 5);
    }

    void otherSources_data() {
        QTest::addColumn<int>("source");
        QTest::addColumn<bool>("withPrincipal");
        QTest::addColumn<bool>("withApiKey");
        QTest::addColumn<bool>("withPeer");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("partition");
        QTest::addColumn<QString>("scope");
        const int peer = int(KeySource::Peer);
        const int principal = int(KeySource::Principal);
        const int header = int(KeySource::Header);
        const QString hdr = "hdr:" + qtSha("key-123");
        const QString princ = "princ:" + qtSha("alice");
        QTest::newRow("peer: ignores credentials")
            << peer << true << true << true << kOk << "ip:203.0.113.5"
            << "ip:203.0.113.5"
            << "";
        QTest::newRow("peer: none") << peer << true << true << false << kNoIdentity << ""
                                    << ""
                                    << "";
        QTest::newRow("principal")
            << principal << true << true << true << kOk << princ << princ << "";
        QTest::newRow("principal: none") << principal << false << true << true << kNoIdentity << ""
                                         << ""
                                         << "";
        QTest::newRow("header, budgeted on the peer")
            << header << true << true << true << kOk << hdr << "ip:203.0.113.5"
            << "peer:203.0.113.5";
        QTest::newRow("header without peer: global budget")
            << header << false << true << false << kOk << hdr << "global"
            << "global";
        QTest::newRow("header: absent") << header << true << false << true << kNoIdentity << ""
                                        << ""
                                        << "";
    }
    void otherSources() {
        QFETCH(int, source);
        QFETCH(bool, withPrincipal);
        QFETCH(bool, withApiKey);
        QFETCH(bool, withPeer);
        QFETCH(int, status);
        QFETCH(QString, key);
        QFETCH(QString, partition);
        QFETCH(QString, scope);
        KeyConfig config;
        config.source = static_cast<KeySource>(source);
        config.header = "x-api-key";
        KeyDeriver deriver(config, BudgetConfig{});
        Request request;
        request.header("Authorization", "Bearer other");
        if (withPrincipal) request.principalIs("alice");
        if (withApiKey) request.header("X-Api-Key", "key-123");
        if (withPeer) request.from("203.0.113.5");
        Outcome out = derive(deriver, request);
        QCOMPARE(statusCode(out.status), status);
        if (status != kOk) return;
        QCOMPARE(QString::fromStdString(out.key.key), key);
        QCOMPARE(QString::fromStdString(std::string(out.key.partition())), partition);
        QCOMPARE(QString::fromStdString(std::string(out.key.scope())), scope);
    }

    void contextComputesOnce() {
        Request request;
        request.header("Authorization", "Bearer once").principalIs("p").from("198.51.100.7");
        RequestView view = request.view();
        TrustedProxies proxies;
        RequestContext context(view, proxies);
        std::string_view first = context.authorizationHash();
        std::string_view second = context.authorizationHash();
        QCOMPARE(first.data(), second.data());
        QCOMPARE(str(first), qtSha("Bearer once"));
        QCOMPARE(str(context.principalHash()), qtSha("p"));
        QCOMPARE(&context.client(), &context.client());
        QCOMPARE(context.client().address.toString(), std::string("198.51.100.7"));
    }

    // The longest names a budget level can have: an IPv6 address of eight four-digit groups
    // with a prefix length of three digits, after the longest scope prefix.
    void levelNamesHoldTheLongestAddress() {
        KeyConfig config;
        config.ipv6Prefix = 127;
        KeyDeriver deriver(config, BudgetConfig{});
        Request request;
        request.header("Authorization", "Bearer t").from("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
        Outcome out = derive(deriver, request);
        QCOMPARE(statusCode(out.status), kOk);
        QCOMPARE(out.key.levelCount, std::size_t(3));
        QCOMPARE(str(out.key.levels[0].scope),
                 QString("peer:ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe/127"));
        QCOMPARE(str(out.key.levels[0].fallbackKey),
                 QString("ip:ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe/127"));
        QCOMPARE(str(out.key.levels[1].scope), QString("net:ffff:ffff:ffff::/48"));
        QCOMPARE(str(out.key.levels[2].fallbackKey), QString("ip:ffff:ffff::/32"));
    }

    void derivedKeyIsReusedWithoutReallocation() {
        KeyDeriver deriver(KeyConfig{}, BudgetConfig{});
        DerivedKey out;
        TrustedProxies proxies;
        const char* keyData = nullptr;
        for (int i = 0; i < 100; ++i) {
            Request request;
            request.header("Authorization", "Bearer " + std::to_string(i))
                .from("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff");
            RequestView view = request.view();
            RequestContext context(view, proxies);
            QCOMPARE(statusCode(deriver.derive(context, out)), kOk);
            if (i == 0) keyData = out.key.data();
            QCOMPARE(out.key.data(), keyData);
            QCOMPARE(out.levelCount, std::size_t(3));  // peer, /48, /32: kept in the key itself
        }
        // Switching to an unbudgeted key clears the budget fields.
        Request peerOnly;
        peerOnly.from("198.51.100.7");
        RequestView view = peerOnly.view();
        RequestContext context(view, proxies);
        QCOMPARE(statusCode(deriver.derive(context, out)), kOk);
        QVERIFY(!out.hasBudget());
        QCOMPARE(out.levelCount, std::size_t(0));
        QCOMPARE(out.scope(), std::string_view());
    }
};

QTEST_APPLESS_MAIN(TestKeyDeriver)
#include "tst_key_deriver.moc"
