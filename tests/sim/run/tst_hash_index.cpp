// sim/hash_index.h: dense numbers for distinct hashes, kept through growth, forgotten by clear().

#include <QtTest>

#include <cstdint>
#include <vector>

#include "sim/hash_index.h"
#include "sim/traffic/traffic.h"

using ratelab::sim::HashIndex;
// Well-mixed hashes, distinct for distinct salts of one seed (a bijection of the salt).
using ratelab::sim::mixSeed;

class TestHashIndex : public QObject {
    Q_OBJECT

private slots:
    // 100,000 distinct hashes are numbered 0 to 99,999 in insertion order; the table grows from
    // 1,024 slots to 262,144 meanwhile, and every hash keeps its number.
    void numbersAreDenseAndSurviveGrowth() {
        HashIndex index;
        std::vector<std::uint64_t> hashes;
        for (std::uint64_t i = 0; i < 100'000; ++i)
            hashes.push_back(mixSeed(42, i));
        for (std::uint32_t i = 0; i < hashes.size(); ++i) {
            const HashIndex::Found f = index.insert(hashes[i]);
            QVERIFY(f.inserted);
            QCOMPARE(f.index, i);
        }
        QCOMPARE(index.size(), 100'000u);
        for (std::uint32_t i = 0; i < hashes.size(); ++i) {
            const HashIndex::Found f = index.insert(hashes[i]);
            QVERIFY(!f.inserted);
            QCOMPARE(f.index, i);
        }
        QCOMPARE(index.size(), 100'000u);
    }

    // Hashes that share their low bits (one slot) probe on; 0 is a hash like any other.
    void collidingSlotsAndZero() {
        HashIndex index;
        QCOMPARE(index.insert(0).index, 0u);
        QCOMPARE(index.insert(1u << 20).index, 1u);
        QCOMPARE(index.insert(2u << 20).index, 2u);
        QCOMPARE(index.insert(1u << 20).index, 1u);
        QVERIFY(!index.insert(0).inserted);
        QCOMPARE(index.size(), 3u);
    }

    // After clear(), nothing is known and numbering starts at 0 again, across many clears and
    // with growth in between.
    void clearForgets() {
        HashIndex index;
        for (std::uint64_t round = 0; round < 50; ++round) {
            const std::uint64_t n = 10 + round * 100;
            for (std::uint64_t i = 0; i < n; ++i)
                QCOMPARE(index.insert(mixSeed(round, i)).index, static_cast<std::uint32_t>(i));
            QCOMPARE(index.size(), static_cast<std::uint32_t>(n));
            // A hash of the previous round is new in this one.
            if (round > 0) QVERIFY(index.insert(mixSeed(round - 1, 0)).inserted);
            index.clear();
            QCOMPARE(index.size(), 0u);
        }
    }
};

QTEST_APPLESS_MAIN(TestHashIndex)
#include "tst_hash_index.moc"
