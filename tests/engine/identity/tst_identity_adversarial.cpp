// The attacks the bounded keyspace exists for, replayed through the real Limiter and memory
// store on a manual clock: rotating credentials, rotating addresses inside a /64, dual-stack
// spellings of one address, forged forwarded headers, and concurrent minting.

#include <QtTest>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ratelab/limiter.h"
#include "ratelab/memory_store.h"

using namespace ratelab;

namespace {

// A policy "api": token bucket, burst 20, 1 per second, the default key chain and budget
// (128 per peer, 8192 without a peer, slots kept 60 s after last use).
PolicySet apiPolicy() {
    PolicySet set;
    Policy p;
    p.name = "api";
    p.algorithm = Algorithm::TokenBucket;
    p.capacity = 20;
    p.refillPerSecond = 1.0;
    set.policies.push_back(p);
    return set;
}

std::shared_ptr<Store> freshStore() {
    MemoryStoreOptions options;
    options.hashSeed = 7;
    return makeMemoryStore(options);
}

// A GET of /api/items from `peer`, with the headers the test adds.
struct Req : OwnedRequest {
    explicit Req(const char* from = nullptr) {
        path = "/api/items";
        if (from) peer = *IpAddress::parse(from);
    }
    Req& header(std::string name, std::string value) {
        headers.emplace_back(std::move(name), std::move(value));
        return *this;
    }
};

struct Tally {
    int allowed = 0;
    int throttled = 0;
    int fallback = 0;
};

void decideInto(const Limiter& limiter, Req& req, Nanos now, Verdict& verdict, Tally& tally) {
    RequestView view = req.view();
    limiter.decide(view, now, verdict, /*explain=*/true);
    QCOMPARE(verdict.check.policies().size(), std::size_t(1));
    if (verdict.allowed) ++tally.allowed;
    if (verdict.status == 429) ++tally.throttled;
    if (verdict.check.policies()[0].chargedFallback) ++tally.fallback;
}

std::string token(int i) {
    return "Bearer rotating-token-" + std::to_string(i);
}

constexpr Nanos kT0 = 1000 * kNanosPerSecond;

}  // namespace

class TestIdentityAdversarial : public QObject {
    Q_OBJECT

private slots:
    void rotatingAuthorizationFromOneIpv4Peer() {
        Limiter limiter(apiPolicy(), freshStore());
        Verdict verdict;
        Tally tally;
        for (int i = 0; i < 200; ++i) {
            Req req("198.51.100.7");
            req.header("Authorization", token(i));
            decideInto(limiter, req, kT0, verdict, tally);
            const PolicyResult& r = verdict.check.policies()[0];
            // The first 128 tokens get their own bucket; from the 129th on, the peer's own.
            QCOMPARE(r.chargedFallback, i >= 128);
            QCOMPARE(r.scope, std::string("peer:198.51.100.7"));
            if (i >= 128) QCOMPARE(r.key, std::string("ip:198.51.100.7"));
        }
        // 128 fresh buckets pass; the 72 others share ip:198.51.100.7 and its burst of 20.
        QCOMPARE(tally.fallback, 72);
        QCOMPARE(tally.allowed, 128 + 20);
        QCOMPARE(tally.throttled, 52);
        KeyspaceStats stats = limiter.store().keyspace();
        QCOMPARE(stats.buckets, std::int64_t(129));
        QCOMPARE(stats.budgetSlots, std::int64_t(128));
        QCOMPARE(stats.scopes, std::int64_t(1));
    }

    void rotatingAddressesInsideOneSlash64() {
        Limiter limiter(apiPolicy(), freshStore());
        Verdict verdict;
        Tally tally;
        for (int i = 0; i < 200; ++i) {
            std::string address = "2001:db8:1:2:" + std::to_string(1000 + i) + "::1";
            Req req(address.c_str());
            decideInto(limiter, req, kT0, verdict, tally);
            QCOMPARE(verdict.check.policies()[0].key, std::string("ip:2001:db8:1:2::/64"));
        }
        QCOMPARE(tally.allowed, 20);
        QCOMPARE(tally.throttled, 180);
        QCOMPARE(limiter.store().keyspace().buckets, std::int64_t(1));
    }

