#include <QtTest>

#include <string>
#include <vector>

#include "identity/forwarded.h"

using namespace ratelab;
using namespace ratelab::identity;

namespace {

QString show(const std::optional<IpAddress>& a) {
    return a ? QString::fromStdString(a->toString()) : QStringLiteral("<refused>");
}

constexpr int kNone = 0;
constexpr int kOk = 1;
constexpr int kMalformed = 2;

int statusOf(const ClientAddress& c) {
    switch (c.status) {
        case ClientAddress::Status::None:
            return kNone;
        case ClientAddress::Status::Ok:
            return kOk;
        case ClientAddress::Status::Malformed:
            return kMalformed;
    }
    return -1;
}

// Owns the strings a RequestView borrows.
struct RequestFixture {
    std::vector<std::string> names;
    std::vector<std::string> values;
    std::vector<Header> headers;
    IpAddress peerAddress;
    RequestView view;

    RequestFixture(const QString& peer, const QString& headerName, const QStringList& lines) {
        for (const QString& line : lines) {
            names.push_back(headerName.toStdString());
            values.push_back(line.toStdString());
        }
        for (std::size_t k = 0; k < names.size(); ++k)
            headers.push_back({names[k], values[k]});
        view.method = "GET";
        view.path = "/";
        view.headers = headers;
        if (!peer.isEmpty()) {
            peerAddress = *IpAddress::parse(peer.toStdString());
            view.peer = &peerAddress;
        }
    }
};

TrustedProxies proxiesOf(const QStringList& cidrs, const QString& header) {
    TrustedProxies proxies;
    for (const QString& c : cidrs)
        proxies.cidrs.push_back(*Cidr::parse(c.toStdString()));
    proxies.header = header.toLower().toStdString();
    return proxies;
}

}  // namespace

class TestForwarded : public QObject {
    Q_OBJECT

private slots:
    void forwardedForNodes_data() {
        QTest::addColumn<QString>("element");
        QTest::addColumn<QString>("expected");
        QTest::newRow("v4") << "198.51.100.7"
                            << "198.51.100.7";
        QTest::newRow("v6") << "2001:db8::1"
                            << "2001:db8::1";
        QTest::newRow("bracketed v6") << "[2001:db8::1]"
                                      << "2001:db8::1";
        QTest::newRow("v4 with port") << "198.51.100.7:4711"
                                      << "198.51.100.7";
        QTest::newRow("v6 with port") << "[2001:db8::1]:443"
                                      << "2001:db8::1";
        QTest::newRow("mapped") << "::ffff:10.0.0.1"
                                << "10.0.0.1";
        QTest::newRow("unknown") << "unknown"
                                 << "<refused>";
        QTest::newRow("garbage") << "garbage"
                                 << "<refused>";
        QTest::newRow("port too big") << "198.51.100.7:65536"
                                      << "<refused>";
        QTest::newRow("empty port") << "198.51.100.7:"
                                    << "<refused>";
        QTest::newRow("v6 empty port") << "[2001:db8::1]:"
                                       << "<refused>";
        QTest::newRow("host name") << "proxy.example:80"
                                   << "<refused>";
        QTest::newRow("zone id") << "fe80::1%eth0"
                                 << "<refused>";
        QTest::newRow("octal-looking") << "010.0.0.1"
                                       << "<refused>";
    }
    void forwardedForNodes() {
        QFETCH(QString, element);
        QFETCH(QString, expected);
        QCOMPARE(show(parseForwardedNode(element.toStdString())), expected);
    }

