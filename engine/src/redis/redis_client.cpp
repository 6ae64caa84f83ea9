#include "redis/redis_client.h"

#include <algorithm>
#include <charconv>
#include <thread>
#include <utility>

namespace ratelab::redis {

namespace {

constexpr int kMaxRedirects = 5;
// A connection idle this long is checked for a server that closed it before being used, so
// that a restarted server does not cost a request an error per pooled connection.
constexpr auto kIdleCheck = std::chrono::milliseconds(20);
constexpr auto kFirstRetryPause = std::chrono::milliseconds(1);
constexpr auto kMaxRetryPause = std::chrono::milliseconds(50);

enum class ErrorClass : std::uint8_t { Moved, Ask, NoScript, Retry, OutOfMemory, Refusal };

// Redirects and NOSCRIPT are followed; answers that say "not now" (a slot migrating, a cluster
// without quorum, a busy script, a server loading its data) are retried until the deadline;
// everything else (OOM, READONLY, NOREPLICAS, MISCONF, WRONGTYPE, CROSSSLOT, ERR, script errors)
// is the server refusing, which the store reports as such and never as a pass.
ErrorClass classify(std::string_view text) {
    const std::string_view code = text.substr(0, text.find(' '));
    if (code == "MOVED") return ErrorClass::Moved;
    if (code == "ASK") return ErrorClass::Ask;
    if (code == "NOSCRIPT") return ErrorClass::NoScript;
    if (code == "TRYAGAIN" || code == "CLUSTERDOWN" || code == "BUSY" || code == "LOADING" ||
        code == "MASTERDOWN")
        return ErrorClass::Retry;
    if (code == "OOM") return ErrorClass::OutOfMemory;  // maxmemory reached: the store is full
    return ErrorClass::Refusal;
}

// "MOVED 3999 127.0.0.1:6381" or "ASK 3999 127.0.0.1:6381".
bool parseRedirect(std::string_view text, int* slot, std::string* host, int* port) {
    const std::size_t a = text.find(' ');
    if (a == std::string_view::npos) return false;
    const std::size_t b = text.find(' ', a + 1);
    if (b == std::string_view::npos) return false;
    const std::string_view number = text.substr(a + 1, b - a - 1);
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), *slot);
    if (ec != std::errc() || end != number.data() + number.size() || *slot < 0 ||
        *slot >= kClusterSlots)
        return false;
    return parseHostPort(text.substr(b + 1), host, port);
}

Outcome failure(Outcome::Kind kind, std::string error) {
    Outcome o;
    o.kind = kind;
    o.error = std::move(error);
    return o;
}

Outcome copyFailure(const Outcome& o) {
    return failure(o.kind, o.error);
}

std::string_view text(const redisReply& reply) {
    return {reply.str, reply.len};
}

}  // namespace

struct RedisClient::Session {
    std::vector<std::unique_ptr<Connection>> connections;  ///< by node index
};

class RedisClient::Lease {
public:
    Lease() = default;
    Lease(RedisClient* client, Session* session) : client_(client), session_(session) {}
    Lease(Lease&& other) noexcept
        : client_(other.client_), session_(std::exchange(other.session_, nullptr)) {}
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
        if (session_) client_->release(session_);
    }
    explicit operator bool() const { return session_ != nullptr; }
    Session& operator*() const { return *session_; }

private:
    RedisClient* client_ = nullptr;
    Session* session_ = nullptr;
};

RedisClient::RedisClient(ClientOptions options)
    : options_(std::move(options))
    , topology_(options_.seeds, options_.cluster, options_.backoffMin, options_.backoffMax) {}

RedisClient::~RedisClient() = default;

RedisClient::Lease RedisClient::acquire(Deadline deadline) {
    std::unique_lock<std::mutex> lock(poolMutex_);
    for (;;) {
        if (!idle_.empty()) {
            Session* s = idle_.back();
            idle_.pop_back();
            return Lease(this, s);
        }
        if (sessions_.size() < static_cast<std::size_t>(std::max(1, options_.poolSize))) {
            sessions_.push_back(std::make_unique<Session>());
            return Lease(this, sessions_.back().get());
        }
        if (poolFree_.wait_until(lock, deadline) == std::cv_status::timeout && idle_.empty())
            return Lease();
    }
}

void RedisClient::release(Session* session) {
    {
        std::lock_guard<std::mutex> lock(poolMutex_);
        idle_.push_back(session);
    }
    poolFree_.notify_one();
}

