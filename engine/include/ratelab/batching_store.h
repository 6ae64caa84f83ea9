#pragma once

// Concurrent callers' consumptions sent to a store together. A service whose threads each
// decide a few requests (an event loop's turn, one gRPC call) would otherwise pay one round
// trip to a shared store per caller: here the calls that arrive while a batch is in flight wait
// and leave together, as one Store::consumeBatch (one pipeline on Redis), and each caller still
// waits at most its own timeout.

#include <cstdint>
#include <memory>

#include "ratelab/store.h"

namespace ratelab {

struct BatchingStoreOptions {
    /// Batches sent at once, each by one of the callers in it (the store's calls run on their
    /// callers' threads; there is no thread of its own). A call that finds fewer in flight and
    /// nobody waiting goes at once, alone; the others wait for a batch to end and leave together
    /// in the next. >= 1.
    int maxInFlight = 2;
    /// Most consumptions in one batch; a caller's own batch is never split. >= 1.
    std::size_t maxBatch = 512;
    /// How long a call may wait when its requests carry no timeout (ConsumeRequest::timeout 0),
    /// in nanoseconds.
    Nanos defaultTimeout = 500 * kNanosPerMilli;
};

/// What a batching store did. Monotonic counters.
struct BatchingStoreCounters {
    std::int64_t calls = 0;         ///< consume() and consumeBatch() calls
    std::int64_t batches = 0;       ///< consumeBatch() calls made on the inner store
    std::int64_t coalesced = 0;     ///< of those, batches that carried more than one caller
    std::int64_t consumptions = 0;  ///< consumptions sent to the inner store
    std::int64_t largestBatch = 0;  ///< most consumptions one batch carried
    /// Calls answered StoreStatus::Transport without reaching the inner store: their timeout
    /// passed while they waited, or the store was shut down.
    std::int64_t timedOut = 0;
    std::int64_t shutDown = 0;
};

/// A Store that coalesces concurrent consumptions into the inner store's consumeBatch. Each
/// consumption is still atomic on its own, and the results of one caller's batch come back in
/// its order; calls of different callers may be sent in either order (as they may be when each
/// calls the inner store itself). A batch is bounded by the earliest deadline among its callers
/// (each request's timeout from when its caller called), so nobody waits past its own: a call
/// that could not be sent within its timeout is answered StoreStatus::Transport, which its
/// policy's on_store_error decides. settle(), settleBatch(), keyspace(), keyspaceAt() and probe()
/// go to the inner store directly; kind() is the inner store's. Thread-safe.
class BatchingStore : public Store {
public:
    /// Answers every waiting call StoreStatus::Transport, and every later one at once; waits for
    /// the batches in flight to end (each within its deadline). Thread-safe; idempotent.
    virtual void shutdown() = 0;
    virtual BatchingStoreCounters counters() const = 0;
    virtual Store& inner() const = 0;
};

/// REQUIRES: inner != nullptr, options.maxInFlight >= 1, options.maxBatch >= 1.
std::unique_ptr<BatchingStore> makeBatchingStore(std::shared_ptr<Store> inner,
                                                 const BatchingStoreOptions& options = {});

}  // namespace ratelab
