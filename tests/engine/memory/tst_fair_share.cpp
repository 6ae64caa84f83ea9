// The memory store's fair-share rule when it is full (docs/RELIABILITY.md): a new key from an
// aggregate over its share is charged to the aggregate's bucket, a new key from an aggregate
// under its share takes the place of the densest aggregate's least recently used bucket, and
// store_full comes only when no aggregate is over its share; under eight threads too, and again
// when the store fills after it had room.

#include <QtTest>

#include <atomic>
#include <thread>

#include "fixtures/limiter_fixture.h"
#include "ratelab/ip_address.h"
#include "ratelab/memory_store.h"
#include "ratelab/store.h"
#include "store/fair_share.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

constexpr Nanos kSecond = kNanosPerSecond;

// 20 at once, one token per 100 s, no address budget: a bucket stays busy for the whole test,
// and nothing but the fair-share rule keeps a minter from the store.
Policy slowPolicy() {
    Policy p = tokenBucketPolicy("api", 20, 0.01);
    p.budget.ipv6Prefixes = {};
    return p;
}

// The n-th /64 of 2001:d00::/24, spread over its 256 /32s.
std::string minted(unsigned n) {
    char text[64];
    std::snprintf(text, sizeof text, "2001:d%02x:%x:%x::1", n % 256, (n / 256) % 65536,
                  (n / (256 * 65536)) % 65536);
    return text;
}

// The n-th IPv4 user, each in a /8 of its own among 1.0.0.0 - 99.0.0.0, then within them.
std::string user(unsigned n) {
    return std::to_string(1 + n % 99) + "." + std::to_string((n / 99) % 256) + ".7." +
           std::to_string(1 + n % 200);
}

struct Outcome {
    int own = 0;             // passed on a bucket of its own (a new one: 19 left)
    int chargedPassed = 0;   // passed on another bucket (its network's)
    int chargedRefused = 0;  // throttled by it
    int full = 0;            // 503 store_full
    int other = 0;
    int charged() const { return chargedPassed + chargedRefused; }
    void add(const Outcome& o) {
        own += o.own;
        chargedPassed += o.chargedPassed;
        chargedRefused += o.chargedRefused;
        full += o.full;
        other += o.other;
    }
};

void count(const Check& check, Outcome& o) {
    const PolicyResult& r = check.policies()[0];
    if (r.outcome == PolicyOutcome::StoreFull) {
        ++o.full;
    } else if (r.chargedFallback) {
        ++(r.outcome == PolicyOutcome::Passed ? o.chargedPassed : o.chargedRefused);
    } else if (r.outcome == PolicyOutcome::Passed && r.decision.remaining == 19) {
        ++o.own;
    } else {
        ++o.other;
    }
}

}  // namespace

class TestFairShare : public QObject {
    Q_OBJECT

private slots:
    // A key made within a peer is ordered among the peer's keys by the last 16 hex digits of
    // its text (its digest's); a key not ending in 16 lowercase hex digits is ordered first.
    void keyOrderReadsTheDigestsLastSixteenDigits_data() {
        QTest::addColumn<QString>("key");
        QTest::addColumn<quint64>("order");
        const QString digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        QTest::newRow("auth") << "auth:" + digest << quint64(0xd15d6c15b0f00a08ULL);
        QTest::newRow("composite") << "comp:/x:" + digest << quint64(0xd15d6c15b0f00a08ULL);
        QTest::newRow("every digit") << "auth:0123456789abcdef" << quint64(0x0123456789abcdefULL);
        QTest::newRow("all f") << "ffffffffffffffff" << quint64(0xffffffffffffffffULL);
        QTest::newRow("uppercase") << "auth:0123456789ABCDEF" << quint64(0);
        QTest::newRow("a letter past f") << "auth:0123456789abcdeg" << quint64(0);
        QTest::newRow("a colon among them") << "auth:01234567:9abcdef" << quint64(0);
        QTest::newRow("fifteen digits") << "0123456789abcde" << quint64(0);
        QTest::newRow("a byte past ASCII") << QString::fromLatin1(
                                                  "auth:0123456789abcd\xe5"
                                                  "f")
                                           << quint64(0);
    }
    void keyOrderReadsTheDigestsLastSixteenDigits() {
        QFETCH(QString, key);
        QFETCH(quint64, order);
        const QByteArray text = key.toLatin1();
        QCOMPARE(quint64(store::keyOrder(std::string_view(text.constData(), text.size()))), order);
    }