bool RedisClient::loadScript(Connection& connection, ScriptId id, Deadline deadline,
                             std::string* error) {
    const Script& s = script(id);
    const std::string_view args[] = {"SCRIPT", "LOAD", s.source};
    Reply reply = connection.call(args, deadline);
    if (!reply) {
        *error = connection.error();
        return false;
    }
    if (reply->type != REDIS_REPLY_STRING || text(*reply) != s.sha1) {
        *error = "SCRIPT LOAD of " + std::string(s.name) + " answered '" +
                 std::string(reply->str ? text(*reply) : "") + "', expected " + s.sha1;
        return false;
    }
    return true;
}

bool RedisClient::handshake(Connection& connection, const Node& node, Deadline deadline,
                            std::string* error, bool* refused) {
    const Endpoint& e = node.endpoint();
    int expected = 0;
    if (!e.password.empty()) {
        if (e.user.empty()) {
            const std::string_view args[] = {"AUTH", e.password};
            connection.append(args);
        } else {
            const std::string_view args[] = {"AUTH", e.user, e.password};
            connection.append(args);
        }
        ++expected;
    }
    const std::string db = std::to_string(e.database);
    if (!topology_.cluster() && e.database != 0) {
        const std::string_view args[] = {"SELECT", db};
        connection.append(args);
        ++expected;
    }
    for (const Script& s : scripts()) {
        const std::string_view args[] = {"SCRIPT", "LOAD", s.source};
        connection.append(args);
    }
    if (!connection.flush(deadline)) {
        *error = node.name() + ": " + connection.error();
        return false;
    }
    *refused = false;
    std::string problem;
    for (int i = 0; i < expected + static_cast<int>(kScriptCount); ++i) {
        Reply reply = connection.read(deadline);
        if (!reply) {
            *error = node.name() + ": " + connection.error();
            return false;
        }
        if (!problem.empty()) continue;  // drain the rest, keep the first problem
        if (i < expected) {
            if (reply->type == REDIS_REPLY_ERROR)
                problem = (i == 0 && !e.password.empty() ? "AUTH failed: " : "SELECT failed: ") +
                          std::string(text(*reply));
        } else {
            const Script& s = scripts()[static_cast<std::size_t>(i - expected)];
            if (reply->type != REDIS_REPLY_STRING || text(*reply) != s.sha1)
                problem = "SCRIPT LOAD of " + std::string(s.name) + " answered '" +
                          std::string(reply->str ? text(*reply) : "") + "', expected " + s.sha1;
        }
    }
    if (!problem.empty()) {
        *error = node.name() + ": " + problem;
        *refused = true;
        return false;
    }
    return true;
}

Connection* RedisClient::connection(Session& session, int node, Deadline deadline,
                                    Outcome* failed) {
    Node& n = topology_.node(node);
    const auto now = Clock::now();
    std::string why;
    bool refused = false;
    if (!n.admit(now, &why, &refused)) {
        *failed = failure(refused ? Outcome::Kind::Refused : Outcome::Kind::Transport, why);
        return nullptr;
    }
    if (session.connections.size() <= static_cast<std::size_t>(node))
        session.connections.resize(static_cast<std::size_t>(node) + 1);
    std::unique_ptr<Connection>& slot = session.connections[static_cast<std::size_t>(node)];
    if (slot && now - slot->lastUse > kIdleCheck && slot->stale()) slot.reset();
    if (slot) return slot.get();

    const Deadline by = std::min(deadline, now + std::chrono::nanoseconds(options_.connectTimeout));
    std::string error;
    std::unique_ptr<Connection> c = Connection::open(n.endpoint(), by, &error);
    if (c && !handshake(*c, n, by, &error, &refused)) c.reset();
    if (!c) {
        counters_.connectFailures.fetch_add(1, std::memory_order_relaxed);
        n.failed(Clock::now(), error, refused);
        *failed = failure(refused ? Outcome::Kind::Refused : Outcome::Kind::Transport, error);
        return nullptr;
    }
    n.answered();
    counters_.connects.fetch_add(1, std::memory_order_relaxed);
    slot = std::move(c);
    return slot.get();
}

Outcome RedisClient::lost(Session& session, int node, Connection& connection) {
    Node& n = topology_.node(node);
    std::string error = n.name() + ": " + connection.error();
    if (connection.sent() > 0) error += "; the request may or may not have been applied";
    // A server that lets a deadline pass is stalled, not just one dropped connection: back off,
    // so that calls fail fast instead of each waiting out its timeout.
    if (connection.failure() == Failure::Timeout) n.failed(Clock::now(), connection.error());
    session.connections[static_cast<std::size_t>(node)].reset();  // `connection` dies here
    return failure(Outcome::Kind::Transport, std::move(error));
}

