// identity/key_deriver: composite keys: route, principal, headers and attributes, each part
// hashed or in clear as its kind says, and parts that cannot run into one another.

#include <QtTest>

#include <array>
#include <string>

#include "fixtures/key_deriver_fixture.h"

using namespace ratelab;
using namespace ratelab::identity;
using namespace ratelab::identity::test;

class TestKeyComposite : public QObject {
    Q_OBJECT

private slots:
    void compositeKeys() {
        KeyConfig config;
        config.source = KeySource::Composite;
        config.parts = {{KeyPart::Kind::Route, ""}, {KeyPart::Kind::Attribute, "account"}};
        RouteMatch match;
        match.pathPrefix = "/login";
        KeyDeriver deriver(config, BudgetConfig{}, routeLabel(match));

        // Route + a verified attribute: the route in clear, the account hashed, no budget.
        Request request;
        request.attribute("account", "victim@example.com").from("198.51.100.7");
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
        missing.from("198.51.100.7");
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
        request.from("2001:db8:7:1::5")
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
        QCOMPARE(std::string_view(out.key.levels[0].fallbackKey),
                 std::string_view("ip:2001:db8:7::/48"));
        QCOMPARE(std::string_view(out.key.levels[1].scope), std::string_view("net:2001:db8::/32"));
        QCOMPARE(out.key.partition(), std::string_view("ip:2001:db8::/32"));
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

QTEST_APPLESS_MAIN(TestKeyComposite)
#include "tst_key_composite.moc"
