// identity/sha256 and support/hex.h: SHA-256 against known vectors and Qt's own SHA-256, on both routes
// to OpenSSL (the provider's functions and EVP), in one piece and in many; the unambiguous
// parts encoding; lowercase hex of every byte value at every length.

#include <QtTest>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <string>

#include "support/hex.h"
#include "identity/sha256.h"
#include "fixtures/key_deriver_fixture.h"

using namespace ratelab;
using namespace ratelab::identity;
using namespace ratelab::identity::test;

namespace {

constexpr auto kAbc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

// A digest of `data` on `context`, fed `piece` bytes at a time, as hex; what failed otherwise.
QString digestOf(Sha256Context& context, std::string_view data, std::size_t piece) {
    unsigned char digest[32];
    if (!context.start()) return "start failed";
    for (std::size_t at = 0; at < data.size(); at += piece) {
        if (!context.update(data.data() + at, std::min(piece, data.size() - at)))
            return "update failed";
    }
    if (!context.finish(digest)) return "finish failed";
    char hex[64];
    writeHex(digest, sizeof digest, hex);
    return str({hex, 64});
}

}  // namespace

class TestSha256 : public QObject {
    Q_OBJECT

private slots:
    void matchesKnownVectors() {
        char hex[kSha256HexLength];
        QVERIFY(sha256Hex("", hex));
        QCOMPARE(
            str({hex, 64}),
            QStringLiteral("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
        QVERIFY(sha256Hex("abc", hex));
        QCOMPARE(str({hex, 64}), QString(kAbc));
        std::string long_(100000, 'a');
        QVERIFY(sha256Hex(long_, hex));
        QCOMPARE(str({hex, 64}), qtSha(QByteArray(100000, 'a')));
    }

    // Debian 12's OpenSSL 3.0 offers its default provider's functions: the fast route is the
    // one taken, not a fallback that happens to give the same answers.
    void takesTheProviderRoute() { QCOMPARE(sha256Route(), Sha256Route::Provider); }

    // Both routes, one context reused for 2,000 digests of every length from 0 to 299 bytes
    // (one, two, three and more 64-byte blocks, and every padding case), fed whole or in
    // pieces of 1, 7 and 64 bytes: each agrees with Qt's SHA-256.
    void routesAgreeWithQtOnEveryLength() {
        std::mt19937 random(5);
        for (Sha256Route route : {Sha256Route::Provider, Sha256Route::Evp}) {
            Sha256Context context(route);
            for (int round = 0; round < 2000; ++round) {
                std::string data(static_cast<std::size_t>(round % 300), '\0');
                for (char& c : data)
                    c = static_cast<char>(random());
                const std::size_t piece = std::array<std::size_t, 4>{1, 7, 64, 1000}[round % 4];
                QCOMPARE(digestOf(context, data, piece),
                         qtSha(QByteArray(data.data(), qsizetype(data.size()))));
            }
            QCOMPARE(digestOf(context, "abc", 1), QString(kAbc));
        }
    }

    // A digest abandoned half-way leaves nothing behind for the next one on the same context.
    void startDropsAnUnfinishedDigest() {
        for (Sha256Route route : {Sha256Route::Provider, Sha256Route::Evp}) {
            Sha256Context context(route);
            QVERIFY(context.start());
            QVERIFY(context.update("left over", 9));
            QCOMPARE(digestOf(context, "abc", 3), QString(kAbc));
        }
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

    // writeHex at every length from 0 to 40 (the 16-byte blocks and the bytes after them) and
    // every byte value, against QByteArray::toHex.
    void hexOfEveryByteAtEveryLength() {
        unsigned char bytes[256];
        for (int b = 0; b < 256; ++b)
            bytes[b] = static_cast<unsigned char>(b);
        char out[512];
        for (std::size_t n = 0; n <= 40; ++n) {
            for (std::size_t from = 0; from + n <= 256; from += 13) {
                std::memset(out, '#', sizeof out);
                writeHex(bytes + from, n, out);
                QCOMPARE(QByteArray(out, qsizetype(2 * n)),
                         QByteArray(reinterpret_cast<const char*>(bytes + from), qsizetype(n))
                             .toHex());
                QCOMPARE(out[2 * n], '#');  // nothing written past the digits
            }
        }
        writeHex(bytes, 256, out);
        QCOMPARE(QByteArray(out, 512), QByteArray(reinterpret_cast<const char*>(bytes), 256).toHex());
        writeHex64(0x0123456789abcdefULL, out);
        QCOMPARE(QByteArray(out, 16), QByteArray("0123456789abcdef"));
        writeHex64(0xfedcba9876543210ULL, out);
        QCOMPARE(QByteArray(out, 16), QByteArray("fedcba9876543210"));
    }
};

QTEST_APPLESS_MAIN(TestSha256)
#include "tst_sha256.moc"
