#include "sim/fit/log_fit.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <unordered_map>

#include "sim/fit/fit_passes.h"

namespace ratelab::sim {

namespace {

using fit::Client;
using fit::Gaps;
using fit::KeyKind;

std::string_view keyKindName(KeyKind k) {
    switch (k) {
        case KeyKind::Address:
            return "address";
        case KeyKind::Authorization:
            return "authorization";
        case KeyKind::Principal:
            return "principal";
        case KeyKind::Header:
            return "api-key";
        case KeyKind::Other:
            break;
    }
    return "other";
}

// Synthetic addresses for actors that must not carry a logged one: aligned blocks from
// benchmarking and shared address space, skipping any the policy trusts or bypasses.
class AddressPlan {
public:
    explicit AddressPlan(const PolicySet& policies) {
        std::vector<Cidr> reserved = policies.trustedProxies.cidrs;
        for (const Policy& p : policies.policies)
            reserved.insert(reserved.end(), p.bypass.cidrs.begin(), p.bypass.cidrs.end());
        for (const char* text : {"198.18.0.0/15", "100.64.0.0/10"}) {
            const Cidr region = *Cidr::parse(text);
            bool clear = true;
            for (const Cidr& r : reserved) {
                clear = clear && !(r.network().isV4() &&
                                   (region.contains(r.network()) || r.contains(region.network())));
            }
            if (clear) regions_.push_back(region);
        }
    }
    // A network holding at least `count` addresses besides its own; nullopt when none is left.
    std::optional<Cidr> block(std::int64_t count) {
        int bits = 0;
        while ((std::int64_t(1) << bits) < count + 1)
            ++bits;
        const std::uint64_t size = std::uint64_t(1) << bits;
        while (region_ < regions_.size()) {
            const Cidr& r = regions_[region_];
            const std::uint64_t base = r.network().v4();
            const std::uint64_t end = base + (std::uint64_t(1) << (32 - r.prefixLength()));
            const std::uint64_t at = (std::max(next_, base) + size - 1) / size * size;
            if (at + size <= end) {
                next_ = at + size;
                return Cidr(IpAddress::fromV4(static_cast<std::uint32_t>(at)), 32 - bits);
            }
            ++region_;
        }
        return std::nullopt;
    }

private:
    std::vector<Cidr> regions_;
    std::size_t region_ = 0;
    std::uint64_t next_ = 0;
};

// The arrival of one client from its request times. Requests close together (a gap shorter than
// the mean one) form a burst: a client sending 1.5 or more per burst on average is fitted as
// bursts (which is also how a log with whole-second times records a steady 3 per second),
// others as evenly spaced or Poisson, by the spread of their gaps (coefficient of variation).
void fitArrival(const Gaps& gaps, Actor& a) {
    const std::int64_t n = gaps.requests;
    const Nanos first = gaps.first, last = gaps.last;
    a.start = first;
    Arrival& r = a.arrival;
    if (n == 1 || last == first) {
        r.kind = Arrival::Kind::Burst;
        r.burstSize = n;
        r.burstEvery = kNanosPerSecond;
        r.burstPhase = 0;
        a.stop = first + kNanosPerMilli;
        return;
    }
    const double gap = gaps.mean;
    const double sq = gaps.squares;
    const std::int64_t bursts = gaps.bursts;
    const double inner = gaps.inner;
    const std::int64_t innerGaps = gaps.innerGaps;
    const double perBurst = static_cast<double>(n) / static_cast<double>(bursts);
    if (perBurst < 1.5 || bursts < 2) {
        const double cv = std::sqrt(sq / static_cast<double>(n - 1)) / gap;
        r.kind = cv < 0.5 ? Arrival::Kind::Constant : Arrival::Kind::Poisson;
        r.ratePerSecond = 1e9 / gap;
        a.stop = first + static_cast<Nanos>(std::llround(gap * static_cast<double>(n)));
        return;
    }
    // Bursts of the mean size, as many as keep the client's requests and span.
    r.kind = Arrival::Kind::Burst;
    r.burstSize = std::max<std::int64_t>(1, std::llround(perBurst));
    const std::int64_t count = std::max<std::int64_t>(
        2, std::llround(static_cast<double>(n) / static_cast<double>(r.burstSize)));
    r.burstEvery = std::max<Nanos>(kNanosPerMilli, (last - first) / (count - 1));
    const Nanos spacingMs =
        innerGaps > 0 ? static_cast<Nanos>(inner / static_cast<double>(innerGaps) / 1e6) : 0;
    const Nanos maxSpacingMs =
        r.burstSize > 1 ? (r.burstEvery - 1) / kNanosPerMilli / (r.burstSize - 1) : 0;
    r.burstSpacing = std::min(spacingMs, maxSpacingMs) * kNanosPerMilli;
    r.burstPhase = 0;
    a.stop = first + r.burstEvery * (count - 1) + r.burstSpacing * (r.burstSize - 1) + 1;
}

// The request most of `clients`' requests were: the fitted actor sends that one.
void fitRequest(const fit::LogClients& log, const std::vector<const Client*>& clients,
                Actor& a) {
    std::unordered_map<std::uint64_t, std::int64_t> routes;
    for (const Client* c : clients) {
        for (const auto& [route, n] : c->routes)
            routes[route] += n;
    }
    std::uint64_t best = 0;
    std::int64_t bestCount = -1;
    for (const auto& [route, n] : routes) {
        if (n > bestCount || (n == bestCount && route < best)) {
            best = route;
            bestCount = n;
        }
    }
    a.method = log.strings[best >> 32];
    a.path = log.strings[best & 0xffffffffu];
    if (a.path.empty() || a.path.front() != '/') a.path = "/" + a.path;
}

// The statuses the clients' lines were answered with, as the actor's response model, so a
// policy charging by outcome settles the fitted run as the replay does. None when every
// answer was 200 or none was logged.
void fitResponse(const std::vector<const Client*>& clients, Actor& a) {
    std::map<int, std::int64_t> statuses;
    std::int64_t total = 0;
    for (const Client* c : clients) {
        for (const auto& [status, n] : c->statuses) {
            if (status < 100 || status > 599) continue;  // not an answer a model can give
            statuses[status] += n;
            total += n;
        }
    }
    if (total == 0 || statuses.count(200) == statuses.size()) return;
    a.response.kind = ResponseModel::Kind::Statuses;
    for (const auto& [status, n] : statuses) {
        a.response.statuses.emplace_back(status,
                                         static_cast<double>(n) / static_cast<double>(total));
    }
}

}  // namespace

PolicySet defaultFitPolicies() {
    PolicySet set;
    Policy p;
    p.name = "fit";
    set.policies.push_back(std::move(p));
    return set;
}

std::uint32_t FitResult::classOf(const DecisionRecord& d) const {
    if (otherClasses.empty()) return commonClass;
    std::string text;
    fit::clientText(d, text);
    auto it = otherClasses.find(text);
    return it == otherClasses.end() ? commonClass : it->second;
}

std::optional<FitResult> fitScenario(const ReplayInput& given, const PolicySet& policies,
                                     const FitOptions& options, LogReading& reading,
                                     const LoadProgress& progress) {
    fit::FitReader reader(given, policies, reading, progress);
    fit::LogClients* read = reader.readClients();
    if (!read) return std::nullopt;
    const fit::LogClients& log = *read;
    std::vector<Client>& clients = read->clients;

    FitResult result;
    result.clients = static_cast<std::int64_t>(clients.size());
    result.requests = log.requests;
    Scenario& s = result.scenario;
    s.sampleInterval = replaySampleInterval(log.span, kNanosPerSecond);
    s.duration = (log.span / s.sampleInterval + 1) * s.sampleInterval;
    const double durationS = static_cast<double>(s.duration) / 1e9;

    // Classes.
    std::vector<ClientFigures> figures(clients.size());
    for (std::size_t i = 0; i < clients.size(); ++i) {
        figures[i].requests = clients[i].requests;
        figures[i].ratePerSecond = static_cast<double>(clients[i].requests) / durationS;
        figures[i].statuses.assign(clients[i].statuses.begin(), clients[i].statuses.end());
    }
    std::vector<std::string> classNames = {"legit"};
    if (options.attackerIf) {
        ClassRule rule = *options.attackerIf;
        rule.resolve(figures);
        classNames.push_back("attacker");
        for (std::size_t i = 0; i < clients.size(); ++i)
            clients[i].classIndex = rule.matches(figures[i]) ? 1 : 0;
    }

    // The busiest clients, ties by first request.
    std::vector<std::uint32_t> order(clients.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
        return clients[x].requests > clients[y].requests;
    });
    const auto topCount =
        static_cast<std::size_t>(std::min<std::int64_t>(options.top, order.size()));