    void twoSlash64sAreTwoBuckets() {
        Limiter limiter(apiPolicy(), freshStore());
        Verdict verdict;
        Tally tally;
        for (int i = 0; i < 200; ++i) {
            std::string address = (i % 2 ? "2001:db8:1:2::" : "2001:db8:1:3::") + std::to_string(i);
            Req req(address.c_str());
            decideInto(limiter, req, kT0, verdict, tally);
        }
        QCOMPARE(tally.allowed, 40);
        QCOMPARE(limiter.store().keyspace().buckets, std::int64_t(2));
    }

    void rotatingTokensAndAddressesInsideOneSlash64() {
        Limiter limiter(apiPolicy(), freshStore());
        Verdict verdict;
        Tally tally;
        for (int i = 0; i < 200; ++i) {
            std::string address = "2001:db8:1:2::" + std::to_string(i + 1);
            Req req(address.c_str());
            req.header("Authorization", token(i));
            decideInto(limiter, req, kT0, verdict, tally);
            QCOMPARE(verdict.check.policies()[0].scope, std::string("peer:2001:db8:1:2::/64"));
        }
        QCOMPARE(tally.fallback, 72);
        KeyspaceStats stats = limiter.store().keyspace();
        QCOMPARE(stats.buckets, std::int64_t(128 + 1));
        // The peer's 128 credentials, and in each of the /48's and the /32's scopes (the address
        // budget) the same 128 plus the /64's own bucket.
        QCOMPARE(stats.budgetSlots, std::int64_t(128 + 2 * 129));
        QCOMPARE(stats.scopes, std::int64_t(3));
    }

    void ipv4MappedAndPlainShareABucket() {
        Limiter limiter(apiPolicy(), freshStore());
        Verdict verdict;
        Tally tally;
        for (int i = 0; i < 20; ++i) {
            Req mapped("::ffff:198.51.100.7");
            decideInto(limiter, mapped, kT0, verdict, tally);
            QCOMPARE(verdict.check.policies()[0].key, std::string("ip:198.51.100.7"));
        }
        QCOMPARE(tally.allowed, 20);
        Req plain("198.51.100.7");
        decideInto(limiter, plain, kT0, verdict, tally);
        QCOMPARE(verdict.status, 429);
        QCOMPARE(verdict.check.policies()[0].key, std::string("ip:198.51.100.7"));
        QCOMPARE(limiter.store().keyspace().buckets, std::int64_t(1));
    }

    void forwardedForFromAnUntrustedPeerIsIgnored() {
        PolicySet set = apiPolicy();
        set.trustedProxies.cidrs.push_back(*Cidr::parse("10.0.0.0/8"));
        Limiter limiter(std::move(set), freshStore());
        Verdict verdict;
        Tally tally;
        for (int i = 0; i < 200; ++i) {
            Req req("198.51.100.7");
            req.header("X-Forwarded-For", "203.0.113." + std::to_string(i % 250));
            decideInto(limiter, req, kT0, verdict, tally);
            QCOMPARE(verdict.check.policies()[0].key, std::string("ip:198.51.100.7"));
        }
        QCOMPARE(tally.allowed, 20);
        QCOMPARE(limiter.store().keyspace().buckets, std::int64_t(1));
    }

    void throughATrustedProxyTheRightmostUntrustedHopIsTheClient() {
        PolicySet set = apiPolicy();
        set.trustedProxies.cidrs.push_back(*Cidr::parse("10.0.0.0/8"));
        Limiter limiter(std::move(set), freshStore());
        Verdict verdict;
        Tally tally;
        for (int i = 0; i < 200; ++i) {
            // The client forges a fresh address on the left each time; our two proxies append.
            Req req("10.0.0.1");
            req.header("X-Forwarded-For",
                       "192.0.2." + std::to_string(i % 250) + ", 203.0.113.9, 10.0.0.2");
            decideInto(limiter, req, kT0, verdict, tally);
            QCOMPARE(verdict.check.policies()[0].key, std::string("ip:203.0.113.9"));
        }
        QCOMPARE(tally.allowed, 20);
        QCOMPARE(limiter.store().keyspace().buckets, std::int64_t(1));
    }

