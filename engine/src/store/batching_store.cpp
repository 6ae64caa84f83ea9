// The batching store (ratelab/batching_store.h): callers queue their consumptions while the
// allowed number of batches is in flight; when one ends, the first caller waiting becomes the
// leader of the next batch, takes every call queued behind it (up to maxBatch) and sends them as
// one consumeBatch on its own thread, then hands each caller its results. A call that finds a
// free slot and nobody queued is sent at once by its caller, alone, so that an idle store adds
// no hand-off.
//
// Lifetimes: a queued call's requests and results live on its caller's stack. A caller leaves
// early only while its call is still queued (its timeout passed, or a shutdown answered it),
// and then it takes its call out of the queue first, under the lock; once a leader has taken a
// call into a batch, its caller waits for the batch, which the leader bounds by the earliest
// deadline of the calls in it. So a leader never touches a call whose caller has left.

#include "ratelab/batching_store.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <vector>

namespace ratelab {

namespace {

using Clock = std::chrono::steady_clock;

class BatchingStoreImpl final : public BatchingStore {
public:
    BatchingStoreImpl(std::shared_ptr<Store> inner, const BatchingStoreOptions& options)
        : inner_(std::move(inner))
        , maxInFlight_(std::max(1, options.maxInFlight))
        , maxBatch_(std::max<std::size_t>(1, options.maxBatch))
        , defaultTimeout_(options.defaultTimeout > 0 ? options.defaultTimeout
                                                     : 500 * kNanosPerMilli) {}

    ~BatchingStoreImpl() override { shutdown(); }

    ConsumeResult consume(const ConsumeRequest& request) override {
        ConsumeResult result;
        consumeBatch({&request, 1}, {&result, 1});
        return result;
    }

    void consumeBatch(std::span<const ConsumeRequest> requests,
                      std::span<ConsumeResult> results) override;

    SettleResult settle(const SettleRequest& request) override { return inner_->settle(request); }
    void settleBatch(std::span<const SettleRequest> requests,
                     std::span<SettleResult> results) override {
        inner_->settleBatch(requests, results);
    }
    KeyspaceStats keyspace() const override { return inner_->keyspace(); }
    KeyspaceStats keyspaceAt(Nanos now) const override { return inner_->keyspaceAt(now); }
    std::string_view kind() const override { return inner_->kind(); }
    ConsumeResult probe() override { return inner_->probe(); }

    void shutdown() override;
    BatchingStoreCounters counters() const override {
        std::lock_guard<std::mutex> lock(mutex_);
        return counters_;
    }
    Store& inner() const override { return *inner_; }

private:
    enum class State : std::uint8_t {
        Queued,   ///< in queue_; its caller may still leave
        Leading,  ///< out of the queue, a slot reserved: its caller sends the next batch
        Sent,     ///< in a leader's batch: its caller waits for it
        Done,     ///< results written
    };

    struct Call {
        std::span<const ConsumeRequest> requests;
        std::span<ConsumeResult> results;
        Clock::time_point deadline;
        State state = State::Queued;
        std::condition_variable wake;
    };

    // The longest of the requests' timeouts from `now`, as the inner store bounds a batch.
    Clock::time_point deadlineOf(std::span<const ConsumeRequest> requests,
                                 Clock::time_point now) const {
        Nanos timeout = 0;
        for (const ConsumeRequest& r : requests)
            timeout = std::max(timeout, r.timeout > 0 ? r.timeout : defaultTimeout_);
        return now + std::chrono::nanoseconds(timeout);
    }

    static void answerUnsent(Call& call, std::string_view why) {
        for (ConsumeResult& r : call.results.first(call.requests.size())) {
            r = ConsumeResult{};
            r.status = StoreStatus::Transport;
            r.error = why;
        }
    }

    // REQUIRES: mutex_ held. Gives the first queued call the next batch, when a slot is free.
    void promoteLocked() {
        if (closed_ || queue_.empty() || inFlight_ >= maxInFlight_) return;
        Call* next = queue_.front();
        queue_.pop_front();
        next->state = State::Leading;
        ++inFlight_;  // reserved for it: nobody else may take the slot meanwhile
        next->wake.notify_one();
    }

    // REQUIRES: mutex_ held.
    void endBatchLocked() {
        --inFlight_;
        promoteLocked();
        if (closed_ && inFlight_ == 0) idle_.notify_all();
    }

    void countBatchLocked(std::size_t consumptions, std::size_t calls) {
        ++counters_.batches;
        if (calls > 1) ++counters_.coalesced;
        counters_.consumptions += static_cast<std::int64_t>(consumptions);
        counters_.largestBatch =
            std::max(counters_.largestBatch, static_cast<std::int64_t>(consumptions));
    }

    // The leader's part. REQUIRES: `lock` holds mutex_, own.state == Leading.
    void lead(Call& own, std::unique_lock<std::mutex>& lock);
    // Sends `calls` as one consumeBatch bounded by `deadline` and writes each call's results.
    void send(const std::vector<Call*>& calls, Clock::time_point deadline);

    const std::shared_ptr<Store> inner_;
    const int maxInFlight_;
    const std::size_t maxBatch_;
    const Nanos defaultTimeout_;

