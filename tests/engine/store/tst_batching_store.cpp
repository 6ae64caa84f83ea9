// The batching store (ratelab/batching_store.h) over a scripted inner store that can hold a
// batch in flight at will: calls arriving meanwhile leave together; every caller gets exactly
// its own answers, those a one-by-one run of the same sequence gives; nobody waits past its
// timeout; a batch is bounded by its earliest caller; a shutdown answers waiting calls at once
// and lets the batches in flight finish. Threads: run under ThreadSanitizer (label "threads").

#include <QtTest>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ratelab/batching_store.h"
#include "ratelab/memory_store.h"

using namespace ratelab;

namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr Nanos kMs = kNanosPerMilli;

std::int64_t msSince(SteadyClock::time_point start) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start)
        .count();
}

// What one consumption that reached the inner store was.
struct Seen {
    std::string key;
    std::int64_t cost = 0;
    Nanos now = 0;
};

// The inner store: a memory store behind a gate. Each consumeBatch is recorded (its requests in
// order, its timeouts); while the gate is shut a batch waits at it, up to its timeout when
// `stallToTimeout` (a stalled server: the batch then fails with Transport), else until opened.
class GatedStore final : public Store {
public:
    ConsumeResult consume(const ConsumeRequest& request) override {
        ConsumeResult result;
        consumeBatch({&request, 1}, {&result, 1});
        return result;
    }

    void consumeBatch(std::span<const ConsumeRequest> requests,
                      std::span<ConsumeResult> results) override {
        Nanos longest = 0;
        std::unique_lock<std::mutex> lock(mutex_);
        std::vector<Seen> batch;
        for (const ConsumeRequest& r : requests) {
            batch.push_back({std::string(r.key), r.cost, r.now});
            longest = std::max(longest, r.timeout);
        }
        batches_.push_back(std::move(batch));
        timeouts_.push_back(longest);
        arrived_.notify_all();
        const auto deadline = SteadyClock::now() + std::chrono::nanoseconds(longest);
        if (stallToTimeout_) {
            opened_.wait_until(lock, deadline, [this] { return open_; });
            if (!open_) {
                for (std::size_t i = 0; i < requests.size(); ++i) {
                    results[i] = ConsumeResult{};
                    results[i].status = StoreStatus::Transport;
                    results[i].error = "stalled";
                }
                return;
            }
        } else {
            opened_.wait(lock, [this] { return open_; });
        }
        for (std::size_t i = 0; i < requests.size(); ++i) {
            sequence_.push_back(batches_.back()[i]);
            results[i] = memory_->consume(requests[i]);
        }
        if (busy_) {
            // A round trip's worth of letting other threads run, so that calls pile up.
            lock.unlock();
            for (int i = 0; i < 50; ++i)
                std::this_thread::yield();
        }
    }

    KeyspaceStats keyspace() const override { return memory_->keyspace(); }
    std::string_view kind() const override { return "gated"; }

    /// Each batch yields the processor a while after deciding, as a round trip would.
    void setBusy(bool busy) { busy_ = busy; }
    void shut(bool stallToTimeout = false) {
        std::lock_guard<std::mutex> lock(mutex_);
        open_ = false;
        stallToTimeout_ = stallToTimeout;
    }
    void open() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            open_ = true;
        }
        opened_.notify_all();
    }
    /// Waits until `n` batches have reached the store (at most 10 s).
    bool waitForBatches(std::size_t n) {
        std::unique_lock<std::mutex> lock(mutex_);
        return arrived_.wait_for(lock, std::chrono::seconds(10),
                                 [&] { return batches_.size() >= n; });
    }
    std::vector<std::vector<Seen>> batches() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return batches_;
    }
    std::vector<Nanos> timeouts() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return timeouts_;
    }
    /// Every consumption the memory store decided, in the order it decided them.
    std::vector<Seen> sequence() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return sequence_;
    }

private:
    std::unique_ptr<Store> memory_ = makeMemoryStore({});
    mutable std::mutex mutex_;
    std::condition_variable arrived_;
    std::condition_variable opened_;
    bool open_ = true;
    bool stallToTimeout_ = false;
    std::atomic<bool> busy_{false};
    std::vector<std::vector<Seen>> batches_;
    std::vector<Nanos> timeouts_;
    std::vector<Seen> sequence_;
};

Limit bucket(std::int64_t capacity) {
    Limit l;
    l.algorithm = Algorithm::TokenBucket;
    l.capacity = capacity;
    l.emissionInterval = kNanosPerSecond;
    return l;
}

