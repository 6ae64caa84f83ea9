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

void Gaps::add(Nanos at) {
    if (seen++ > 0) {
        const double g = static_cast<double>(at - previous);
        squares += (g - mean) * (g - mean);
        if (g > mean) {
            ++bursts;
        } else {
            inner += g;
            ++innerGaps;
        }
    }
    previous = at;
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
    explicit ClientSink(LogClients& out) : out_(out) {}

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
    ClientIndex index_{out_.byKey};
    std::string text_;
    Interner strings_{out_.strings};
    std::unordered_map<std::string, std::uint32_t> routeIds_;  // "METHOD\npath" -> its index
    std::vector<std::uint64_t> routes_;                        // method << 32 | path
    HashIndex countIndex_;  // spread(client << 32 | route index) -> routeCounts index
};

// The second reading: the gaps of the busiest clients.
class GapSink final : public DecisionSink {
public:
    GapSink(std::unordered_map<std::string_view, std::size_t> top, std::vector<Gaps>& gaps)
        : top_(std::move(top)), gaps_(gaps) {}
    void onDecision(const DecisionRecord& d) override {
        requests += 1;
        clientText(d, text_);
        if (auto it = top_.find(text_); it != top_.end()) gaps_[it->second].add(d.at);
    }
    std::int64_t requests = 0;

private:
    std::unordered_map<std::string_view, std::size_t> top_;  // the busiest, by key
    std::vector<Gaps>& gaps_;
    std::string text_;
};

}  // namespace

FitReader::FitReader(const ReplayInput& input, const PolicySet& policies, LogReading& reading,
                     LoadProgress progress)
    : log_(input), policies_(policies), reading_(reading), progress_(std::move(progress)) {}

LogClients* FitReader::readClients() {
    ClientSink sink(clients_);
    const bool read = replay(sink, reading_, 0);
    log_.nameAsGiven(reading_);
    if (!read || reading_.replayed == 0) return nullptr;
    sink.settleRoutes();
    return &clients_;
}

bool FitReader::readGaps(std::span<const Client* const> top, std::vector<Gaps>& gaps) {
    gaps.assign(top.size(), Gaps{});
    std::unordered_map<std::string_view, std::size_t> index;
    for (std::size_t k = 0; k < top.size(); ++k) {
        const Client& c = *top[k];
        index.emplace(*c.key, k);
        Gaps& g = gaps[k];
        g.requests = c.requests;
        g.first = c.first;
        g.last = c.last;
        g.mean = c.requests > 1
                     ? static_cast<double>(c.last - c.first) / static_cast<double>(c.requests - 1)
                     : 0;
    }
    GapSink sink(std::move(index), gaps);
    LogReading again;
    const bool read = replay(sink, again, 1);
    if (!read && !again.error) return false;  // stopped
    bool same = read && sink.requests == clients_.requests;
    for (const Gaps& g : gaps)
        same = same && g.seen == g.requests;
    if (same) return true;
    if (again.error) {
        log_.nameAsGiven(again);
        reading_.error = again.error;
        reading_.unreadable = again.unreadable;
    } else {
        reading_.error = log_.changed("fitted", clients_.requests, sink.requests);
    }
    return false;
}

// One streamed replay into `sink`, as `ratelab-cli replay` runs it. False when reading stopped
// (reading.error) or progress said stop. `pass` 0 or 1: where its bytes sit in the progress.
bool FitReader::replay(DecisionSink& sink, LogReading& reading, int pass) {
    std::shared_ptr<LogStream> stream = log_.open(reading);
    if (!stream) return false;
    RunnerOptions options;
    options.decisions = &sink;
    options.measureWallTime = false;
    ScenarioRunner runner(log_.scenario(stream, kNanosPerSecond), policies_, options);
    while (!runner.finished()) {
        runner.advance(runner.duration(), 200'000);
        const std::int64_t total = stream->bytesTotal();
        if (progress_ &&
            !progress_(stream->bytesRead() + pass * std::max<std::int64_t>(total, 0), 2 * total)) {
            return false;
        }
    }
    return !reading.error;
}

}  // namespace ratelab::sim::fit
