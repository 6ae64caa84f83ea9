#pragma once

// The master of a Sentinel-monitored group (redis-sentinel:// URLs): asked of the sentinels
// with SENTINEL get-master-addr-by-name when the store first needs it, again whenever the
// master it named fails (a transport error, a timeout, a READONLY answer, a server whose ROLE is
// not master), at most once per backoff interval, so that a failover is followed within a
// backoff of the sentinels' promotion; and by a watcher thread once a second, so that a
// failover that leaves the old master reachable is followed within a second of the sentinels'
// switch (+switch-master). Each ask opens its own short connection to one sentinel after
// another, the one that answered last first; sentinels are asked without AUTH.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ratelab/limit.h"
#include "redis/endpoint.h"
#include "redis/redis_connection.h"

namespace ratelab::redis {

class Topology;

/// Thread-safe.
class SentinelMaster {
public:
    /// `service`: the redis-sentinel:// endpoint (sentinels, master name). Asks back off from
    /// `backoffMin` doubling to `backoffMax` (at most 100 ms) while they fail or name the
    /// master that failed.
    /// Starts the watcher, whose first ask comes a second later.
    SentinelMaster(Topology& topology, const Endpoint& service, Nanos connectTimeout,
                   Nanos backoffMin, Nanos backoffMax);
    /// Stops the watcher (waiting for an ask it is making, bounded by the connect timeouts).
    ~SentinelMaster();
    SentinelMaster(const SentinelMaster&) = delete;
    SentinelMaster& operator=(const SentinelMaster&) = delete;

    /// The node of the current master, asking the sentinels first when none is known yet (one
    /// caller asks; the others wait for its answer within their deadline). -1 with *error when
    /// none could be had.
    int master(Deadline deadline, std::string* error);

    /// `node` failed a call as only a master that is gone or demoted does. When it is the
    /// current master and the backoff allows, asks the sentinels again within `deadline`; a
    /// new address becomes the master. True when the master changed (so that a call the old one
    /// never ran may go to the new one). Never waits for another caller's ask.
    bool failed(int node, Deadline deadline);

    /// Times the sentinels named another master than the one before.
    std::int64_t switches() const { return switches_.load(std::memory_order_relaxed); }

    /// Asks the sentinels once, in order, within `deadline`: the master's host and port, or
    /// false with why no sentinel answered. For tests, and the two calls above.
    bool ask(Deadline deadline, std::string* host, int* port, std::string* error);

private:
    // REQUIRES: asking_ set by this caller. Asks, and publishes the answer as the master.
    // `periodic`: the watcher's ask, which does not move the failures' backoff.
    bool refresh(Deadline deadline, std::string* error, bool periodic = false);
    // The watcher thread's loop: an ask a second until the destructor says stop.
    void watch();

    Topology& topology_;
    const std::vector<RedisSentinelAddress> sentinels_;
    const std::string masterName_;
    const Nanos connectTimeout_;
    const Nanos backoffMin_;
    const Nanos backoffMax_;

    std::mutex mutex_;
    std::condition_variable answered_;
    bool stopping_ = false;              ///< guarded by mutex_: the watcher leaves
    bool asking_ = false;                ///< guarded by mutex_
    Nanos backoff_ = 0;                  ///< guarded by mutex_; 0: the last ask named a new master
    Clock::time_point nextAsk_{};        ///< guarded by mutex_: no ask on failure before this
    std::string lastError_;              ///< guarded by mutex_
    std::atomic<std::size_t> first_{0};  ///< the sentinel that answered last
    std::atomic<std::int64_t> switches_{0};
    std::thread watcher_;  ///< last: starts once everything above is set
};

}  // namespace ratelab::redis