    // A minter alone fills the store: its aggregate holds the whole store, its share, so it is
    // over no share and its next keys are refused as full. A user from elsewhere is under its
    // share: it takes the place of one of the minter's buckets, and from then on the minter's
    // aggregate is over its share and its new keys are charged to the aggregate's bucket.
    void minterAloneIsFullThenChargedOnceOthersArrive() {
        MemoryStoreOptions options;
        options.maxBuckets = 1000;
        Limiter limiter(policySet({slowPolicy()}), makeMemoryStore(options));
        TestRequest request;
        Check check;
        Outcome minter;
        for (unsigned i = 0; i < 1000; ++i) {
            request.from(minted(i));
            limiter.check(request.view(), kSecond, check);
            count(check, minter);
        }
        QCOMPARE(minter.own, 1000);
        for (unsigned i = 1000; i < 1100; ++i) {
            request.from(minted(i));
            limiter.check(request.view(), kSecond, check);
            count(check, minter);
        }
        // Within the minter's networks, a /32 over its share is charged to its bucket; the rest
        // are full.
        QCOMPARE(minter.own, 1000);
        QCOMPARE(minter.full + minter.charged(), 100);
        QCOMPARE(minter.other, 0);
        QCOMPARE(limiter.store().keyspace().buckets, std::int64_t(1000));

        Outcome users;
        for (unsigned u = 0; u < 300; ++u) {
            request.from(user(u));
            limiter.check(request.view(), 2 * kSecond, check);
            count(check, users);
        }
        QCOMPARE(users.own, 300);
        QCOMPARE(users.full + users.charged() + users.other, 0);
        QCOMPARE(limiter.store().keyspace().buckets, std::int64_t(1000));

        Outcome later;
        for (unsigned i = 2000; i < 3000; ++i) {
            request.from(minted(i));
            limiter.check(request.view(), 3 * kSecond, check);
            count(check, later);
        }
        QCOMPARE(later.own, 0);
        QCOMPARE(later.full, 0);
        QCOMPARE(later.other, 0);
        QCOMPARE(later.charged(), 1000);
        // The minter's network's bucket ("ip:2001::/16") passes 20 and throttles the rest: what
        // the minter gains is that bucket's capacity, not a bucket per key.
        QCOMPARE(later.chargedPassed, 20);
        // Users keep getting buckets of their own.
        for (unsigned u = 300; u < 400; ++u) {
            request.from(user(u));
            limiter.check(request.view(), 4 * kSecond, check);
            count(check, users);
        }
        QCOMPARE(users.own, 400);
    }

    // Four users of four /8s fill a store of four: each /8 holds exactly its share, so a fifth
    // /8's key is refused as full, and so is another key of a /8 already there.
    void fullOnlyWhenNoAggregateIsOverItsShare() {
        MemoryStoreOptions options;
        options.maxBuckets = 4;
        Limiter limiter(policySet({slowPolicy()}), makeMemoryStore(options));
        TestRequest request;
        Check check;
        for (const char* a : {"10.0.0.1", "20.0.0.1", "30.0.0.1", "40.0.0.1"}) {
            request.from(a);
            limiter.check(request.view(), 0, check);
            QCOMPARE(check.policies()[0].outcome, PolicyOutcome::Passed);
        }
        for (const char* a : {"50.0.0.1", "10.0.0.2"}) {
            request.from(a);
            Verdict v = limiter.decide(request.view(), kSecond);
            QCOMPARE(v.status, 503);
            QCOMPARE(v.code, RefusalCode::StoreFull);
        }
    }

    // Three keys of 10/8 and one of 192/8 in a store of four: 10/8 holds 3 of a share of 2. A
    // fourth key of 10/8 is charged to 10/8's bucket; a key of 172/8 (under its share) takes
    // the place of one of 10/8's buckets, the least recently used.
    void overShareIsChargedUnderShareTakesThePlaceOfTheDensest() {
        MemoryStoreOptions options;
        options.maxBuckets = 4;
        Limiter limiter(policySet({slowPolicy()}), makeMemoryStore(options));
        TestRequest request;
        Check check;
        Nanos t = 0;
        for (const char* a : {"10.0.0.1", "10.0.1.1", "10.0.2.1", "192.0.2.1"}) {
            request.from(a);
            limiter.check(request.view(), t += kSecond, check);
            QCOMPARE(check.policies()[0].decision.remaining, std::int64_t(19));
        }
        request.from("10.0.3.1");
        limiter.check(request.view(), t += kSecond, check);
        QCOMPARE(check.policies()[0].outcome, PolicyOutcome::Passed);
        QVERIFY(check.policies()[0].chargedFallback);
        request.from("10.0.3.2");
        limiter.check(request.view(), t += kSecond, check);
        QVERIFY(check.policies()[0].chargedFallback);
        QCOMPARE(check.policies()[0].decision.remaining, std::int64_t(18));  // the same bucket

        request.from("172.16.0.1");
        limiter.check(request.view(), t += kSecond, check);
        QCOMPARE(check.policies()[0].outcome, PolicyOutcome::Passed);
        QVERIFY(!check.policies()[0].chargedFallback);
        QCOMPARE(check.policies()[0].decision.remaining, std::int64_t(19));
        QCOMPARE(limiter.store().keyspace().buckets, std::int64_t(4));
        // 192/8's bucket was never the densest aggregate's: it is still there.
        request.from("192.0.2.1");
        limiter.check(request.view(), t += kSecond, check);
        QCOMPARE(check.policies()[0].decision.remaining, std::int64_t(18));
    }