    void garbageFromATrustedProxyFailsClosed_data() {
        QTest::addColumn<QString>("header");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("trustedHeader");
        QTest::newRow("xff word") << "X-Forwarded-For"
                                  << "not-an-address"
                                  << "x-forwarded-for";
        QTest::newRow("xff tail") << "X-Forwarded-For"
                                  << "203.0.113.9, 10.0.0.999"
                                  << "x-forwarded-for";
        QTest::newRow("xff blank") << "X-Forwarded-For"
                                   << ""
                                   << "x-forwarded-for";
        QTest::newRow("forwarded obfuscated") << "Forwarded"
                                              << "for=_hidden"
                                              << "forwarded";
        QTest::newRow("x-real-ip list") << "X-Real-IP"
                                        << "203.0.113.9, 203.0.113.10"
                                        << "x-real-ip";
    }
    void garbageFromATrustedProxyFailsClosed() {
        QFETCH(QString, header);
        QFETCH(QString, value);
        QFETCH(QString, trustedHeader);
        PolicySet set = apiPolicy();
        set.trustedProxies.cidrs.push_back(*Cidr::parse("10.0.0.0/8"));
        set.trustedProxies.header = trustedHeader.toStdString();
        Limiter limiter(std::move(set), freshStore());
        Req req("10.0.0.1");
        req.header(header.toStdString(), value.toStdString());
        RequestView view = req.view();
        Verdict verdict;
        limiter.decide(view, kT0, verdict, true);
        QCOMPARE(verdict.status, 412);
        QVERIFY(!verdict.allowed);
        QCOMPARE(verdict.code, RefusalCode::ForwardedMalformed);
        QCOMPARE(refusalCodeName(verdict.code), std::string_view("forwarded_malformed"));
        QVERIFY(verdict.body.find("forwarded_malformed") != std::string::npos);
        QCOMPARE(verdict.check.policies()[0].outcome, PolicyOutcome::ForwardedMalformed);
        QCOMPARE(limiter.store().keyspace().buckets, std::int64_t(0));
    }

    void rotationWithoutAPeerFillsGlobalThenOverflow() {
        Limiter limiter(apiPolicy(), freshStore());
        Verdict verdict;
        Tally tally;
        for (int i = 0; i < 8192 + 100; ++i) {
            Req req;
            req.header("Authorization", token(i));
            decideInto(limiter, req, kT0, verdict, tally);
            const PolicyResult& r = verdict.check.policies()[0];
            if (i == 8191 || i == 8192) {
                QCOMPARE(r.chargedFallback, i == 8192);
                QCOMPARE(r.scope, std::string("global"));
            }
            if (i >= 8192) QCOMPARE(r.key, std::string("overflow"));
        }
        QCOMPARE(tally.fallback, 100);
        QCOMPARE(tally.allowed, 8192 + 20);
        KeyspaceStats stats = limiter.store().keyspace();
        QCOMPARE(stats.budgetSlots, std::int64_t(8192));
        QCOMPARE(stats.buckets, std::int64_t(8192 + 1));
        QCOMPARE(stats.scopes, std::int64_t(1));
    }

    void unusedCredentialsFreeTheirSlotsUsedOnesKeepThem() {
        // Slots live 60 s after last use (the bucket itself is fresh again after 20 s).
        Limiter limiter(apiPolicy(), freshStore());
        Verdict verdict;
        Tally tally;
        auto send = [&](const std::string& credential, Nanos at) {
            Req req("203.0.113.50");
            req.header("Authorization", credential);
            decideInto(limiter, req, at, verdict, tally);
            return verdict.check.policies()[0].chargedFallback;
        };
        // t = 0: tokens a0..a127 fill the peer's 128 slots; b0 is over the cap.
        for (int i = 0; i < 128; ++i)
            QVERIFY(!send("a" + std::to_string(i), kT0));
        QVERIFY(send("b0", kT0));
        // t = 30 s: a0..a63 are used again, which renews their slots until t = 90 s.
        for (int i = 0; i < 64; ++i)
            QVERIFY(!send("a" + std::to_string(i), kT0 + 30 * kNanosPerSecond));
        QVERIFY(send("b0", kT0 + 59 * kNanosPerSecond));
        // t = 61 s: a64..a127 (unused since t = 0) have expired: 64 new tokens take their slots,
        // the 65th is over the cap again, and the used tokens still hold theirs.
        const Nanos t61 = kT0 + 61 * kNanosPerSecond;
        for (int i = 0; i < 64; ++i)
            QVERIFY(!send("b" + std::to_string(i), t61));
        QVERIFY(send("b64", t61));
        for (int i = 0; i < 64; ++i)
            QVERIFY(!send("a" + std::to_string(i), t61));
        QVERIFY(send("a64", t61));
        QCOMPARE(limiter.store().keyspace().budgetSlots, std::int64_t(128));
    }

