// Batched decisions equal one-by-one decisions: Store::consumeBatch against consume() on the
// memory store (every algorithm, with and without budgets, address chains of three levels, a
// roomy and a full store), and Limiter::checkBatch against check() (chained policies, shadow
// mode, tiers, bypasses, identity failures, store failures, on_store_error "local", IPv6
// clients counted against their networks, the observer's events in order). Seeded streams with
// repeated keys inside every batch and several requests at the same instant.

#include <QtTest>

#include <random>
#include <string>
#include <vector>

#include "fixtures/limiter_fixture.h"
#include "ratelab/limiter.h"
#include "ratelab/memory_store.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

std::string describe(const Decision& d) {
    return std::to_string(d.allowed) + "/" + std::to_string(static_cast<int>(d.reason)) + "/" +
           std::to_string(d.limit) + "/" + std::to_string(d.remaining) + "/" +
           std::to_string(d.retryAfter) + "/" + std::to_string(d.resetAfter) + "/" +
           std::to_string(d.delay);
}

std::string describe(const ConsumeResult& r) {
    return std::to_string(static_cast<int>(r.status)) + " " + describe(r.decision) + " " +
           std::to_string(r.chargedLevel) + " " + r.error;
}

std::string describe(const Check& c) {
    std::string s = std::to_string(c.allowed) + " " + std::to_string(c.status) + " " +
                    std::to_string(static_cast<int>(c.code)) + " " + std::to_string(c.retryAfter);
    for (const PolicyResult& r : c.policies()) {
        s += " [" + std::to_string(r.policy) + " " + std::to_string(r.tier) + " " +
             std::string(policyOutcomeName(r.outcome)) + " " + describe(r.decision) + " " +
             std::to_string(r.chargedFallback) + " " + r.key + " " + r.scope + "]";
    }
    return s;
}

bool operator==(const Decision& a, const Decision& b) {
    return a.allowed == b.allowed && a.reason == b.reason && a.limit == b.limit &&
           a.remaining == b.remaining && a.retryAfter == b.retryAfter &&
           a.resetAfter == b.resetAfter && a.delay == b.delay;
}

bool same(const ConsumeResult& a, const ConsumeResult& b) {
    return a.status == b.status && a.decision == b.decision &&
           a.chargedFallback == b.chargedFallback && a.chargedLevel == b.chargedLevel &&
           a.error == b.error;
}

bool sameKeyspace(const KeyspaceStats& a, const KeyspaceStats& b) {
    return a.buckets == b.buckets && a.budgetSlots == b.budgetSlots && a.scopes == b.scopes &&
           a.bytes == b.bytes && a.maxBuckets == b.maxBuckets;
}

Limit limitFor(Algorithm algorithm) {
    Limit l;
    l.algorithm = algorithm;
    l.capacity = algorithm == Algorithm::LeakyBucket ? 3 : 5;
    l.emissionInterval = 200 * kNanosPerMilli;
    l.window = 2 * kNanosPerSecond;
    l.delay = algorithm == Algorithm::LeakyBucket ? 1 : 0;
    return l;
}

// Every decision as text, in order; the store-error events carry the store's message.
class EventLog final : public LimitObserver {
public:
    std::vector<std::string> lines;
    void onLimitHit(const LimitEvent& e) override {
        lines.push_back(std::string(e.policy) + " " + std::string(e.keyHash) + " " +
                        std::string(policyOutcomeName(e.outcome)) + " " + describe(e.decision) +
                        " " + std::to_string(e.now));
    }
    void onStoreError(const StoreErrorEvent& e) override {
        lines.push_back(std::string(e.policy) + " " + std::string(e.keyHash) + " " +
                        std::string(policyOutcomeName(e.outcome)) + " " + std::string(e.error) +
                        " " + std::to_string(e.now));
    }
};

// Fails every seventh call with a transport error and every eleventh with a refusal; otherwise
// a memory store. Counts calls, so it fails the same calls whichever way they arrive.
class FlakyStore final : public Store {
public:
    ConsumeResult consume(const ConsumeRequest& request) override {
        ++calls_;
        ConsumeResult r;
        if (calls_ % 7 == 0) {
            r.status = StoreStatus::Transport;
            r.error = "connection refused";
            return r;
        }
        if (calls_ % 11 == 0) {
            r.status = StoreStatus::Refused;
            r.error = "OOM command not allowed";
            return r;
        }
        return inner_->consume(request);
    }
    KeyspaceStats keyspace() const override { return inner_->keyspace(); }
    std::string_view kind() const override { return "flaky"; }

private:
    std::int64_t calls_ = 0;
    // Built from a named value: GCC 12 reports a dangling pointer to a braced temporary here
    // once the constructor is inlined into a make_shared (a false positive).
    static std::unique_ptr<Store> memory() {
        MemoryStoreOptions options;
        options.maxBuckets = 1000;
        options.hashSeed = 5;
        return makeMemoryStore(options);
    }
    std::unique_ptr<Store> inner_ = memory();
};

}  // namespace

