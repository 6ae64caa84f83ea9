#pragma once

// Runs the store's scripts on Redis: a pool of sessions (one connection per node each), slot
// routing for Redis Cluster with MOVED/ASK, NOSCRIPT reloads, TRYAGAIN-class retries with backoff,
// all within one deadline per call; pipelining for batches. Knows nothing of rate limits: the
// store encodes requests into ScriptCalls and decodes the replies.

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "redis/lua_scripts.h"
#include "redis/redis_connection.h"
#include "redis/topology.h"

namespace ratelab::redis {

/// One EVALSHA: "EVALSHA <sha1 of script> <args...>", args being numkeys, keys and ARGV.
struct ScriptCall {
    ScriptId script = ScriptId::Rate;
    int slot = 0;  ///< the cluster slot of every key (they share a hash tag)
    std::span<const std::string_view> args;
};

struct Outcome {
    /// Full: the server is out of memory (maxmemory reached); Refused: any other error reply.
    enum class Kind : std::uint8_t { Reply, Transport, Refused, Full };
    Kind kind = Kind::Transport;
    Reply reply;        ///< Kind::Reply: the script's answer (never an error reply)
    std::string error;  ///< otherwise: what happened, naming the node
};

struct ClientOptions {
    std::vector<Endpoint> seeds;
    bool cluster = false;
    int poolSize = 8;
    Nanos connectTimeout = 200 * 1'000'000;
    Nanos backoffMin = 10 * 1'000'000;
    Nanos backoffMax = 500 * 1'000'000;
};

struct ClientCounters {
    std::atomic<std::int64_t> commands{0};
    std::atomic<std::int64_t> connects{0};
    std::atomic<std::int64_t> connectFailures{0};
    std::atomic<std::int64_t> scriptLoads{0};
    std::atomic<std::int64_t> redirects{0};
};

/// Thread-safe.
class RedisClient {
public:
    explicit RedisClient(ClientOptions options);
    ~RedisClient();

    /// Runs one script call atomically on the node serving its slot, before `deadline`.
    Outcome eval(const ScriptCall& call, Deadline deadline);
    /// Runs calls in order, each atomically, pipelined per node: outcomes[i] answers calls[i].
    void evalMany(std::span<const ScriptCall> calls, std::span<Outcome> outcomes,
                  Deadline deadline);
    /// Runs one command on every master (standalone: the server). One outcome per master.
    std::vector<Outcome> onEveryMaster(std::span<const std::string_view> args, Deadline deadline);

    /// After each reply of a walk, whether to run another command on the same node (a cursor's
    /// next step): `next(reply, &args)` takes the reply and, to go on, points args at the
    /// command to send and returns true. Called on one thread, one master after another.
    using WalkStep =
        std::function<bool(const redisReply& reply, std::span<const std::string_view>* args)>;
    /// Walks every master (standalone: the server): runs `args` there, then what `next` asks
    /// for, on that node, until it stops. One outcome per master: its last reply, or where the
    /// walk failed. A null `next` runs `args` once per master. `deadline` bounds the walk to
    /// its second command; each later one is bounded by `stepTimeout` from when it is sent.
    std::vector<Outcome> walkEveryMaster(std::span<const std::string_view> args,
                                         const WalkStep& next, Deadline deadline,
                                         Nanos stepTimeout);

    const ClientCounters& counters() const { return counters_; }
    Topology& topology() { return topology_; }

private:
    struct Session;
    class Lease;

    Lease acquire(Deadline deadline);
    void release(Session* session);

    /// The session's connection to `node`, connected and prepared (AUTH, SELECT, SCRIPT LOAD)
    /// when needed. Null when the node backs off or the connect fails (*failure says which kind).
    Connection* connection(Session& session, int node, Deadline deadline, Outcome* failure);
    bool handshake(Connection& connection, const Node& node, Deadline deadline, std::string* error,
                   bool* refused);
    /// After an I/O failure on a connection: drops it and tells the caller how it ended.
    Outcome lost(Session& session, int node, Connection& connection);
    /// A Sentinel topology's master `node` failed as a gone or demoted master does: the
    /// sentinels are asked again (SentinelMaster::failed). True when another master is named.
    bool masterFailed(int node, Deadline deadline);

    /// The node for `slot`; refreshes an empty cluster map first. -1 with *failure set if none.
    int route(Session& session, int slot, Deadline deadline, Outcome* failure);
    /// Reloads the cluster map from `preferred`, else any known node, unless it changed since
    /// `seenVersion`. Returns why no node answered (empty on success); *refused (if given) says
    /// whether every node tried refused the connection (AUTH, SCRIPT LOAD) rather than failing.
    std::string refreshSlots(Session& session, int preferred, Deadline deadline,
                             std::uint64_t seenVersion, bool* refused = nullptr);

    /// Why an attempt is sent again.
    enum class Retry : std::uint8_t { Resend, NoScript, Moved, Ask, NotNow, Failover };
    /// One call's way through its retries.
    struct Attempt {
        std::size_t call = 0;  ///< index into the calls
        int node = -1;
        bool asking = false;   ///< an ASK redirect: ASKING goes first, this try only
        bool useEval = false;  ///< NOSCRIPT answered: the script's text goes instead of its SHA1
        bool resent = false;   ///< already sent again on a new connection
        int redirects = 0;
        Retry retry = Retry::Resend;
        std::string answer;  ///< the error reply it is retried after
    };

    /// The one retry loop of eval() and evalMany(): rounds of exchange() until every call has
    /// its outcome, redirects followed, NOSCRIPT answered with the script's text, "not now"
    /// answers retried with backoff, all before `deadline`.
    void run(Session& session, std::span<const ScriptCall> calls, std::span<Outcome> outcomes,
             Deadline deadline);
    void exchange(Session& session, std::span<const ScriptCall> calls, std::span<Outcome> outcomes,
                  std::span<Attempt> pending, std::vector<Attempt>& retries, Deadline deadline);
    bool prepareRetry(Session& session, Attempt& attempt, Outcome& outcome, Deadline deadline,
                      std::uint64_t* seen);
    void appendCall(Connection& connection, const ScriptCall& call, bool useEval);

    const ClientOptions options_;
    Topology topology_;
    ClientCounters counters_;

    std::mutex poolMutex_;
    std::condition_variable poolFree_;
    std::vector<std::unique_ptr<Session>> sessions_;
    std::vector<Session*> idle_;
    std::mutex refreshMutex_;
    std::condition_variable refreshDone_;
    bool refreshing_ = false;  ///< guarded by refreshMutex_
};

}  // namespace ratelab::redis
