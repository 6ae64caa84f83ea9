// identity/key_deriver: keys from addresses: IPv4 and IPv6 prefixes, budget chains of nested
// networks, trusted proxies, and failing closed on a malformed forwarded header.

#include <QtTest>

#include <array>
#include <string>

#include "fixtures/key_deriver_fixture.h"

using namespace ratelab;
using namespace ratelab::identity;
using namespace ratelab::identity::test;

class TestKeyAddresses : public QObject {
    Q_OBJECT

private slots:
    void keyAddresses_data() {
        QTest::addColumn<QString>("address");
        QTest::addColumn<int>("v4Prefix");
        QTest::addColumn<int>("v6Prefix");
        QTest::addColumn<QString>("expected");
        QTest::newRow("v4 /32") << "198.51.100.7" << 32 << 64 << "198.51.100.7";
        QTest::newRow("v4 /24") << "198.51.100.7" << 24 << 64 << "198.51.100.0/24";
        QTest::newRow("mapped is v4") << "::ffff:198.51.100.7" << 32 << 64 << "198.51.100.7";
        QTest::newRow("mapped /24") << "::ffff:198.51.100.7" << 24 << 64 << "198.51.100.0/24";
        QTest::newRow("v6 /64") << "2001:db8:1:2:a:b:c:d" << 32 << 64 << "2001:db8:1:2::/64";
        QTest::newRow("v6 /56") << "2001:db8:1:2ff:a:b:c:d" << 32 << 56 << "2001:db8:1:200::/56";
        QTest::newRow("v6 /48") << "2001:db8:1:2:a:b:c:d" << 32 << 48 << "2001:db8:1::/48";
        QTest::newRow("v6 /128") << "2001:db8:1:2:a:b:c:d" << 32 << 128 << "2001:db8:1:2:a:b:c:d";
        QTest::newRow("loopback per address") << "::1" << 32 << 64 << "::1";
        QTest::newRow("unspecified per address") << "::" << 32 << 64 << "::";
        QTest::newRow("::/64 per address") << "::abcd:1" << 32 << 64 << "::abcd:1";
        QTest::newRow("nat64 is its v4") << "64:ff9b::198.51.100.7" << 32 << 64 << "198.51.100.7";
        QTest::newRow("nat64 /24") << "64:ff9b::198.51.100.7" << 24 << 64 << "198.51.100.0/24";
        QTest::newRow("past nat64 /96") << "64:ff9b:0:0:1::1" << 32 << 64 << "64:ff9b::/64";
        QTest::newRow("widest") << "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" << 32 << 127
                                << "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe/127";
    }
    void keyAddresses() {
        QFETCH(QString, address);
        QFETCH(int, v4Prefix);
        QFETCH(int, v6Prefix);
        QFETCH(QString, expected);
        IpAddress a = *IpAddress::parse(address.toStdString());
        std::string text = formatKeyAddress(a, v4Prefix, v6Prefix);
        QCOMPARE(QString::fromStdString(text), expected);
        QVERIFY(text.size() <= kMaxKeyAddressLength);
    }