    // The second reading: the gaps between the busiest clients' requests.
    std::vector<const Client*> top(topCount);
    for (std::size_t k = 0; k < topCount; ++k)
        top[k] = &clients[order[k]];
    std::vector<Gaps> gaps;
    if (!reader.readGaps(top, gaps)) return std::nullopt;

    AddressPlan addresses(policies);
    std::string headerName = "x-api-key";
    for (const Policy& p : policies.policies) {
        if (p.key.source == KeySource::Header) {
            headerName = p.key.header;
            break;
        }
    }
    bool poolsExhausted = false;
    // Identifies an actor as its clients were keyed, without any logged credential.
    auto identify = [&](Actor& a, KeyKind kind, const Client* only) {
        Identity& id = a.identity;
        if (kind == KeyKind::Address && only) {
            std::string_view text = std::string_view(*only->key).substr(3);
            text = text.substr(0, text.find('/'));
            if (std::optional<IpAddress> address = IpAddress::parse(text)) {
                id.peer.kind = address->isV4() ? PeerSpec::Kind::Ipv4 : PeerSpec::Kind::Ipv6;
                id.peer.address = *address;
                return;
            }
        }
        std::optional<Cidr> pool = addresses.block(a.count);
        if (!pool) {
            poolsExhausted = true;
        } else if (a.count == 1) {
            id.peer.kind = PeerSpec::Kind::Ipv4;
            id.peer.address = IpAddress::fromV4(pool->network().v4() + 1);
        } else {
            id.peer.kind = PeerSpec::Kind::Ipv4Pool;
            id.peer.cidr = *pool;
        }
        if (kind == KeyKind::Authorization) id.authorization = AuthorizationMode::Fixed;
        if (kind == KeyKind::Principal) id.principal = PrincipalMode::Fixed;
        if (kind == KeyKind::Header) a.headers.emplace_back(headerName, a.name + "-{instance}");
    };

