// sim/traffic/twister.h: std::mt19937_64's sequence, bit for bit, so that a scenario's traffic (and so
// its report) is the one the standard engine would draw.

#include <QtTest>

#include <cstdint>
#include <random>

#include "sim/traffic/traffic.h"
#include "sim/traffic/twister.h"

using ratelab::sim::mixSeed;
using ratelab::sim::Twister64;

class TestTwister : public QObject {
    Q_OBJECT

private slots:
    // 10^6 draws (3,205 refills of the 312-word state) from each of eight seeds: the edges of the
    // seed's range, the standard's default, and the per-actor seeds traffic.cpp derives.
    void drawsAreStdMt19937_64s() {
        const std::uint64_t seeds[] = {0,
                                       1,
                                       5489,
                                       0xffffffffffffffffULL,
                                       mixSeed(1, 1),
                                       mixSeed(1, 2),
                                       mixSeed(42, 0x726573706f6e7365),
                                       mixSeed(7, 3)};
        for (const std::uint64_t seed : seeds) {
            std::mt19937_64 standard(seed);
            Twister64 ours(seed);
            for (int i = 0; i < 1'000'000; ++i) {
                const std::uint64_t expected = standard();
                const std::uint64_t actual = ours();
                if (actual != expected) {
                    QFAIL(qPrintable(QStringLiteral("seed %1, draw %2: %3, std::mt19937_64 %4")
                                         .arg(seed)
                                         .arg(i)
                                         .arg(actual)
                                         .arg(expected)));
                }
            }
        }
    }

    // The standard's own check value ([rand.predef]): the 10,000th draw of a default-seeded
    // std::mt19937_64 is 9981545732273789042.
    void tenThousandthDrawIsTheStandardsCheckValue() {
        Twister64 ours(5489);
        std::uint64_t draw = 0;
        for (int i = 0; i < 10'000; ++i)
            draw = ours();
        QCOMPARE(draw, std::uint64_t{9981545732273789042ULL});
    }

    // A standard distribution takes it, and draws what it draws from std::mt19937_64.
    void standardDistributionsTakeIt() {
        std::mt19937_64 standard(99);
        Twister64 ours(99);
        std::uniform_int_distribution<int> die(1, 6);
        std::uniform_int_distribution<int> sameDie(1, 6);
        int counts[7] = {};
        for (int i = 0; i < 60'000; ++i) {
            const int face = die(ours);
            QCOMPARE(face, sameDie(standard));
            ++counts[face];
        }
        for (int face = 1; face <= 6; ++face) {
            QVERIFY2(
                counts[face] > 9'500 && counts[face] < 10'500,
                qPrintable(QStringLiteral("face %1: %2 of 60000").arg(face).arg(counts[face])));
        }
    }
};

QTEST_APPLESS_MAIN(TestTwister)
#include "tst_twister.moc"