// One caller's requests on its own keys; the strings live here.
struct Caller {
    std::vector<std::string> keys;
    std::vector<ConsumeRequest> requests;
    std::vector<ConsumeResult> results;

    Caller(const Limit& limit, std::vector<std::string> k, Nanos timeout, std::int64_t cost = 1,
           Nanos now = 0)
        : keys(std::move(k)) {
        for (const std::string& key : keys) {
            ConsumeRequest r;
            r.limitId = 1;
            r.limitName = "api";
            r.limit = &limit;
            r.partition = key;
            r.key = key;
            r.cost = cost;
            r.now = now;
            r.timeout = timeout;
            requests.push_back(r);
        }
        results.resize(requests.size());
    }
    void call(Store& store) { store.consumeBatch(requests, results); }
};

// Spins (yielding) until `done` holds, at most 10 s: the states waited for here are reached in
// microseconds, but a loaded machine may take longer to schedule the threads.
template <typename F>
bool eventually(F done) {
    const auto start = SteadyClock::now();
    while (!done()) {
        if (msSince(start) > 10'000) return false;
        std::this_thread::yield();
    }
    return true;
}

}  // namespace

class TestBatchingStore : public QObject {
    Q_OBJECT

private slots:
    // Nobody waiting, a slot free: the call goes at once, alone, with its own timeout, and gets
    // the inner store's answers.
    void aloneGoesAtOnce() {
        auto inner = std::make_shared<GatedStore>();
        auto store = makeBatchingStore(inner);
        const Limit l = bucket(3);
        Caller c(l, {"a", "a", "a", "a", "b"}, 15 * kMs);
        c.call(*store);
        QCOMPARE(inner->batches().size(), std::size_t(1));
        QCOMPARE(inner->timeouts().at(0), 15 * kMs);
        const std::int64_t remaining[] = {2, 1, 0, 0, 2};
        for (std::size_t i = 0; i < 5; ++i) {
            QCOMPARE(c.results[i].status, StoreStatus::Ok);
            QCOMPARE(c.results[i].decision.allowed, i != 3);
            QCOMPARE(c.results[i].decision.remaining, remaining[i]);
        }
        const BatchingStoreCounters counters = store->counters();
        QCOMPARE(counters.calls, std::int64_t(1));
        QCOMPARE(counters.batches, std::int64_t(1));
        QCOMPARE(counters.coalesced, std::int64_t(0));
        QCOMPARE(counters.consumptions, std::int64_t(5));
        QCOMPARE(store->kind(), std::string_view("gated"));
    }