    void rfc7239Elements_data() {
        QTest::addColumn<QString>("element");
        QTest::addColumn<QString>("expected");
        QTest::newRow("rfc example") << "for=192.0.2.60;proto=http;by=203.0.113.43"
                                     << "192.0.2.60";
        QTest::newRow("quoted v6 with port") << "for=\"[2001:db8:cafe::17]:4711\""
                                             << "2001:db8:cafe::17";
        QTest::newRow("quoted v4 with port") << "For=\"192.0.2.43:47011\""
                                             << "192.0.2.43";
        QTest::newRow("obfuscated port") << "for=\"192.0.2.43:_abc\""
                                         << "192.0.2.43";
        QTest::newRow("for last") << "proto=https;by=10.0.0.1;for=198.51.100.9"
                                  << "198.51.100.9";
        QTest::newRow("quoted-pair") << "for=\"\\1\\92.0.2.1\""
                                     << "192.0.2.1";
        QTest::newRow("spaces around pairs") << " for=192.0.2.60 ; proto=http"
                                             << "192.0.2.60";
        QTest::newRow("obfuscated identifier") << "for=_hidden"
                                               << "<refused>";
        QTest::newRow("quoted obfuscated") << "for=\"_gazonk\""
                                           << "<refused>";
        QTest::newRow("unknown") << "for=unknown"
                                 << "<refused>";
        QTest::newRow("no for") << "proto=https;by=203.0.113.43"
                                << "<refused>";
        QTest::newRow("for twice") << "for=192.0.2.1;for=192.0.2.2"
                                   << "<refused>";
        QTest::newRow("unquoted brackets") << "for=[2001:db8::1]"
                                           << "<refused>";
        QTest::newRow("unquoted v6") << "for=2001:db8::1"
                                     << "<refused>";
        QTest::newRow("quoted bare v6") << "for=\"2001:db8::1\""
                                        << "<refused>";
        QTest::newRow("trailing semicolon") << "for=192.0.2.60;"
                                            << "<refused>";
        QTest::newRow("unterminated quote") << "for=\"192.0.2.60"
                                            << "<refused>";
        QTest::newRow("empty value") << "for="
                                     << "<refused>";
        QTest::newRow("no equals") << "for"
                                   << "<refused>";
        QTest::newRow("garbage") << "garbage"
                                 << "<refused>";
        QTest::newRow("junk after value") << "for=192.0.2.60 x"
                                          << "<refused>";
        QTest::newRow("overlong quoted") << "for=\"" + QString(80, '1') + "\""
                                         << "<refused>";
    }
    void rfc7239Elements() {
        QFETCH(QString, element);
        QFETCH(QString, expected);
        QCOMPARE(show(parseForwardedElement(element.toStdString())), expected);
    }