    // Address budgets: the networks enclosing a client address, each with its cap and bucket,
    // innermost first, and the outermost network's bucket as the partition. The list is
    // "scope>fallback:cap" per level, joined with spaces.
    void addressBudgetChains_data() {
        QTest::addColumn<int>("source");
        QTest::addColumn<QString>("peer");
        QTest::addColumn<QString>("authorization");
        QTest::addColumn<int>("v6Prefix");
        QTest::addColumn<bool>("ipv4Levels");
        QTest::addColumn<bool>("enabled");
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("levels");
        QTest::addColumn<QString>("partition");
        const int def = int(KeySource::Default);
        const int peer = int(KeySource::Peer);
        const int comp = int(KeySource::Composite);
        const QString v6Chain =
            "net:2001:db8:1::/48>ip:2001:db8:1::/48:1024 net:2001:db8::/32>ip:2001:db8::/32:65536";
        QTest::newRow("a /64 counts against its /48 and /32")
            << def << "2001:db8:1:2::99"
            << "" << 64 << false << true << "ip:2001:db8:1:2::/64" << v6Chain << "ip:2001:db8::/32";
        QTest::newRow("source peer alike")
            << peer << "2001:db8:1:2::99"
            << "Bearer t" << 64 << false << true << "ip:2001:db8:1:2::/64" << v6Chain
            << "ip:2001:db8::/32";
        QTest::newRow("a credential on a /64: its peer, then the networks")
            << def << "2001:db8:1:2::99"
            << "Bearer t" << 64 << false << true << "auth:" + qtSha("Bearer t")
            << "peer:2001:db8:1:2::/64>ip:2001:db8:1:2::/64:128 " + v6Chain << "ip:2001:db8::/32";
        QTest::newRow("keyed per /48: only the /32 encloses it")
            << def << "2001:db8:1:2::99"
            << "" << 48 << false << true << "ip:2001:db8:1::/48"
            << "net:2001:db8::/32>ip:2001:db8::/32:65536"
            << "ip:2001:db8::/32";
        QTest::newRow("keyed per /32: nothing encloses it")
            << def << "2001:db8:1:2::99"
            << "" << 32 << false << true << "ip:2001:db8::/32"
            << ""
            << "ip:2001:db8::/32";
        QTest::newRow("budget off") << def << "2001:db8:1:2::99"
                                    << "" << 64 << false << false << "ip:2001:db8:1:2::/64"
                                    << ""
                                    << "ip:2001:db8:1:2::/64";
        QTest::newRow("loopback is never aggregated") << def << "::1"
                                                      << "" << 64 << false << true << "ip:::1"
                                                      << ""
                                                      << "ip:::1";
        QTest::newRow("IPv4: none by default") << def << "198.51.100.7"
                                               << "" << 64 << false << true << "ip:198.51.100.7"
                                               << ""
                                               << "ip:198.51.100.7";
        QTest::newRow("IPv4 levels when configured")
            << def << "198.51.100.7"
            << "" << 64 << true << true << "ip:198.51.100.7"
            << "net:198.51.100.0/24>ip:198.51.100.0/24:256 net:198.51.0.0/16>ip:198.51.0.0/16:4096"
            << "ip:198.51.0.0/16";
        QTest::newRow("NAT64 follows the IPv4 levels")
            << def << "64:ff9b::198.51.100.7"
            << "" << 64 << true << true << "ip:198.51.100.7"
            << "net:198.51.100.0/24>ip:198.51.100.0/24:256 net:198.51.0.0/16>ip:198.51.0.0/16:4096"
            << "ip:198.51.0.0/16";
        QTest::newRow("a composite with the address in it")
            << comp << "2001:db8:1:2::99"
            << "" << 64 << false << true << "comp:/:" + qtSha("17:2001:db8:1:2::/64") << v6Chain
            << "ip:2001:db8::/32";
    }
    void addressBudgetChains() {
        QFETCH(int, source);
        QFETCH(QString, peer);
        QFETCH(QString, authorization);
        QFETCH(int, v6Prefix);
        QFETCH(bool, ipv4Levels);
        QFETCH(bool, enabled);
        QFETCH(QString, key);
        QFETCH(QString, levels);
        QFETCH(QString, partition);
        KeyConfig config;
        config.source = KeySource(source);
        config.ipv6Prefix = v6Prefix;
        if (config.source == KeySource::Composite) config.parts = {{KeyPart::Kind::Peer, ""}};
        BudgetConfig budget;
        budget.enabled = enabled;
        if (ipv4Levels) budget.ipv4Prefixes = {{24, 256}, {16, 4096}};
        KeyDeriver deriver(config, budget);
        Request request;
        request.from(peer.toLatin1().constData());
        if (!authorization.isEmpty()) request.header("Authorization", authorization.toStdString());
        Outcome out = derive(deriver, request);
        QCOMPARE(statusCode(out.status), kOk);
        QCOMPARE(str(out.key.key), key);
        QStringList got;
        for (std::size_t i = 0; i < out.key.levelCount; ++i) {
            const DerivedKey::Level& l = out.key.levels[i];
            got << str(l.scope) + ">" + str(l.fallbackKey) + ":" + QString::number(l.cap);
        }
        QCOMPARE(got.join(' '), levels);
        QCOMPARE(str(out.key.partition()), partition);
        // The chain handed to a store links the same levels, innermost first.
        std::array<BucketBudget, kMaxBudgetLevels> chain;
        std::size_t n = 0;
        for (const BucketBudget* b = out.key.budget(chain); b; b = b->next) {
            QCOMPARE(b->scope, std::string_view(out.key.levels[n].scope));
            QCOMPARE(b->slotTtl, kDefaultSlotTtl);  // none written: the default
            ++n;
        }
        QCOMPARE(n, out.key.levelCount);
    }

    void malformedForwardedFailsClosedWhenTheAddressIsNeeded_data() {
        QTest::addColumn<int>("source");
        QTest::addColumn<bool>("withPrincipal");
        QTest::addColumn<bool>("withAuthorization");
        QTest::addColumn<bool>("budgetEnabled");
        QTest::addColumn<int>("status");
        const int def = int(KeySource::Default);
        QTest::newRow("principal needs no address") << def << true << true << true << kOk;
        QTest::newRow("budgeted authorization") << def << false << true << true << kMalformed;
        QTest::newRow("unbudgeted authorization") << def << false << true << false << kOk;
        QTest::newRow("peer fallback") << def << false << false << true << kMalformed;
        QTest::newRow("peer source") << int(KeySource::Peer) << true << true << true << kMalformed;
    }
    void malformedForwardedFailsClosedWhenTheAddressIsNeeded() {
        QFETCH(int, source);
        QFETCH(bool, withPrincipal);
        QFETCH(bool, withAuthorization);
        QFETCH(bool, budgetEnabled);
        QFETCH(int, status);
        KeyConfig config;
        config.source = static_cast<KeySource>(source);
        BudgetConfig budget;
        budget.enabled = budgetEnabled;
        KeyDeriver deriver(config, budget);
        TrustedProxies proxies;
        proxies.cidrs.push_back(*Cidr::parse("10.0.0.0/8"));
        Request request;
        request.from("10.0.0.1").header("X-Forwarded-For", "not-an-address");
        if (withPrincipal) request.principalIs("alice");
        if (withAuthorization) request.header("Authorization", "Bearer x");
        QCOMPARE(statusCode(derive(deriver, request, proxies).status), status);
    }

    void trustedProxyClientIsTheKeyedAddress() {
        KeyDeriver deriver(KeyConfig{}, BudgetConfig{});
        TrustedProxies proxies;
        proxies.cidrs.push_back(*Cidr::parse("10.0.0.0/8"));
        Request request;
        request.from("10.0.0.1").header("x-forwarded-for", "1.1.1.1, 203.0.113.9, 10.0.0.2");
        QCOMPARE(derive(deriver, request, proxies).key.key, std::string("ip:203.0.113.9"));
        // The same header from an untrusted peer is ignored.
        Request direct;
        direct.from("198.51.100.7").header("x-forwarded-for", "203.0.113.9");
        QCOMPARE(derive(deriver, direct, proxies).key.key, std::string("ip:198.51.100.7"));
    }
};

QTEST_APPLESS_MAIN(TestKeyAddresses)
#include "tst_key_addresses.moc"