    // One batch in flight (maxInFlight 1): the three calls that arrive meanwhile leave together
    // in one batch once it ends, each caller's requests in its order, bounded by the earliest
    // caller's deadline; each caller gets its own answers.
    void callsArrivingMeanwhileLeaveTogether() {
        auto inner = std::make_shared<GatedStore>();
        BatchingStoreOptions o;
        o.maxInFlight = 1;
        auto store = makeBatchingStore(inner, o);
        const Limit l = bucket(10);
        Caller first(l, {"first"}, 10'000 * kMs);
        Caller b(l, {"b1", "b2"}, 10'000 * kMs, 2);
        Caller c(l, {"c1"}, 2'000 * kMs, 3);
        Caller d(l, {"d1", "d2", "d3"}, 10'000 * kMs, 4);
        inner->shut();
        std::thread t0([&] { first.call(*store); });
        QVERIFY(inner->waitForBatches(1));
        std::thread t1([&] { b.call(*store); });
        std::thread t2([&] { c.call(*store); });
        std::thread t3([&] { d.call(*store); });
        QVERIFY(eventually([&] { return store->counters().calls == 4; }));
        inner->open();
        t0.join();
        t1.join();
        t2.join();
        t3.join();
        const auto batches = inner->batches();
        QCOMPARE(batches.size(), std::size_t(2));
        QCOMPARE(batches[1].size(), std::size_t(6));
        // Each caller's requests stay together and in order; callers may come in any order.
        std::string keys;
        for (const Seen& s : batches[1])
            keys += s.key + " ";
        QVERIFY2(keys.find("b1 b2 ") != std::string::npos &&
                     keys.find("c1 ") != std::string::npos &&
                     keys.find("d1 d2 d3 ") != std::string::npos,
                 keys.c_str());
        // Bounded by c's deadline (2 s from its call), not b's or d's (10 s).
        QVERIFY2(inner->timeouts()[1] > 0 && inner->timeouts()[1] <= 2'000 * kMs,
                 qPrintable(QString::number(inner->timeouts()[1])));
        for (Caller* caller : {&b, &c, &d}) {
            for (std::size_t i = 0; i < caller->keys.size(); ++i) {
                QCOMPARE(caller->results[i].status, StoreStatus::Ok);
                // Costs 2, 3 and 4 from a fresh bucket of 10: 8, 7 and 6 left tell them apart.
                QCOMPARE(caller->results[i].decision.remaining, 10 - caller->requests[i].cost);
            }
        }
        const BatchingStoreCounters counters = store->counters();
        QCOMPARE(counters.batches, std::int64_t(2));
        QCOMPARE(counters.coalesced, std::int64_t(1));
        QCOMPARE(counters.largestBatch, std::int64_t(6));
    }

    // With a cap on a batch's size, the callers behind it go in the next batches, each
    // caller's requests whole and in the order the callers queued.
    void maxBatchSplitsBetweenCallers() {
        auto inner = std::make_shared<GatedStore>();
        BatchingStoreOptions o;
        o.maxInFlight = 1;
        o.maxBatch = 3;
        auto store = makeBatchingStore(inner, o);
        const Limit l = bucket(10);
        Caller first(l, {"first"}, 10'000 * kMs);
        inner->shut();
        std::thread t0([&] { first.call(*store); });
        QVERIFY(inner->waitForBatches(1));
        // Queued one at a time so that the queue's order is known: 2 + 1, then 2 (3 would not
        // fit), then 4 alone (a caller's batch is never split).
        std::vector<std::unique_ptr<Caller>> callers;
        callers.push_back(
            std::make_unique<Caller>(l, std::vector<std::string>{"p", "q"}, 10'000 * kMs));
        callers.push_back(std::make_unique<Caller>(l, std::vector<std::string>{"r"}, 10'000 * kMs));
        callers.push_back(
            std::make_unique<Caller>(l, std::vector<std::string>{"s", "t"}, 10'000 * kMs));
        callers.push_back(std::make_unique<Caller>(l, std::vector<std::string>{"u", "v", "w", "x"},
                                                   10'000 * kMs));
        std::vector<std::thread> threads;
        for (std::size_t i = 0; i < callers.size(); ++i) {
            threads.emplace_back([&, i] { callers[i]->call(*store); });
            QVERIFY(eventually([&] { return store->counters().calls == std::int64_t(i) + 2; }));
        }
        inner->open();
        t0.join();
        for (std::thread& t : threads)
            t.join();
        const auto batches = inner->batches();
        QCOMPARE(batches.size(), std::size_t(4));
        auto keysOf = [](const std::vector<Seen>& batch) {
            std::string keys;
            for (const Seen& s : batch)
                keys += s.key;
            return keys;
        };
        QCOMPARE(keysOf(batches[1]), std::string("pqr"));
        QCOMPARE(keysOf(batches[2]), std::string("st"));
        QCOMPARE(keysOf(batches[3]), std::string("uvwx"));
        for (const auto& caller : callers) {
            for (const ConsumeResult& r : caller->results) {
                QCOMPARE(r.status, StoreStatus::Ok);
                QCOMPARE(r.decision.remaining, std::int64_t(9));
            }
        }
    }

    // Eight threads on shared keys, many small calls, batches capped small: no request is lost
    // or answered twice, every caller gets the answers of its own requests, and those answers
    // are what deciding the inner store's sequence one by one gives.
    void sameAnswersAsOneByOne_data() {
        QTest::addColumn<int>("maxInFlight");
        QTest::addColumn<int>("maxBatch");
        QTest::newRow("one in flight") << 1 << 512;
        QTest::newRow("two in flight") << 2 << 512;
        QTest::newRow("small batches") << 2 << 5;
    }
    void sameAnswersAsOneByOne() {
        QFETCH(int, maxInFlight);
        QFETCH(int, maxBatch);
        auto inner = std::make_shared<GatedStore>();
        inner->setBusy(true);
        BatchingStoreOptions o;
        o.maxInFlight = maxInFlight;
        o.maxBatch = static_cast<std::size_t>(maxBatch);
        auto store = makeBatchingStore(inner, o);
        const Limit l = bucket(50);
        constexpr int kThreads = 8;
        constexpr int kCalls = 300;
        // Each call: one to three requests on keys shared by every thread, each request's `now`
        // unique, so that the inner store's sequence names every request.
        struct Made {
            std::vector<std::unique_ptr<Caller>> calls;
        };
        std::vector<Made> made(kThreads);
        for (int t = 0; t < kThreads; ++t) {
            for (int c = 0; c < kCalls; ++c) {
                const int n = 1 + (t + c) % 3;
                std::vector<std::string> keys;
                for (int k = 0; k < n; ++k)
                    keys.push_back("key" + std::to_string((t * 7 + c * 3 + k) % 11));
                auto caller = std::make_unique<Caller>(l, keys, 10'000 * kMs, 1 + k(t, c));
                for (int k = 0; k < n; ++k)
                    caller->requests[k].now = ((std::int64_t(t) * kCalls + c) * 4 + k) * 1000;
                made[t].calls.push_back(std::move(caller));
            }
        }
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&, t] {
                for (auto& caller : made[t].calls)
                    caller->call(*store);
            });
        }
        for (std::thread& t : threads)
            t.join();

        // The inner store's sequence, decided again one by one on a fresh memory store.
        const std::vector<Seen> sequence = inner->sequence();
        QCOMPARE(sequence.size(), std::size_t(kThreads * kCalls * 2));  // 1, 2, 3 requests
        auto replay = makeMemoryStore({});
        std::map<Nanos, ConsumeResult> expected;
        for (const Seen& s : sequence) {
            ConsumeRequest r;
            r.limitId = 1;
            r.limitName = "api";
            r.limit = &l;
            r.partition = s.key;
            r.key = s.key;
            r.cost = s.cost;
            r.now = s.now;
            QVERIFY2(expected.emplace(s.now, replay->consume(r)).second,
                     "a request reached the inner store twice");
        }
        std::size_t answered = 0;
        for (int t = 0; t < kThreads; ++t) {
            for (const auto& caller : made[t].calls) {
                for (std::size_t i = 0; i < caller->requests.size(); ++i) {
                    const auto e = expected.find(caller->requests[i].now);
                    QVERIFY2(e != expected.end(), "a request never reached the inner store");
                    const ConsumeResult& got = caller->results[i];
                    QCOMPARE(got.status, StoreStatus::Ok);
                    QCOMPARE(got.decision.allowed, e->second.decision.allowed);
                    QCOMPARE(got.decision.remaining, e->second.decision.remaining);
                    QCOMPARE(got.decision.retryAfter, e->second.decision.retryAfter);
                    ++answered;
                }
            }
        }
        QCOMPARE(answered, sequence.size());
        const BatchingStoreCounters counters = store->counters();
        QCOMPARE(counters.calls, std::int64_t(kThreads * kCalls));
        QCOMPARE(counters.consumptions, std::int64_t(sequence.size()));
        QCOMPARE(counters.timedOut, std::int64_t(0));
        QVERIFY(counters.largestBatch <= std::max<std::int64_t>(maxBatch, 3));
        QVERIFY(counters.coalesced > 0);  // eight threads against a busy store do meet
        qInfo("%lld calls in %lld batches, %lld of them coalesced, largest %lld",
              static_cast<long long>(counters.calls), static_cast<long long>(counters.batches),
              static_cast<long long>(counters.coalesced),
              static_cast<long long>(counters.largestBatch));
    }

    // A stalled store: a queued call is answered Transport when its own timeout passes, not
    // when the batch in flight ends; the call in flight fails at its own; nobody waits longer
    // than its timeout plus scheduling.
    void nobodyWaitsPastItsTimeout() {
        auto inner = std::make_shared<GatedStore>();
        BatchingStoreOptions o;
        o.maxInFlight = 1;
        auto store = makeBatchingStore(inner, o);
        const Limit l = bucket(10);
        inner->shut(/*stallToTimeout=*/true);
        Caller first(l, {"first"}, 300 * kMs);
        Caller queued(l, {"queued"}, 40 * kMs);
        std::int64_t firstMs = 0;
        std::int64_t queuedMs = 0;
        std::thread t0([&] {
            const auto start = SteadyClock::now();
            first.call(*store);
            firstMs = msSince(start);
        });
        QVERIFY(inner->waitForBatches(1));
        const auto start = SteadyClock::now();
        queued.call(*store);
        queuedMs = msSince(start);
        t0.join();
        QCOMPARE(queued.results[0].status, StoreStatus::Transport);
        QVERIFY2(queued.results[0].error.find("timed out waiting for a batch") != std::string::npos,
                 queued.results[0].error.c_str());
        QVERIFY2(queuedMs >= 40 && queuedMs <= 40 + 100, qPrintable(QString::number(queuedMs)));
        QCOMPARE(first.results[0].status, StoreStatus::Transport);
        QVERIFY2(firstMs >= 300 && firstMs <= 300 + 100, qPrintable(QString::number(firstMs)));
        QCOMPARE(inner->batches().size(), std::size_t(1));  // the queued call never went
        QCOMPARE(store->counters().timedOut, std::int64_t(1));
        inner->open();
    }

    // Shutdown with calls in flight: the waiting calls are answered at once, the batch in
    // flight ends with its real answers, shutdown() returns after it, and later calls are
    // answered at once without reaching the inner store.
    void shutdownWithCallsInFlight() {
        auto inner = std::make_shared<GatedStore>();
        BatchingStoreOptions o;
        o.maxInFlight = 1;
        auto store = makeBatchingStore(inner, o);
        const Limit l = bucket(10);
        Caller first(l, {"first"}, 10'000 * kMs);
        Caller waiting1(l, {"w1"}, 10'000 * kMs);
        Caller waiting2(l, {"w2", "w3"}, 10'000 * kMs);
        inner->shut();
        std::thread t0([&] { first.call(*store); });
        QVERIFY(inner->waitForBatches(1));
        std::thread t1([&] { waiting1.call(*store); });
        std::thread t2([&] { waiting2.call(*store); });
        QVERIFY(eventually([&] { return store->counters().calls == 3; }));
        std::atomic<bool> shutDown{false};
        std::thread closer([&] {
            store->shutdown();
            shutDown = true;
        });
        t1.join();  // answered while the batch in flight still waits at the gate
        t2.join();
        QVERIFY(!shutDown.load());
        for (Caller* c : {&waiting1, &waiting2}) {
            for (const ConsumeResult& r : c->results) {
                QCOMPARE(r.status, StoreStatus::Transport);
                QCOMPARE(r.error, std::string("batching store: shut down"));
            }
        }
        inner->open();
        t0.join();
        closer.join();
        QVERIFY(shutDown.load());
        QCOMPARE(first.results[0].status, StoreStatus::Ok);
        QCOMPARE(first.results[0].decision.remaining, std::int64_t(9));
        Caller late(l, {"late"}, 10'000 * kMs);
        late.call(*store);
        QCOMPARE(late.results[0].status, StoreStatus::Transport);
        QCOMPARE(inner->batches().size(), std::size_t(1));
        QCOMPARE(store->counters().shutDown, std::int64_t(3));
        store->shutdown();  // idempotent
    }

    // Many threads calling while the store shuts down: each call ends exactly once, with the
    // inner store's answer or Transport, and shutdown() returns.
    void shutdownUnderLoad() {
        auto inner = std::make_shared<GatedStore>();
        auto store = makeBatchingStore(inner);
        const Limit l = bucket(1'000'000);
        std::atomic<int> ok{0};
        std::atomic<int> refused{0};
        std::atomic<int> other{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 6; ++t) {
            threads.emplace_back([&, t] {
                // Until the shutdown answers this thread (bounded, should it never come).
                for (int c = 0; c < 1'000'000; ++c) {
                    Caller caller(l, {"k" + std::to_string(t)}, 10'000 * kMs);
                    caller.call(*store);
                    const ConsumeResult& r = caller.results[0];
                    if (r.status == StoreStatus::Ok) {
                        ++ok;
                    } else if (r.status == StoreStatus::Transport &&
                               r.error == "batching store: shut down") {
                        ++refused;
                        return;
                    } else {
                        ++other;
                    }
                }
            });
        }
        QVERIFY(eventually([&] { return store->counters().calls >= 600; }));
        store->shutdown();
        for (std::thread& t : threads)
            t.join();
        QCOMPARE(other.load(), 0);
        QCOMPARE(refused.load(), 6);
        QCOMPARE(std::int64_t(ok.load() + refused.load()), store->counters().calls);
        QCOMPARE(std::int64_t(inner->sequence().size()), std::int64_t(ok.load()));
    }

private:
    static std::int64_t k(int t, int c) { return (t * 5 + c) % 3; }
};

QTEST_APPLESS_MAIN(TestBatchingStore)
#include "tst_batching_store.moc"
