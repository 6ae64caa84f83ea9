#include "sim/traffic/traffic.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "support/hex.h"
#include "sim/log/record_stream.h"

namespace ratelab::sim {

namespace {

char* writeHex(char* out, std::uint64_t value) {
    writeHex64(value, out);
    return out + 16;
}

char* writeText(char* out, std::string_view text) {
    std::memcpy(out, text.data(), text.size());
    return out + text.size();
}

char* writeDecimal(char* out, std::uint64_t value) {
    char digits[20];
    int n = 0;
    do {
        digits[n++] = static_cast<char>('0' + value % 10);
        value /= 10;
    } while (value != 0);
    while (n > 0)
        *out++ = digits[--n];
    return out;
}

// Sets every bit of `address` at position >= `from` (0 = the most significant) to random bits
// from `words`, leaving the bits before it as they are.
void randomizeFrom(std::array<std::uint8_t, 16>& bytes, int from, int to, std::uint64_t hi,
                   std::uint64_t lo) {
    for (int bit = from; bit < to; ++bit) {
        std::uint64_t word = bit < 64 ? hi : lo;
        int shift = 63 - (bit & 63);
        std::uint8_t value = static_cast<std::uint8_t>((word >> shift) & 1u);
        std::uint8_t mask = static_cast<std::uint8_t>(0x80u >> (bit & 7));
        bytes[bit / 8] = static_cast<std::uint8_t>((bytes[bit / 8] & ~mask) | (value ? mask : 0));
    }
}

// Writes `address` as a forwarded header value in the style of `header`.
char* writeForwardedAddress(char* out, std::string_view header, const IpAddress& address) {
    char text[64];
    std::size_t n = address.format(text);
    if (header == "forwarded") {
        if (address.isV4()) {
            out = writeText(out, "for=");
            return writeText(out, std::string_view(text, n));
        }
        out = writeText(out, "for=\"[");
        out = writeText(out, std::string_view(text, n));
        return writeText(out, "]\"");
    }
    return writeText(out, std::string_view(text, n));
}

}  // namespace

std::uint64_t mixSeed(std::uint64_t seed, std::uint64_t salt) {
    std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (salt + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

std::uint64_t nameHash(std::string_view name) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : name) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    return h;
}

// --- ActorTraffic ---------------------------------------------------------------------------

ActorTraffic::ActorTraffic(const Actor& actor, std::uint64_t seed, Nanos end)
    : actor_(actor)
    , end_(std::min(end, actor.stop.value_or(end)))
    , actorSeed_(mixSeed(seed, nameHash(actor.name)))
    , arrivalRng_(mixSeed(actorSeed_, 1))
    , identityRng_(mixSeed(actorSeed_, 2))
    // Salts 3 and up name the instances' tokens; this one lies far above any instance.
    , responseRng_(mixSeed(actorSeed_, 0x726573706f6e7365)) {
    for (const auto& [name, value] : actor.identity.attributes) {
        attributes_.push_back(Attribute{name, value});
        attributeFields_.push_back(makeField(name, value));
        attributesTemplated_ = attributesTemplated_ || attributeFields_.back().templated;
    }
    for (const auto& [name, value] : actor.headers)
        headerFields_.push_back(makeField(name, value));
    if (actor.recorded) {
        recorded_ = actor.recorded->open();
        schedule();
        return;
    }
    const double instances = static_cast<double>(actor.count);
    const Arrival& a = actor.arrival;
    switch (a.kind) {
        case Arrival::Kind::Constant:
            interval_ = 1e9 / (a.ratePerSecond * instances);
            phase_ = unit() * interval_;
            break;
        case Arrival::Kind::Poisson:
            interval_ = 1e9 / (a.ratePerSecond * instances);  // mean gap
            break;
        case Arrival::Kind::Ramp:
            rampRate0_ = a.fromPerSecond * instances / 1e9;
            rampRate1_ = a.toPerSecond * instances / 1e9;
            rampLength_ = static_cast<double>(a.rampOver > 0 ? a.rampOver : end_ - actor.start);
            if (rampLength_ <= 0) rampLength_ = 1;
            phase_ = unit();
            break;
        case Arrival::Kind::Burst: {
            burstHeap_.reserve(static_cast<std::size_t>(actor.count));
            for (std::int64_t i = 0; i < actor.count; ++i) {
                const Nanos offset =
                    a.burstPhase
                        ? *a.burstPhase
                        : static_cast<Nanos>(uniform(static_cast<std::uint64_t>(a.burstEvery)));
                burstHeap_.push_back(BurstEntry{actor.start + offset, i, 0});
            }
            std::make_heap(burstHeap_.begin(), burstHeap_.end(), burstLater);
            break;
        }
        case Arrival::Kind::Session:
        case Arrival::Kind::Empirical:
            // Salts 3 and up name the instances' tokens; this one lies far above any instance.
            instanceArrivals_ = std::make_unique<InstanceArrivals>(
                actor, mixSeed(actorSeed_, 0x696e7374616e6365), actor.start, end_);
            break;
    }
    schedule();
}

ActorTraffic::~ActorTraffic() = default;

std::uint64_t ActorTraffic::uniform(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(arrivalRng_()) * n) >> 64);
}