    // Eight threads at once: four mint /64s across a /24 of a store the minter filled, four
    // bring users from other networks. The minter's aggregate is over its share from the first
    // user on, so it never gains a bucket again: every minted key is charged or throttled, every
    // user gets a bucket of its own, and the store stays at its cap.
    void eightThreadsMintingNeverPassTheirShare() {
        MemoryStoreOptions options;
        options.maxBuckets = 2000;
        Limiter limiter(policySet({slowPolicy()}), makeMemoryStore(options));
        TestRequest request;
        Check check;
        for (unsigned i = 0; i < 2000; ++i) {
            request.from(minted(i));
            limiter.check(request.view(), kSecond, check);
        }
        request.from(user(0));
        limiter.check(request.view(), kSecond, check);
        QCOMPARE(check.policies()[0].decision.remaining, std::int64_t(19));

        std::array<Outcome, 8> outcomes{};
        std::atomic<bool> go{false};
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < 8; ++t) {
            threads.emplace_back([&, t] {
                TestRequest r;
                Check c;
                while (!go.load())
                    std::this_thread::yield();
                for (unsigned i = 0; i < 400; ++i) {
                    const bool minter = t < 4;
                    r.from(minter ? minted(10'000 + t * 400 + i) : user(1 + (t - 4) * 400 + i));
                    limiter.check(r.view(), 2 * kSecond, c);
                    count(c, outcomes[t]);
                }
            });
        }
        go = true;
        for (auto& th : threads)
            th.join();
        Outcome minters, users;
        for (unsigned t = 0; t < 8; ++t)
            (t < 4 ? minters : users).add(outcomes[t]);
        QCOMPARE(minters.own, 0);
        QCOMPARE(minters.full, 0);
        QCOMPARE(minters.charged(), 1600);
        QCOMPARE(minters.chargedPassed, 20);  // the /16's bucket, 20 at once
        QCOMPARE(users.own, 1600);
        QCOMPARE(limiter.store().keyspace().buckets, std::int64_t(2000));
    }

    // The index of aggregates is kept only while the store may be full: built when the store
    // first has no room, dropped (its memory returned) once evictions take the store under
    // three quarters of its cap, and built again from every bucket held when it is full again,
    // with the rule deciding as the first time.
    void theRuleHoldsWhenTheStoreFillsAgainAfterItHadRoom() {
        MemoryStoreOptions options;
        options.maxBuckets = 1000;
        Limiter limiter(policySet({slowPolicy()}), makeMemoryStore(options));
        TestRequest request;
        Check check;
        for (unsigned i = 0; i < 1001; ++i) {  // the last one finds the store full
            request.from(minted(i));
            limiter.check(request.view(), kSecond, check);
        }
        const std::int64_t fullBytes = limiter.store().keyspace().bytes;

        // 100 s later every bucket is fresh again (one token per 100 s): users' new buckets
        // evict idle ones as they go, until the store has room for a quarter of its cap.
        Nanos t = 1000 * kSecond;
        unsigned u = 0;
        Outcome users;
        while (limiter.store().keyspace().buckets >= 750 && u < 1000) {
            request.from(user(u++));
            limiter.check(request.view(), t, check);
            count(check, users);
        }
        QVERIFY(limiter.store().keyspace().buckets < 750);
        QCOMPARE(users.own, static_cast<int>(u));
        QVERIFY(limiter.store().keyspace().bytes < fullBytes);  // the index is gone

        // A minter fills the store again at once, and then the same as the first time: users
        // take the place of its buckets, and its further keys are charged to its aggregate.
        Outcome minter;
        for (unsigned i = 5000; limiter.store().keyspace().buckets < 1000 && i < 7000; ++i) {
            request.from(minted(i));
            limiter.check(request.view(), t, check);
            count(check, minter);
        }
        QCOMPARE(limiter.store().keyspace().buckets, std::int64_t(1000));
        QCOMPARE(minter.full + minter.charged() + minter.other, 0);
        Outcome later;
        for (unsigned n = 0; n < 100; ++n) {
            request.from(user(500 + n));
            limiter.check(request.view(), t + kSecond, check);
            count(check, later);
            request.from(minted(8000 + n));
            limiter.check(request.view(), t + kSecond, check);
            count(check, minter);
        }
        QCOMPARE(later.own, 100);
        QCOMPARE(later.full + later.charged() + later.other, 0);
        QCOMPARE(minter.full, 0);
        QCOMPARE(minter.charged(), 100);
        QCOMPARE(limiter.store().keyspace().buckets, std::int64_t(1000));
    }

    // Four threads bring new users at once through the store's high-water mark, where their
    // new buckets build the index shard by shard (each taking another shard only when its lock
    // is free), and on past full: the store stays at its cap, every request is decided, and
    // every user the store had room for got a bucket of its own.
    void fourThreadsFillingBuildTheIndexTogether() {
        MemoryStoreOptions options;
        options.maxBuckets = 2000;
        options.shards = 8;
        Limiter limiter(policySet({slowPolicy()}), makeMemoryStore(options));
        std::array<Outcome, 4> outcomes{};
        std::atomic<bool> go{false};
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < 4; ++t) {
            threads.emplace_back([&, t] {
                TestRequest r;
                Check c;
                while (!go.load())
                    std::this_thread::yield();
                for (unsigned i = 0; i < 600; ++i) {
                    r.from(user(t * 600 + i));
                    limiter.check(r.view(), kSecond, c);
                    count(c, outcomes[t]);
                }
            });
        }
        go = true;
        for (auto& th : threads)
            th.join();
        Outcome all;
        for (const Outcome& o : outcomes)
            all.add(o);
        QCOMPARE(all.own + all.charged() + all.full, 2400);
        QCOMPARE(all.other, 0);
        QVERIFY(all.own >= 2000);
        QCOMPARE(limiter.store().keyspace().buckets, std::int64_t(2000));
    }

