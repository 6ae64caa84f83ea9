#include "redis/sentinel.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <charconv>

#include "redis/topology.h"

namespace ratelab::redis {

namespace {

// Asks after a failure back off at most this long: a failover is followed within it of the
// sentinels' promotion (an ask is one short connection to a sentinel).
constexpr Nanos kMaxAskInterval = 100 * kNanosPerMilli;
// The watcher asks this often while nothing fails, so that a failover that leaves the old master
// reachable (one an operator orders, or a partition) is followed within it, as a client that
// listens for the sentinels' +switch-master message follows it.
constexpr auto kWatchInterval = std::chrono::seconds(1);

std::string hostPort(const std::string& host, int port) {
    Endpoint e;
    e.host = host;
    e.port = port;
    return e.name();
}

}  // namespace

SentinelMaster::SentinelMaster(Topology& topology, const Endpoint& service, Nanos connectTimeout,
                               Nanos backoffMin, Nanos backoffMax)
    : topology_(topology)
    , sentinels_(service.sentinels)
    , masterName_(service.masterName)
    , connectTimeout_(std::max<Nanos>(1, connectTimeout))
    , backoffMin_(std::max<Nanos>(1, backoffMin))
    , backoffMax_(std::clamp(backoffMax, backoffMin_, std::max(backoffMin_, kMaxAskInterval))) {
    // The watcher takes none of the host process's signals: a service that waits for SIGTERM in
    // sigwait() blocks them in its own threads, and a thread of ours that left them unblocked
    // would be where the kernel delivers them (and SIGTERM's default action ends the process).
    sigset_t all;
    sigset_t previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    watcher_ = std::thread([this] { watch(); });
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

SentinelMaster::~SentinelMaster() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    answered_.notify_all();
    watcher_.join();
}

void SentinelMaster::watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        if (answered_.wait_for(lock, kWatchInterval, [this] { return stopping_; })) return;
        if (asking_) continue;  // a caller is asking already
        asking_ = true;
        lock.unlock();
        refresh(Clock::now() + kWatchInterval, nullptr, /*periodic=*/true);
        lock.lock();
    }
}

bool SentinelMaster::ask(Deadline deadline, std::string* host, int* port, std::string* error) {
    const std::string_view command[] = {"SENTINEL", "get-master-addr-by-name", masterName_};
    std::string errors;
    const std::size_t first = first_.load(std::memory_order_relaxed);
    for (std::size_t k = 0; k < sentinels_.size(); ++k) {
        const std::size_t i = (first + k) % sentinels_.size();
        Endpoint sentinel;
        sentinel.host = sentinels_[i].host;
        sentinel.port = sentinels_[i].port;
        const std::string where = "sentinel " + sentinel.name() + ": ";
        std::string why;
        const Deadline by =
            std::min(deadline, Clock::now() + std::chrono::nanoseconds(connectTimeout_));
        std::unique_ptr<Connection> c = Connection::open(sentinel, by, &why);
        Reply reply;
        if (c) {
            reply = c->call(command, deadline);
            if (!reply) why = c->error();
        }
        if (reply) {
            const redisReply& r = *reply;
            if (r.type == REDIS_REPLY_ARRAY && r.elements == 2 &&
                r.element[0]->type == REDIS_REPLY_STRING &&
                r.element[1]->type == REDIS_REPLY_STRING) {
                const std::string_view portText(r.element[1]->str, r.element[1]->len);
                int p = 0;
                const auto [end, ec] =
                    std::from_chars(portText.data(), portText.data() + portText.size(), p);
                if (ec == std::errc() && end == portText.data() + portText.size() && p >= 1 &&
                    p <= 65535 && r.element[0]->len > 0) {
                    host->assign(r.element[0]->str, r.element[0]->len);
                    *port = p;
                    first_.store(i, std::memory_order_relaxed);
                    return true;
                }
                why = "unreadable master address";
            } else if (r.type == REDIS_REPLY_NIL) {
                why = "does not monitor a master named \"" + masterName_ + "\"";
            } else if (r.type == REDIS_REPLY_ERROR) {
                why = std::string(r.str, r.len);
            } else {
                why = "unexpected answer to SENTINEL get-master-addr-by-name";
            }
        }
        errors += (errors.empty() ? "" : "; ") + where + why;
        if (Clock::now() >= deadline) break;
    }
    *error = errors.empty() ? "no sentinel to ask" : errors;
    return false;
}

bool SentinelMaster::refresh(Deadline deadline, std::string* error, bool periodic) {
    std::string host;
    int port = 0;
    std::string why;
    const int before = topology_.primary();
    const bool found = ask(deadline, &host, &port, &why);
    int node = -1;
    if (found) {
        node = topology_.nodeAt(host, port);
        if (node < 0) why = "too many Redis nodes to add the master " + hostPort(host, port);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    asking_ = false;
    const bool changed = node >= 0 && node != before;
    if (node >= 0) {
        topology_.setPrimary(node);
        if (changed && before >= 0) switches_.fetch_add(1, std::memory_order_relaxed);
        lastError_.clear();
    } else {
        lastError_ = "master \"" + masterName_ + "\": " + why;
        if (error) *error = lastError_;
    }
    // An answer that names a new master is trusted at once; asking again soon only helps while
    // the sentinels still name the one that failed, or answer nothing. The watcher's asks leave
    // the failures' backoff alone.
    if (changed) {
        backoff_ = 0;
        nextAsk_ = Clock::now();
    } else if (!periodic) {
        backoff_ = backoff_ == 0 ? backoffMin_ : std::min(backoffMax_, 2 * backoff_);
        nextAsk_ = Clock::now() + std::chrono::nanoseconds(backoff_);
    }
    answered_.notify_all();
    return changed;
}

int SentinelMaster::master(Deadline deadline, std::string* error) {
    const int known = topology_.primary();
    if (known >= 0) return known;
    {
        std::unique_lock<std::mutex> lock(mutex_);
        if (asking_) {
            // Another caller is asking: its answer is ours too.
            answered_.wait_until(lock, deadline, [this] { return !asking_; });
            const int node = topology_.primary();
            if (node < 0 && error) {
                *error = asking_ ? "timed out waiting for the sentinels' answer" : lastError_;
            }
            return node;
        }
        if (Clock::now() < nextAsk_) {
            // The last ask found nobody: fail fast until its backoff has run out.
            if (error) *error = lastError_;
            return -1;
        }
        asking_ = true;
    }
    refresh(deadline, error);
    return topology_.primary();
}

bool SentinelMaster::failed(int node, Deadline deadline) {
    if (node != topology_.primary()) return false;  // another caller moved on already
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (asking_ || Clock::now() < nextAsk_) return false;
        asking_ = true;
    }
    return refresh(deadline, nullptr);
}

}  // namespace ratelab::redis