    void resolvesTheClient_data() {
        QTest::addColumn<QStringList>("trusted");
        QTest::addColumn<QString>("headerName");
        QTest::addColumn<QString>("peer");
        QTest::addColumn<QStringList>("lines");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("client");
        const QStringList tenNet{"10.0.0.0/8"};
        const QString xff = "x-forwarded-for";

        QTest::newRow("no peer") << tenNet << xff << "" << QStringList{"203.0.113.9"} << kNone
                                 << "::";
        QTest::newRow("untrusted peer: header ignored")
            << tenNet << xff << "198.51.100.7" << QStringList{"203.0.113.9"} << kOk
            << "198.51.100.7";
        QTest::newRow("untrusted peer: garbage ignored")
            << tenNet << xff << "198.51.100.7" << QStringList{"garbage"} << kOk << "198.51.100.7";
        QTest::newRow("no trusted proxies at all")
            << QStringList{} << xff << "10.0.0.1" << QStringList{"203.0.113.9"} << kOk
            << "10.0.0.1";
        QTest::newRow("trusted peer without header")
            << tenNet << xff << "10.0.0.1" << QStringList{} << kOk << "10.0.0.1";
        QTest::newRow("one hop") << tenNet << xff << "10.0.0.1" << QStringList{"203.0.113.9"} << kOk
                                 << "203.0.113.9";
        QTest::newRow("spoofed entries left of the real client")
            << tenNet << xff << "10.0.0.1" << QStringList{"1.1.1.1, 2.2.2.2, 203.0.113.9, 10.0.0.2"}
            << kOk << "203.0.113.9";
        QTest::newRow("all trusted: leftmost")
            << tenNet << xff << "10.0.0.1" << QStringList{"10.0.0.3, 10.0.0.2"} << kOk
            << "10.0.0.3";
        QTest::newRow("lines concatenated in order")
            << tenNet << xff << "10.0.0.1" << QStringList{"1.1.1.1, 203.0.113.9", "10.0.0.2"} << kOk
            << "203.0.113.9";
        QTest::newRow("later line is nearer")
            << tenNet << xff << "10.0.0.1" << QStringList{"203.0.113.9", "198.51.100.1"} << kOk
            << "198.51.100.1";
        QTest::newRow("garbage hop fails closed")
            << tenNet << xff << "10.0.0.1" << QStringList{"garbage"} << kMalformed << "::";
        QTest::newRow("garbage right of the client fails closed")
            << tenNet << xff << "10.0.0.1" << QStringList{"203.0.113.9, garbage"} << kMalformed
            << "::";
        QTest::newRow("garbage left of the client is never read")
            << tenNet << xff << "10.0.0.1" << QStringList{"unknown, garbage, 203.0.113.9"} << kOk
            << "203.0.113.9";
        QTest::newRow("blank header fails closed")
            << tenNet << xff << "10.0.0.1" << QStringList{""} << kMalformed << "::";
        QTest::newRow("only commas fails closed")
            << tenNet << xff << "10.0.0.1" << QStringList{" , ,"} << kMalformed << "::";
        QTest::newRow("empty elements skipped")
            << tenNet << xff << "10.0.0.1" << QStringList{"203.0.113.9,, 10.0.0.2 ,"} << kOk
            << "203.0.113.9";
        QTest::newRow("port on the hop") << tenNet << xff << "10.0.0.1"
                                         << QStringList{"203.0.113.9:5123"} << kOk << "203.0.113.9";
        QTest::newRow("mapped hop is trusted v4")
            << tenNet << xff << "::ffff:10.0.0.1" << QStringList{"203.0.113.9, ::ffff:10.0.0.2"}
            << kOk << "203.0.113.9";
        QTest::newRow("v6 proxies and client")
            << QStringList{"2001:db8:ffff::/48"} << xff << "2001:db8:ffff::1"
            << QStringList{"2001:db8:1:2::99, 2001:db8:ffff::2"} << kOk << "2001:db8:1:2::99";
        QTest::newRow("header name any case")
            << tenNet << "X-Forwarded-For"
            << "10.0.0.1" << QStringList{"203.0.113.9"} << kOk << "203.0.113.9";

        const QString fwd = "forwarded";
        QTest::newRow("forwarded two elements")
            << tenNet << fwd << "10.0.0.1"
            << QStringList{"for=192.0.2.60;proto=http, for=\"[2001:db8:cafe::17]:4711\""} << kOk
            << "2001:db8:cafe::17";
        QTest::newRow("forwarded skips trusted hop")
            << tenNet << fwd << "10.0.0.1"
            << QStringList{"for=192.0.2.60", "for=10.0.0.7;by=10.0.0.1"} << kOk << "192.0.2.60";
        QTest::newRow("forwarded comma inside quotes")
            << tenNet << fwd << "10.0.0.1" << QStringList{"for=\"[2001:db8::1]\";ext=\"a,b\""}
            << kOk << "2001:db8::1";
        QTest::newRow("forwarded obfuscated fails closed")
            << tenNet << fwd << "10.0.0.1" << QStringList{"for=_hidden"} << kMalformed << "::";
        QTest::newRow("forwarded unknown fails closed")
            << tenNet << fwd << "10.0.0.1" << QStringList{"for=unknown"} << kMalformed << "::";
        QTest::newRow("forwarded from untrusted peer ignored")
            << tenNet << fwd << "198.51.100.7" << QStringList{"for=_hidden"} << kOk
            << "198.51.100.7";

        const QString real = "x-real-ip";
        QTest::newRow("x-real-ip")
            << tenNet << real << "10.0.0.1" << QStringList{"203.0.113.9"} << kOk << "203.0.113.9";
        QTest::newRow("x-real-ip trusted address")
            << tenNet << real << "10.0.0.1" << QStringList{"10.0.0.5"} << kOk << "10.0.0.5";
        QTest::newRow("x-real-ip with a list fails closed")
            << tenNet << real << "10.0.0.1" << QStringList{"203.0.113.9, 1.1.1.1"} << kMalformed
            << "::";
        QTest::newRow("x-real-ip twice fails closed")
            << tenNet << real << "10.0.0.1" << QStringList{"203.0.113.9", "1.1.1.1"} << kMalformed
            << "::";
    }
    void resolvesTheClient() {
        QFETCH(QStringList, trusted);
        QFETCH(QString, headerName);
        QFETCH(QString, peer);
        QFETCH(QStringList, lines);
        QFETCH(int, status);
        QFETCH(QString, client);
        TrustedProxies proxies = proxiesOf(trusted, headerName);
        RequestFixture request(peer, headerName, lines);
        ClientAddress resolved = resolveClient(request.view, proxies);
        QCOMPARE(statusOf(resolved), status);
        QCOMPARE(QString::fromStdString(resolved.address.toString()), client);
    }

