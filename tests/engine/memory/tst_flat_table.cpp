// The memory store's open-addressing table (engine/src/memory/flat_table.h) against a
// std::map of the same keys: inserts, erase() and eraseRun() over many seeded rounds, in
// tables small enough that probe runs wrap around the end and grow long; and the loads it runs
// at, small and large.

// First: the table names a variable `slots`, which Qt defines as a keyword.
#include "memory/flat_table.h"

#include <QtTest>

#include <cstdint>
#include <map>
#include <random>

using ratelab::memory::FlatTable;

namespace {

using Table = FlatTable<std::uint64_t>;

// Where the tables of the tests that do not look at loads count as large: 1 MiB.
constexpr std::size_t kLarge = std::size_t(1) << 20;

// Every key of `expected` is found with its value, and the table holds nothing else.
bool agrees(Table& table, const std::map<std::uint64_t, std::uint64_t>& expected) {
    if (table.size() != expected.size()) return false;
    for (const auto& [key, value] : expected) {
        Table::Slot* s = table.find(key);
        if (!s || s->state != value) return false;
    }
    return true;
}

// A small table runs at most half full (grown by a quarter at 50 %); from its large bound on,
// between 80 and 90 % (grown by an eighth at 90 %), every key still found.
void runsFullerFromItsBound(std::size_t bound) {
    std::mt19937_64 random(13);
    Table table;
    std::map<std::uint64_t, std::uint64_t> expected;
    double lowestLarge = 1.0;
    double highestSmall = 0.0;
    double highest = 0.0;
    bool grownLarge = false;
    while (expected.size() < 400'000) {
        const std::uint64_t fp = random() | 1;
        if (expected.count(fp)) continue;
        const std::uint64_t before = table.capacity();
        QVERIFY(table.insert(fp, fp, bound));
        expected[fp] = fp;
        const double load =
            static_cast<double>(table.size()) / static_cast<double>(table.capacity());
        const bool large = table.bytes() >= bound;
        QCOMPARE(table.large(bound), large);
        highest = std::max(highest, load);
        if (!large) {
            QVERIFY2(load <= 0.50, qPrintable(QString::number(load)));
            if (table.capacity() >= 1000) highestSmall = std::max(highestSmall, load);
        }
        if (large && before * sizeof(Table::Slot) >= bound) {
            QVERIFY2(load <= 0.90, qPrintable(QString::number(load)));
            if (table.capacity() != before) {
                QCOMPARE(table.capacity(), before + before / 8);
                grownLarge = true;
            }
            // The first large table starts where the small one grew it (40 %).
            if (grownLarge) lowestLarge = std::min(lowestLarge, load);
        }
    }
    QVERIFY(grownLarge);
    QVERIFY2(highestSmall > 0.49, qPrintable(QString::number(highestSmall)));
    QVERIFY2(lowestLarge >= 0.79, qPrintable(QString::number(lowestLarge)));
    QVERIFY(highest > 0.89);
    QVERIFY(agrees(table, expected));
    // Dropping parts of runs all over a table that full leaves the rest findable.
    std::uint64_t cursor = 0;
    for (int cut = 0; cut < 1000; ++cut) {
        Table::Slot* start = table.occupiedFrom(cursor);
        expected.erase(start->fingerprint);
        table.eraseRun(start, [&](Table::Slot& s) {
            if (s.fingerprint % 3 != 0) return false;
            expected.erase(s.fingerprint);
            return true;
        });
        cursor += 397;
    }
    QVERIFY(agrees(table, expected));
}

}  // namespace

class TestFlatTable : public QObject {
    Q_OBJECT

private slots:
    // Whole runs of slots dropped in one pass leave every other key findable, and the ones
    // dropped gone: as many erase() calls would, in one pass.
    void eraseRunDropsWhatItIsToldAndKeepsTheRest() {
        std::mt19937_64 random(7);
        for (int round = 0; round < 400; ++round) {
            Table table;
            std::map<std::uint64_t, std::uint64_t> expected;
            const int keys = 5 + static_cast<int>(random() % 120);
            for (int k = 0; k < keys; ++k) {
                // Fingerprints bunched in a narrow range of home slots, so runs are long.
                std::uint64_t fp = (random() >> 8) | 1;
                if (round % 2 == 0) fp = (fp & 0x0FFF'FFFF'FFFF'FFFFULL) | 1;
                if (expected.count(fp)) continue;
                table.insert(fp, fp * 3, kLarge);
                expected[fp] = fp * 3;
            }
            QVERIFY(agrees(table, expected));
            // Drop runs at random starting slots: the start always, then one in three.
            for (int cut = 0; cut < 4 && table.size() > 0; ++cut) {
                std::uint64_t cursor = random() % table.capacity();
                Table::Slot* start = table.occupiedFrom(cursor);
                expected.erase(start->fingerprint);
                std::uint64_t asked = 0, dropped = 0;
                const std::uint64_t removed = table.eraseRun(start, [&](Table::Slot& s) {
                    ++asked;
                    if (s.fingerprint % 3 != 0) return false;
                    expected.erase(s.fingerprint);
                    ++dropped;
                    return true;
                });
                QCOMPARE(removed, dropped + 1);
                QVERIFY(asked >= dropped);
                QVERIFY2(agrees(table, expected), qPrintable(QString("round %1").arg(round)));
            }
            // The table still takes inserts and single erases afterwards.
            for (int k = 0; k < 20; ++k) {
                const std::uint64_t fp = (random() >> 4) | 1;
                if (expected.count(fp)) continue;
                table.insert(fp, k, kLarge);
                expected[fp] = static_cast<std::uint64_t>(k);
            }
            if (!expected.empty()) {
                const std::uint64_t fp = expected.begin()->first;
                table.erase(table.find(fp));
                expected.erase(fp);
            }
            QVERIFY(agrees(table, expected));
        }
    }

    // 1 MiB: a limit's 4 MiB over four shards (memory::LimitTable::largeBytes).
    void largeTablesRunFuller() { runsFullerFromItsBound(std::size_t(1) << 20); }
    // 64 KiB: the same over 64 shards.
    void largeFromASmallerBound() { runsFullerFromItsBound(std::size_t(64) << 10); }
};

QTEST_APPLESS_MAIN(TestFlatTable)
#include "tst_flat_table.moc"
