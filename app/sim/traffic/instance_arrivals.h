#pragma once

// Session and empirical arrivals (simulator internals, used by ActorTraffic): every instance
// draws its own sessions, sizes and gaps from the actor's distributions, on a random stream of
// its own, so a crowd of a thousand clients is a thousand clients with bursts of their own, not
// one rate. The instances wait in a heap ordered by their next request; a session's requests
// usually keep their instance at the top, where the heap costs two comparisons.

#include <cstdint>
#include <vector>

#include "ratelab/limit.h"
#include "sim/scenario/scenario.h"

namespace ratelab::sim {

/// A distribution ready to draw from with 64 random bits: its values, and, when they are not
/// equally likely, where the bits cross from one value to the next.
class Picker {
public:
    Picker() = default;
    /// Values are multiplied by `unit` (1e9 for seconds to be drawn in nanoseconds).
    Picker(const Distribution& d, double unit);

    bool empty() const { return values_.empty(); }
    std::size_t index(std::uint64_t bits) const;
    /// The value of the `j`-th deal (j >= 0) from decks shuffled by `key`, stratified: each
    /// round of deals (the first strata, the next, ...) takes one point from each of as many
    /// equal shares of the probability as the rarest value needs (equally likely values: one
    /// each), in an order of its own, `bits` placing it inside its share. So a client's
    /// sessions, or a crowd's clients, show the whole distribution as the log did (a session a
    /// thousand times the others comes once in a thousand, not 0 or 3 times) and each draw
    /// alone is still distributed as the values are.
    std::size_t deal(std::uint64_t key, std::int64_t j, std::uint64_t bits) const;
    Nanos nanos(std::size_t i) const { return nanos_[i]; }
    /// Value i as a whole number: rounded up with the probability of its fraction, from `bits`,
    /// so that a count's mean is the distribution's.
    std::int64_t count(std::size_t i, std::uint64_t bits) const;

private:
    /// A permutation of [0, n) chosen by `key`, at x. REQUIRES: x < n.
    static std::uint64_t permuted(std::uint64_t x, std::uint64_t n, std::uint64_t key);

    std::vector<double> values_;
    std::vector<Nanos> nanos_;
    std::vector<std::uint64_t> ceilings_;  // value i is drawn below ceilings_[i]; empty: equal
    std::uint64_t strata_ = 1;             // of a round of deals
};

/// The arrivals of one session or empirical actor, in time order. Not thread-safe.
class InstanceArrivals {
public:
    /// Instances send from `start` (each placed at random, see Arrival::total) until `end`.
    /// `seed` is the actor's own (mixSeed of the run's seed and its name).
    /// REQUIRES: actor.arrival.perInstance(), and the arrival loaded without errors.
    InstanceArrivals(const Actor& actor, std::uint64_t seed, Nanos start, Nanos end);

    /// SplitMix64: the next 64 random bits of `stream`.
    static std::uint64_t draw(std::uint64_t& stream);

    bool done() const { return heap_.empty(); }
    /// The next request's time (rounded down to the arrival's resolution) and instance.
    /// REQUIRES: !done().
    Nanos nextTime() const {
        const Nanos at = heap_.front().at;
        return resolution_ > 0 ? at / resolution_ * resolution_ : at;
    }
    std::int64_t nextInstance() const { return heap_.front().instance; }
    /// Moves past the next request. REQUIRES: !done().
    void advance();

private:
    struct Entry {
        Nanos at;  // the instance's next request
        std::int64_t instance;
        std::uint64_t stream;    // the instance's SplitMix64 state
        std::int64_t inSession;  // requests of the current session after the next one
        std::int64_t sessions;   // sessions after the current one; -1: until `end`
        Nanos spacing;           // of the current session's requests
        // What its idle gaps and its sessions' spans are multiplied by: below 1 when its
        // activity, as drawn, is longer than the time it has (see place()).
        double idleScale;
        double sessionScale;
        std::uint64_t deck;       // the key of its decks of sizes and idle gaps
        std::int64_t sizesDealt;  // sizes dealt so far
        std::int64_t idleDealt;   // idle gaps (empirical: gaps) dealt so far
    };
    struct Activity {
        Nanos sessions = 0;  // first request to last, of every session
        Nanos idle = 0;      // between them
    };
    static bool later(const Entry& x, const Entry& y) {
        return x.at > y.at || (x.at == y.at && x.instance > y.instance);
    }

    /// Starts a session: draws its size and span, and spaces its requests over the span.
    void startSession(Entry& e) const;
    /// The next idle gap (empirical: gap) of `e`, drawn from its stream.
    Nanos idle(Entry& e) const;
    /// The time `sessions` sessions of `e` take, and the idle gaps between them, drawn as the
    /// instance will draw them; any sum from `limit` on once it passes it.
    Activity activity(Entry e, std::int64_t sessions, Nanos limit) const;
    Entry place(std::int64_t instance, std::uint64_t seed, Nanos start, Nanos span) const;
    void siftDown(std::size_t i);

    bool sessionsOfOne_;  // empirical: every request is a session of its own
    Picker total_;
    Picker sizes_;
    std::vector<Nanos> spans_;  // paired with sizes_ (or one value)
    Picker idle_;               // empirical: its gaps
    Nanos end_;
    Nanos resolution_;
    std::uint64_t deck_ = 0;  // the key of the deck the instances' totals are dealt from
    std::vector<Entry> heap_;
};

}  // namespace ratelab::sim
