#include "redis/redis_client.h"

#include <algorithm>
#include <charconv>
#include <thread>
#include <utility>

#include "redis/sentinel.h"

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
    , topology_(options_.seeds, options_.cluster, options_.backoffMin, options_.backoffMax,
                options_.connectTimeout) {}

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
    // A master the sentinels named must still be one: a demoted master, or one named before a
    // failover, is a replica now.
    const bool checkRole = topology_.sentinel() != nullptr;
    if (checkRole) {
        const std::string_view args[] = {"ROLE"};
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
    std::string notMaster;
    for (int i = 0; i < expected + static_cast<int>(kScriptCount); ++i) {
        Reply reply = connection.read(deadline);
        if (!reply) {
            *error = node.name() + ": " + connection.error();
            return false;
        }
        if (!problem.empty()) continue;  // drain the rest, keep the first problem
        if (checkRole && i == expected - 1) {
            const redisReply& r = *reply;
            if (r.type != REDIS_REPLY_ARRAY || r.elements == 0 ||
                r.element[0]->type != REDIS_REPLY_STRING || text(*r.element[0]) != "master") {
                notMaster = r.type == REDIS_REPLY_ARRAY && r.elements > 0 &&
                                    r.element[0]->type == REDIS_REPLY_STRING
                                ? std::string(text(*r.element[0]))
                                : std::string(r.type == REDIS_REPLY_ERROR ? text(r) : "?");
            }
        } else if (i < expected) {
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
    if (!notMaster.empty()) {
        // Not the server refusing: a failover under way, which the sentinels will name.
        *error = node.name() + ": ROLE is " + notMaster + ", not master";
        return false;
    }
    return true;
}

bool RedisClient::masterFailed(int node, Deadline deadline) {
    SentinelMaster* sentinel = topology_.sentinel();
    if (!sentinel) return false;
    sentinel->failed(node, deadline);
    return topology_.primary() >= 0 && topology_.primary() != node;
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
    if (SentinelMaster* sentinel = topology_.sentinel()) {
        std::string error;
        const int node = sentinel->master(deadline, &error);
        if (node < 0) *failed = failure(Outcome::Kind::Transport, error);
        return node;
    }
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

// One round: a pipeline per node of the pending attempts (grouped by node, each node's in call
// order), then every reply read. An attempt ends with its outcome, or joins `retries` with the
// reason. Nothing is done about a redirect here: the session's connections carry unread replies
// until every pipeline is read, so a cluster map refresh waits for run().
void RedisClient::exchange(Session& session, std::span<const ScriptCall> calls,
                           std::span<Outcome> outcomes, std::span<Attempt> pending,
                           std::vector<Attempt>& retries, Deadline deadline) {
    struct Pipe {
        std::size_t begin;
        std::size_t end;
        Connection* connection;
    };
    std::vector<Pipe> pipes;
    auto failFrom = [&](std::size_t from, std::size_t to, const Outcome& failed) {
        for (std::size_t k = from; k < to; ++k)
            outcomes[pending[k].call] = copyFailure(failed);
    };
    for (std::size_t begin = 0; begin < pending.size();) {
        const int node = pending[begin].node;
        std::size_t end = begin + 1;
        while (end < pending.size() && pending[end].node == node)
            ++end;
        const std::span<Attempt> group = pending.subspan(begin, end - begin);
        Outcome failed;
        Connection* c = connection(session, node, deadline, &failed);
        if (!c && failed.kind == Outcome::Kind::Transport && masterFailed(node, deadline) &&
            std::none_of(group.begin(), group.end(),
                         [](const Attempt& a) { return a.redirects >= kMaxRedirects; })) {
            // A Sentinel master gone, another named: nothing was sent, so the calls go there.
            for (Attempt& a : group) {
                ++a.redirects;
                a.node = topology_.primary();
                a.retry = Retry::Resend;
                retries.push_back(std::move(a));
            }
        } else if (!c) {
            failFrom(begin, end, failed);
        } else {
            c->resetSent();
            for (const Attempt& a : group) {
                if (a.asking) {
                    const std::string_view args[] = {"ASKING"};
                    c->append(args);
                }
                appendCall(*c, calls[a.call], a.useEval);
            }
            counters_.commands.fetch_add(static_cast<std::int64_t>(group.size()),
                                         std::memory_order_relaxed);
            if (c->flush(deadline)) {
                pipes.push_back(Pipe{begin, end, c});
            } else if (c->sent() == 0 && c->failure() != Failure::Timeout &&
                       std::none_of(group.begin(), group.end(),
                                    [](const Attempt& a) { return a.resent; })) {
                // Nothing reached the kernel: the server cannot have run them. Resend once on a
                // new connection (a server restarted under a pooled connection fails the first
                // send).
                session.connections[static_cast<std::size_t>(node)].reset();
                for (Attempt& a : group) {
                    a.resent = true;
                    a.retry = Retry::Resend;
                    retries.push_back(std::move(a));
                }
            } else {
                failFrom(begin, end, lost(session, node, *c));
                masterFailed(node, deadline);  // they may have run: the next calls go anew
            }
        }
        begin = end;
    }
    for (const Pipe& pipe : pipes) {
        const int node = pending[pipe.begin].node;
        for (std::size_t k = pipe.begin; k < pipe.end; ++k) {
            Attempt& a = pending[k];
            Reply reply = pipe.connection->read(deadline);
            if (reply && a.asking) reply = pipe.connection->read(deadline);  // after ASKING's
            if (!reply) {
                failFrom(k, pipe.end, lost(session, node, *pipe.connection));
                masterFailed(node, deadline);
                break;
            }
            topology_.node(node).answered();
            a.asking = false;  // an ASK redirect holds for one try
            if (reply->type != REDIS_REPLY_ERROR) {
                Outcome& o = outcomes[a.call];
                o.kind = Outcome::Kind::Reply;
                o.reply = std::move(reply);
                o.error.clear();
                continue;
            }
            const std::string_view answer = text(*reply);
            switch (classify(answer)) {
                case ErrorClass::NoScript:
                    a.retry = Retry::NoScript;
                    break;
                case ErrorClass::Moved:
                    a.retry = Retry::Moved;
                    break;
                case ErrorClass::Ask:
                    a.retry = Retry::Ask;
                    break;
                case ErrorClass::Retry:
                    a.retry = Retry::NotNow;
                    break;
                case ErrorClass::OutOfMemory:
                    outcomes[a.call] = failure(Outcome::Kind::Full, topology_.node(node).name() +
                                                                        ": " + std::string(answer));
                    continue;
                case ErrorClass::Refusal:
                    if (topology_.sentinel() && answer.starts_with("READONLY")) {
                        // The master the sentinels named was demoted: nothing ran; ask them.
                        a.retry = Retry::Failover;
                        break;
                    }
                    outcomes[a.call] =
                        failure(Outcome::Kind::Refused,
                                topology_.node(node).name() + ": " + std::string(answer));
                    continue;
            }
            a.answer.assign(answer);
            retries.push_back(std::move(a));
        }
    }
}

// Acts on one retried attempt's answer before it is sent again. False when the attempt ends
// here (its outcome set).
bool RedisClient::prepareRetry(Session& session, Attempt& a, Outcome& outcome, Deadline deadline,
                               std::uint64_t* seen) {
    const std::string where = topology_.node(a.node).name() + ": ";
    switch (a.retry) {
        case Retry::Resend:
        case Retry::NotNow:
            return true;
        case Retry::NoScript:
            // The script cache was flushed (restart, failover, SCRIPT FLUSH): send the script's
            // text once, which also puts it back in the cache. Inside a pipeline a NOSCRIPT
            // cannot be handled in place (Redis' advice), so every call is treated alike.
            if (a.useEval) {
                outcome = failure(Outcome::Kind::Refused,
                                  where + a.answer + " (after reloading the script)");
                return false;
            }
            a.useEval = true;
            return true;
        case Retry::Failover:
            if (++a.redirects <= kMaxRedirects && masterFailed(a.node, deadline)) {
                a.node = topology_.primary();
                return true;
            }
            outcome = failure(Outcome::Kind::Transport,
                              where + a.answer + " (no other master named by the sentinels)");
            return false;
        case Retry::Moved:
        case Retry::Ask:
            break;
    }
    int slot = 0;
    int port = 0;
    std::string host;
    if (!parseRedirect(a.answer, &slot, &host, &port)) {
        outcome = failure(Outcome::Kind::Refused, where + "unreadable redirect: " + a.answer);
        return false;
    }
    if (++a.redirects > kMaxRedirects) {
        outcome = failure(Outcome::Kind::Transport, where + "still redirected after " +
                                                        std::to_string(kMaxRedirects) +
                                                        " hops: " + a.answer);
        return false;
    }
    const int target = topology_.nodeAt(host, port);
    if (target < 0) {
        outcome = failure(Outcome::Kind::Refused, where + "too many cluster nodes");
        return false;
    }
    if (a.retry == Retry::Ask) {
        counters_.redirects.fetch_add(1, std::memory_order_relaxed);
        a.asking = true;  // a slot migrating: this key only, this time only
    } else if (topology_.nodeForSlot(slot) != target) {
        // The slot moved for good: note it, and reload the whole map (several slots usually move
        // together). Calls of one pipeline on that slot all answer MOVED; the first teaches the
        // map, the others find it taught.
        counters_.redirects.fetch_add(1, std::memory_order_relaxed);
        topology_.moveSlot(slot, target);
        refreshSlots(session, target, deadline, *seen);
        *seen = topology_.version();
    }
    a.node = target;
    return true;
}

void RedisClient::run(Session& session, std::span<const ScriptCall> calls,
                      std::span<Outcome> outcomes, Deadline deadline) {
    std::uint64_t seen = topology_.version();
    std::vector<Attempt> pending;
    pending.reserve(calls.size());
    for (std::size_t i = 0; i < calls.size(); ++i) {
        Outcome failed;
        const int node = route(session, calls[i].slot, deadline, &failed);
        if (node < 0) {
            outcomes[i] = std::move(failed);
        } else {
            pending.push_back(Attempt{});
            pending.back().call = i;
            pending.back().node = node;
        }
    }
    auto pause = std::chrono::duration_cast<Clock::duration>(kFirstRetryPause);
    std::vector<Attempt> retries;
    while (!pending.empty()) {
        // Calls on one key share a slot, hence a node: grouped by node, they keep their order.
        std::stable_sort(pending.begin(), pending.end(),
                         [](const Attempt& a, const Attempt& b) { return a.node < b.node; });
        retries.clear();
        exchange(session, calls, outcomes, pending, retries, deadline);
        // Retries are prepared and resent in call order.
        std::sort(retries.begin(), retries.end(),
                  [](const Attempt& a, const Attempt& b) { return a.call < b.call; });
        bool reloaded = false;
        bool notNow = false;
        pending.clear();
        for (Attempt& a : retries) {
            if (!prepareRetry(session, a, outcomes[a.call], deadline, &seen)) continue;
            reloaded = reloaded || a.retry == Retry::NoScript;
            notNow = notNow || a.retry == Retry::NotNow;
            pending.push_back(std::move(a));
        }
        if (reloaded) counters_.scriptLoads.fetch_add(1, std::memory_order_relaxed);
        if (!notNow) continue;
        // "Not now" (a slot migrating, a cluster without quorum, a busy script, a server loading
        // its data): pause, doubling each round, and give up at the deadline.
        if (Clock::now() + pause < deadline) {
            std::this_thread::sleep_for(pause);
            pause = std::min<Clock::duration>(2 * pause, kMaxRetryPause);
            continue;
        }
        std::erase_if(pending, [&](const Attempt& a) {
            if (a.retry != Retry::NotNow) return false;
            outcomes[a.call] =
                failure(Outcome::Kind::Transport, topology_.node(a.node).name() + ": answered '" +
                                                      a.answer + "' until the deadline");
            return true;
        });
    }
}

Outcome RedisClient::eval(const ScriptCall& call, Deadline deadline) {
    Outcome outcome;
    evalMany({&call, 1}, {&outcome, 1}, deadline);
    return outcome;
}

void RedisClient::evalMany(std::span<const ScriptCall> calls, std::span<Outcome> outcomes,
                           Deadline deadline) {
    Lease lease = acquire(deadline);
    if (!lease) {
        for (std::size_t i = 0; i < calls.size(); ++i)
            outcomes[i] = failure(Outcome::Kind::Transport,
                                  "no free connection within the timeout (pool of " +
                                      std::to_string(options_.poolSize) + ")");
        return;
    }
    run(*lease, calls, outcomes, deadline);
}

std::vector<Outcome> RedisClient::onEveryMaster(std::span<const std::string_view> args,
                                                Deadline deadline) {
    return walkEveryMaster(args, nullptr, deadline, 0);
}

std::vector<Outcome> RedisClient::walkEveryMaster(std::span<const std::string_view> args,
                                                  const WalkStep& next, Deadline deadline,
                                                  Nanos stepTimeout) {
    std::vector<Outcome> results;
    Lease lease = acquire(deadline);
    if (!lease) {
        results.push_back(failure(Outcome::Kind::Transport, "no free connection"));
        return results;
    }
    Session& session = *lease;
    if (topology_.cluster() && topology_.version() == 0) refreshSlots(session, -1, deadline, 0);
    if (SentinelMaster* sentinel = topology_.sentinel()) {
        std::string error;
        if (sentinel->master(deadline, &error) < 0) {
            results.push_back(failure(Outcome::Kind::Transport, error));
            return results;
        }
    }
    for (int node : topology_.masters()) {
        Outcome failed;
        Connection* c = connection(session, node, deadline, &failed);
        if (!c) {
            if (failed.kind == Outcome::Kind::Transport) masterFailed(node, deadline);
            results.push_back(std::move(failed));
            continue;
        }
        std::span<const std::string_view> sent = args;
        for (bool later = false;; later = true) {
            if (later) deadline = Clock::now() + std::chrono::nanoseconds(stepTimeout);
            Reply reply = c->call(sent, deadline);
            if (!reply) {
                results.push_back(lost(session, node, *c));
                masterFailed(node, deadline);
                break;
            }
            topology_.node(node).answered();
            if (reply->type == REDIS_REPLY_ERROR) {
                results.push_back(
                    failure(Outcome::Kind::Refused,
                            topology_.node(node).name() + ": " + std::string(text(*reply))));
                break;
            }
            if (next && next(*reply, &sent)) continue;
            Outcome o;
            o.kind = Outcome::Kind::Reply;
            o.reply = std::move(reply);
            results.push_back(std::move(o));
            break;
        }
    }
    return results;
}

}  // namespace ratelab::redis
