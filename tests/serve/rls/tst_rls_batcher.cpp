// The gRPC listener's batcher (serve/grpc/rls_batcher.h) on a staged RlsDecisions: calls queued
// while a batch is out leave together in the next, in their order; a call whose store time has
// run out is decided apart without the store while the others get what is left of theirs; and
// destroying the batcher answers every call still queued.

#include <QtTest>

#include <condition_variable>
#include <mutex>
#include <vector>

#include "serve/grpc/rls_batcher.h"
#include "serve/grpc/rls_service.h"
#include "serve/http/http_server.h"

using namespace ratelab;
using namespace ratelab::serve;

namespace {

// Records each batch (its domains and store timeout) and answers OK; holds batches at a gate
// while it is shut.
class StagedDecisions final : public RlsDecisions {
public:
    struct Batch {
        QStringList domains;
        Nanos storeTimeout = 0;
    };

    rls::RlsResult decide(const rls::RlsRequest&, Nanos) override { return {}; }
    void decideBatch(std::span<const rls::RlsRequest> requests, Nanos, Nanos storeTimeout,
                     std::span<rls::RlsResult> out) override {
        std::unique_lock<std::mutex> lock(mutex_);
        Batch b;
        for (const rls::RlsRequest& r : requests)
            b.domains << QString::fromStdString(r.domain);
        b.storeTimeout = storeTimeout;
        batches_.push_back(b);
        changed_.notify_all();
        changed_.wait(lock, [this] { return open_; });
        for (std::size_t i = 0; i < requests.size(); ++i) {
            out[i].response.overall = storeTimeout > 0 ? rls::RlsCode::Ok : rls::RlsCode::OverLimit;
        }
    }
    const rls::RlsDecider* decider() const override { return nullptr; }

    void shut() {
        std::lock_guard<std::mutex> lock(mutex_);
        open_ = false;
    }
    void open() {
        std::lock_guard<std::mutex> lock(mutex_);
        open_ = true;
        changed_.notify_all();
    }
    /// Waits (on the batches' own signal, 10 s at most) until `n` batches have come.
    bool waitBatches(std::size_t n) {
        std::unique_lock<std::mutex> lock(mutex_);
        return changed_.wait_for(lock, std::chrono::seconds(10),
                                 [&] { return batches_.size() >= n; });
    }
    std::vector<Batch> batches() {
        std::lock_guard<std::mutex> lock(mutex_);
        return batches_;
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    bool open_ = true;
    std::vector<Batch> batches_;
};

class FixedWallClock final : public WallClock {
public:
    Nanos now() const override { return 1'000'000 * kNanosPerSecond; }
};

rls::RlsRequest request(const char* domain) {
    rls::RlsRequest r;
    r.domain = domain;
    return r;
}

// What the batcher handed back, in order: each call's tag, and whether its batch had store time.
struct Finished {
    std::mutex mutex;
    QStringList answers;
    void add(const RlsQueuedCall& call, const rls::RlsResult& result) {
        std::lock_guard<std::mutex> lock(mutex);
        answers << QString("%1 %2")
                       .arg(reinterpret_cast<std::uintptr_t>(call.response))
                       .arg(result.response.overall == rls::RlsCode::Ok ? "ok" : "no store");
    }
};

// A call's tag: the batcher hands `response` back untouched.
RlsQueuedCall tagged(std::uintptr_t tag, Nanos received) {
    RlsQueuedCall c;
    c.response =
        reinterpret_cast<envoy::service::ratelimit::v3::RateLimitResponse*>(tag);  // never read
    c.received = received;
    return c;
}

constexpr Nanos kStoreTimeout = 2 * kNanosPerSecond;

}  // namespace

class TestRlsBatcher : public QObject {
    Q_OBJECT

private slots:
    // One thread: the first call goes alone and is held; the five added meanwhile leave
    // together, in their order, once it returns.
    void queuedCallsLeaveTogether() {
        StagedDecisions decisions;
        FixedWallClock clock;
        Finished finished;
        RlsBatcherOptions options;
        options.storeTimeout = kStoreTimeout;
        options.threads = 1;
        {
            RlsBatcher batcher(
                decisions, clock,
                [&](const RlsQueuedCall& c, rls::RlsResult& r) { finished.add(c, r); }, options);
            decisions.shut();
            const Nanos now = steadyServerClock().now();
            batcher.add(request("a"), tagged(1, now));
            QVERIFY(decisions.waitBatches(1));
            for (const char* d : {"b", "c", "d", "e", "f"})
                batcher.add(request(d), tagged(static_cast<std::uintptr_t>(d[0]), now));
            decisions.open();
            QVERIFY(decisions.waitBatches(2));
        }
        const auto batches = decisions.batches();
        QCOMPARE(batches.size(), std::size_t(2));
        QCOMPARE(batches[0].domains, QStringList({"a"}));
        QCOMPARE(batches[1].domains, QStringList({"b", "c", "d", "e", "f"}));
        for (const auto& b : batches) {
            QVERIFY(b.storeTimeout <= kStoreTimeout);
            QVERIFY(b.storeTimeout > kStoreTimeout - kNanosPerSecond);
        }
        QCOMPARE(finished.answers.size(), 6);
    }

