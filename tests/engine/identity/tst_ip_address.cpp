#include <QtTest>

#include <arpa/inet.h>

#include <algorithm>
#include <random>
#include <string>

#include "ratelab/ip_address.h"

using namespace ratelab;

namespace {
QString canonical(const char* text) {
    std::optional<IpAddress> a = IpAddress::parse(text);
    return a ? QString::fromStdString(a->toString()) : QStringLiteral("<refused>");
}
}  // namespace

class TestIpAddress : public QObject {
    Q_OBJECT

private slots:
    void parsesAndFormatsCanonically_data() {
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("expected");
        QTest::addColumn<bool>("v4");
        QTest::newRow("dotted quad") << "198.51.100.7"
                                     << "198.51.100.7" << true;
        QTest::newRow("zeros") << "0.0.0.0"
                               << "0.0.0.0" << true;
        QTest::newRow("broadcast") << "255.255.255.255"
                                   << "255.255.255.255" << true;
        QTest::newRow("mapped v4 is v4") << "::ffff:198.51.100.7"
                                         << "198.51.100.7" << true;
        QTest::newRow("mapped in hex") << "::FFFF:c633:6407"
                                       << "198.51.100.7" << true;
        QTest::newRow("mapped long form") << "0:0:0:0:0:ffff:198.51.100.7"
                                          << "198.51.100.7" << true;
        QTest::newRow("bracketed mapped") << "[::ffff:10.0.0.1]"
                                          << "10.0.0.1" << true;
        QTest::newRow("loopback") << "::1"
                                  << "::1" << false;
        QTest::newRow("unspecified") << "::"
                                     << "::" << false;
        QTest::newRow("full form") << "2001:0db8:0000:0000:0000:0000:0000:0001"
                                   << "2001:db8::1" << false;
        QTest::newRow("upper case") << "2001:DB8::AbCd"
                                    << "2001:db8::abcd" << false;
        // RFC 5952 4.2.2: a single zero group is not compressed.
        QTest::newRow("one zero group") << "2001:db8:0:1:1:1:1:1"
                                        << "2001:db8:0:1:1:1:1:1" << false;
        // 4.2.3: the longest run is compressed, the first on a tie.
        QTest::newRow("longest run") << "2001:0:0:1:0:0:0:1"
                                     << "2001:0:0:1::1" << false;
        QTest::newRow("first on a tie") << "2001:db8:0:0:1:0:0:1"
                                        << "2001:db8::1:0:0:1" << false;
        QTest::newRow("trailing run") << "1::"
                                      << "1::" << false;
        QTest::newRow("seven groups and ::") << "1:2:3:4:5:6:7::"
                                             << "1:2:3:4:5:6:7:0" << false;
        QTest::newRow("leading ::") << "::2:3:4:5:6:7:8"
                                    << "0:2:3:4:5:6:7:8" << false;
        QTest::newRow("no zero") << "1:2:3:4:5:6:7:8"
                                 << "1:2:3:4:5:6:7:8" << false;
        QTest::newRow("embedded v4 tail") << "64:ff9b::192.0.2.33"
                                          << "64:ff9b::c000:221" << false;
        QTest::newRow("v4-compatible") << "::192.0.2.33"
                                       << "::c000:221" << false;
        QTest::newRow("bracketed") << "[2001:db8:1:2::7]"
                                   << "2001:db8:1:2::7" << false;
        QTest::newRow("link local") << "fe80::1"
                                    << "fe80::1" << false;
        QTest::newRow("max length") << "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"
                                    << "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" << false;
    }
    void parsesAndFormatsCanonically() {
        QFETCH(QString, input);
        QFETCH(QString, expected);
        QFETCH(bool, v4);
        std::optional<IpAddress> a = IpAddress::parse(input.toStdString());
        QVERIFY2(a.has_value(), qPrintable(input));
        QCOMPARE(QString::fromStdString(a->toString()), expected);
        QCOMPARE(a->isV4(), v4);
        // The canonical text parses back to the same value.
        QCOMPARE(IpAddress::parse(a->toString()), a);
    }