double ActorTraffic::unit() {
    return static_cast<double>(arrivalRng_() >> 11) * 0x1.0p-53;
}

void ActorTraffic::schedule() {
    const Nanos start = actor_.start;
    double offset = 0;  // ns since the actor's start
    if (recorded_) {
        const Nanos at = recorded_->nextTime();
        next_ = at == RecordedCursor::kEndOfLog || at >= end_ - start ? kNever : start + at;
        return;
    }
    switch (actor_.arrival.kind) {
        case Arrival::Kind::Constant:
            offset = phase_ + static_cast<double>(k_) * interval_;
            break;
        case Arrival::Kind::Poisson:
            clock_ += -std::log1p(-unit()) * interval_;
            offset = clock_;
            nextInstance_ =
                static_cast<std::int64_t>(uniform(static_cast<std::uint64_t>(actor_.count)));
            break;
        case Arrival::Kind::Ramp: {
            // The aggregate's expected count by time t is L(t) = r0 t + (r1 - r0) t^2 / (2T) over
            // the ramp, then r1 per ns; arrival m lands where L(t) = m (phase in [0, 1)).
            const double m = static_cast<double>(k_) + phase_;
            const double c1 = rampRate0_;
            const double c2 = (rampRate1_ - rampRate0_) / (2 * rampLength_);
            const double atEnd = c1 * rampLength_ + c2 * rampLength_ * rampLength_;
            if (m <= atEnd) {
                const double disc = c1 * c1 + 4 * c2 * m;
                const double root = std::sqrt(std::max(0.0, disc));
                offset = (c1 + root) > 0 ? 2 * m / (c1 + root) : rampLength_;
            } else if (rampRate1_ > 0) {
                offset = rampLength_ + (m - atEnd) / rampRate1_;
            } else {
                next_ = kNever;
                return;
            }
            break;
        }
        case Arrival::Kind::Burst: {
            const BurstEntry& top = burstHeap_.front();
            next_ = top.at;
            nextInstance_ = top.instance;
            if (next_ >= end_) next_ = kNever;
            return;
        }
        case Arrival::Kind::Session:
        case Arrival::Kind::Empirical:
            if (instanceArrivals_->done()) {
                next_ = kNever;
            } else {
                next_ = instanceArrivals_->nextTime();
                nextInstance_ = instanceArrivals_->nextInstance();
            }
            return;
    }
    if (!(offset < static_cast<double>(end_ - start))) {
        next_ = kNever;
        return;
    }
    next_ = start + static_cast<Nanos>(offset);
}

void ActorTraffic::writePeer(std::int64_t instance, IpAddress& out) {
    const PeerSpec& p = actor_.identity.peer;
    switch (p.kind) {
        case PeerSpec::Kind::None:
            return;
        case PeerSpec::Kind::Ipv4:
        case PeerSpec::Kind::Nat:
        case PeerSpec::Kind::Ipv6:
            out = p.address;
            return;
        case PeerSpec::Kind::Ipv4Pool: {
            const std::uint64_t size = std::uint64_t(1) << (32 - p.cidr.prefixLength());
            // Skip the network's own address when the pool has room to spare.
            const std::uint64_t skip = size > static_cast<std::uint64_t>(actor_.count) ? 1 : 0;
            const std::uint64_t offset = (static_cast<std::uint64_t>(instance) + skip) % size;
            out = IpAddress::fromV4(p.cidr.network().v4() + static_cast<std::uint32_t>(offset));
            return;
        }
        case PeerSpec::Kind::Ipv6Rotate: {
            std::array<std::uint8_t, 16> bytes = p.cidr.network().bytes();
            randomizeFrom(bytes, p.cidr.prefixLength(), 128, identityRng_(), identityRng_());
            out = IpAddress::fromBytes(bytes);
            return;
        }
        case PeerSpec::Kind::Ipv4Rotate: {
            // The host bits from the top of one draw (a /32 has none).
            const int prefix = p.cidr.prefixLength();
            const std::uint64_t draw = identityRng_();
            const std::uint32_t host =
                prefix >= 32 ? 0 : static_cast<std::uint32_t>(draw >> (32 + prefix));
            out = IpAddress::fromV4(p.cidr.network().v4() | host);
            return;
        }
        case PeerSpec::Kind::Ipv6PrefixRotate: {
            std::array<std::uint8_t, 16> bytes = p.cidr.network().bytes();
            const std::uint64_t hi = identityRng_();
            const std::uint64_t lo = identityRng_();
            randomizeFrom(bytes, p.cidr.prefixLength(), p.prefixLength, hi, lo);
            randomizeFrom(bytes, std::max(p.prefixLength, 64), 128, hi, lo);
            out = IpAddress::fromBytes(bytes);
            return;
        }
    }
}

