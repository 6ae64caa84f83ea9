#include <QCryptographicHash>
#include <QtTest>

#include <string>
#include <vector>

#include "identity/key_deriver.h"
#include "identity/sha256.h"

using namespace ratelab;
using namespace ratelab::identity;

namespace {

// SHA-256 by an independent implementation (Qt's), to check the engine's OpenSSL path.
QString qtSha(const QByteArray& data) {
    return QString::fromLatin1(QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex());
}

QString str(std::string_view s) {
    return QString::fromUtf8(s.data(), static_cast<int>(s.size()));
}

// Owns everything a RequestView borrows.
struct Request {
    std::vector<std::pair<std::string, std::string>> headerText;
    std::vector<std::pair<std::string, std::string>> attributeText;
    std::vector<Header> headers;
    std::vector<Attribute> attributes;
    std::string principal;
    std::string method = "POST";
    std::string path = "/login";
    IpAddress peerAddress;
    bool hasPeer = false;

    Request& peer(const char* text) {
        peerAddress = *IpAddress::parse(text);
        hasPeer = true;
        return *this;
    }
    Request& header(std::string name, std::string value) {
        headerText.emplace_back(std::move(name), std::move(value));
        return *this;
    }
    Request& attribute(std::string name, std::string value) {
        attributeText.emplace_back(std::move(name), std::move(value));
        return *this;
    }
    Request& principalIs(std::string p) {
        principal = std::move(p);
        return *this;
    }
    RequestView view() {
        headers.clear();
        attributes.clear();
        for (auto& [n, v] : headerText)
            headers.push_back({n, v});
        for (auto& [n, v] : attributeText)
            attributes.push_back({n, v});
        RequestView v;
        v.method = method;
        v.path = path;
        v.headers = headers;
        v.attributes = attributes;
        v.principal = principal;
        v.peer = hasPeer ? &peerAddress : nullptr;
        return v;
    }
};

struct Outcome {
    DeriveStatus status;
    DerivedKey key;
};

Outcome derive(const KeyDeriver& deriver, Request& request, const TrustedProxies& proxies = {}) {
    RequestView view = request.view();
    RequestContext context(view, proxies);
    Outcome out;
    out.status = deriver.derive(context, out.key);
    return out;
}

int statusCode(DeriveStatus s) {
    return static_cast<int>(s);
}
constexpr int kOk = static_cast<int>(DeriveStatus::Ok);
constexpr int kNoIdentity = static_cast<int>(DeriveStatus::NoIdentity);
constexpr int kMalformed = static_cast<int>(DeriveStatus::ForwardedMalformed);

}  // namespace

