#include "redis/topology.h"

#include <algorithm>
#include <random>

#include "redis/sentinel.h"

namespace ratelab::redis {

namespace {

std::int64_t ticks(Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// 50% to 100% of `ns`: spreads reconnects of many replicas so a restarted server is not hit by
// all of them at once.
std::int64_t jittered(std::int64_t ns) {
    thread_local std::minstd_rand rng{std::random_device{}()};
    std::uniform_int_distribution<std::int64_t> pick(ns / 2, ns);
    return pick(rng);
}

}  // namespace

Node::Node(Endpoint endpoint, Nanos backoffMin, Nanos backoffMax)
    : endpoint_(std::move(endpoint))
    , name_(endpoint_.name())
    , backoffMin_(std::max<Nanos>(1, backoffMin))
    , backoffMax_(std::max(backoffMin_, backoffMax)) {}

bool Node::admit(Clock::time_point now, std::string* why, bool* refused) {
    std::int64_t at = retryAt_.load(std::memory_order_acquire);
    if (at == 0) return true;
    const std::int64_t t = ticks(now);
    if (t >= at) {
        // The backoff ran out: the caller that moves retryAt on is the probe.
        std::lock_guard<std::mutex> lock(mutex_);
        if (retryAt_.compare_exchange_strong(at, t + jittered(backoff_))) return true;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    const std::int64_t left = retryAt_.load(std::memory_order_relaxed) - t;
    *why = name_ + ": backing off for another " +
           std::to_string(std::max<std::int64_t>(0, left) / 1'000'000) + " ms after: " + lastError_;
    *refused = lastRefused_;
    return false;
}

void Node::failed(Clock::time_point now, const std::string& error, bool refused) {
    std::lock_guard<std::mutex> lock(mutex_);
    backoff_ = backoff_ == 0 ? backoffMin_ : std::min(backoffMax_, 2 * backoff_);
    lastError_ = error;
    lastRefused_ = refused;
    retryAt_.store(ticks(now) + jittered(backoff_), std::memory_order_release);
}

void Node::reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    backoff_ = 0;
    retryAt_.store(0, std::memory_order_release);
}

bool parseClusterSlots(const redisReply& reply, const Endpoint& asked,
                       std::vector<SlotRange>* ranges, std::string* error) {
    if (reply.type != REDIS_REPLY_ARRAY) {
        *error = "CLUSTER SLOTS: expected an array";
        return false;
    }
    ranges->clear();
    for (std::size_t i = 0; i < reply.elements; ++i) {
        const redisReply* entry = reply.element[i];
        if (entry->type != REDIS_REPLY_ARRAY || entry->elements < 3 ||
            entry->element[0]->type != REDIS_REPLY_INTEGER ||
            entry->element[1]->type != REDIS_REPLY_INTEGER ||
            entry->element[2]->type != REDIS_REPLY_ARRAY || entry->element[2]->elements < 2) {
            *error = "CLUSTER SLOTS: malformed entry " + std::to_string(i);
            return false;
        }
        const redisReply* master = entry->element[2];
        SlotRange range;
        range.first = static_cast<int>(entry->element[0]->integer);
        range.last = static_cast<int>(entry->element[1]->integer);
        if (master->element[0]->type == REDIS_REPLY_STRING && master->element[0]->len > 0)
            range.host.assign(master->element[0]->str, master->element[0]->len);
        else
            range.host = asked.host;  // "?" or empty: the node we asked
        if (master->element[1]->type != REDIS_REPLY_INTEGER || range.first < 0 ||
            range.last >= kClusterSlots || range.first > range.last) {
            *error = "CLUSTER SLOTS: malformed range in entry " + std::to_string(i);
            return false;
        }
        range.port = static_cast<int>(master->element[1]->integer);
        ranges->push_back(std::move(range));
    }
    return true;
}

Topology::Topology(std::vector<Endpoint> seeds, bool cluster, Nanos backoffMin, Nanos backoffMax,
                   Nanos connectTimeout)
    : cluster_(cluster)
    , seedCount_(seeds.size() == 1 && seeds.front().isSentinel()
                     ? 0
                     : static_cast<int>(std::min<std::size_t>(seeds.size(), kMaxNodes)))
    , backoffMin_(backoffMin)
    , backoffMax_(backoffMax) {
    if (!seeds.empty()) credentials_ = seeds.front();
    if (seedCount_ == 0 && !seeds.empty()) {
        primary_.store(-1, std::memory_order_relaxed);
        sentinel_ = std::make_unique<SentinelMaster>(*this, seeds.front(), connectTimeout,
                                                     backoffMin, backoffMax);
    }
    for (int i = 0; i < seedCount_; ++i)
        nodes_[static_cast<std::size_t>(i)] = std::make_unique<Node>(
            std::move(seeds[static_cast<std::size_t>(i)]), backoffMin, backoffMax);
    count_.store(seedCount_, std::memory_order_release);
    for (auto& s : slots_)
        s.store(-1, std::memory_order_relaxed);
}

Topology::~Topology() = default;

int Topology::nodeAt(const std::string& host, int port) {
    const int n = nodeCount();
    for (int i = 0; i < n; ++i) {
        const Endpoint& e = nodes_[static_cast<std::size_t>(i)]->endpoint();
        if (!e.isUnix() && e.port == port && e.host == host) return i;
    }
    std::lock_guard<std::mutex> lock(addMutex_);
    const int now = nodeCount();
    for (int i = n; i < now; ++i) {
        const Endpoint& e = nodes_[static_cast<std::size_t>(i)]->endpoint();
        if (!e.isUnix() && e.port == port && e.host == host) return i;
    }
    if (now >= kMaxNodes) return -1;
    Endpoint e;
    e.host = host;
    e.port = port;
    e.user = credentials_.user;
    e.password = credentials_.password;
    if (sentinel_) e.database = credentials_.database;  // a Cluster has database 0 only
    nodes_[static_cast<std::size_t>(now)] =
        std::make_unique<Node>(std::move(e), backoffMin_, backoffMax_);
    count_.store(now + 1, std::memory_order_release);
    return now;
}

void Topology::applySlots(const std::vector<SlotRange>& ranges) {
    std::vector<int> owner(kClusterSlots, -1);
    for (const SlotRange& r : ranges) {
        const int node = nodeAt(r.host, r.port);
        for (int s = r.first; s <= r.last; ++s)
            owner[static_cast<std::size_t>(s)] = node;
    }
    for (int s = 0; s < kClusterSlots; ++s)
        slots_[static_cast<std::size_t>(s)].store(owner[static_cast<std::size_t>(s)],
                                                  std::memory_order_relaxed);
    version_.fetch_add(1, std::memory_order_acq_rel);
}

void Topology::moveSlot(int slot, int node) {
    slots_[static_cast<std::size_t>(slot)].store(node, std::memory_order_relaxed);
}

std::vector<int> Topology::masters() const {
    std::vector<int> result;
    if (!cluster_) {
        if (primary() >= 0) result.push_back(primary());
        return result;
    }
    if (version() == 0) {
        for (int i = 0; i < seedCount_; ++i)
            result.push_back(i);
        return result;
    }
    std::vector<bool> seen(static_cast<std::size_t>(kMaxNodes), false);
    for (const auto& s : slots_) {
        const int node = s.load(std::memory_order_relaxed);
        if (node >= 0 && !seen[static_cast<std::size_t>(node)]) {
            seen[static_cast<std::size_t>(node)] = true;
            result.push_back(node);
        }
    }
    return result;
}

}  // namespace ratelab::redis