    void aSlotOutlivesItsBucket() {
        // A slot TTL of 1 s is raised to the bucket's own time to refill (20 tokens at 0.1/s:
        // 200 s), so no new credential opens a bucket while an admitted one could still be full.
        PolicySet set = apiPolicy();
        set.policies[0].refillPerSecond = 0.1;
        set.policies[0].budget.perPeer = 1;
        set.policies[0].budget.slotTtl = 1 * kNanosPerSecond;
        Limiter limiter(std::move(set), freshStore());
        Verdict verdict;
        Tally tally;
        Req first("203.0.113.60");
        first.header("Authorization", "first");
        decideInto(limiter, first, kT0, verdict, tally);
        QVERIFY(!verdict.check.policies()[0].chargedFallback);
        Req second("203.0.113.60");
        second.header("Authorization", "second");
        decideInto(limiter, second, kT0 + 100 * kNanosPerSecond, verdict, tally);
        QVERIFY(verdict.check.policies()[0].chargedFallback);
        decideInto(limiter, second, kT0 + 201 * kNanosPerSecond, verdict, tally);
        QVERIFY(!verdict.check.policies()[0].chargedFallback);
    }

    void concurrentMintingNeverExceedsTheCap() {
        Limiter limiter(apiPolicy(), freshStore());
        constexpr int kThreads = 4;
        constexpr int kPerThread = 1000;
        std::atomic<int> ownBucket{0};
        std::atomic<int> fallback{0};
        std::atomic<int> oddities{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&, t] {
                Verdict verdict;
                for (int i = 0; i < kPerThread; ++i) {
                    Req req("198.51.100.99");
                    req.header("Authorization", "t" + std::to_string(t) + "-" + std::to_string(i));
                    RequestView view = req.view();
                    limiter.decide(view, kT0, verdict, false);
                    if (verdict.check.policies().size() != 1) {
                        ++oddities;
                        continue;
                    }
                    (verdict.check.policies()[0].chargedFallback ? fallback : ownBucket)++;
                }
            });
        }
        for (std::thread& th : threads)
            th.join();
        QCOMPARE(oddities.load(), 0);
        QCOMPARE(ownBucket.load(), 128);
        QCOMPARE(fallback.load(), kThreads * kPerThread - 128);
        KeyspaceStats stats = limiter.store().keyspace();
        QCOMPARE(stats.budgetSlots, std::int64_t(128));
        QCOMPARE(stats.buckets, std::int64_t(129));
    }

    void noPeerAndNoCredentialsIs412() {
        Limiter limiter(apiPolicy(), freshStore());
        Req req;
        RequestView view = req.view();
        Verdict verdict;
        limiter.decide(view, kT0, verdict, true);
        QCOMPARE(verdict.status, 412);
        QCOMPARE(verdict.code, RefusalCode::IdentityUnavailable);
        QVERIFY(verdict.body.find("identity_unavailable") != std::string::npos);
        QCOMPARE(verdict.contentType, std::string("application/problem+json"));
        QCOMPARE(verdict.check.policies()[0].outcome, PolicyOutcome::NoIdentity);
        QCOMPARE(limiter.store().keyspace().buckets, std::int64_t(0));
    }
};

QTEST_APPLESS_MAIN(TestIdentityAdversarial)
#include "tst_identity_adversarial.moc"
