// ratelab-cli check, run as a user runs it: one request against a fresh store, JSON out.

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "fixtures/cli_fixture.h"

namespace {

QString sha(const QByteArray& data) {
    return QString::fromLatin1(QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex());
}

using Run = ratelab::testing::CliRun;

Run check(const QStringList& arguments) {
    return ratelab::testing::runCli(QStringList{"check"} + arguments, {}, 30'000);
}

constexpr const char* kPolicy = R"({
  "version": 1,
  "trusted_proxies": { "cidrs": ["10.0.0.0/8"], "header": "x-forwarded-for" },
  "policies": [
    { "name": "api", "match": { "path_prefix": "/" }, "algorithm": "token_bucket",
      "capacity": 20, "refill_per_second": 1.0 },
    { "name": "login", "match": { "path_prefix": "/login", "methods": ["POST"] },
      "algorithm": "fixed_window", "capacity": 5, "window_ms": 60000,
      "key": { "source": "composite", "parts": ["route", "attribute:account"] } }
  ]
}
)";

}  // namespace

class TestIdentityCli : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        policy_ = dir_.filePath("policy.json");
        QFile f(policy_);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(kPolicy);
    }

    void authorizationIsKeyedHashedAndBudgeted() {
        Run run = check({"--policy", policy_, "--peer", "198.51.100.7", "--header",
                         "Authorization: Bearer SECRET-cli-token"});
        QCOMPARE(run.exitCode, 0);
        QJsonObject json = run.json();
        QCOMPARE(json["status"].toInt(), 200);
        QVERIFY(json["headers"].toObject().contains("RateLimit-Policy"));
        QVERIFY(json["body"].isNull());
        QJsonArray policies = json["policies"].toArray();
        QCOMPARE(policies.size(), 1);
        QJsonObject api = policies[0].toObject();
        QCOMPARE(api["name"].toString(), QStringLiteral("api"));
        QCOMPARE(api["key"].toString(), "auth:" + sha("Bearer SECRET-cli-token"));
        QCOMPARE(api["scope"].toString(), QStringLiteral("peer:198.51.100.7"));
        QCOMPARE(api["outcome"].toString(), QStringLiteral("passed"));
        QVERIFY(!run.out.contains("SECRET-cli-token"));
        QVERIFY(!run.err.contains("SECRET-cli-token"));
    }

    // An IPv4 address key has no budget; an IPv6 /64's scope is its /48 (the address budget).
    void peerKeyScopes() {
        Run v4 = check({"--policy", policy_, "--peer", "198.51.100.7"});
        QCOMPARE(v4.exitCode, 0);
        QJsonObject api = v4.json()["policies"].toArray()[0].toObject();
        QCOMPARE(api["key"].toString(), QStringLiteral("ip:198.51.100.7"));
        QVERIFY(api["scope"].isNull());
        Run v6 = check({"--policy", policy_, "--peer", "2001:db8:1:2::77"});
        QCOMPARE(v6.exitCode, 0);
        api = v6.json()["policies"].toArray()[0].toObject();
        QCOMPARE(api["key"].toString(), QStringLiteral("ip:2001:db8:1:2::/64"));
        QCOMPARE(api["scope"].toString(), QStringLiteral("net:2001:db8:1::/48"));
    }

    void trustedProxyClient() {
        Run run = check({"--policy", policy_, "--peer", "10.0.0.1", "--header",
                         "X-Forwarded-For: 192.0.2.1, 203.0.113.9", "--header",
                         "X-Forwarded-For: 10.0.0.2"});
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.json()["policies"].toArray()[0].toObject()["key"].toString(),
                 QStringLiteral("ip:203.0.113.9"));
    }

    void forwardedGarbageIs412() {
        Run run = check(
            {"--policy", policy_, "--peer", "10.0.0.1", "--header", "X-Forwarded-For: garbage"});
        QCOMPARE(run.exitCode, 0);
        QJsonObject json = run.json();
        QCOMPARE(json["status"].toInt(), 412);
        QVERIFY(QJsonDocument(json["body"].toObject()).toJson().contains("forwarded_malformed"));
        QJsonObject api = json["policies"].toArray()[0].toObject();
        QCOMPARE(api["outcome"].toString(), QStringLiteral("forwarded_malformed"));
        QVERIFY(api["key"].isNull());
    }

    void noIdentityIs412() {
        Run run = check({"--policy", policy_});
        QCOMPARE(run.exitCode, 0);
        QJsonObject json = run.json();
        QCOMPARE(json["status"].toInt(), 412);
        QVERIFY(QJsonDocument(json["body"].toObject()).toJson().contains("identity_unavailable"));
        QCOMPARE(json["policies"].toArray()[0].toObject()["outcome"].toString(),
                 QStringLiteral("no_identity"));
    }

    void compositeLoginKey() {
        Run run = check({"--policy", policy_, "--peer", "198.51.100.7", "--path", "/login",
                         "--method", "POST", "--attribute", "account=bob"});
        QCOMPARE(run.exitCode, 0);
        QJsonArray policies = run.json()["policies"].toArray();
        QCOMPARE(policies.size(), 2);
        QJsonObject login = policies[1].toObject();
        QCOMPARE(login["name"].toString(), QStringLiteral("login"));
        QCOMPARE(login["key"].toString(), "comp:/login:" + sha("3:bob"));
        QVERIFY(login["scope"].isNull());
    }

    void badInput_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        QTest::newRow("bad peer") << QStringList{"--peer", "1.2.3"} << "--peer";
        QTest::newRow("peer with port") << QStringList{"--peer", "1.2.3.4:80"} << "--peer";
        QTest::newRow("header without colon")
            << QStringList{"--header", "Authorization Bearer SECRET-cli-token"} << "--header";
        QTest::newRow("header bad name")
            << QStringList{"--header", "Bad Name SECRET-cli-token: x"} << "--header";
        QTest::newRow("attribute without name")
            << QStringList{"--attribute", "=x"} << "--attribute";
        QTest::newRow("path") << QStringList{"--path", "login"} << "--path";
        QTest::newRow("unknown option") << QStringList{"--peeer", "1.2.3.4"} << "peeer";
        QTest::newRow("unquoted header")
            << QStringList{"--header", "Authorization:", "Bearer", "SECRET-cli-token"}
            << "unexpected argument";
    }
    void badInput() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        Run run = check(QStringList{"--policy", policy_} + arguments);
        QCOMPARE(run.exitCode, 64);
        QVERIFY2(run.err.contains(message), qPrintable(run.err));
        QVERIFY(!run.err.contains("SECRET-cli-token"));
        QVERIFY(run.out.isEmpty());
    }

    void badPolicyNamesFileLineColumn() {
        QString path = dir_.filePath("bad.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            "{\n  \"version\": 1,\n  \"policies\": [ { \"name\": \"api\", \"capacity\": \"many\" } "
            "]\n}\n");
        f.close();
        Run run = check({"--policy", path, "--peer", "198.51.100.7"});
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains(path + ":3:"), qPrintable(run.err));
        QVERIFY(run.err.contains("error"));
        QVERIFY(run.out.isEmpty());
    }

    void missingPolicyFile() {
        Run run = check({"--policy", dir_.filePath("absent.json")});
        QCOMPARE(run.exitCode, 74);
        QVERIFY(run.err.contains("absent.json"));
    }

private:
    QTemporaryDir dir_;
    QString policy_;
};

QTEST_APPLESS_MAIN(TestIdentityCli)
#include "tst_identity_cli.moc"