class TestCheckBatch : public QObject {
    Q_OBJECT

private slots:
    void storeBatchEqualsOneByOne_data();
    void storeBatchEqualsOneByOne();
    void limiterBatchEqualsOneByOne_data();
    void limiterBatchEqualsOneByOne();
    void oneTimeForTheWholeBatch();
    void decideBatchRendersAsDecide();
};

void TestCheckBatch::storeBatchEqualsOneByOne_data() {
    QTest::addColumn<int>("algorithm");
    QTest::addColumn<int>("maxBuckets");
    QTest::addColumn<int>("shards");
    const Algorithm all[] = {Algorithm::TokenBucket, Algorithm::Gcra,
                             Algorithm::FixedWindow, Algorithm::SlidingWindow,
                             Algorithm::SlidingLog,  Algorithm::LeakyBucket,
                             Algorithm::HaproxyRate};
    // The fewest shards a store takes, and the most: a batch then spans shards up to the last
    // bit of its 64-bit mask of shards to lock, whatever the machine's default.
    for (int shards : {4, 64}) {
        for (Algorithm a : all) {
            const std::string name =
                std::string(algorithmName(a)) + ", " + std::to_string(shards) + " shards";
            QTest::newRow((name + ", roomy").c_str()) << static_cast<int>(a) << 1'000'000 << shards;
            // Fewer buckets than keys: new keys meet a full store, sweeps run in mid-batch.
            QTest::newRow((name + ", full").c_str()) << static_cast<int>(a) << 300 << shards;
        }
    }
}

// 10^6 requests per algorithm over its two rows: a third budgeted (16 peers, caps of 4, so
// many are charged to their peer's fallback; half of those peers chained on to a network of
// two peers, cap 6, and one network of all, cap 20), keys drawn from 1,500, batches of 1 to 64
// requests. In the full store the clock moves slowly enough that few buckets go idle: new keys
// are refused, and the sweeps they start find little.
void TestCheckBatch::storeBatchEqualsOneByOne() {
    QFETCH(int, algorithm);
    QFETCH(int, maxBuckets);
    QFETCH(int, shards);
    const Limit limit = limitFor(static_cast<Algorithm>(algorithm));
    const MemoryStoreOptions options{maxBuckets, 11, static_cast<unsigned>(shards)};
    const std::unique_ptr<Store> single = makeMemoryStore(options);
    const std::unique_ptr<Store> batched = makeMemoryStore(options);

    const bool full = maxBuckets < 1000;
    const int kRequests = full ? 300'000 : 700'000;
    const Nanos step = full ? 200 * kNanosPerMicro : 20 * kNanosPerMilli;
    std::mt19937_64 rng(static_cast<std::uint64_t>(algorithm) * 31 + maxBuckets);
    std::vector<std::string> keys, peers, fallbacks;
    for (int k = 0; k < 1500; ++k)
        keys.push_back("auth:" + std::to_string(k * 7919));
    for (int p = 0; p < 16; ++p) {
        peers.push_back("peer:10.0.0." + std::to_string(p));
        fallbacks.push_back("ip:10.0.0." + std::to_string(p));
    }
    std::vector<std::string> nets, netFallbacks;
    for (int p = 0; p < 8; ++p) {
        nets.push_back("net:10.0.0." + std::to_string(2 * p) + "/31");
        netFallbacks.push_back("ip:10.0.0." + std::to_string(2 * p) + "/31");
    }
    const BucketBudget all{"net:10.0.0.0/24", "ip:10.0.0.0/24", 20, 3 * kNanosPerSecond};
    std::vector<BucketBudget> pairs(8);
    for (int p = 0; p < 8; ++p)
        pairs[p] = BucketBudget{nets[p], netFallbacks[p], 6, 3 * kNanosPerSecond, &all};
    // Even peers chain on to their pair's network and the /24; their keys all share the /24's
    // partition. Odd peers have their own budget only.
    std::vector<BucketBudget> budgets(16);
    for (int p = 0; p < 16; ++p) {
        budgets[p] = BucketBudget{peers[p], fallbacks[p], 4, 3 * kNanosPerSecond,
                                  p % 2 == 0 ? &pairs[p / 2] : nullptr};
    }

    std::vector<ConsumeRequest> requests;
    std::vector<ConsumeResult> results(64);
    Nanos now = kNanosPerSecond;
    std::int64_t compared = 0, allowed = 0, fallback = 0, outer = 0, refused = 0;
    while (compared < kRequests) {
        const std::size_t n = 1 + rng() % 64;
        requests.clear();
        for (std::size_t i = 0; i < n; ++i) {
            if (rng() % 4 != 0) now += static_cast<Nanos>(rng() % static_cast<std::uint64_t>(step));
            ConsumeRequest r;
            r.limitId = 3;
            r.limitName = "api";
            r.limit = &limit;
            const std::size_t key = rng() % keys.size();
            r.key = keys[key];
            r.cost = 1 + static_cast<std::int64_t>(rng() % 8 == 0);
            r.now = now;
            if (rng() % 3 == 0) {
                const std::size_t peer = key % 16;
                r.budget = &budgets[peer];
                r.partition = peer % 2 == 0 ? all.fallbackKey : std::string_view(fallbacks[peer]);
            } else {
                r.partition = r.key;
            }
            requests.push_back(r);
        }
        batched->consumeBatch(requests, std::span(results).first(n));
        for (std::size_t i = 0; i < n; ++i) {
            const ConsumeResult one = single->consume(requests[i]);
            if (!same(one, results[i])) {
                QFAIL(qPrintable(QString("request %1: one by one %2, batched %3")
                                     .arg(compared)
                                     .arg(QString::fromStdString(describe(one)))
                                     .arg(QString::fromStdString(describe(results[i])))));
            }
            allowed += one.decision.allowed;
            fallback += one.chargedFallback;
            outer += one.chargedLevel > 1;
            refused += one.status == StoreStatus::Full;
            ++compared;
        }
    }
    QVERIFY(sameKeyspace(single->keyspace(), batched->keyspace()));
    // The stream exercised what it is meant to: passes, refusals, fallbacks, a full store.
    QVERIFY(allowed > 1000);
    QVERIFY(allowed < kRequests);
    QVERIFY(fallback > 1000);
    QVERIFY(outer > 100);
    if (full) {
        QVERIFY(refused > 1000);
    } else {
        QCOMPARE(refused, std::int64_t(0));
    }
}