    for (std::size_t k = 0; k < topCount; ++k) {
        const Client& c = clients[order[k]];
        Actor a;
        a.name = "client-" + std::to_string(k + 1);
        a.className = classNames[c.classIndex];
        fitArrival(gaps[k], a);
        // Times are written to the file in whole milliseconds: a stop rounded up keeps its
        // last request.
        a.stop = ceilMillis(*a.stop) * kNanosPerMilli;
        a.arrival.burstEvery = a.arrival.burstEvery / 1000 * 1000;
        fitRequest(log, {&c}, a);
        fitResponse({&c}, a);
        identify(a, c.kind, &c);
        s.actors.push_back(std::move(a));
    }

    // The crowd: per class and key kind, groups of clients of similar rate.
    std::map<std::pair<std::uint32_t, KeyKind>, std::vector<const Client*>> crowds;
    for (std::size_t k = topCount; k < order.size(); ++k) {
        const Client& c = clients[order[k]];
        crowds[{c.classIndex, c.kind}].push_back(&c);
    }
    for (auto& [id, members] : crowds) {
        std::stable_sort(members.begin(), members.end(), [](const Client* x, const Client* y) {
            return x->requests < y->requests;
        });
        const auto n = static_cast<std::int64_t>(members.size());
        const std::int64_t groups =
            std::max<std::int64_t>(std::min(options.crowdGroups, n), (n + 999'999) / 1'000'000);
        for (std::int64_t g = 0; g < groups; ++g) {
            const auto from = static_cast<std::size_t>(n * g / groups);
            const auto to = static_cast<std::size_t>(n * (g + 1) / groups);
            if (from == to) continue;
            std::vector<const Client*> group(members.begin() + static_cast<std::ptrdiff_t>(from),
                                             members.begin() + static_cast<std::ptrdiff_t>(to));
            std::int64_t requests = 0;
            for (const Client* c : group)
                requests += c->requests;
            Actor a;
            a.name = "crowd-" + classNames[id.first] + "-" + std::string(keyKindName(id.second)) +
                     "-" + std::to_string(g + 1);
            a.className = classNames[id.first];
            a.count = static_cast<std::int64_t>(group.size());
            a.arrival.kind = Arrival::Kind::Poisson;
            a.arrival.ratePerSecond =
                static_cast<double>(requests) / static_cast<double>(a.count) / durationS;
            fitRequest(log, group, a);
            fitResponse(group, a);
            identify(a, id.second, nullptr);
            s.actors.push_back(std::move(a));
        }
    }
    if (poolsExhausted) {
        result.warnings.push_back(
            "more clients than the synthetic address ranges hold: some actors have no address");
    }
    int narrowest = 32;
    for (const Policy& p : policies.policies)
        narrowest = std::min(narrowest, p.key.ipv4Prefix);
    if (narrowest < 32 && !crowds.empty()) {
        result.warnings.push_back("the policy aggregates IPv4 clients to /" +
                                  std::to_string(narrowest) +
                                  ": the crowd's address pools give consecutive addresses, so "
                                  "crowd instances share buckets the log's clients did not");
    }

    // Classes as the log showed them, in the scenario's class order.
    const std::vector<std::string> fitted = s.classNames();
    std::vector<std::uint32_t> classAt(classNames.size(), 0);
    for (std::size_t c = 0; c < classNames.size(); ++c) {
        auto it = std::find(fitted.begin(), fitted.end(), classNames[c]);
        classAt[c] = static_cast<std::uint32_t>(it - fitted.begin());
    }
    result.classes.resize(fitted.size());
    for (std::size_t c = 0; c < fitted.size(); ++c)
        result.classes[c].name = fitted[c];
    for (const Client& c : clients) {
        FitClass& fc = result.classes[classAt[c.classIndex]];
        fc.clients += 1;
        fc.requests += c.requests;
    }
    for (const Actor& a : s.actors) {
        auto it = std::find(fitted.begin(), fitted.end(), a.className);
        result.classes[static_cast<std::size_t>(it - fitted.begin())].actors += 1;
    }
    // Clients of the commonest class are classOf()'s default; the others are listed.
    std::vector<std::int64_t> classClients(classNames.size(), 0);
    for (const Client& c : clients)
        classClients[c.classIndex] += 1;
    const auto common = static_cast<std::uint32_t>(
        std::max_element(classClients.begin(), classClients.end()) - classClients.begin());
    result.commonClass = classAt[common];
    for (const Client& c : clients) {
        if (c.classIndex != common) result.otherClasses.emplace(*c.key, classAt[c.classIndex]);
    }

    const std::string& file = given.files.front();
    std::string stem = std::filesystem::path(file).filename().string();
    if (stem.empty() || file == "-") stem = "stdin";
    s.name = "fit-" + stem;
    s.seed = options.seed;
    s.policy = options.policy;
    const std::string rule =
        options.attackerIf ? "attacker if " + options.attackerIf->text() : std::string("all legit");
    s.title = "Fitted to " + stem + " (" + rule + ")";
    s.description = "Fitted to " + std::to_string(log.requests) + " requests of " +
                    std::to_string(clients.size()) + " clients over " +
                    std::to_string(std::llround(durationS)) + " s: the " +
                    std::to_string(topCount) +
                    " busiest as actors of their own, the rest as crowds of similar rate. "
                    "Classes: " +
                    rule + ".";
    return result;
}

}  // namespace ratelab::sim
