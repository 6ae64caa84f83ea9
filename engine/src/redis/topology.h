#pragma once

// The servers a Redis store talks to: one standalone server, the master of a Sentinel-monitored
// group (which the sentinels name, and which changes with a failover), or the nodes of a Redis
// Cluster with a 16384-entry slot map built from CLUSTER SLOTS. Each node carries its
// reconnection backoff, shared by every pooled connection to it.

#include <hiredis/hiredis.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ratelab/limit.h"
#include "redis/endpoint.h"
#include "redis/key_slot.h"
#include "redis/redis_connection.h"

namespace ratelab::redis {

/// One server. Thread-safe.
class Node {
public:
    Node(Endpoint endpoint, Nanos backoffMin, Nanos backoffMax);

    const Endpoint& endpoint() const { return endpoint_; }
    const std::string& name() const { return name_; }

    /// Whether a call may use this node at `now`. While backing off after a failure it may not
    /// (*why says how long and after what); once the backoff has run out, one caller is let
    /// through as the probe while the others keep failing fast. *refused tells whether the
    /// failure was the server refusing (AUTH, SCRIPT LOAD) rather than a transport failure.
    bool admit(Clock::time_point now, std::string* why, bool* refused);
    /// The server failed a connect, a handshake or a command within its deadline: back off
    /// (doubling from the minimum to the maximum, jittered to 50-100%).
    void failed(Clock::time_point now, const std::string& error, bool refused = false);
    /// The server answered: forget any backoff.
    void answered() {
        if (retryAt_.load(std::memory_order_relaxed) != 0) reset();
    }

private:
    void reset();

    const Endpoint endpoint_;
    const std::string name_;
    const std::int64_t backoffMin_;
    const std::int64_t backoffMax_;
    std::atomic<std::int64_t> retryAt_{0};  ///< steady-clock ns; 0: healthy
    std::mutex mutex_;
    std::int64_t backoff_ = 0;
    std::string lastError_;
    bool lastRefused_ = false;
};

/// A slot range as CLUSTER SLOTS tells it.
struct SlotRange {
    int first = 0;
    int last = 0;
    std::string host;
    int port = 0;
};

/// Parses a CLUSTER SLOTS reply. An empty host means "the node that answered" (asked).
bool parseClusterSlots(const redisReply& reply, const Endpoint& asked,
                       std::vector<SlotRange>* ranges, std::string* error);

class SentinelMaster;

/// Nodes and slot owners. Nodes are only ever added; readers need no lock. Thread-safe.
class Topology {
public:
    /// One seed that is a redis-sentinel:// endpoint makes a Sentinel topology: no node until
    /// the sentinels name the master (each connect bounded by `connectTimeout`).
    Topology(std::vector<Endpoint> seeds, bool cluster, Nanos backoffMin, Nanos backoffMax,
             Nanos connectTimeout = 200 * kNanosPerMilli);
    ~Topology();

    bool cluster() const { return cluster_; }
    int seedCount() const { return seedCount_; }
    int nodeCount() const { return count_.load(std::memory_order_acquire); }
    Node& node(int index) { return *nodes_[static_cast<std::size_t>(index)]; }

    /// The node at host:port (cluster nodes and Sentinel masters inherit the first seed's
    /// credentials, a Sentinel master its database too), added if new. -1 when the table is
    /// full.
    int nodeAt(const std::string& host, int port);

    /// A Sentinel topology's master finder; null for the others.
    SentinelMaster* sentinel() const { return sentinel_.get(); }
    /// Where a call goes without a Cluster: the standalone server (node 0), or the master the
    /// sentinels named last (-1 while none is known).
    int primary() const { return primary_.load(std::memory_order_acquire); }
    /// The sentinels named `node` the master.
    void setPrimary(int node) { primary_.store(node, std::memory_order_release); }

    /// The node serving `slot` per the latest map, or -1.
    int nodeForSlot(int slot) const {
        return slots_[static_cast<std::size_t>(slot)].load(std::memory_order_relaxed);
    }
    /// Bumped by every map update.
    std::uint64_t version() const { return version_.load(std::memory_order_acquire); }
    /// Replaces the slot map. Slots no range covers become unowned.
    void applySlots(const std::vector<SlotRange>& ranges);
    /// Points one slot at a node (a MOVED answer), until the next full update.
    void moveSlot(int slot, int node);
    /// The distinct nodes owning at least one slot (the seeds while no map is known); without
    /// a Cluster, the primary (none while a Sentinel master is unknown).
    std::vector<int> masters() const;

private:
    static constexpr int kMaxNodes = 1024;

    const bool cluster_;
    const int seedCount_;
    const Nanos backoffMin_;
    const Nanos backoffMax_;
    Endpoint credentials_;
    std::mutex addMutex_;
    std::array<std::unique_ptr<Node>, kMaxNodes> nodes_;
    std::atomic<int> count_{0};
    std::array<std::atomic<int>, kClusterSlots> slots_;
    std::atomic<std::uint64_t> version_{0};
    std::atomic<int> primary_{0};
    std::unique_ptr<SentinelMaster> sentinel_;
};

}  // namespace ratelab::redis