class TestKeyDeriver : public QObject {
    Q_OBJECT

private slots:
    void sha256MatchesKnownVectors() {
        char hex[kSha256HexLength];
        QVERIFY(sha256Hex("", hex));
        QCOMPARE(
            str({hex, 64}),
            QStringLiteral("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
        QVERIFY(sha256Hex("abc", hex));
        QCOMPARE(
            str({hex, 64}),
            QStringLiteral("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        std::string long_(100000, 'a');
        QVERIFY(sha256Hex(long_, hex));
        QCOMPARE(str({hex, 64}), qtSha(QByteArray(100000, 'a')));
    }

    void partsHashIsUnambiguous() {
        char ab_c[kSha256HexLength];
        char a_bc[kSha256HexLength];
        std::string_view first[] = {"ab", "c"};
        std::string_view second[] = {"a", "bc"};
        QVERIFY(sha256HexOfParts(first, ab_c));
        QVERIFY(sha256HexOfParts(second, a_bc));
        QVERIFY(std::string_view(ab_c, 64) != std::string_view(a_bc, 64));
        // The encoding is "<length>:<bytes>" per part; a part may hold any byte, NUL included.
        QCOMPARE(str({ab_c, 64}), qtSha("2:ab1:c"));
        std::string_view withNul[] = {std::string_view("x\0y", 3)};
        char nul[kSha256HexLength];
        QVERIFY(sha256HexOfParts(withNul, nul));
        QCOMPARE(str({nul, 64}), qtSha(QByteArray("3:x\0y", 5)));
        // A builder nested in another still produces the right digest (it takes its own context).
        Sha256PartsHasher outer;
        outer.addPart("ab");
        {
            Sha256PartsHasher inner;
            inner.addPart("zz");
            char innerHex[kSha256HexLength];
            QVERIFY(inner.finishHex(innerHex));
            QCOMPARE(str({innerHex, 64}), qtSha("2:zz"));
        }
        outer.addPart("c");
        char outerHex[kSha256HexLength];
        QVERIFY(outer.finishHex(outerHex));
        QCOMPARE(str({outerHex, 64}), qtSha("2:ab1:c"));
    }

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
        if (!peer.isEmpty()) request.peer(peer.toLatin1().constData());
        Outcome out = derive(deriver, request);
        QCOMPARE(statusCode(out.status), status);
        if (status != kOk) return;
        QCOMPARE(QString::fromStdString(out.key.key), key);
        QCOMPARE(QString::fromStdString(std::string(out.key.partition())), partition);
        QCOMPARE(QString::fromStdString(std::string(out.key.scope())), scope);
        QCOMPARE(out.key.hasBudget(), !scope.isEmpty());
        if (out.key.hasBudget()) {
            QCOMPARE(out.key.levelCount, std::size_t(1));  // IPv4: no address budget by default
            QCOMPARE(QString::fromStdString(out.key.levels[0].fallbackKey), fallback);
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
        withPeer.header("authorization", "k").peer("203.0.113.1");
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
        if (withPeer) request.peer("203.0.113.5");
        Outcome out = derive(deriver, request);
        QCOMPARE(statusCode(out.status), status);
        if (status != kOk) return;
        QCOMPARE(QString::fromStdString(out.key.key), key);
        QCOMPARE(QString::fromStdString(std::string(out.key.partition())), partition);
        QCOMPARE(QString::fromStdString(std::string(out.key.scope())), scope);
    }

    void compositeKeys() {
        KeyConfig config;
        config.source = KeySource::Composite;
        config.parts = {{KeyPart::Kind::Route, ""}, {KeyPart::Kind::Attribute, "account"}};
        RouteMatch match;
        match.pathPrefix = "/login";
        KeyDeriver deriver(config, BudgetConfig{}, routeLabel(match));

        // Route + a verified attribute: the route in clear, the account hashed, no budget.
        Request request;
        request.attribute("account", "victim@example.com").peer("198.51.100.7");
        Outcome out = derive(deriver, request);
        QCOMPARE(statusCode(out.status), kOk);
        QString expected = "comp:/login:" + qtSha("18:victim@example.com");
        QCOMPARE(QString::fromStdString(out.key.key), expected);
        QCOMPARE(out.key.partition(), std::string_view(out.key.key));
        QVERIFY(!out.key.hasBudget());
        QVERIFY(out.key.key.find("victim") == std::string::npos);

        // The request path is not the route: "/login/x" keys like "/login".
        request.path = "/login/anything";
        QCOMPARE(QString::fromStdString(derive(deriver, request).key.key), expected);

        // A missing part refuses.
        Request missing;
        missing.peer("198.51.100.7");
        QCOMPARE(statusCode(derive(deriver, missing).status), kNoIdentity);
    }

    void compositeWithEveryPart() {
        KeyConfig config;
        config.source = KeySource::Composite;
        config.parts = {{KeyPart::Kind::Route, ""},     {KeyPart::Kind::Method, ""},
                        {KeyPart::Kind::Peer, ""},      {KeyPart::Kind::Principal, ""},
                        {KeyPart::Kind::Header, "x-a"}, {KeyPart::Kind::Attribute, "plan"}};
        config.ipv6Prefix = 48;
        KeyDeriver deriver(config, BudgetConfig{}, "/api/**");
        Request request;
        request.peer("2001:db8:7:1::5")
            .principalIs("alice")
            .header("X-A", "v")
            .attribute("plan", "gold");
        Outcome out = derive(deriver, request);
        QCOMPARE(statusCode(out.status), kOk);
        QCOMPARE(QString::fromStdString(out.key.key),
                 "comp:/api/**:" + qtSha("4:POST15:2001:db8:7::/485:alice1:v4:gold"));
        // A header part is caller-controlled: budgeted on the peer, whose /48 counts against its
        // /32 (the address budget's /48 level is not shorter than the key's /48, so it is not).
        QCOMPARE(out.key.levelCount, std::size_t(2));
        QCOMPARE(out.key.scope(), std::string_view("peer:2001:db8:7::/48"));
        QCOMPARE(out.key.levels[0].fallbackKey, std::string("ip:2001:db8:7::/48"));
        QCOMPARE(out.key.levels[1].scope, std::string("net:2001:db8::/32"));
        QCOMPARE(out.key.partition(), std::string_view("ip:2001:db8::/32"));
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
        request.peer(peer.toLatin1().constData());
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

    void compositePartsDoNotRunTogether() {
        KeyConfig config;
        config.source = KeySource::Composite;
        config.parts = {{KeyPart::Kind::Header, "x-a"}, {KeyPart::Kind::Header, "x-b"}};
        BudgetConfig budget;
        budget.enabled = false;
        KeyDeriver deriver(config, budget, "/");
        Request one;
        one.header("x-a", "ab").header("x-b", "c");
        Request two;
        two.header("x-a", "a").header("x-b", "bc");
        QVERIFY(derive(deriver, one).key.key != derive(deriver, two).key.key);
        QCOMPARE(std::string(derive(deriver, one).key.partition()), derive(deriver, one).key.key);
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
        request.peer("10.0.0.1").header("X-Forwarded-For", "not-an-address");
        if (withPrincipal) request.principalIs("alice");
        if (withAuthorization) request.header("Authorization", "Bearer x");
        QCOMPARE(statusCode(derive(deriver, request, proxies).status), status);
    }

    void trustedProxyClientIsTheKeyedAddress() {
        KeyDeriver deriver(KeyConfig{}, BudgetConfig{});
        TrustedProxies proxies;
        proxies.cidrs.push_back(*Cidr::parse("10.0.0.0/8"));
        Request request;
        request.peer("10.0.0.1").header("x-forwarded-for", "1.1.1.1, 203.0.113.9, 10.0.0.2");
        QCOMPARE(derive(deriver, request, proxies).key.key, std::string("ip:203.0.113.9"));
        // The same header from an untrusted peer is ignored.
        Request direct;
        direct.peer("198.51.100.7").header("x-forwarded-for", "203.0.113.9");
        QCOMPARE(derive(deriver, direct, proxies).key.key, std::string("ip:198.51.100.7"));
    }

    void contextComputesOnce() {
        Request request;
        request.header("Authorization", "Bearer once").principalIs("p").peer("198.51.100.7");
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

    void derivedKeyIsReusedWithoutReallocation() {
        KeyDeriver deriver(KeyConfig{}, BudgetConfig{});
        DerivedKey out;
        TrustedProxies proxies;
        const char* keyData = nullptr;
        const char* scopeData = nullptr;
        for (int i = 0; i < 100; ++i) {
            Request request;
            request.header("Authorization", "Bearer " + std::to_string(i))
                .peer("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff");
            RequestView view = request.view();
            RequestContext context(view, proxies);
            QCOMPARE(statusCode(deriver.derive(context, out)), kOk);
            if (i == 0) {
                keyData = out.key.data();
                scopeData = out.levels[2].scope.data();  // peer, /48, /32
            }
            QCOMPARE(out.key.data(), keyData);
            QCOMPARE(out.levels[2].scope.data(), scopeData);
        }
        // Switching to an unbudgeted key clears the budget fields.
        Request peerOnly;
        peerOnly.peer("198.51.100.7");
        RequestView view = peerOnly.view();
        RequestContext context(view, proxies);
        QCOMPARE(statusCode(deriver.derive(context, out)), kOk);
        QVERIFY(!out.hasBudget());
        QCOMPARE(out.levelCount, std::size_t(0));
        QCOMPARE(out.scope(), std::string_view());
    }

    void policyConstructorUsesTheRoute() {
        Policy policy;
        policy.match.pathPattern = "/accounts/*/login";
        policy.key.source = KeySource::Composite;
        policy.key.parts = {{KeyPart::Kind::Route, ""}, {KeyPart::Kind::Principal, ""}};
        KeyDeriver deriver(policy);
        Request request;
        request.principalIs("bob");
        QCOMPARE(QString::fromStdString(derive(deriver, request).key.key),
                 "comp:/accounts/*/login:" + qtSha("3:bob"));
    }
};

QTEST_APPLESS_MAIN(TestKeyDeriver)
#include "tst_key_deriver.moc"