std::string RedisClient::refreshSlots(Session& session, int preferred, Deadline deadline,
                                      std::uint64_t seenVersion, bool* refused) {
    if (refused) *refused = false;
    // One refresh at a time; the others wait for it (within their own deadline) and use its map.
    {
        std::unique_lock<std::mutex> lock(refreshMutex_);
        if (!refreshDone_.wait_until(lock, deadline, [this] { return !refreshing_; }))
            return "timed out waiting for another cluster map refresh";
        if (topology_.version() != seenVersion) return {};  // refreshed meanwhile
        refreshing_ = true;
    }
    struct Done {
        RedisClient* client;
        ~Done() {
            {
                std::lock_guard<std::mutex> lock(client->refreshMutex_);
                client->refreshing_ = false;
            }
            client->refreshDone_.notify_all();
        }
    } done{this};
    std::vector<int> candidates;
    if (preferred >= 0) candidates.push_back(preferred);
    for (int i = 0; i < topology_.nodeCount(); ++i)
        if (i != preferred) candidates.push_back(i);
    std::string errors;
    bool allRefused = !candidates.empty();
    for (int node : candidates) {
        Outcome f;
        Connection* c = connection(session, node, deadline, &f);
        if (!c) {
            errors += (errors.empty() ? "" : "; ") + f.error;
            allRefused = allRefused && f.kind == Outcome::Kind::Refused;
            continue;
        }
        allRefused = false;
        const std::string_view args[] = {"CLUSTER", "SLOTS"};
        Reply reply = c->call(args, deadline);
        if (!reply) {
            errors += (errors.empty() ? "" : "; ") + lost(session, node, *c).error;
            continue;
        }
        std::vector<SlotRange> ranges;
        std::string error;
        if (reply->type == REDIS_REPLY_ERROR) {
            error = std::string(text(*reply));
        } else if (parseClusterSlots(*reply, topology_.node(node).endpoint(), &ranges, &error)) {
            topology_.applySlots(ranges);
            return {};
        }
        errors += (errors.empty() ? "" : "; ") + topology_.node(node).name() + ": " + error;
    }
    if (refused) *refused = allRefused;
    return errors.empty() ? "no cluster node known" : errors;
}

int RedisClient::route(Session& session, int slot, Deadline deadline, Outcome* failed) {
    if (!topology_.cluster()) return 0;
    int node = topology_.nodeForSlot(slot);
    if (node >= 0) return node;
    bool refused = false;
    const std::string error = refreshSlots(session, -1, deadline, topology_.version(), &refused);
    node = topology_.nodeForSlot(slot);
    if (node < 0)
        *failed = failure(refused ? Outcome::Kind::Refused : Outcome::Kind::Transport,
                          "no cluster node serves slot " + std::to_string(slot) +
                              (error.empty() ? "" : ": " + error));
    return node;
}

void RedisClient::appendCall(Connection& connection, const ScriptCall& call, bool useEval) {
    const Script& s = script(call.script);
    std::string_view args[40];
    const std::size_t n = std::min<std::size_t>(call.args.size(), 38);
    args[0] = useEval ? "EVAL" : "EVALSHA";
    args[1] = useEval ? std::string_view(s.source) : std::string_view(s.sha1);
    std::copy_n(call.args.begin(), n, args + 2);
    connection.append(std::span<const std::string_view>(args, n + 2));
}