    void refusesMalformed_data() {
        QTest::addColumn<QString>("input");
        QTest::newRow("empty") << "";
        QTest::newRow("three octets") << "1.2.3";
        QTest::newRow("five octets") << "1.2.3.4.5";
        QTest::newRow("octet over 255") << "1.2.3.256";
        QTest::newRow("four digits") << "1.2.3.0004";
        // inet_aton reads these as octal; refused rather than guessed.
        QTest::newRow("octal-looking") << "010.1.1.1";
        QTest::newRow("leading zero last") << "10.1.1.01";
        QTest::newRow("hex quad") << "0x7f.0.0.1";
        QTest::newRow("single number") << "2130706433";
        QTest::newRow("trailing dot") << "1.2.3.4.";
        QTest::newRow("empty octet") << "1..3.4";
        QTest::newRow("sign") << "+1.2.3.4";
        QTest::newRow("space") << " 1.2.3.4";
        QTest::newRow("v4 port") << "1.2.3.4:80";
        QTest::newRow("v6 port") << "[2001:db8::1]:443";
        QTest::newRow("zone id") << "fe80::1%eth0";
        QTest::newRow("bracketed zone") << "[fe80::1%25eth0]";
        QTest::newRow("bracketed v4") << "[1.2.3.4]";
        QTest::newRow("unclosed bracket") << "[::1";
        QTest::newRow("two ::") << "1::2::3";
        QTest::newRow("triple colon") << ":::";
        QTest::newRow("leading single colon") << ":1:2:3:4:5:6:7";
        QTest::newRow("trailing single colon") << "1:2:3:4:5:6:7:";
        QTest::newRow("nine groups") << "1:2:3:4:5:6:7:8:9";
        QTest::newRow("seven groups") << "1:2:3:4:5:6:7";
        QTest::newRow("eight groups and ::") << "1:2:3:4::5:6:7:8";
        QTest::newRow("five hex digits") << "12345::1";
        QTest::newRow("not hex") << "2001:db8::g";
        QTest::newRow("v4 tail too late") << "1:2:3:4:5:6:7:1.2.3.4";
        QTest::newRow("v4 tail not last") << "::1.2.3.4:5";
        QTest::newRow("bad v4 tail") << "::ffff:1.2.3.999";
        QTest::newRow("octal v4 tail") << "::ffff:01.2.3.4";
        QTest::newRow("unknown") << "unknown";
        QTest::newRow("nul byte") << QString::fromLatin1("1.2.3.4\0", 8);
    }
    void refusesMalformed() {
        QFETCH(QString, input);
        QByteArray bytes = input.toLatin1();
        QVERIFY2(!IpAddress::parse(std::string_view(bytes.constData(), bytes.size())),
                 qPrintable(input));
    }

    void masksInTheFamilysOwnBits_data() {
        QTest::addColumn<QString>("input");
        QTest::addColumn<int>("prefix");
        QTest::addColumn<QString>("expected");
        QTest::newRow("v4 /24") << "198.51.100.7" << 24 << "198.51.100.0";
        QTest::newRow("v4 /32") << "198.51.100.7" << 32 << "198.51.100.7";
        QTest::newRow("v4 /0") << "198.51.100.7" << 0 << "0.0.0.0";
        QTest::newRow("v4 /13") << "198.51.100.7" << 13 << "198.48.0.0";
        QTest::newRow("v4 over 32 clamps") << "198.51.100.7" << 64 << "198.51.100.7";
        QTest::newRow("mapped /24 stays v4") << "::ffff:198.51.100.7" << 24 << "198.51.100.0";
        QTest::newRow("v6 /64") << "2001:db8:1:2:aaaa:bbbb:cccc:dddd" << 64 << "2001:db8:1:2::";
        QTest::newRow("v6 /56") << "2001:db8:1:2ff::1" << 56 << "2001:db8:1:200::";
        QTest::newRow("v6 /60 mid-nibble") << "2001:db8:1:ff::1" << 60 << "2001:db8:1:f0::";
        QTest::newRow("v6 /128") << "2001:db8::1" << 128 << "2001:db8::1";
        QTest::newRow("v6 /0") << "2001:db8::1" << 0 << "::";
        QTest::newRow("v6 /1") << "ffff::" << 1 << "8000::";
    }
    void masksInTheFamilysOwnBits() {
        QFETCH(QString, input);
        QFETCH(int, prefix);
        QFETCH(QString, expected);
        IpAddress a = *IpAddress::parse(input.toStdString());
        QCOMPARE(QString::fromStdString(a.masked(prefix).toString()), expected);
    }