    void otherHeadersAreNotRead() {
        // The proxies name X-Real-IP; an X-Forwarded-For the client wrote is not consulted.
        TrustedProxies proxies = proxiesOf({"10.0.0.0/8"}, "x-real-ip");
        RequestFixture request("10.0.0.1", "x-forwarded-for", {"203.0.113.9"});
        ClientAddress resolved = resolveClient(request.view, proxies);
        QCOMPARE(statusOf(resolved), kOk);
        QCOMPARE(resolved.address.toString(), std::string("10.0.0.1"));
    }

    void longChainsFromTheRight() {
        TrustedProxies proxies = proxiesOf({"10.0.0.0/8"}, "x-forwarded-for");
        // 1000 forged entries, then the client, then 3 proxies: only 4 hops are read.
        QString chain;
        for (int k = 0; k < 1000; ++k)
            chain += QStringLiteral("1.2.%1.%2, ").arg(k / 256).arg(k % 256);
        chain += "203.0.113.9, 10.0.0.4, 10.0.0.3, 10.0.0.2";
        RequestFixture forged("10.0.0.1", "x-forwarded-for", {chain});
        ClientAddress resolved = resolveClient(forged.view, proxies);
        QCOMPARE(statusOf(resolved), kOk);
        QCOMPARE(resolved.address.toString(), std::string("203.0.113.9"));

        // 64 trusted hops: the leftmost is the client. 65: we cannot see where the chain
        // starts, so it fails closed.
        auto trustedChain = [](int hops) {
            QStringList parts;
            for (int k = 0; k < hops; ++k)
                parts << QStringLiteral("10.0.%1.%2").arg(k / 200).arg(k % 200 + 1);
            return parts.join(", ");
        };
        RequestFixture sixtyFour("10.0.0.1", "x-forwarded-for", {trustedChain(kMaxForwardedHops)});
        resolved = resolveClient(sixtyFour.view, proxies);
        QCOMPARE(statusOf(resolved), kOk);
        QCOMPARE(resolved.address.toString(), std::string("10.0.0.1"));
        RequestFixture sixtyFive("10.0.0.1", "x-forwarded-for",
                                 {trustedChain(kMaxForwardedHops + 1)});
        QCOMPARE(statusOf(resolveClient(sixtyFive.view, proxies)), kMalformed);
    }

    void syntaxByHeaderName() {
        QCOMPARE(forwardedSyntaxFor("X-Forwarded-For"), ForwardedSyntax::List);
        QCOMPARE(forwardedSyntaxFor("forwarded"), ForwardedSyntax::Rfc7239);
        QCOMPARE(forwardedSyntaxFor("x-real-ip"), ForwardedSyntax::Single);
        QCOMPARE(forwardedSyntaxFor("cf-connecting-ip"), ForwardedSyntax::Single);
    }
};

QTEST_APPLESS_MAIN(TestForwarded)
#include "tst_forwarded.moc"
