#include "sim/fit/log_fit.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <unordered_map>

#include "ratelab/number_text.h"
#include "sim/fit/fit_arrival.h"
#include "sim/fit/fit_check.h"
#include "sim/fit/fit_passes.h"
#include "sim/scenario/scenario_limits.h"

namespace ratelab::sim {

namespace {

using fit::Client;
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

namespace {

// One actor of the fit: a client of its own (top) or a group of a crowd, and its clients.
struct Planned {
    std::vector<const Client*> clients;
    std::uint32_t classIndex = 0;
    KeyKind kind = KeyKind::Other;
    bool crowd = false;
    std::int64_t group = 0;  // a crowd's group number
};

}  // namespace

std::optional<FitResult> fitScenario(const ReplayInput& given, const PolicySet& policies,
                                     const FitOptions& options, LogReading& reading,
                                     const LoadProgress& progress) {
    const int readings = 2 + static_cast<int>(options.checks.size());
    fit::FitReader reader(given, policies, options.sessionGap, readings, reading, progress);
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
    // A scenario spans a month at most: a longer log's first month.
    const Nanos horizon = static_cast<Nanos>(scenario_limits::kMaxSeconds) * kNanosPerSecond /
                          s.sampleInterval * s.sampleInterval;
    if (s.duration > horizon) {
        s.duration = horizon;
        result.warnings.push_back(
            "the log spans " + std::to_string(log.span / kNanosPerSecond / 86'400) +
            " days and a scenario at most 30: the scenario is the log's first 30 days");
    }

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

    // The busiest clients, ties by first request, are actors of their own.
    std::vector<std::uint32_t> order(clients.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
        return clients[x].requests > clients[y].requests;
    });
    const auto topCount =
        static_cast<std::size_t>(std::min<std::int64_t>(options.top, order.size()));
    std::vector<Planned> plan;
    std::vector<std::uint32_t> actorOf(clients.size());
    for (std::size_t k = 0; k < topCount; ++k) {
        const Client& c = clients[order[k]];
        actorOf[order[k]] = static_cast<std::uint32_t>(plan.size());
        plan.push_back(Planned{{&c}, c.classIndex, c.kind, false, 0});
    }
    // The rest are crowds: per class and key kind, groups of clients alike in sessions, then
    // requests, so that a group's instances draw totals and sizes that belong together.
    std::map<std::pair<std::uint32_t, KeyKind>, std::vector<std::uint32_t>> crowds;
    for (std::size_t k = topCount; k < order.size(); ++k)
        crowds[{clients[order[k]].classIndex, clients[order[k]].kind}].push_back(order[k]);
    const double scale = options.scale > 0 ? options.scale : 1;
    for (auto& [id, members] : crowds) {
        std::stable_sort(members.begin(), members.end(), [&](std::uint32_t x, std::uint32_t y) {
            const Client& a = clients[x];
            const Client& b = clients[y];
            return a.sessions != b.sessions ? a.sessions < b.sessions : a.requests < b.requests;
        });
        const auto n = static_cast<std::int64_t>(members.size());
        // Groups of at most kMaxInstances instances once scaled.
        const auto needed = static_cast<std::int64_t>(std::ceil(
            static_cast<double>(n) * scale / static_cast<double>(scenario_limits::kMaxInstances)));
        const std::int64_t groups = std::min(n, std::max(std::min(options.crowdGroups, n), needed));
        for (std::int64_t g = 0; g < groups; ++g) {
            const auto from = static_cast<std::size_t>(n * g / groups);
            const auto to = static_cast<std::size_t>(n * (g + 1) / groups);
            if (from == to) continue;
            Planned p{{}, id.first, id.second, true, g};
            for (std::size_t m = from; m < to; ++m) {
                actorOf[members[m]] = static_cast<std::uint32_t>(plan.size());
                p.clients.push_back(&clients[members[m]]);
            }
            plan.push_back(std::move(p));
        }
    }

    // The second reading: how each actor's clients' requests arrived.
    std::vector<fit::Arrivals> arrivals(plan.size());
    if (!reader.readArrivals(actorOf, arrivals)) return std::nullopt;

    AddressPlan addresses(policies);
    std::string headerName = "x-api-key";
    for (const Policy& p : policies.policies) {
        if (p.key.source == KeySource::Header) {
            headerName = p.key.header;
            break;
        }
    }
    bool poolsExhausted = false;
    // Identifies an actor as its clients were keyed, without any logged credential: a single
    // client keyed by its address keeps it; a crowd gets a pool, one address per instance.
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
        } else if (only) {
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

    for (std::size_t k = 0; k < plan.size(); ++k) {
        const Planned& p = plan[k];
        Actor a;
        a.name = p.crowd ? "crowd-" + classNames[p.classIndex] + "-" +
                               std::string(keyKindName(p.kind)) + "-" + std::to_string(p.group + 1)
                         : "client-" + std::to_string(k + 1);
        a.className = classNames[p.classIndex];
        fit::Summary sessions, requests;
        Nanos first = p.clients.front()->first, last = p.clients.front()->last;
        for (const Client* c : p.clients) {
            sessions.add(static_cast<std::uint64_t>(c->sessions));
            requests.add(static_cast<std::uint64_t>(c->requests));
            first = std::min(first, c->first);
            last = std::max(last, c->last);
        }
        a.arrival = fit::fittedArrival(arrivals[k], sessions, requests, log.resolution, options);
        // Active from the first client's first request to just after the last one's last,
        // in whole milliseconds as the file writes them, within the scenario.
        a.start = first / kNanosPerMilli * kNanosPerMilli;
        if (a.start >= s.duration) continue;  // past a long log's first month
        a.stop = std::min(s.duration, (last / kNanosPerMilli + 1) * kNanosPerMilli);
        if (p.crowd) {
            a.count = scaledCrowdCount(static_cast<std::int64_t>(p.clients.size()), scale);
        }
        fitRequest(log, p.clients, a);
        fitResponse(p.clients, a);
        identify(a, p.kind, p.crowd ? nullptr : p.clients.front());
        s.actors.push_back(std::move(a));
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
    std::vector<std::string> fitted = s.classNames();
    for (const std::string& name : classNames) {  // a class left with no actor stays listed
        if (std::find(fitted.begin(), fitted.end(), name) == fitted.end()) fitted.push_back(name);
    }
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
                    " busiest as actors of their own, the rest as crowds of clients alike in "
                    "sessions and requests, each client with its own sessions" +
                    (scale != 1 ? " (crowds scaled " + numberText(scale) + " times)" : "") +
                    ". Classes: " + rule + ".";

    for (const FitCheckPolicies& check : options.checks) {
        FitCheck out;
        std::string error;
        if (!fit::checkFit(reader, result, check, out, error)) {
            if (error.empty()) return std::nullopt;  // reading stopped: reading.error says why
            result.warnings.push_back(error);
            break;
        }
        result.checks.push_back(std::move(out));
    }
    return result;
}

}  // namespace ratelab::sim