    mutable std::mutex mutex_;
    std::deque<Call*> queue_;
    int inFlight_ = 0;  ///< batches sent or about to be (a Leading call's reserved slot)
    bool closed_ = false;
    std::condition_variable idle_;  ///< inFlight_ reached 0 after a shutdown
    BatchingStoreCounters counters_;
};

void BatchingStoreImpl::consumeBatch(std::span<const ConsumeRequest> requests,
                                     std::span<ConsumeResult> results) {
    if (requests.empty()) return;
    Call call;
    call.requests = requests;
    call.results = results;
    call.deadline = deadlineOf(requests, Clock::now());
    std::unique_lock<std::mutex> lock(mutex_);
    ++counters_.calls;
    if (closed_) {
        ++counters_.shutDown;
        lock.unlock();
        answerUnsent(call, "batching store: shut down");
        return;
    }
    if (queue_.empty() && inFlight_ < maxInFlight_) {
        // Nobody to wait for: straight to the inner store, with the requests' own timeouts.
        ++inFlight_;
        countBatchLocked(requests.size(), 1);
        lock.unlock();
        inner_->consumeBatch(requests, results);
        lock.lock();
        endBatchLocked();
        return;
    }
    queue_.push_back(&call);
    for (;;) {
        switch (call.state) {
            case State::Done:
                return;
            case State::Leading:
                lead(call, lock);
                return;
            case State::Sent:
                // The leader bounds the batch by the earliest deadline in it, ours included.
                call.wake.wait(lock);
                break;
            case State::Queued:
                if (call.wake.wait_until(lock, call.deadline) == std::cv_status::timeout &&
                    call.state == State::Queued) {
                    queue_.erase(std::find(queue_.begin(), queue_.end(), &call));
                    ++counters_.timedOut;
                    const int inFlight = inFlight_;
                    lock.unlock();
                    answerUnsent(call, "batching store: timed out waiting for a batch (" +
                                           std::to_string(inFlight) + " in flight)");
                    return;
                }
                break;
        }
    }
}

void BatchingStoreImpl::lead(Call& own, std::unique_lock<std::mutex>& lock) {
    if (closed_ || Clock::now() >= own.deadline) {
        // Promoted too late to send anything: answer, and pass the slot on.
        if (closed_) {
            ++counters_.shutDown;
        } else {
            ++counters_.timedOut;
        }
        const bool closed = closed_;
        endBatchLocked();
        lock.unlock();
        answerUnsent(own, closed ? "batching store: shut down"
                                 : "batching store: timed out waiting for a batch");
        return;
    }
    thread_local std::vector<Call*> calls;
    calls.clear();
    calls.push_back(&own);
    std::size_t size = own.requests.size();
    Clock::time_point deadline = own.deadline;
    while (!queue_.empty() && size + queue_.front()->requests.size() <= maxBatch_) {
        Call* c = queue_.front();
        queue_.pop_front();
        c->state = State::Sent;
        size += c->requests.size();
        deadline = std::min(deadline, c->deadline);
        calls.push_back(c);
    }
    own.state = State::Sent;
    countBatchLocked(size, calls.size());
    promoteLocked();  // calls left behind (maxBatch) may go at once if a slot is free
    lock.unlock();

    send(calls, deadline);

    lock.lock();
    for (Call* c : calls) {
        c->state = State::Done;
        if (c != &own) c->wake.notify_one();
    }
    endBatchLocked();
}

void BatchingStoreImpl::send(const std::vector<Call*>& calls, Clock::time_point deadline) {
    thread_local std::vector<ConsumeRequest> requests;
    thread_local std::vector<ConsumeResult> results;
    requests.clear();
    const auto now = Clock::now();
    // Every request of the batch gets what is left of the earliest deadline: the inner store
    // bounds a batch by its longest timeout, which must not outlast any caller's.
    const Nanos left = std::max<Nanos>(
        1, std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now).count());
    for (const Call* c : calls) {
        for (const ConsumeRequest& r : c->requests) {
            requests.push_back(r);
            requests.back().timeout = left;
        }
    }
    if (results.size() < requests.size()) results.resize(requests.size());
    inner_->consumeBatch(requests, {results.data(), requests.size()});
    std::size_t k = 0;
    for (Call* c : calls) {
        for (std::size_t i = 0; i < c->requests.size(); ++i)
            c->results[i] = std::move(results[k++]);
    }
}

void BatchingStoreImpl::shutdown() {
    std::unique_lock<std::mutex> lock(mutex_);
    closed_ = true;
    while (!queue_.empty()) {
        Call* c = queue_.front();
        queue_.pop_front();
        answerUnsent(*c, "batching store: shut down");
        c->state = State::Done;
        ++counters_.shutDown;
        c->wake.notify_one();
    }
    idle_.wait(lock, [this] { return inFlight_ == 0; });
}

}  // namespace

std::unique_ptr<BatchingStore> makeBatchingStore(std::shared_ptr<Store> inner,
                                                 const BatchingStoreOptions& options) {
    return std::make_unique<BatchingStoreImpl>(std::move(inner), options);
}

}  // namespace ratelab