Outcome RedisClient::runOne(Session& session, const ScriptCall& call, Deadline deadline,
                            bool useEval) {
    Outcome failed;
    std::uint64_t seen = topology_.version();
    int node = route(session, call.slot, deadline, &failed);
    if (node < 0) return failed;
    bool asking = false;
    bool reloaded = false;
    bool resent = false;
    int redirects = 0;
    auto pause = std::chrono::duration_cast<Clock::duration>(kFirstRetryPause);
    for (;;) {
        Connection* c = connection(session, node, deadline, &failed);
        if (!c) return failed;
        c->resetSent();
        const bool ask = std::exchange(asking, false);
        if (ask) {
            const std::string_view args[] = {"ASKING"};
            c->append(args);
        }
        appendCall(*c, call, useEval);
        counters_.commands.fetch_add(1, std::memory_order_relaxed);
        Reply reply;
        if (c->flush(deadline)) {
            reply = c->read(deadline);
            if (ask && reply) reply = c->read(deadline);  // the first one answered ASKING
        }
        if (!reply) {
            // Nothing reached the kernel: the server cannot have run it. Retry once on a new
            // connection (a server restarted under a pooled connection fails the first send).
            if (c->sent() == 0 && c->failure() != Failure::Timeout && !resent) {
                resent = true;
                session.connections[static_cast<std::size_t>(node)].reset();
                continue;
            }
            return lost(session, node, *c);
        }
        topology_.node(node).answered();
        if (reply->type != REDIS_REPLY_ERROR) {
            Outcome o;
            o.kind = Outcome::Kind::Reply;
            o.reply = std::move(reply);
            return o;
        }
        const std::string_view answer = text(*reply);
        const std::string where = topology_.node(node).name() + ": ";
        switch (classify(answer)) {
            case ErrorClass::NoScript: {
                // The script cache was flushed (restart, failover, SCRIPT FLUSH): reload, retry
                // once.
                if (reloaded || useEval)
                    return failure(Outcome::Kind::Refused,
                                   where + std::string(answer) + " (after reloading the script)");
                reloaded = true;
                counters_.scriptLoads.fetch_add(1, std::memory_order_relaxed);
                std::string error;
                if (!loadScript(*c, call.script, deadline, &error)) {
                    if (!c->ok()) return lost(session, node, *c);
                    return failure(Outcome::Kind::Refused, where + error);
                }
                continue;
            }
            case ErrorClass::Moved:
            case ErrorClass::Ask: {
                int slot = 0;
                int port = 0;
                std::string host;
                if (!parseRedirect(answer, &slot, &host, &port))
                    return failure(Outcome::Kind::Refused,
                                   where + "unreadable redirect: " + std::string(answer));
                if (++redirects > kMaxRedirects)
                    return failure(Outcome::Kind::Transport, where + "still redirected after " +
                                                                 std::to_string(kMaxRedirects) +
                                                                 " hops: " + std::string(answer));
                const int target = topology_.nodeAt(host, port);
                if (target < 0)
                    return failure(Outcome::Kind::Refused, where + "too many cluster nodes");
                counters_.redirects.fetch_add(1, std::memory_order_relaxed);
                if (classify(answer) == ErrorClass::Moved) {
                    // The slot moved for good: note it, and reload the whole map (several slots
                    // usually move together).
                    topology_.moveSlot(slot, target);
                    refreshSlots(session, target, deadline, seen);
                    seen = topology_.version();
                } else {
                    asking = true;  // a slot migrating: this key only, this time only
                }
                node = target;
                continue;
            }
            case ErrorClass::Retry: {
                if (Clock::now() + pause >= deadline)
                    return failure(
                        Outcome::Kind::Transport,
                        where + "answered '" + std::string(answer) + "' until the deadline");
                std::this_thread::sleep_for(pause);
                pause = std::min<Clock::duration>(2 * pause, kMaxRetryPause);
                continue;
            }
            case ErrorClass::OutOfMemory:
                return failure(Outcome::Kind::Full, where + std::string(answer));
            case ErrorClass::Refusal:
                return failure(Outcome::Kind::Refused, where + std::string(answer));
        }
    }
}

Outcome RedisClient::eval(const ScriptCall& call, Deadline deadline) {
    Lease lease = acquire(deadline);
    if (!lease)
        return failure(Outcome::Kind::Transport, "no free connection within the timeout (pool of " +
                                                     std::to_string(options_.poolSize) + ")");
    return runOne(*lease, call, deadline, false);
}