void TestCheckBatch::limiterBatchEqualsOneByOne_data() {
    QTest::addColumn<QString>("set");
    QTest::newRow("default policy, budgets") << "default";
    QTest::newRow("two chained policies, one in shadow mode") << "chained";
    QTest::newRow("tiers, bypasses, no identity, a flaky store") << "mixed";
    QTest::newRow("IPv6 networks, a flaky store, on_store_error local") << "local";
}

// 10^5 requests through each policy set, in batches of 1 to 100, every field of every Check
// compared, keys captured, and the observer's events compared in order.
void TestCheckBatch::limiterBatchEqualsOneByOne() {
    QFETCH(QString, set);
    std::vector<Policy> policies;
    bool flaky = false;
    if (set == "default") {
        Policy p = tokenBucketPolicy("api", 4, 2.0);
        p.budget.perPeer = 3;
        policies.push_back(p);
    } else if (set == "chained") {
        Policy account = tokenBucketPolicy("account", 3, 1.0, "/login");
        account.algorithm = Algorithm::Gcra;
        account.key.source = KeySource::Header;
        account.key.header = "x-account";
        Policy address = tokenBucketPolicy("address", 5, 2.0);
        address.key.source = KeySource::Peer;
        address.mode = PolicyMode::Shadow;
        Policy window = tokenBucketPolicy("window", 6, 1.0);
        window.algorithm = Algorithm::SlidingWindow;
        window.windowMs = 2000;
        window.key.source = KeySource::Peer;
        policies = {account, address, window};
    } else if (set == "local") {
        flaky = true;
        Policy p = tokenBucketPolicy("api", 4, 2.0);
        p.key.source = KeySource::Peer;
        p.budget.ipv6Prefixes = {{56, 3}, {48, 5}};
        p.onStoreError = StoreErrorRule::Local;
        Policy login = tokenBucketPolicy("login", 3, 1.0, "/login");
        login.budget.perPeer = 2;
        login.onStoreError = StoreErrorRule::Local;
        policies = {p, login};
    } else {
        flaky = true;
        Policy plans = tokenBucketPolicy("plans", 2, 1.0);
        plans.key.source = KeySource::Peer;
        TierConfig tiers;
        tiers.attribute = "plan";
        tiers.defaultTier = "free";
        Tier free;
        free.name = "free";
        Tier premium;
        premium.name = "premium";
        premium.capacity = 6;
        tiers.tiers = {free, premium};
        plans.tiers = tiers;
        plans.bypass.cidrs = {*Cidr::parse("10.0.3.0/24")};
        plans.onStoreError = StoreErrorRule::Deny;
        Policy leaky = tokenBucketPolicy("leaky", 2, 4.0, "/api");
        leaky.algorithm = Algorithm::LeakyBucket;
        policies = {plans, leaky};
    }
    PolicySet policySet = testing::policySet(policies);
    policySet.store.replicas = 2;
    EventLog singleEvents, batchEvents;
    std::shared_ptr<Store> singleStore =
        flaky ? std::shared_ptr<Store>(std::make_shared<FlakyStore>()) : makeMemoryStore({1000, 5});
    std::shared_ptr<Store> batchStore =
        flaky ? std::shared_ptr<Store>(std::make_shared<FlakyStore>()) : makeMemoryStore({1000, 5});
    Limiter single(policySet, singleStore, {&singleEvents, 9});
    Limiter batched(policySet, batchStore, {&batchEvents, 9});

    constexpr int kRequests = 100'000;
    std::mt19937_64 rng(7);
    std::vector<TestRequest> owned(100);
    std::vector<RequestView> views(100);
    std::vector<Nanos> times(100);
    std::vector<Check> checks(100);
    for (Check& c : checks)
        c.captureKeys = true;
    Check one;
    one.captureKeys = true;
    Nanos now = kNanosPerSecond;
    int compared = 0;
    std::int64_t refusedMidway = 0, decidedLocally = 0, networkCharged = 0;
    while (compared < kRequests) {
        const std::size_t n = 1 + rng() % 100;
        for (std::size_t i = 0; i < n; ++i) {
            if (rng() % 3 != 0) now += static_cast<Nanos>(rng() % (50 * kNanosPerMilli));
            TestRequest& r = owned[i];
            r = TestRequest{};
            r.path = rng() % 2 ? "/login" : "/api/items";
            const int client = static_cast<int>(rng() % 40);
            if (set == "local") {
                // 40 /64s in 10 /56s of 2 /48s: the caps of 3 and 5 are reached at once.
                r.from("2001:db8:" + std::to_string(client % 2) + ":" +
                       std::to_string((client % 10) * 256 + client) + "::1");
            } else if (rng() % 25 != 0) {
                r.from("10.0." + std::to_string(client % 5) + "." + std::to_string(client));
            }
            if (rng() % 2) r.header("authorization", "Bearer t" + std::to_string(rng() % 60));
            if (rng() % 5 != 0) r.header("x-account", "user" + std::to_string(rng() % 8));
            if (rng() % 3 == 0) r.attributes.emplace_back("plan", "premium");
            times[i] = now;
        }
        for (std::size_t i = 0; i < n; ++i)
            views[i] = owned[i].view();
        batched.checkBatch(std::span(views).first(n), std::span(times).first(n),
                           std::span(checks).first(n));
        for (std::size_t i = 0; i < n; ++i) {
            single.check(views[i], times[i], one);
            if (describe(one) != describe(checks[i])) {
                QFAIL(qPrintable(QString("request %1: one by one %2, batched %3")
                                     .arg(compared)
                                     .arg(QString::fromStdString(describe(one)))
                                     .arg(QString::fromStdString(describe(checks[i])))));
            }
            if (!one.allowed && one.policies().size() > 1) ++refusedMidway;
            for (const PolicyResult& r : one.policies()) {
                decidedLocally += r.outcome == PolicyOutcome::DecidedLocally;
                networkCharged += r.key.find("::/4") != std::string::npos ||
                                  r.key.find("::/5") != std::string::npos;
            }
            ++compared;
        }
    }
    QCOMPARE(batchEvents.lines.size(), singleEvents.lines.size());
    for (std::size_t i = 0; i < singleEvents.lines.size(); ++i)
        QCOMPARE(batchEvents.lines[i], singleEvents.lines[i]);
    QVERIFY(singleEvents.lines.size() > 1000);
    QVERIFY(sameKeyspace(singleStore->keyspace(), batchStore->keyspace()));
    if (set != "default" && set != "local") QVERIFY(refusedMidway > 100);
    if (set == "local") {
        QVERIFY(single.localStore() && batched.localStore());
        // Both local stores are seeded from the same key-hash secret (9).
        QVERIFY(sameKeyspace(single.localStore()->keyspace(), batched.localStore()->keyspace()));
        QVERIFY(single.localStore()->keyspace().buckets > 0);
        QVERIFY(decidedLocally > 1000);
        QVERIFY(networkCharged > 1000);
    }
}