    // masked() against its definition, bit by bit, at every prefix length of either family:
    // the family's first `prefix` bits kept, every later one cleared.
    void masksBitByBit() {
        std::mt19937_64 random(128);
        for (int round = 0; round < 200; ++round) {
            std::array<std::uint8_t, 16> bytes;
            for (auto& b : bytes)
                b = static_cast<std::uint8_t>(random());
            bytes[0] |= 0x20;  // never IPv4-mapped
            const IpAddress v6 = IpAddress::fromBytes(bytes);
            for (int prefix = 0; prefix <= 128; ++prefix) {
                std::array<std::uint8_t, 16> expected{};
                for (int bit = 0; bit < prefix; ++bit)
                    expected[bit / 8] |= bytes[bit / 8] & (0x80 >> (bit % 8));
                QVERIFY2(v6.masked(prefix).bytes() == expected,
                         qPrintable(QString::number(prefix)));
            }
            const auto v4 = static_cast<std::uint32_t>(random());
            for (int prefix = 0; prefix <= 32; ++prefix) {
                const std::uint32_t mask = prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix);
                QVERIFY2(IpAddress::fromV4(v4).masked(prefix) == IpAddress::fromV4(v4 & mask),
                         qPrintable(QString::number(prefix)));
            }
        }
    }

    void v4AndMappedAreOneValue() {
        IpAddress plain = *IpAddress::parse("198.51.100.7");
        IpAddress mapped = *IpAddress::parse("::ffff:198.51.100.7");
        QVERIFY(plain == mapped);
        QCOMPARE(plain.v4(), 0xc6336407u);
        QVERIFY(IpAddress::fromV4(0xc6336407u) == plain);
        std::array<std::uint8_t, 16> bytes{};
        bytes[10] = 0xff;
        bytes[11] = 0xff;
        bytes[12] = 198;
        bytes[13] = 51;
        bytes[14] = 100;
        bytes[15] = 7;
        QVERIFY(IpAddress::fromBytes(bytes) == plain);
    }

    // IPv6 text against glibc's inet_ntop, which follows RFC 5952 4.2 too (the longest run of
    // two or more zero groups, the first on a tie), over addresses rich in zero groups, each
    // also masked to every prefix length. Left out: the forms inet_ntop writes with a dotted
    // IPv4 tail (six leading zero groups, or ::ffff:0:0/96), which this formatter writes in hex
    // or as IPv4.
    void formatsV6LikeInetNtop() {
        std::mt19937_64 random(5952);
        int compared = 0;
        for (int round = 0; round < 20'000; ++round) {
            std::array<std::uint8_t, 16> bytes{};
            for (int g = 0; g < 8; ++g) {
                const std::uint64_t draw = random();
                if (draw % 2 == 0) continue;  // a zero group
                // One to four hex digits.
                const unsigned digits = 1 + static_cast<unsigned>((draw >> 1) % 4);
                unsigned v = static_cast<unsigned>(draw >> 8) & ((1u << (4 * digits)) - 1);
                if (v == 0) v = 1;
                bytes[2 * g] = static_cast<std::uint8_t>(v >> 8);
                bytes[2 * g + 1] = static_cast<std::uint8_t>(v);
            }
            const IpAddress address = IpAddress::fromBytes(bytes);
            for (int prefix = 0; prefix <= 128; ++prefix) {
                const IpAddress a = address.masked(prefix);
                const auto& b = a.bytes();
                if (std::all_of(b.begin(), b.begin() + 12, [](std::uint8_t x) { return x == 0; }))
                    continue;
                if (a.isV4()) continue;
                char expected[INET6_ADDRSTRLEN];
                QVERIFY(inet_ntop(AF_INET6, b.data(), expected, sizeof expected));
                char actual[48];
                const std::size_t n = a.format(actual);
                QCOMPARE(std::string(actual, n), std::string(expected));
                ++compared;
            }
        }
        QVERIFY(compared > 2'000'000);
    }

    void formatWritesNoTerminatorAndFitsTheBuffer() {
        char buffer[64];
        std::memset(buffer, 'x', sizeof buffer);
        IpAddress widest = *IpAddress::parse("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
        std::size_t n = widest.format(buffer);
        QCOMPARE(n, std::size_t(39));
        QCOMPARE(buffer[39], 'x');
        IpAddress v4 = *IpAddress::parse("255.255.255.255");
        QCOMPARE(v4.format(buffer), std::size_t(15));
    }

    void cidrParses_data() {
        QTest::addColumn<QString>("input");
        QTest::addColumn<bool>("strict");
        QTest::addColumn<QString>("expected");  // "<refused>" when refused
        QTest::newRow("v4 /8") << "10.0.0.0/8" << true << "10.0.0.0/8";
        QTest::newRow("v4 host route") << "203.0.113.9" << true << "203.0.113.9/32";
        QTest::newRow("v4 /0") << "0.0.0.0/0" << true << "0.0.0.0/0";
        QTest::newRow("host bits strict") << "10.1.0.0/8" << true << "<refused>";
        QTest::newRow("host bits lax") << "10.1.0.0/8" << false << "10.0.0.0/8";
        QTest::newRow("v4 /33") << "10.0.0.0/33" << false << "<refused>";
        QTest::newRow("v6 /32") << "2001:db8::/32" << true << "2001:db8::/32";
        QTest::newRow("v6 host route") << "::1" << true << "::1/128";
        QTest::newRow("v6 /129") << "2001:db8::/129" << false << "<refused>";
        QTest::newRow("v6 host bits strict") << "2001:db8::1/64" << true << "<refused>";
        QTest::newRow("mapped counts 128 bits") << "::ffff:10.0.0.0/104" << true << "10.0.0.0/8";
        QTest::newRow("mapped /96 is all v4") << "::ffff:0.0.0.0/96" << true << "0.0.0.0/0";
        QTest::newRow("all of v6") << "::/0" << true << "::/0";
        QTest::newRow("leading zero length") << "10.0.0.0/08" << false << "<refused>";
        QTest::newRow("empty length") << "10.0.0.0/" << false << "<refused>";
        QTest::newRow("negative length") << "10.0.0.0/-1" << false << "<refused>";
        QTest::newRow("two slashes") << "10.0.0.0/8/8" << false << "<refused>";
        QTest::newRow("bad address") << "10.0.0/8" << false << "<refused>";
        QTest::newRow("bracketed") << "[2001:db8::]/32" << true << "2001:db8::/32";
    }
    void cidrParses() {
        QFETCH(QString, input);
        QFETCH(bool, strict);
        QFETCH(QString, expected);
        std::optional<Cidr> cidr = Cidr::parse(input.toStdString(), strict);
        QCOMPARE(cidr ? QString::fromStdString(cidr->toString()) : QStringLiteral("<refused>"),
                 expected);
    }

    void cidrContains_data() {
        QTest::addColumn<QString>("cidr");
        QTest::addColumn<QString>("address");
        QTest::addColumn<bool>("inside");
        QTest::newRow("v4 inside") << "10.0.0.0/8"
                                   << "10.255.1.2" << true;
        QTest::newRow("v4 outside") << "10.0.0.0/8"
                                    << "11.0.0.1" << false;
        QTest::newRow("v4 /31 edge") << "192.0.2.4/31"
                                     << "192.0.2.5" << true;
        QTest::newRow("v4 /31 past") << "192.0.2.4/31"
                                     << "192.0.2.6" << false;
        QTest::newRow("v4 /0 holds v4") << "0.0.0.0/0"
                                        << "203.0.113.1" << true;
        QTest::newRow("v4 /0 not v6") << "0.0.0.0/0"
                                      << "2001:db8::1" << false;
        QTest::newRow("mapped address in v4 net") << "10.0.0.0/8"
                                                  << "::ffff:10.1.2.3" << true;
        QTest::newRow("v6 inside") << "2001:db8:1::/48"
                                   << "2001:db8:1:ffff::1" << true;
        QTest::newRow("v6 outside") << "2001:db8:1::/48"
                                    << "2001:db8:2::1" << false;
        QTest::newRow("v6 /61 mid-byte") << "2001:db8:0:8::/61"
                                         << "2001:db8:0:f::1" << true;
        QTest::newRow("v6 /61 past") << "2001:db8:0:8::/61"
                                     << "2001:db8:0:10::1" << false;
        QTest::newRow("v6 net not v4") << "2001:db8::/32"
                                       << "10.0.0.1" << false;
        QTest::newRow("::/0 holds everything") << "::/0"
                                               << "10.0.0.1" << true;
        QTest::newRow("host route") << "::1"
                                    << "::1" << true;
        QTest::newRow("host route other") << "::1"
                                          << "::2" << false;
    }
    void cidrContains() {
        QFETCH(QString, cidr);
        QFETCH(QString, address);
        QFETCH(bool, inside);
        QCOMPARE(
            Cidr::parse(cidr.toStdString())->contains(*IpAddress::parse(address.toStdString())),
            inside);
    }

    void cidrConstructorMasksAndClamps() {
        Cidr c(*IpAddress::parse("198.51.100.77"), 24);
        QCOMPARE(QString::fromStdString(c.toString()), QStringLiteral("198.51.100.0/24"));
        QCOMPARE(c.prefixLength(), 24);
        Cidr wide(*IpAddress::parse("198.51.100.77"), 99);
        QCOMPARE(wide.prefixLength(), 32);
    }

    void helperRefusesAndFormats() {
        QCOMPARE(canonical("1.2.3.4"), QStringLiteral("1.2.3.4"));
        QCOMPARE(canonical("1.2.3.4 "), QStringLiteral("<refused>"));
    }
};

QTEST_APPLESS_MAIN(TestIpAddress)
#include "tst_ip_address.moc"