void RedisClient::evalMany(std::span<const ScriptCall> calls, std::span<Outcome> outcomes,
                           Deadline deadline) {
    const std::size_t n = calls.size();
    Lease lease = acquire(deadline);
    if (!lease) {
        for (std::size_t i = 0; i < n; ++i)
            outcomes[i] = failure(Outcome::Kind::Transport,
                                  "no free connection within the timeout (pool of " +
                                      std::to_string(options_.poolSize) + ")");
        return;
    }
    Session& session = *lease;

    // One pipeline per node; the calls of one node keep their relative order (calls on one key
    // share a slot, hence a node, so their order holds).
    struct Pipe {
        int node;
        Connection* connection = nullptr;
        std::vector<std::size_t> calls;
    };
    std::vector<Pipe> pipes;
    for (std::size_t i = 0; i < n; ++i) {
        Outcome failed;
        const int node = route(session, calls[i].slot, deadline, &failed);
        if (node < 0) {
            outcomes[i] = std::move(failed);
            continue;
        }
        auto p = std::find_if(pipes.begin(), pipes.end(),
                              [&](const Pipe& pipe) { return pipe.node == node; });
        if (p == pipes.end()) p = pipes.insert(pipes.end(), Pipe{node, nullptr, {}});
        p->calls.push_back(i);
    }
    auto failAll = [&](const Pipe& pipe, std::size_t from, const Outcome& failed) {
        for (std::size_t k = from; k < pipe.calls.size(); ++k)
            outcomes[pipe.calls[k]] = copyFailure(failed);
    };
    for (Pipe& pipe : pipes) {
        Outcome failed;
        pipe.connection = connection(session, pipe.node, deadline, &failed);
        if (!pipe.connection) {
            failAll(pipe, 0, failed);
            continue;
        }
        pipe.connection->resetSent();
        for (std::size_t i : pipe.calls)
            appendCall(*pipe.connection, calls[i], false);
        counters_.commands.fetch_add(static_cast<std::int64_t>(pipe.calls.size()),
                                     std::memory_order_relaxed);
        if (!pipe.connection->flush(deadline)) {
            failAll(pipe, 0, lost(session, pipe.node, *pipe.connection));
            pipe.connection = nullptr;
        }
    }

    std::vector<std::size_t> retryEval;  // NOSCRIPT inside a pipeline: resent as EVAL
    std::vector<std::size_t> retryOne;   // redirected or "not now": resent one by one
    for (Pipe& pipe : pipes) {
        if (!pipe.connection) continue;
        for (std::size_t k = 0; k < pipe.calls.size(); ++k) {
            const std::size_t i = pipe.calls[k];
            Reply reply = pipe.connection->read(deadline);
            if (!reply) {
                failAll(pipe, k, lost(session, pipe.node, *pipe.connection));
                break;
            }
            topology_.node(pipe.node).answered();
            if (reply->type != REDIS_REPLY_ERROR) {
                outcomes[i].kind = Outcome::Kind::Reply;
                outcomes[i].reply = std::move(reply);
                outcomes[i].error.clear();
                continue;
            }
            switch (classify(text(*reply))) {
                case ErrorClass::NoScript:
                    retryEval.push_back(i);
                    break;
                case ErrorClass::Moved:
                case ErrorClass::Ask:
                case ErrorClass::Retry:
                    retryOne.push_back(i);
                    break;
                case ErrorClass::OutOfMemory:
                case ErrorClass::Refusal:
                    outcomes[i] = failure(
                        classify(text(*reply)) == ErrorClass::OutOfMemory ? Outcome::Kind::Full
                                                                          : Outcome::Kind::Refused,
                        topology_.node(pipe.node).name() + ": " + std::string(text(*reply)));
                    break;
            }
        }
    }
    if (retryEval.empty() && retryOne.empty()) return;
    // Redis' advice: a NOSCRIPT inside a pipeline cannot be handled in place, so send the script
    // text (EVAL also puts it back in the cache). Retries run in request order.
    if (!retryEval.empty()) counters_.scriptLoads.fetch_add(1, std::memory_order_relaxed);
    std::vector<std::size_t> retries = retryEval;
    retries.insert(retries.end(), retryOne.begin(), retryOne.end());
    std::sort(retries.begin(), retries.end());
    for (std::size_t i : retries) {
        const bool useEval = std::binary_search(retryEval.begin(), retryEval.end(), i);
        outcomes[i] = runOne(session, calls[i], deadline, useEval);
    }
}

std::vector<Outcome> RedisClient::onEveryMaster(std::span<const std::string_view> args,
                                                Deadline deadline) {
    std::vector<Outcome> results;
    Lease lease = acquire(deadline);
    if (!lease) {
        results.push_back(failure(Outcome::Kind::Transport, "no free connection"));
        return results;
    }
    Session& session = *lease;
    if (topology_.cluster() && topology_.version() == 0) refreshSlots(session, -1, deadline, 0);
    for (int node : topology_.masters()) {
        Outcome failed;
        Connection* c = connection(session, node, deadline, &failed);
        if (!c) {
            results.push_back(std::move(failed));
            continue;
        }
        Reply reply = c->call(args, deadline);
        if (!reply) {
            results.push_back(lost(session, node, *c));
            continue;
        }
        topology_.node(node).answered();
        if (reply->type == REDIS_REPLY_ERROR) {
            results.push_back(failure(Outcome::Kind::Refused, topology_.node(node).name() + ": " +
                                                                  std::string(text(*reply))));
            continue;
        }
        Outcome o;
        o.kind = Outcome::Kind::Reply;
        o.reply = std::move(reply);
        results.push_back(std::move(o));
    }
    return results;
}

}  // namespace ratelab::redis
