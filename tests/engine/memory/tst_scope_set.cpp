// A budget scope's slots (engine/src/memory/budget_scopes.h) against a std::map of bucket ->
// last use: seeded rounds of uses, membership questions and expiries, across the point where
// the scope's first slots, kept in the object itself, move into its table.

// First: the table names a variable `slots`, which Qt defines as a keyword.
#include "memory/budget_scopes.h"

#include <QtTest>

#include <cstdint>
#include <map>
#include <random>

using ratelab::memory::ScopeSet;

namespace {

using Model = std::map<std::uint64_t, std::int64_t>;  // bucket -> last use (ms)

void expireModel(Model& model, std::int64_t nowMs, std::int64_t ttlMs) {
    for (auto it = model.begin(); it != model.end();) {
        it = it->second + ttlMs <= nowMs ? model.erase(it) : std::next(it);
    }
}

}  // namespace

class TestScopeSet : public QObject {
    Q_OBJECT

private slots:
    // Every answer the scope gives (holds, size, expiredAll) is the model's, whether it holds
    // one slot, a few, or a hundred.
    void agreesWithAMapAcrossTheInlineSlots() {
        std::mt19937_64 random(17);
        const std::int64_t ttl = 100;
        for (int round = 0; round < 500; ++round) {
            ScopeSet scope;
            Model model;
            // Few buckets in most rounds (the scope stays inline), many in some.
            const std::uint64_t buckets = round % 5 == 0 ? 200 : 1 + random() % 4;
            std::int64_t now = 1000;
            // Expiry is lazy (expire() returns at once while the earliest use it knows of is
            // live), but then nothing has expired in the model either: right after
            // expiredAll() the sizes agree; in between the scope may count expired slots.
            for (int step = 0; step < 300; ++step) {
                now += static_cast<std::int64_t>(random() % 30);
                const std::uint64_t bucket = 1 + random() % buckets;
                switch (random() % 3) {
                    case 0:
                        scope.use(bucket, now, ttl);
                        model[bucket] = now;
                        break;
                    case 1: {
                        const auto it = model.find(bucket);
                        const bool live = it != model.end() && it->second + ttl > now;
                        QCOMPARE(scope.holds(bucket, now, ttl), live);
                        break;
                    }
                    default: {
                        const bool empty = scope.expiredAll(now);
                        expireModel(model, now, ttl);
                        QCOMPARE(empty, model.empty());
                        QCOMPARE(scope.size(), static_cast<std::uint64_t>(model.size()));
                        break;
                    }
                }
                QVERIFY(scope.size() >= [&] {
                    std::uint64_t live = 0;
                    for (const auto& [b, at] : model)
                        live += at + ttl > now ? 1 : 0;
                    return live;
                }());
            }
        }
    }

    // A scope with one or two slots costs its object alone; a third slot brings in the table.
    void smallScopesHaveNoTable() {
        ScopeSet scope;
        const std::size_t alone = scope.bytes();
        scope.use(1, 0, 100);
        scope.use(2, 0, 100);
        QCOMPARE(scope.bytes(), alone);
        QCOMPARE(scope.size(), std::uint64_t{2});
        scope.use(3, 0, 100);
        QVERIFY(scope.bytes() > alone);
        QCOMPARE(scope.size(), std::uint64_t{3});
        QVERIFY(scope.holds(1, 50, 100) && scope.holds(2, 50, 100) && scope.holds(3, 50, 100));
    }
};

QTEST_APPLESS_MAIN(TestScopeSet)
#include "tst_scope_set.moc"