    // maxBatch bounds a batch; the calls left behind go in the next.
    void maxBatchSplits() {
        StagedDecisions decisions;
        FixedWallClock clock;
        Finished finished;
        RlsBatcherOptions options;
        options.storeTimeout = kStoreTimeout;
        options.threads = 1;
        options.maxBatch = 2;
        {
            RlsBatcher batcher(
                decisions, clock,
                [&](const RlsQueuedCall& c, rls::RlsResult& r) { finished.add(c, r); }, options);
            decisions.shut();
            const Nanos now = steadyServerClock().now();
            batcher.add(request("a"), tagged(1, now));
            QVERIFY(decisions.waitBatches(1));
            for (const char* d : {"b", "c", "d", "e", "f"})
                batcher.add(request(d), tagged(2, now));
            decisions.open();
            QVERIFY(decisions.waitBatches(4));
        }
        QStringList sizes;
        for (const auto& b : decisions.batches())
            sizes << b.domains.join(",");
        QCOMPARE(sizes, QStringList({"a", "b,c", "d,e", "f"}));
    }

    // A call received longer ago than its store timeout is decided apart with no store time
    // (its rule decides); the others of its batch keep the rest of theirs.
    void lateCallsWithoutTheStore() {
        StagedDecisions decisions;
        FixedWallClock clock;
        Finished finished;
        RlsBatcherOptions options;
        options.storeTimeout = kStoreTimeout;
        options.threads = 1;
        {
            RlsBatcher batcher(
                decisions, clock,
                [&](const RlsQueuedCall& c, rls::RlsResult& r) { finished.add(c, r); }, options);
            decisions.shut();
            const Nanos now = steadyServerClock().now();
            batcher.add(request("first"), tagged(1, now));
            QVERIFY(decisions.waitBatches(1));
            batcher.add(request("fresh1"), tagged(2, now));
            batcher.add(request("late"), tagged(3, now - kStoreTimeout));
            batcher.add(request("fresh2"), tagged(4, now));
            decisions.open();
            QVERIFY(decisions.waitBatches(3));
        }
        const auto batches = decisions.batches();
        QCOMPARE(batches.size(), std::size_t(3));
        QCOMPARE(batches[1].domains, QStringList({"late"}));
        QCOMPARE(batches[1].storeTimeout, Nanos(0));
        QCOMPARE(batches[2].domains, QStringList({"fresh1", "fresh2"}));
        QVERIFY(batches[2].storeTimeout > kStoreTimeout - kNanosPerSecond);
        QCOMPARE(finished.answers, QStringList({"1 ok", "3 no store", "2 ok", "4 ok"}));
    }

    // Destroying the batcher decides and finishes the calls still queued.
    void destructionAnswersQueuedCalls() {
        StagedDecisions decisions;
        FixedWallClock clock;
        Finished finished;
        RlsBatcherOptions options;
        options.storeTimeout = kStoreTimeout;
        options.threads = 2;
        {
            RlsBatcher batcher(
                decisions, clock,
                [&](const RlsQueuedCall& c, rls::RlsResult& r) { finished.add(c, r); }, options);
            const Nanos now = steadyServerClock().now();
            for (std::uintptr_t i = 1; i <= 50; ++i)
                batcher.add(request("x"), tagged(i, now));
        }
        QCOMPARE(finished.answers.size(), 50);
    }
};

QTEST_APPLESS_MAIN(TestRlsBatcher)
#include "tst_rls_batcher.moc"
