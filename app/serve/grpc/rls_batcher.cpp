#include "serve/grpc/rls_batcher.h"

#include <algorithm>
#include <iterator>
#include <limits>

#include "serve/grpc/rls_service.h"
#include "serve/http/http_server.h"

namespace ratelab::serve {

RlsBatcher::RlsBatcher(RlsDecisions& decisions, const WallClock& clock, Finish finish,
                       const RlsBatcherOptions& options)
    : decisions_(decisions), clock_(clock), finish_(std::move(finish)), options_(options) {
    const int threads = std::max(1, options_.threads);
    for (int t = 0; t < threads; ++t)
        threads_.emplace_back([this] { work(); });
}

RlsBatcher::~RlsBatcher() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    queued_.notify_all();
    for (std::thread& t : threads_)
        t.join();
}

void RlsBatcher::add(rls::RlsRequest&& request, const RlsQueuedCall& call) {
    bool wake = false;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        // A thread woken for the first call takes those queued behind it too.
        wake = requests_.empty() && idle_ > 0;
        requests_.push_back(std::move(request));
        calls_.push_back(call);
    }
    if (wake) queued_.notify_one();
}

void RlsBatcher::work() {
    std::vector<rls::RlsRequest> requests;
    std::vector<RlsQueuedCall> calls;
    std::vector<rls::RlsResult> results;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        ++idle_;
        queued_.wait(lock, [this] { return !requests_.empty() || stopping_; });
        --idle_;
        if (requests_.empty()) return;  // stopping, and every call is answered
        takeLocked(requests, calls);
        // Calls left behind (maxBatch) go with another thread if one waits.
        if (!requests_.empty() && idle_ > 0) queued_.notify_one();
        lock.unlock();
        decide(requests, calls, results);
        lock.lock();
    }
}

void RlsBatcher::takeLocked(std::vector<rls::RlsRequest>& requests,
                            std::vector<RlsQueuedCall>& calls) {
    requests.clear();
    calls.clear();
    const std::size_t maxBatch = std::max<std::size_t>(1, options_.maxBatch);
    if (requests_.size() <= maxBatch) {
        // The emptied vectors keep their capacity for the next calls.
        requests.swap(requests_);
        calls.swap(calls_);
        return;
    }
    const auto n = static_cast<std::ptrdiff_t>(maxBatch);
    requests.assign(std::make_move_iterator(requests_.begin()),
                    std::make_move_iterator(requests_.begin() + n));
    calls.assign(calls_.begin(), calls_.begin() + n);
    requests_.erase(requests_.begin(), requests_.begin() + n);
    calls_.erase(calls_.begin(), calls_.begin() + n);
}

void RlsBatcher::decide(std::vector<rls::RlsRequest>& requests, std::vector<RlsQueuedCall>& calls,
                        std::vector<rls::RlsResult>& results) {
    const Nanos at = steadyServerClock().now();
    auto left = [&](const RlsQueuedCall& c) { return c.received + options_.storeTimeout - at; };
    // The calls out of store time first (kept in their order), each with its request.
    std::size_t late = 0;
    Nanos budget = std::numeric_limits<Nanos>::max();
    for (const RlsQueuedCall& c : calls) {
        if (left(c) < kMinStoreTime) {
            ++late;
        } else {
            budget = std::min(budget, left(c));
        }
    }
    if (late > 0 && late < calls.size()) {
        std::vector<rls::RlsRequest> ordered;
        std::vector<RlsQueuedCall> orderedCalls;
        ordered.reserve(requests.size());
        orderedCalls.reserve(calls.size());
        for (const bool wantLate : {true, false}) {
            for (std::size_t i = 0; i < calls.size(); ++i) {
                if ((left(calls[i]) < kMinStoreTime) != wantLate) continue;
                ordered.push_back(std::move(requests[i]));
                orderedCalls.push_back(calls[i]);
            }
        }
        requests.swap(ordered);
        calls.swap(orderedCalls);
    }
    results.assign(requests.size(), rls::RlsResult{});
    const Nanos now = clock_.now();
    const std::span<const rls::RlsRequest> all(requests);
    const std::span<rls::RlsResult> out(results);
    if (late > 0) decisions_.decideBatch(all.first(late), now, 0, out.first(late));
    if (late < all.size())
        decisions_.decideBatch(all.subspan(late), now, budget, out.subspan(late));
    for (std::size_t i = 0; i < calls.size(); ++i)
        finish_(calls[i], results[i]);
}

}  // namespace ratelab::serve
