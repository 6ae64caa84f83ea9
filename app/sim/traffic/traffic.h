#pragma once

// Traffic generation (simulator internals): each actor's arrival process merged in time order,
// and the request each arrival sends, written into a reusable slot without allocating.

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ratelab/ip_address.h"
#include "ratelab/limit.h"
#include "ratelab/request.h"
#include "sim/log/replay_source.h"
#include "sim/scenario/scenario.h"
#include "sim/traffic/instance_arrivals.h"
#include "sim/traffic/twister.h"

namespace ratelab::sim {

/// SplitMix64: derives independent seeds (per actor, per replica) from the scenario's seed.
std::uint64_t mixSeed(std::uint64_t seed, std::uint64_t salt);
/// FNV-1a of a name, so streams are keyed by actor name: adding an actor perturbs no other.
std::uint64_t nameHash(std::string_view name);

/// The request one arrival sends. Views point into the slot and the scenario; valid until the
/// slot is written again.
struct RequestSlot {
    static constexpr std::size_t kMaxHeaders = 16;  // the actor's 12, Authorization, forwarded
    static constexpr std::size_t kMaxAttributes = 8;
    Header headers[kMaxHeaders];
    std::size_t headerCount = 0;
    IpAddress peer;
    bool hasPeer = false;
    std::string_view method;
    std::string_view path;
    std::string_view principal;
    std::span<const Attribute> attributes;
    std::int64_t cost = 0;
    /// The status the service answers if the request passes: drawn from the actor's response
    /// model (200 without one); a replay's logged status, 0 when the log has none.
    int status = 200;
    /// Which of the actor's instances sends it (a replay in memory: the client's index into
    /// RecordedTraffic::clients; a streamed replay: 0).
    std::int64_t instance = 0;
    /// Replays: the client field as written, and the line it came from (file index into the
    /// log's files, 1-based line). Empty and 0 otherwise.
    std::string_view clientText;
    std::uint32_t logFile = 0;
    std::int64_t logLine = 0;
    /// Replays: the headers the log recorded, used instead of `headers` when set (a log may
    /// record more than kMaxHeaders).
    std::span<const Header> loggedHeaders;

    char authorization[80];
    char forwarded[128];
    char principalText[96];
    Attribute attributeStore[kMaxAttributes];            // attributes with "{instance}" written out
    char scratch[(kMaxHeaders + kMaxAttributes) * 224];  // their values

    /// Points `v` at this request. Written field by field into the caller's view: building a
    /// RequestView and assigning it made g++ copy the 96 bytes back with loads that straddle
    /// the stores just made, a store-forwarding stall on every simulated request.
    void writeView(RequestView& v) const {
        v.method = method;
        v.path = path;
        v.headers =
            loggedHeaders.empty() ? std::span<const Header>(headers, headerCount) : loggedHeaders;
        v.peer = hasPeer ? &peer : nullptr;
        v.principal = principal;
        v.attributes = attributes;
        v.cost = cost;
    }
};

/// One actor's arrivals, in time order, and the requests they send.
/// Not thread-safe.
class ActorTraffic {
public:
    /// `end` is the scenario's duration; arrivals at or after it (or the actor's stop) are not
    /// produced. `seed` is the run's seed.
    ActorTraffic(const Actor& actor, std::uint64_t seed, Nanos end);
    ~ActorTraffic();
    ActorTraffic(const ActorTraffic&) = delete;
    ActorTraffic& operator=(const ActorTraffic&) = delete;

    /// Time of the next arrival; kNever when the actor is done.
    Nanos nextTime() const { return next_; }
    /// Writes the next arrival's request into `slot` and moves to the following arrival.
    /// REQUIRES: nextTime() != kNever.
    void writeNext(RequestSlot& slot);

    static constexpr Nanos kNever = std::numeric_limits<Nanos>::max();

private:
    void schedule();  // computes next_ and nextInstance_
    void writePeer(std::int64_t instance, IpAddress& out);
    std::uint64_t uniform(std::uint64_t n);  // [0, n)
    double unit();                           // [0, 1)

    const Actor& actor_;
    Nanos end_;
    Nanos next_ = kNever;
    std::int64_t nextInstance_ = 0;
    std::uint64_t actorSeed_;
    Twister64 arrivalRng_;
    Twister64 identityRng_;
    Twister64 responseRng_;  // its own stream: a response model perturbs no arrival
    // A header or attribute value, split around "{instance}" when it holds one.
    struct Field {
        std::string_view name;
        std::string_view value;   // as written
        std::string_view prefix;  // templated: before and after "{instance}"
        std::string_view suffix;
        bool templated = false;
    };
    static Field makeField(std::string_view name, std::string_view value);
    static std::string_view writeField(const Field& f, std::int64_t instance, char*& scratch);

    std::vector<Attribute> attributes_;  // as written, when none is templated
    std::vector<Field> attributeFields_;
    bool attributesTemplated_ = false;
    std::vector<Field> headerFields_;

    // Arrival state.
    std::int64_t k_ = 0;    // arrivals produced so far
    double phase_ = 0;      // constant/ramp: offset of the first arrival, in ns or units
    double interval_ = 0;   // constant: ns between the aggregate's arrivals
    double clock_ = 0;      // poisson: time of the latest arrival, ns since the actor's start
    double rampRate0_ = 0;  // ramp: aggregate rate at start and at the ramp's end, per ns
    double rampRate1_ = 0;
    double rampLength_ = 0;  // ns
    struct BurstEntry {
        Nanos at;  // the instance's next request
        std::int64_t instance;
        std::int64_t sent;  // requests of the current burst already sent
    };
    static bool burstLater(const BurstEntry& x, const BurstEntry& y) {
        return x.at > y.at || (x.at == y.at && x.instance > y.instance);
    }
    std::vector<BurstEntry> burstHeap_;
    // Session and empirical arrivals.
    std::unique_ptr<InstanceArrivals> instanceArrivals_;

    // Replay state.
    std::unique_ptr<RecordedCursor> recorded_;
};

struct ReplayedLine;  // record_stream.h
/// Writes a replayed line into `slot` as the live request would have arrived: the logged
/// client as the peer, the logged headers (X-Forwarded-For, Authorization, API keys), method
/// and path, so the policy's own key rules decide its key. A host-name client (old traces)
/// becomes the verified principal, from syntheticPeer(name).
void writeReplayedRequest(const ReplayedLine& line, RequestSlot& slot);

/// Merges the actors' arrivals in time order; equal times go to the lower actor index.
/// Not thread-safe.
class TrafficMix {
public:
    TrafficMix(const std::vector<Actor>& actors, std::uint64_t seed, Nanos end);

    Nanos nextTime() const { return heap_.empty() ? ActorTraffic::kNever : heap_.front().at; }
    /// Writes the next request into `slot`; returns its actor's index.
    /// REQUIRES: nextTime() != kNever.
    int writeNext(RequestSlot& slot);

private:
    struct Entry {
        Nanos at;
        int actor;
    };
    void siftDown(std::size_t i);
    static bool before(const Entry& a, const Entry& b) {
        return a.at < b.at || (a.at == b.at && a.actor < b.actor);
    }

    std::vector<std::unique_ptr<ActorTraffic>> actors_;
    std::vector<Entry> heap_;
};

}  // namespace ratelab::sim
