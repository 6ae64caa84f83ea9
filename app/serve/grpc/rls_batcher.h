#pragma once

// Calls of Envoy's rate limit service decided together, for a store outside the process. The
// grpc++ thread that receives a call queues it and returns at once (the call is finished
// later); the batcher's own threads each take every call queued, decide them with one
// RlsDecisions::decideBatch (one store round trip for all, through the service's batching
// store) and hand each answer back. A grpc++ callback thread that waited for the store itself
// would take no other call meanwhile, so that no more calls than those threads could meet in a
// store batch.
//
// A call's store time counts from when it was received: a batch's store calls are bounded by
// what is left of its earliest call's store timeout. A call with less than kMinStoreTime left is
// decided by its limits' store-error rules without the store: a store call that short would
// end unanswered on a healthy store, which then backs off as from a stalled one.

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "envoy/service/ratelimit/v3/rls.grpc.pb.h"
#include "ratelab/limit.h"
#include "serve/rls/rls_types.h"

namespace ratelab::serve {

class RlsDecisions;
class WallClock;

/// What a queued call is finished with, beside its request.
struct RlsQueuedCall {
    grpc::ServerUnaryReactor* reactor = nullptr;
    envoy::service::ratelimit::v3::RateLimitResponse* response = nullptr;
    Nanos received = 0;  ///< CLOCK_MONOTONIC, nanoseconds
};

struct RlsBatcherOptions {
    /// Bound on a call's store time from when it was received (nanoseconds). > 0.
    Nanos storeTimeout = 0;
    /// Threads deciding batches: as many batches in flight at once. >= 1.
    int threads = 2;
    /// Most calls one batch takes. >= 1.
    std::size_t maxBatch = 256;
};

/// Thread-safe.
class RlsBatcher {
public:
    /// Called on a batcher thread once per call with its result, which it may move from.
    using Finish = std::function<void(const RlsQueuedCall& call, rls::RlsResult& result)>;

    /// Least store time a call must have left to be sent to the store (nanoseconds).
    static constexpr Nanos kMinStoreTime = kNanosPerMilli;

    /// `decisions` and `clock` must outlive the batcher. Starts its threads.
    RlsBatcher(RlsDecisions& decisions, const WallClock& clock, Finish finish,
               const RlsBatcherOptions& options);
    /// Decides and finishes every call still queued, then stops its threads.
    ~RlsBatcher();
    RlsBatcher(const RlsBatcher&) = delete;
    RlsBatcher& operator=(const RlsBatcher&) = delete;

    /// Queues a call; a batcher thread decides and finishes it.
    void add(rls::RlsRequest&& request, const RlsQueuedCall& call);

private:
    void work();
    // Moves up to maxBatch queued calls into `requests` and `calls`. REQUIRES: mutex_ held.
    void takeLocked(std::vector<rls::RlsRequest>& requests, std::vector<RlsQueuedCall>& calls);
    void decide(std::vector<rls::RlsRequest>& requests, std::vector<RlsQueuedCall>& calls,
                std::vector<rls::RlsResult>& results);

    RlsDecisions& decisions_;
    const WallClock& clock_;
    const Finish finish_;
    const RlsBatcherOptions options_;

    std::mutex mutex_;
    std::condition_variable queued_;
    std::vector<rls::RlsRequest> requests_;  // the queue, oldest first; calls_ alongside
    std::vector<RlsQueuedCall> calls_;
    int idle_ = 0;  // threads waiting for a call
    bool stopping_ = false;
    std::vector<std::thread> threads_;
};

}  // namespace ratelab::serve