void ActorTraffic::writeNext(RequestSlot& slot) {
    slot.headerCount = 0;
    slot.principal = {};
    slot.clientText = {};
    slot.instance = 0;
    slot.hasPeer = false;
    slot.loggedHeaders = {};
    slot.logLine = 0;
    if (recorded_) {
        recorded_->writeNext(slot);
        schedule();
        return;
    }

    const std::int64_t instance = nextInstance_;
    slot.instance = instance;
    const Identity& id = actor_.identity;
    slot.method = actor_.method;
    slot.path = actor_.path;
    slot.cost = actor_.cost;
    slot.status = 200;
    if (actor_.response.kind != ResponseModel::Kind::None) {
        slot.status = actor_.response.status(static_cast<double>(responseRng_() >> 11) * 0x1.0p-53);
    }
    char* scratch = slot.scratch;
    for (const Field& f : headerFields_) {
        slot.headers[slot.headerCount++] = Header{f.name, writeField(f, instance, scratch)};
    }
    if (!attributesTemplated_) {
        slot.attributes = attributes_;
    } else {
        for (std::size_t i = 0; i < attributeFields_.size(); ++i) {
            const Field& f = attributeFields_[i];
            slot.attributeStore[i] = Attribute{f.name, writeField(f, instance, scratch)};
        }
        slot.attributes = std::span<const Attribute>(slot.attributeStore, attributeFields_.size());
    }

    switch (id.authorization) {
        case AuthorizationMode::None:
            break;
        case AuthorizationMode::Fixed: {
            char* end = writeText(slot.authorization, "Bearer t");
            end = writeHex(end, mixSeed(actorSeed_, 3 + static_cast<std::uint64_t>(instance)));
            slot.headers[slot.headerCount++] = Header{
                "authorization", std::string_view(slot.authorization, end - slot.authorization)};
            break;
        }
        case AuthorizationMode::Rotate: {
            char* end = writeText(slot.authorization, "Bearer r");
            end = writeHex(end, identityRng_());
            end = writeHex(end, identityRng_());
            slot.headers[slot.headerCount++] = Header{
                "authorization", std::string_view(slot.authorization, end - slot.authorization)};
            break;
        }
    }

    if (id.principal == PrincipalMode::Fixed) {
        char* end = slot.principalText;
        end = writeText(end, std::string_view(actor_.name).substr(0, 64));
        *end++ = '-';
        end = writeDecimal(end, static_cast<std::uint64_t>(instance));
        slot.principal = std::string_view(slot.principalText, end - slot.principalText);
    }

    if (id.peer.kind != PeerSpec::Kind::None) {
        writePeer(instance, slot.peer);
        slot.hasPeer = true;
    }

    const std::string_view header = id.forwarded.header;
    switch (id.forwarded.kind) {
        case ForwardedSpec::Kind::None:
            break;
        case ForwardedSpec::Kind::SpoofRandom: {
            IpAddress spoofed = IpAddress::fromV4(static_cast<std::uint32_t>(identityRng_()));
            char* end = writeForwardedAddress(slot.forwarded, header, spoofed);
            slot.headers[slot.headerCount++] =
                Header{header, std::string_view(slot.forwarded, end - slot.forwarded)};
            break;
        }
        case ForwardedSpec::Kind::ViaProxy:
        case ForwardedSpec::Kind::SpoofViaProxy: {
            char* end = slot.forwarded;
            if (id.forwarded.kind == ForwardedSpec::Kind::SpoofViaProxy) {
                IpAddress spoofed = IpAddress::fromV4(static_cast<std::uint32_t>(identityRng_()));
                end = writeForwardedAddress(end, header, spoofed);
                end = writeText(end, ", ");
            }
            end = writeForwardedAddress(end, header, slot.peer);
            slot.headers[slot.headerCount++] =
                Header{header, std::string_view(slot.forwarded, end - slot.forwarded)};
            slot.peer = id.forwarded.proxy;
            slot.hasPeer = true;
            break;
        }
    }

    // Move to the next arrival.
    if (actor_.arrival.kind == Arrival::Kind::Burst) {
        // Each entry holds its instance's next request time; the heap's top is the earliest.
        std::pop_heap(burstHeap_.begin(), burstHeap_.end(), burstLater);
        BurstEntry& e = burstHeap_.back();
        e.sent += 1;
        if (e.sent == actor_.arrival.burstSize) {
            e.at += actor_.arrival.burstEvery - (e.sent - 1) * actor_.arrival.burstSpacing;
            e.sent = 0;
        } else {
            e.at += actor_.arrival.burstSpacing;
        }
        std::push_heap(burstHeap_.begin(), burstHeap_.end(), burstLater);
    } else if (instanceArrivals_) {
        instanceArrivals_->advance();
    } else {
        ++k_;
        // Constant and ramp arrivals take the instances in turn.
        if (++nextInstance_ == actor_.count) nextInstance_ = 0;
    }
    schedule();
}

