#include "sim/fit/fit_passes.h"

#include <algorithm>
#include <unordered_map>

#include "ratelab/bucket_key.h"
#include "sim/hash_index.h"
#include "sim/interner.h"
#include "sim/run/scenario_runner.h"

namespace ratelab::sim::fit {

KeyKind keyKind(std::string_view key) {
    if (key.starts_with(kAddressKeyPrefix)) return KeyKind::Address;
    if (key.starts_with(kAuthorizationKeyPrefix)) return KeyKind::Authorization;
    if (key.starts_with(kPrincipalKeyPrefix)) return KeyKind::Principal;
    if (key.starts_with(kHeaderKeyPrefix)) return KeyKind::Header;
    return KeyKind::Other;
}

void clientText(const DecisionRecord& d, std::string& out) {
    out.assign(d.key.empty() ? "-" : "");
    out.append(d.key.empty() ? d.client : d.key);
}

namespace {

// A bijection of 64-bit numbers that spreads them over the low bits (SplitMix64's finaliser):
// distinct keys stay distinct, so a HashIndex over them counts them exactly.
std::uint64_t spread(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

// Finds the client of a decision: the client keyed last time for the same client field (the
// replay's instance) is checked first, which spares most requests a lookup by key text.
class ClientIndex {
public:
    explicit ClientIndex(std::unordered_map<std::string, std::uint32_t>& index) : index_(index) {}

    // The client's number and whether it is new. `text` is clientText(d).
    std::pair<std::uint32_t, bool> find(const DecisionRecord& d, const std::string& text) {
        const auto instance = static_cast<std::size_t>(d.instance);
        if (instance >= byInstance_.size()) byInstance_.resize(instance + 1, kNone);
        std::uint32_t& cached = byInstance_[instance];
        if (cached != kNone && *keys_[cached] == text) return {cached, false};
        auto [it, added] = index_.try_emplace(text, static_cast<std::uint32_t>(keys_.size()));
        if (added) keys_.push_back(&it->first);
        cached = it->second;
        return {it->second, added};
    }
    const std::string& key(std::uint32_t client) const { return *keys_[client]; }

private:
    static constexpr std::uint32_t kNone = UINT32_MAX;

    std::unordered_map<std::string, std::uint32_t>& index_;
    std::vector<const std::string*> keys_;   // by client number, into index_
    std::vector<std::uint32_t> byInstance_;  // instance -> the client it was last keyed as
};

// The first reading: every client with its requests, span, statuses and routes.
class ClientSink final : public DecisionSink {
public:
    ClientSink(LogClients& out, Nanos sessionGap) : out_(out), sessionGap_(sessionGap) {}

    void onDecision(const DecisionRecord& d) override {
        clientText(d, text_);
        const auto [client, added] = index_.find(d, text_);
        if (added) {
            Client c;
            c.key = &index_.key(client);
            c.kind = keyKind(text_);
            c.first = d.at;
            out_.clients.push_back(std::move(c));
        }
        Client& c = out_.clients[client];
        if (c.requests == 0 || startsSession(d.at - c.last, sessionGap_, c.inSession)) {
            c.sessions += 1;
            c.inSession = 0;
        }
        c.inSession += 1;
        c.requests += 1;
        c.last = d.at;
        if (d.answer != 0) {
            auto s = std::lower_bound(c.statuses.begin(), c.statuses.end(), d.answer,
                                      [](const auto& e, int status) { return e.first < status; });
            if (s == c.statuses.end() || s->first != d.answer)
                s = c.statuses.insert(s, {d.answer, 0});
            s->second += 1;
        }
        text_.assign(d.method);
        text_ += '\n';
        text_.append(d.path);
        auto [r, newRoute] =
            routeIds_.try_emplace(text_, static_cast<std::uint32_t>(routes_.size()));
        if (newRoute) {
            // Strings numbered as a log read into memory numbers them: method, then path.
            const std::uint64_t method = strings_.intern(d.method);
            routes_.push_back(method << 32 | strings_.intern(d.path));
        }
        const std::uint64_t clientRoute = std::uint64_t(client) << 32 | r->second;
        const HashIndex::Found counted = countIndex_.insert(spread(clientRoute));
        if (counted.inserted) out_.routeCounts.emplace_back(clientRoute, 0);
        out_.routeCounts[counted.index].second += 1;
        out_.span = d.at;
        out_.requests += 1;
        while (out_.resolution > 0 && d.at % out_.resolution != 0)
            out_.resolution = out_.resolution == kNanosPerSecond ? kNanosPerMilli : 0;
    }

    // Hands each client its routes; call once, after the reading.
    void settleRoutes() {
        countIndex_ = HashIndex();
        auto& counts = out_.routeCounts;
        std::sort(counts.begin(), counts.end());
        std::size_t i = 0;
        for (std::uint32_t c = 0; c < out_.clients.size(); ++c) {
            const std::size_t from = i;
            while (i < counts.size() && counts[i].first >> 32 == c) {
                counts[i].first = routes_[counts[i].first & 0xffffffffu];
                ++i;
            }
            out_.clients[c].routes = {counts.data() + from, i - from};
        }
    }

private:
    LogClients& out_;
    Nanos sessionGap_;
    ClientIndex index_{out_.byKey};
    std::string text_;
    Interner strings_{out_.strings};
    std::unordered_map<std::string, std::uint32_t> routeIds_;  // "METHOD\npath" -> its index
    std::vector<std::uint64_t> routes_;                        // method << 32 | path
    HashIndex countIndex_;  // spread(client << 32 | route index) -> routeCounts index
};

// The second reading: each client's sessions and gaps into its actor's summaries, split into
// sessions as the first reading split them.
class ArrivalSink final : public DecisionSink {
public:
    ArrivalSink(const LogClients& log, Nanos sessionGap, std::span<const std::uint32_t> actorOf,
                std::vector<Arrivals>& out)
        : log_(log)
        , sessionGap_(sessionGap)
        , actorOf_(actorOf)
        , out_(out)
        , seen_(log.clients.size(), 0)
        , last_(log.clients.size(), 0)
        , inSession_(log.clients.size(), 0)
        , started_(log.clients.size(), 0)
        , sessions_(log.clients.size(), 0) {}

    void onDecision(const DecisionRecord& d) override {
        requests += 1;
        clientText(d, text_);
        const std::uint32_t c = find(d);
        if (c == kNone) {
            unknown = true;
            return;
        }
        Arrivals& a = out_[actorOf_[c]];
        if (seen_[c]++ > 0) {
            const Nanos gap = d.at - last_[c];
            a.gaps.add(static_cast<std::uint64_t>(gap));
            if (startsSession(gap, sessionGap_, inSession_[c])) {
                closeSession(a, c);
                a.idle.add(static_cast<std::uint64_t>(gap));
                sessions_[c] += 1;
            }
        } else {
            sessions_[c] = 1;
        }
        if (inSession_[c]++ == 0) started_[c] = d.at;
        last_[c] = d.at;
    }

    // Closes every client's last session; true when every client was read as the first
    // reading read it.
    bool finish() {
        bool same = !unknown;
        for (std::uint32_t c = 0; c < log_.clients.size(); ++c) {
            const Client& client = log_.clients[c];
            same = same && seen_[c] == client.requests && sessions_[c] == client.sessions;
            if (seen_[c] > 0) closeSession(out_[actorOf_[c]], c);
        }
        return same;
    }

    std::int64_t requests = 0;
    bool unknown = false;  // a client the first reading did not see

private:
    static constexpr std::uint32_t kNone = UINT32_MAX;

    // Client c's session ends: its size and span.
    void closeSession(Arrivals& a, std::uint32_t c) {
        a.sessions.add(static_cast<std::uint64_t>(inSession_[c]),
                       static_cast<std::uint64_t>(last_[c] - started_[c]));
        inSession_[c] = 0;
    }

    // The client of `d` (text_ holds its clientText): the one its replay instance was last,
    // checked first, which spares most requests a lookup by key.
    std::uint32_t find(const DecisionRecord& d) {
        const auto instance = static_cast<std::size_t>(d.instance);
        if (instance >= byInstance_.size()) byInstance_.resize(instance + 1, kNone);
        std::uint32_t& cached = byInstance_[instance];
        if (cached != kNone && *log_.clients[cached].key == text_) return cached;
        auto it = log_.byKey.find(text_);
        cached = it == log_.byKey.end() ? kNone : it->second;
        return cached;
    }

    const LogClients& log_;
    Nanos sessionGap_;
    std::span<const std::uint32_t> actorOf_;
    std::vector<Arrivals>& out_;
    std::vector<std::int64_t> seen_;
    std::vector<Nanos> last_;
    std::vector<std::int64_t> inSession_;
    std::vector<Nanos> started_;  // the first request of the client's session
    std::vector<std::int64_t> sessions_;
    std::vector<std::uint32_t> byInstance_;
    std::string text_;
};

}  // namespace

FitReader::FitReader(const ReplayInput& input, const PolicySet& policies, Nanos sessionGap,
                     int readings, LogReading& reading, LoadProgress progress)
    : log_(input)
    , policies_(policies)
    , sessionGap_(sessionGap)
    , readings_(readings)
    , reading_(reading)
    , progress_(std::move(progress)) {}

LogClients* FitReader::readClients() {
    ClientSink sink(clients_, sessionGap_);
    const bool read = replay(policies_, sink, reading_);
    log_.nameAsGiven(reading_);
    if (!read || reading_.replayed == 0) return nullptr;
    sink.settleRoutes();
    return &clients_;
}

bool FitReader::readArrivals(std::span<const std::uint32_t> actorOf, std::vector<Arrivals>& out) {
    ArrivalSink sink(clients_, sessionGap_, actorOf, out);
    LogReading again;
    const bool read = replay(policies_, sink, again);
    const bool same = read && sink.finish();
    return sameAsFirst(same, again, sink.requests);
}

bool FitReader::replayUnder(const PolicySet& policies, DecisionSink& sink) {
    // Counts the requests on the way, to tell a log that changed.
    struct Counting final : DecisionSink {
        explicit Counting(DecisionSink& inner) : inner(inner) {}
        void onDecision(const DecisionRecord& d) override {
            ++requests;
            inner.onDecision(d);
        }
        DecisionSink& inner;
        std::int64_t requests = 0;
    } counting(sink);
    LogReading again;
    const bool read = replay(policies, counting, again);
    return sameAsFirst(read && counting.requests == clients_.requests, again, counting.requests);
}

// Whether a later reading read what the first did; if not, reading_.error says why (false
// without one when progress said stop).
bool FitReader::sameAsFirst(bool same, const LogReading& again, std::int64_t requests) {
    if (same) return true;
    if (again.error) {
        LogReading named = again;
        log_.nameAsGiven(named);
        reading_.error = named.error;
        reading_.unreadable = named.unreadable;
        return false;
    }
    if (!again.ended) return false;  // stopped
    reading_.error = log_.changed("fitted", clients_.requests, requests);
    return false;
}

// One streamed replay into `sink`, as `ratelab-cli replay` runs it. False when reading stopped
// (reading.error) or progress said stop.
bool FitReader::replay(const PolicySet& policies, DecisionSink& sink, LogReading& reading) {
    const int pass = pass_++;
    std::shared_ptr<LogStream> stream = log_.open(reading);
    if (!stream) return false;
    RunnerOptions options;
    options.decisions = &sink;
    options.measureWallTime = false;
    ScenarioRunner runner(log_.scenario(stream, kNanosPerSecond), policies, options);
    while (!runner.finished()) {
        runner.advance(runner.duration(), 200'000);
        const std::int64_t total = stream->bytesTotal();
        if (progress_ && !progress_(stream->bytesRead() + pass * std::max<std::int64_t>(total, 0),
                                    readings_ * total)) {
            return false;
        }
    }
    return !reading.error;
}

}  // namespace ratelab::sim::fit
