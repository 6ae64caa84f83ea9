// Address budgets in the memory store and through the Limiter: IPv6 /64 buckets counted against
// their /48 and /32, charged to the network's bucket over the cap, atomically under threads;
// a minting client fills only its networks' share and a later client is still served (the
// fair-share rule of a full store has its own suite, tst_fair_share).

#include <QtTest>

#include "fixtures/address_budget_fixture.h"
#include "fixtures/limiter_fixture.h"
#include "ratelab/memory_store.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

constexpr Nanos kSecond = kNanosPerSecond;

// 20 at once, one token per 100 s: a bucket stays busy for the whole test.
Policy slowPolicy() {
    Policy p = tokenBucketPolicy("api", 20, 0.01);
    p.budget.slotTtl = 2000 * kSecond;
    return p;
}

// A new /64 of `prefix48` (a /48 written as "2001:db8:ab00") per call.
std::string mintedAddress(const std::string& prefix48, unsigned n) {
    char text[64];
    std::snprintf(text, sizeof text, "%s:%x::1", prefix48.c_str(), n & 0xffff);
    return text;
}

}  // namespace

class TestAddressBudget : public QObject {
    Q_OBJECT

private slots:
    // Eight threads mint /64s in four /48s of one /32 at the same instant. Every /48 gives at
    // most 20 of its /64s a bucket of their own, and the /32's scope admits exactly 60 buckets
    // (/64s and /48 buckets together); the rest is charged to the networks' buckets.
    void eightThreadsNeverExceedTheCaps_data() {
        QTest::addColumn<int>("per48");
        QTest::addColumn<int>("per32");
        QTest::newRow("the /32 binds") << 20 << 60;
        QTest::newRow("the /48s bind") << 5 << 1000;
        QTest::newRow("one each") << 1 << 1;
    }
    void eightThreadsNeverExceedTheCaps() {
        QFETCH(int, per48);
        QFETCH(int, per32);
        auto store = makeMemoryStore({});
        Limit l;
        l.capacity = 1000;
        l.emissionInterval = kNanosPerMilli;
        AddressCaps caps;
        caps.per48 = static_cast<std::uint32_t>(per48);
        caps.per32 = static_cast<std::uint32_t>(per32);
        const MintCounts counts = mintConcurrently(*store, l, caps, 8, 2000, 4, kSecond);
        QVERIFY2(counts.failures == 0, counts.firstError.c_str());
        for (int own : counts.own64PerNet48)
            QVERIFY2(own <= per48, qPrintable(QString::number(own)));
        const int expected32 = std::min(per32, 4 * per48 + 4);
        QCOMPARE(counts.members32(), expected32);
        const KeyspaceStats stats = store->keyspace();
        QCOMPARE(stats.buckets, std::int64_t(counts.members32() + (counts.charged32 > 0 ? 1 : 0)));
        QVERIFY(stats.buckets <= per32 + 1);
    }

    // A client minting a new /64 on every request fills its networks' caps and no more; a client
    // arriving afterwards, IPv4 or from another /32, still gets a bucket of its own. Without the
    // address budget the same attack fills the store, and the fair-share rule still gives the
    // later clients buckets of their own in place of the minter's.
    void mintingClientLeavesRoomForLaterClients_data() {
        QTest::addColumn<bool>("addressBudget");
        QTest::addColumn<bool>("wholeSlash32");
        QTest::newRow("one /48, budgeted") << true << false;
        QTest::newRow("a whole /32, budgeted") << true << true;
        QTest::newRow("one /48, no address budget") << false << false;
    }
    void mintingClientLeavesRoomForLaterClients() {
        QFETCH(bool, addressBudget);
        QFETCH(bool, wholeSlash32);
        Policy p = slowPolicy();
        p.budget.ipv6Prefixes = addressBudget ? std::vector<AddressBudget>{{48, 64}, {32, 1024}}
                                              : std::vector<AddressBudget>{};
        MemoryStoreOptions options;
        options.maxBuckets = 5000;
        Limiter limiter(policySet({p}), makeMemoryStore(options));
        TestRequest request;
        Check check;
        int storeFull = 0;
        for (unsigned i = 0; i < 50'000; ++i) {
            // Within one /48, or over every /48 of 2001:db8::/32.
            const std::string prefix =
                wholeSlash32 ? "2001:db8:" + QString::number(i % 65536, 16).toStdString()
                             : std::string("2001:db8:ab00");
            request.from(mintedAddress(prefix, wholeSlash32 ? 7 : i));
            limiter.check(request.view(), kSecond, check);
            storeFull += check.code == RefusalCode::StoreFull;
        }
        const KeyspaceStats stats = limiter.store().keyspace();
        if (addressBudget) {
            QCOMPARE(storeFull, 0);
            QVERIFY2(stats.buckets <= 1025, qPrintable(QString::number(stats.buckets)));
        } else {
            QCOMPARE(stats.buckets, std::int64_t(5000));
            QVERIFY2(storeFull > 0 && storeFull < 50'000 - 5000,
                     qPrintable(QString::number(storeFull)));
        }
        // Later clients: an IPv4 address and a /64 of another /32.
        for (const char* later : {"198.51.100.7", "2001:db9:1:2::3"}) {
            request.from(later);
            Verdict v = limiter.decide(request.view(), 2 * kSecond);
            QCOMPARE(v.status, 200);
            QCOMPARE(v.check.policies()[0].outcome, PolicyOutcome::Passed);
            QCOMPARE(v.check.policies()[0].decision.remaining, std::int64_t(19));
        }
    }
};

QTEST_APPLESS_MAIN(TestAddressBudget)
#include "tst_address_budget.moc"