ActorTraffic::Field ActorTraffic::makeField(std::string_view name, std::string_view value) {
    Field f;
    f.name = name;
    f.value = value;
    const std::size_t at = value.find("{instance}");
    if (at != std::string_view::npos) {
        f.templated = true;
        f.prefix = value.substr(0, at);
        f.suffix = value.substr(at + 10);
    }
    return f;
}

std::string_view ActorTraffic::writeField(const Field& f, std::int64_t instance, char*& scratch) {
    if (!f.templated) return f.value;
    char* start = scratch;
    char* end = writeText(start, f.prefix);
    end = writeDecimal(end, static_cast<std::uint64_t>(instance));
    end = writeText(end, f.suffix);
    scratch = end;
    return std::string_view(start, static_cast<std::size_t>(end - start));
}

void writeReplayedRequest(const ReplayedLine& line, RequestSlot& slot) {
    slot.method = line.method;
    slot.path = line.path;
    slot.attributes = {};
    slot.cost = 0;
    slot.status = line.status;
    slot.headerCount = 0;
    slot.loggedHeaders = line.headers;
    slot.clientText = line.client;
    slot.logFile = line.file;
    slot.logLine = line.line;
    slot.hasPeer = true;
    if (line.address) {
        slot.peer = *line.address;
        slot.principal = {};
    } else {
        slot.peer = syntheticPeer(line.client);
        slot.principal = line.client;
    }
}

// --- TrafficMix ------------------------------------------------------------------------------

TrafficMix::TrafficMix(const std::vector<Actor>& actors, std::uint64_t seed, Nanos end) {
    for (std::size_t i = 0; i < actors.size(); ++i) {
        actors_.push_back(std::make_unique<ActorTraffic>(actors[i], seed, end));
        if (actors_.back()->nextTime() != ActorTraffic::kNever) {
            heap_.push_back(Entry{actors_.back()->nextTime(), static_cast<int>(i)});
        }
    }
    for (std::size_t i = heap_.size(); i-- > 0;)
        siftDown(i);
}

void TrafficMix::siftDown(std::size_t i) {
    const std::size_t n = heap_.size();
    for (;;) {
        std::size_t best = i;
        std::size_t l = 2 * i + 1, r = l + 1;
        if (l < n && before(heap_[l], heap_[best])) best = l;
        if (r < n && before(heap_[r], heap_[best])) best = r;
        if (best == i) return;
        std::swap(heap_[i], heap_[best]);
        i = best;
    }
}

int TrafficMix::writeNext(RequestSlot& slot) {
    const int actor = heap_.front().actor;
    ActorTraffic& traffic = *actors_[static_cast<std::size_t>(actor)];
    traffic.writeNext(slot);
    const Nanos next = traffic.nextTime();
    if (next == ActorTraffic::kNever) {
        heap_.front() = heap_.back();
        heap_.pop_back();
    } else {
        heap_.front().at = next;
    }
    if (!heap_.empty()) siftDown(0);
    return actor;
}

}  // namespace ratelab::sim
