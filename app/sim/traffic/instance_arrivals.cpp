#include "sim/traffic/instance_arrivals.h"

#include <algorithm>
#include <cmath>

#include "sim/traffic/traffic.h"  // mixSeed

namespace ratelab::sim {

namespace {

// An instance whose activity, drawn session by session, is longer than the time it has is
// compressed to fit: its idle gaps first (its bursts stay as they were), then its sessions too.
// Drawing again until a draw fits (or cutting at `end`) would keep the short draws and lose
// requests; compressing keeps every drawn request, so an actor sends its clients' mean. Past
// this many times the time it has, an activity is cut at `end` instead (a total far beyond
// what the actor's clients showed).
constexpr double kMostCompression = 64;
// Salts of an instance's stream for where it is placed, and of the actor's for the deck its
// instances' totals are dealt from.
constexpr std::uint64_t kPlaceSalt = 0x706c616365;
constexpr std::uint64_t kDeckSalt = 0x6465636b;
// Strata of a deal from values of unequal probabilities, at most (a value rarer than one in
// this many may come twice in a round, or not at all).
constexpr double kMostStrata = 1 << 24;

std::vector<Nanos> nanosOf(const Distribution& d) {
    std::vector<Nanos> out;
    out.reserve(d.values.size());
    for (double seconds : d.values)
        out.push_back(static_cast<Nanos>(std::llround(seconds * 1e9)));
    return out;
}

// Uniform in [0, n].
Nanos uniformUpTo(Nanos n, std::uint64_t bits) {
    return static_cast<Nanos>(
        (static_cast<unsigned __int128>(bits) * (static_cast<std::uint64_t>(n) + 1)) >> 64);
}

}  // namespace

std::uint64_t InstanceArrivals::draw(std::uint64_t& stream) {
    // SplitMix64: the stream's state advances by the golden gamma, the output is its mix.
    stream += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = stream;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

Picker::Picker(const Distribution& d, double unit) : values_(d.values) {
    for (double v : d.values)
        nanos_.push_back(static_cast<Nanos>(std::llround(v * unit)));
    strata_ = values_.size();
    if (d.probabilities.empty()) return;
    // As many strata as the rarest value needs to come once a round.
    double rarest = 1;
    for (std::size_t i = 0; i < d.values.size(); ++i) {
        if (d.probability(i) > 0) rarest = std::min(rarest, d.probability(i));
    }
    strata_ = static_cast<std::uint64_t>(std::min(kMostStrata, std::ceil(1 / rarest)));
    double below = 0;
    for (std::size_t i = 0; i < d.values.size(); ++i) {
        below += d.probability(i);
        ceilings_.push_back(i + 1 == d.values.size() || below >= 1
                                ? UINT64_MAX
                                : static_cast<std::uint64_t>(std::ldexp(below, 64)));
    }
}

std::size_t Picker::index(std::uint64_t bits) const {
    if (ceilings_.empty()) {
        return static_cast<std::size_t>((static_cast<unsigned __int128>(bits) * values_.size()) >>
                                        64);
    }
    const auto it = std::upper_bound(ceilings_.begin(), ceilings_.end(), bits);
    return std::min<std::size_t>(static_cast<std::size_t>(it - ceilings_.begin()),
                                 values_.size() - 1);
}

std::size_t Picker::deal(std::uint64_t key, std::int64_t j, std::uint64_t bits) const {
    const auto dealt = static_cast<std::uint64_t>(j);
    const std::uint64_t stratum = permuted(dealt % strata_, strata_, mixSeed(key, dealt / strata_));
    if (ceilings_.empty()) return static_cast<std::size_t>(stratum);  // one value a stratum
    // A point of the stratum's share of the 64-bit numbers, placed in it by `bits`.
    const auto width =
        static_cast<std::uint64_t>((static_cast<unsigned __int128>(1) << 64) / strata_);
    const auto within =
        static_cast<std::uint64_t>((static_cast<unsigned __int128>(bits) * width) >> 64);
    return index(stratum * width + within);
}

std::int64_t Picker::count(std::size_t i, std::uint64_t bits) const {
    const double fraction = static_cast<double>(bits >> 11) * 0x1.0p-53;  // uniform in [0, 1)
    const double whole = std::floor(values_[i]);
    return static_cast<std::int64_t>(whole) + (fraction < values_[i] - whole ? 1 : 0);
}

std::uint64_t Picker::permuted(std::uint64_t x, std::uint64_t n, std::uint64_t key) {
    // A Feistel network over the smallest even number of bits holding n is a bijection of
    // those numbers; walking its cycle from x until it lands below n is a bijection of [0, n).
    int half = 1;
    while ((std::uint64_t(1) << (2 * half)) < n)
        ++half;
    const std::uint64_t mask = (std::uint64_t(1) << half) - 1;
    do {
        std::uint64_t left = x >> half;
        std::uint64_t right = x & mask;
        for (std::uint64_t r = 0; r < 4; ++r) {
            std::uint64_t state = key ^ (r << 56) ^ right;
            const std::uint64_t f = InstanceArrivals::draw(state) & mask;
            const std::uint64_t next = left ^ f;
            left = right;
            right = next;
        }
        x = left << half | right;
    } while (x >= n);
    return x;
}

InstanceArrivals::InstanceArrivals(const Actor& actor, std::uint64_t seed, Nanos start, Nanos end)
    : sessionsOfOne_(actor.arrival.kind == Arrival::Kind::Empirical)
    , sizes_(actor.arrival.sessionSize, 1)
    , spans_(nanosOf(actor.arrival.sessionSpan))
    , idle_(sessionsOfOne_       ? Picker(actor.arrival.gaps, 1e9)
            : actor.arrival.idle ? Picker(*actor.arrival.idle, 1e9)
                                 : Picker())
    , end_(end)
    , resolution_(actor.arrival.resolution) {
    if (actor.arrival.total) total_ = Picker(*actor.arrival.total, 1);
    deck_ = mixSeed(seed, kDeckSalt);
    const Nanos span = end - start;
    if (span <= 0) return;
    heap_.reserve(static_cast<std::size_t>(actor.count));
    for (std::int64_t i = 0; i < actor.count; ++i) {
        const Entry e = place(i, mixSeed(seed, static_cast<std::uint64_t>(i)), start, span);
        if (e.at < end_) heap_.push_back(e);
    }
    std::make_heap(heap_.begin(), heap_.end(), later);
}

void InstanceArrivals::startSession(Entry& e) const {
    e.spacing = 0;
    if (sessionsOfOne_) {
        e.inSession = 0;
        return;
    }
    // The size, dealt, picks its span with it.
    const std::size_t i = sizes_.deal(e.deck, e.sizesDealt++, draw(e.stream));
    e.inSession = std::max<std::int64_t>(1, sizes_.count(i, draw(e.stream))) - 1;
    if (e.inSession == 0) return;
    const Nanos span = spans_.size() == 1 ? spans_.front() : spans_[i];
    e.spacing = static_cast<Nanos>(static_cast<double>(span / e.inSession) * e.sessionScale);
}

Nanos InstanceArrivals::idle(Entry& e) const {
    const std::size_t i = idle_.deal(e.deck + 1, e.idleDealt++, draw(e.stream));
    return static_cast<Nanos>(static_cast<double>(idle_.nanos(i)) * e.idleScale);
}

InstanceArrivals::Activity InstanceArrivals::activity(Entry e, std::int64_t sessions,
                                                      Nanos limit) const {
    Activity used;
    for (std::int64_t s = 0; s < sessions && used.sessions + used.idle < limit; ++s) {
        startSession(e);
        used.sessions += e.spacing * e.inSession;
        if (s + 1 < sessions) used.idle += idle(e);
    }
    return used;
}

InstanceArrivals::Entry InstanceArrivals::place(std::int64_t instance, std::uint64_t seed,
                                                Nanos start, Nanos span) const {
    Entry e{start, instance, seed, 0, -1, 0, 1.0, 1.0, mixSeed(seed, kDeckSalt), 0, 0};
    // An empirical arrival without a total, or a session one with idle gaps and no total,
    // sends until stop; a session one without idle gaps sends one session.
    std::int64_t sessions = -1;
    if (!total_.empty()) {
        // Dealt over the instances: a crowd's totals are its clients' totals.
        const std::size_t i = total_.deal(deck_, instance, draw(e.stream));
        sessions = std::max<std::int64_t>(1, total_.count(i, draw(e.stream)));
    } else if (!sessionsOfOne_ && idle_.empty()) {
        sessions = 1;
    }
    Nanos offset = 0;
    if (sessions > 0) {
        // Placed at random where the whole activity fits, compressed when it is longer.
        const double room = static_cast<double>(span - 1);
        const Activity used = activity(e, sessions, static_cast<Nanos>(kMostCompression * room));
        const auto busy = static_cast<double>(used.sessions);
        const auto idle = static_cast<double>(used.idle);
        if (busy + idle <= room) {
            offset =
                uniformUpTo(span - 1 - used.sessions - used.idle, mixSeed(e.stream, kPlaceSalt));
        } else if (busy + idle <= kMostCompression * room) {
            if (busy < room) {
                e.idleScale = (room - busy) / idle;
            } else {
                e.idleScale = e.sessionScale = room / (busy + idle);
            }
        }
    } else {
        // Running until stop: the first session starts somewhere in an idle gap.
        offset = uniformUpTo(idle(e), draw(e.stream));
    }
    e.at = start + offset;
    e.sessions = sessions > 0 ? sessions - 1 : -1;
    startSession(e);
    return e;
}

void InstanceArrivals::advance() {
    Entry& e = heap_.front();
    if (e.inSession > 0) {
        e.at += e.spacing;
        --e.inSession;
    } else if (e.sessions != 0) {
        e.at += idle(e);
        startSession(e);
        if (e.sessions > 0) --e.sessions;
    } else {
        e.at = end_;
    }
    if (e.at >= end_) {
        heap_.front() = heap_.back();
        heap_.pop_back();
        if (heap_.empty()) return;
    }
    siftDown(0);
}

void InstanceArrivals::siftDown(std::size_t i) {
    const std::size_t n = heap_.size();
    const Entry moving = heap_[i];
    for (;;) {
        std::size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && later(heap_[child], heap_[child + 1])) ++child;
        if (!later(moving, heap_[child])) break;
        heap_[i] = heap_[child];
        i = child;
    }
    heap_[i] = moving;
}

}  // namespace ratelab::sim