// The form a server uses: one clock reading for the whole batch.
void TestCheckBatch::oneTimeForTheWholeBatch() {
    const PolicySet set = policySet({tokenBucketPolicy("api", 3, 1.0)});
    Limiter limiter(set, makeMemoryStore({1000, 5}), {nullptr, 9});
    std::vector<TestRequest> owned(5);
    std::vector<RequestView> views;
    for (TestRequest& r : owned)
        views.push_back(r.from("192.0.2.1").view());
    std::vector<Check> checks(5);
    limiter.checkBatch(views, kNanosPerSecond, checks);
    // One key, five requests at one instant, a burst of three: in order, three pass.
    QCOMPARE(checks[0].allowed, true);
    QCOMPARE(checks[1].allowed, true);
    QCOMPARE(checks[2].allowed, true);
    QCOMPARE(checks[3].allowed, false);
    QCOMPARE(checks[3].status, 429);
    QCOMPARE(checks[3].retryAfter, kNanosPerSecond);
    QCOMPARE(checks[4].allowed, false);
    QCOMPARE(checks[2].policies()[0].decision.remaining, std::int64_t(0));
}

// decideBatch(): checkBatch()'s decisions, each rendered as decide() renders it: status,
// headers (every style), problem+json body, with verdicts reused from batch to batch.
void TestCheckBatch::decideBatchRendersAsDecide() {
    Policy ietf = tokenBucketPolicy("ietf", 3, 2.0);
    ietf.key.source = KeySource::Peer;
    Policy draft = tokenBucketPolicy("draft", 5, 1.0, "/api");
    draft.algorithm = Algorithm::FixedWindow;
    draft.windowMs = 1000;
    draft.headers = HeaderStyle::Draft7;
    draft.key.source = KeySource::Header;
    draft.key.header = "x-account";
    Policy legacy = tokenBucketPolicy("legacy", 4, 1.0, "/login");
    legacy.headers = HeaderStyle::Legacy;
    legacy.onStoreError = StoreErrorRule::Deny;
    const PolicySet set = policySet({ietf, draft, legacy});
    std::shared_ptr<Store> singleStore = std::make_shared<FlakyStore>();
    std::shared_ptr<Store> batchStore = std::make_shared<FlakyStore>();
    Limiter single(set, singleStore, {nullptr, 9});
    Limiter batched(set, batchStore, {nullptr, 9});
    std::mt19937_64 rng(11);
    std::vector<TestRequest> owned(40);
    std::vector<RequestView> views(40);
    std::vector<Nanos> times(40);
    std::vector<Verdict> verdicts(40);
    Verdict one;
    Nanos now = kNanosPerSecond;
    int refused = 0;
    for (int round = 0; round < 200; ++round) {
        const std::size_t n = 1 + rng() % 40;
        for (std::size_t i = 0; i < n; ++i) {
            now += static_cast<Nanos>(rng() % (30 * kNanosPerMilli));
            TestRequest& r = owned[i];
            r = TestRequest{};
            r.path = rng() % 3 == 0 ? "/login" : rng() % 2 ? "/api/items" : "/";
            r.from("10.0.0." + std::to_string(rng() % 6));
            if (rng() % 4 != 0) r.header("x-account", "user" + std::to_string(rng() % 5));
            times[i] = now;
        }
        for (std::size_t i = 0; i < n; ++i)
            views[i] = owned[i].view();
        batched.decideBatch(std::span(views).first(n), std::span(times).first(n),
                            std::span(verdicts).first(n));
        for (std::size_t i = 0; i < n; ++i) {
            single.decide(views[i], times[i], one);
            const Verdict& v = verdicts[i];
            QCOMPARE(v.allowed, one.allowed);
            QCOMPARE(v.status, one.status);
            QCOMPARE(v.code, one.code);
            QCOMPARE(describe(v.check), describe(one.check));
            QCOMPARE(v.headers.size(), one.headers.size());
            for (std::size_t h = 0; h < one.headers.size(); ++h) {
                QCOMPARE(v.headers[h].name, one.headers[h].name);
                QCOMPARE(v.headers[h].value, one.headers[h].value);
            }
            QCOMPARE(v.contentType, one.contentType);
            QCOMPARE(v.body, one.body);
            refused += !one.allowed;
        }
    }
    QVERIFY(refused > 100);
}

QTEST_APPLESS_MAIN(TestCheckBatch)
#include "tst_check_batch.moc"