    // The index is built shard by shard as new buckets take the store past 7/8 of its cap, and
    // is whole before the store has no room. A limit first used after that still counts when
    // the store is full: its buckets are indexed by the full store's path. Here 76 /8s hold one
    // bucket each of limit 0, then 30/8 four of limit 1, which fill the store: 30/8 is over its
    // share, so a key of a new /8 takes the place of one of 30/8's buckets rather than being
    // refused as full (it would be, were limit 1's buckets not counted).
    void aLimitFirstUsedOnceTheIndexIsBuiltCountsWhenFull() {
        MemoryStoreOptions options;
        options.maxBuckets = 80;
        options.shards = 4;
        const std::unique_ptr<Store> store = makeMemoryStore(options);
        Limit limit;
        limit.capacity = 20;
        limit.emissionInterval = 100 * kSecond;
        const auto consume = [&](std::uint32_t limitId, const std::string& address) {
            const std::string key = "ip:" + address;
            KeyPlace place;
            place.address = *IpAddress::parse(address);
            place.prefix = 32;
            ConsumeRequest request;
            request.limitId = limitId;
            request.limitName = limitId == 0 ? "a" : "b";
            request.limit = &limit;
            request.partition = key;
            request.key = key;
            request.now = kSecond;
            request.place = &place;
            return store->consume(request);
        };
        for (unsigned n = 1; n <= 76; ++n) {
            const ConsumeResult r = consume(0, std::to_string(n + 30) + ".0.0.1");
            QCOMPARE(r.status, StoreStatus::Ok);
        }
        for (unsigned n = 1; n <= 4; ++n) {
            const ConsumeResult r = consume(1, "30.0.0." + std::to_string(n));
            QCOMPARE(r.status, StoreStatus::Ok);
        }
        QCOMPARE(store->keyspace().buckets, std::int64_t(80));
        const ConsumeResult r = consume(0, "200.0.0.1");
        QCOMPARE(r.status, StoreStatus::Ok);
        QVERIFY(!r.chargedFallback);
        QCOMPARE(r.decision.remaining, std::int64_t(19));
        QCOMPARE(store->keyspace().buckets, std::int64_t(80));
    }
};

QTEST_APPLESS_MAIN(TestFairShare)
#include "tst_fair_share.moc"
