// A ShouldRateLimit call in three steps, for one call or a batch of them: match each descriptor
// and make the store requests of its rule's limits (keys, identities, budgets); send every
// request of the batch to the store in one consumeBatch(); put each call's answer together.

#include "serve/rls/rls_decider.h"

#include <algorithm>
#include <array>
#include <limits>

#include "algorithms/calendar.h"
#include "http/rendering.h"
#include "identity/key_deriver.h"
#include "ratelab/memory_store.h"
#include "serve/rls/rls_rules.h"

namespace ratelab::serve::rls {

namespace fe = formats::envoy;

namespace {

constexpr std::uint32_t kUnlimitedRemaining = std::numeric_limits<std::uint32_t>::max();
// A hits addend above this is refused rather than charged: the Redis store counts exactly below
// 2^53, and no counter may wrap.
constexpr std::uint64_t kMaxHits = (std::uint64_t{1} << 53) - 1;

// The original's duration_until_reset: to the end of the calendar window holding `now` (the
// engine's, algorithms/calendar.h), in whole seconds as the original counts them (U - now mod U
// on whole Unix seconds, which is the time left rounded up: its windows are whole seconds).
Nanos untilReset(Nanos now, const Limit& limit) {
    const Nanos left = algorithms::alignedWindowEnd(now, limit) - now;
    return http::ceilSeconds(left) * kNanosPerSecond;
}

// Algorithms that a zero-hit call (a check) can ask without charging anything.
bool checksWithoutCharge(Algorithm a) {
    return a == Algorithm::FixedWindow || a == Algorithm::SlidingWindow ||
           a == Algorithm::TokenBucket || a == Algorithm::Gcra || a == Algorithm::HaproxyRate;
}

// A descriptor's remote_address: the client address alone, with the engine's prefixes and
// address budget.
KeyConfig peerKeys() {
    KeyConfig k;
    k.source = KeySource::Peer;
    return k;
}

}  // namespace

RlsUnit rlsUnit(fe::RateUnit unit) {
    switch (unit) {
        case fe::RateUnit::Second:
            return RlsUnit::Second;
        case fe::RateUnit::Minute:
            return RlsUnit::Minute;
        case fe::RateUnit::Hour:
            return RlsUnit::Hour;
        case fe::RateUnit::Day:
            return RlsUnit::Day;
        case fe::RateUnit::Week:
            return RlsUnit::Week;
        case fe::RateUnit::Month:
            return RlsUnit::Month;
        case fe::RateUnit::Year:
            return RlsUnit::Year;
    }
    return RlsUnit::Unknown;
}

struct RlsDecider::Impl {
    std::shared_ptr<const fe::RlsConfig> config;
    std::shared_ptr<Store> store;
    RlsDeciderOptions options;
    std::shared_ptr<LimitIds> ids;
    std::shared_ptr<Store> local;  // RlsStoreErrorRule::Local's memory, kept across reloads
    std::vector<CompiledDomain> domains;
    PolicySet headerPolicies;
    std::vector<CompiledPolicy> headerCompiled;
    identity::KeyDeriver peerDeriver{peerKeys(), BudgetConfig{}};
    identity::KeyDeriver authDeriver{KeyConfig{}, BudgetConfig{}};
    TrustedProxies noProxies;

    Impl(std::shared_ptr<const fe::RlsConfig> c, std::shared_ptr<Store> s, RlsDeciderOptions o,
         std::shared_ptr<LimitIds> i, std::shared_ptr<Store> l)
        : config(std::move(c))
        , store(std::move(s))
        , options(o)
        , ids(std::move(i))
        , local(std::move(l)) {
        if (!ids) ids = std::make_shared<LimitIds>(options.firstLimitId);
        if (!local) local = makeMemoryStore();
        domains = compileDomains(*config, *ids, headerPolicies, headerCompiled);
    }

    const CompiledDomain* findDomain(std::string_view name) const {
        auto it = std::lower_bound(
            domains.begin(), domains.end(), name,
            [](const CompiledDomain& d, std::string_view n) { return d.config->domain < n; });
        return it != domains.end() && it->config->domain == name ? &*it : nullptr;
    }

    // One limit of one descriptor to charge: its store request's strings live here.
    struct Charge {
        std::size_t call = 0;
        std::size_t descriptor = 0;
        const CompiledNode* node = nullptr;
        const CompiledLimit* limit = nullptr;
        std::uint64_t hits = 0;
        bool skipStore = false;  // answered without the store (requests_per_unit 0, ...)
        std::string key;
        std::string partition;
        std::array<std::string, 2 * kMaxBudgetLevels> levelText;
        std::array<BucketBudget, kMaxBudgetLevels> budgets;
        std::size_t levels = 0;
        Nanos slotTtl = 0;
        ConsumeResult result;
    };

    // What one descriptor of a call came to before the store answered.
    struct Pending {
        enum class Kind : std::uint8_t { NoRule, Unlimited, Counted, Replaced };
        Kind kind = Kind::NoRule;
        const CompiledNode* rule = nullptr;
        std::vector<const CompiledNode*> path;
        std::size_t firstCharge = 0;
        std::size_t charges = 0;
        std::uint64_t hits = 0;
    };

    struct CallState {
        bool failed = false;
        std::vector<Pending> descriptors;
    };

    void prepare(const RlsRequest& request, std::size_t callIndex, RlsResult& out, CallState& call,
                 std::vector<Charge>& charges) const;
    void keyFor(const RlsDescriptor& descriptor, const Pending& pending, Charge& charge) const;
    void finish(const RlsRequest& request, Nanos now, CallState& call, std::vector<Charge>& charges,
                RlsResult& out) const;
    void report(std::string_view domain, const Pending& p, const RlsDescriptor& descriptor,
                const Charge& c, bool over) const;
};

// Matching, replaces and unlimited, and the charges of the remaining rules.
void RlsDecider::Impl::prepare(const RlsRequest& request, std::size_t callIndex, RlsResult& out,
                               CallState& call, std::vector<Charge>& charges) const {
    out.error = {};
    out.response = {};
    call.failed = false;
    call.descriptors.clear();
    if (request.domain.empty()) {
        out.error = {GrpcCode::Unknown, "rate limit domain must not be empty"};
        call.failed = true;
        return;
    }
    if (request.descriptors.empty()) {
        out.error = {GrpcCode::Unknown, "rate limit descriptor list must not be empty"};
        call.failed = true;
        return;
    }
    const CompiledDomain* domain = findDomain(request.domain);
    call.descriptors.resize(request.descriptors.size());
    Match match;
    for (std::size_t i = 0; i < request.descriptors.size(); ++i) {
        const RlsDescriptor& d = request.descriptors[i];
        Pending& p = call.descriptors[i];
        const std::uint64_t hits =
            d.hitsAddend ? *d.hitsAddend : (request.hitsAddend == 0 ? 1 : request.hitsAddend);
        if (hits > kMaxHits) {
            out.error = {GrpcCode::InvalidArgument, "hits_addend " + std::to_string(hits) +
                                                        " of descriptor " + std::to_string(i) +
                                                        " is more than a counter holds (at most " +
                                                        std::to_string(kMaxHits) + ")"};
            call.failed = true;
            return;
        }
        p.hits = hits;
        if (!domain) {
            if (options.observer) options.observer->onDomainNotFound(request.domain);
            continue;
        }
        matchDescriptor(*domain, d.entries, match);
        if (!match.rule) continue;
        p.rule = match.rule;
        p.path = match.path;
        p.kind =
            match.rule->node->rule->unlimited ? Pending::Kind::Unlimited : Pending::Kind::Counted;
    }
    // replaces: a rule named in another matched rule's replaces (unlimited ones included) is
    // dropped from this call, its counters untouched.
    for (const Pending& p : call.descriptors) {
        if (!p.rule) continue;
        for (const std::string& name : p.rule->node->rule->replaces) {
            for (Pending& q : call.descriptors) {
                if (q.kind == Pending::Kind::Counted && q.rule->node->rule->named(name)) {
                    q.kind = Pending::Kind::Replaced;
                }
            }
        }
    }
    for (std::size_t i = 0; i < call.descriptors.size(); ++i) {
        Pending& p = call.descriptors[i];
        if (p.kind != Pending::Kind::Counted) continue;
        p.firstCharge = charges.size();
        p.charges = p.rule->limits.size();
        for (const CompiledLimit& limit : p.rule->limits) {
            Charge& c = charges.emplace_back();
            c.call = callIndex;
            c.descriptor = i;
            c.node = p.rule;
            c.limit = &limit;
            c.hits = p.hits;
            c.skipStore = limit.spec->requestsPerUnit == 0 && limit.calendar;
            if (p.hits == 0 && !checksWithoutCharge(limit.limit.algorithm)) c.skipStore = true;
        }
    }
}

// The store key of a charge: the domain, the matched path, and per entry the request's value
// (a shared wildcard's pattern; an identity's key as the engine derives it). The original's
// windows need nothing more: the engine's calendar-aligned window is the same for every key.
// Identities bring their bucket budget.
void RlsDecider::Impl::keyFor(const RlsDescriptor& descriptor, const Pending& pending,
                              Charge& c) const {
    c.key = c.node->keyPrefix;  // domain and the matched composite keys
    const IpAddress* peer = nullptr;
    std::optional<IpAddress> address;
    std::string_view authorization;
    bool hasAuthorization = false;
    for (std::size_t i = 0; i < pending.path.size(); ++i) {
        const fe::DescriptorNode& node = *pending.path[i]->node;
        if (node.identity == fe::Identity::RemoteAddress && !address) {
            address = IpAddress::parse(descriptor.entries[i].value);
            if (address) peer = &*address;
        } else if (node.identity == fe::Identity::Authorization && !hasAuthorization) {
            authorization = descriptor.entries[i].value;
            hasAuthorization = true;
        }
    }
    identity::DerivedKey derived;
    bool derivedOk = false;
    if (hasAuthorization || peer) {
        const Header header{"authorization", authorization};
        RequestView view;
        if (hasAuthorization) view.headers = std::span<const Header>(&header, 1);
        view.peer = peer;
        identity::RequestContext context(view, noProxies);
        const identity::KeyDeriver& deriver = hasAuthorization ? authDeriver : peerDeriver;
        derivedOk = deriver.derive(context, derived) == identity::DeriveStatus::Ok;
    }
    for (std::size_t i = 0; i < pending.path.size(); ++i) {
        const fe::DescriptorNode& node = *pending.path[i]->node;
        switch (node.identity) {
            case fe::Identity::RemoteAddress:
                // A value that is no address keys one shared bucket: garbage cannot mint keys.
                appendKeyField(c.key, peer ? identity::formatKeyAddress(*peer, 32, 64)
                                           : std::string("invalid"));
                break;
            case fe::Identity::Authorization:
                appendKeyField(c.key, derivedOk ? std::string_view(derived.key) : "none");
                break;
            case fe::Identity::None:
                appendKeyField(c.key, node.shareThreshold && node.wildcard
                                          ? std::string_view(node.value)
                                          : std::string_view(descriptor.entries[i].value));
                break;
        }
    }
    c.levels = 0;
    c.partition = c.key;
    if (derivedOk && derived.hasBudget()) {
        // The budget's scopes and fallbacks belong to this rule: prefixed with its path, so
        // that rules with equal numbers (one store limit id) never share them.
        const std::string& prefix = c.node->keyPrefix;
        c.levels = derived.levelCount;
        c.slotTtl = derived.slotTtl;
        for (std::size_t l = 0; l < c.levels; ++l) {
            c.levelText[2 * l] = prefix + std::string(std::string_view(derived.levels[l].scope));
            c.levelText[2 * l + 1] =
                prefix + std::string(std::string_view(derived.levels[l].fallbackKey));
        }
        c.partition = prefix + std::string(derived.partition());
        for (std::size_t l = c.levels; l-- > 0;) {
            c.budgets[l] =
                BucketBudget{c.levelText[2 * l], c.levelText[2 * l + 1], derived.levels[l].cap,
                             c.slotTtl, l + 1 < c.levels ? &c.budgets[l + 1] : nullptr};
        }
    }
}

void RlsDecider::Impl::report(std::string_view domain, const Pending& p,
                              const RlsDescriptor& descriptor, const Charge& c, bool over) const {
    if (!options.observer) return;
    // The original's statistics key: the matched path's composite keys; with detailed_metric
    // on the rule, the request's own values; with value_to_metric on a level, that level's value.
    std::string rebuilt;
    std::string_view statsKey = c.node->statsKey;
    const bool detailed = p.rule->node->detailedMetric;
    bool shared = false;
    bool valueToMetric = false;
    for (const CompiledNode* n : p.path) {
        shared |= n->node->shareThreshold && n->node->wildcard;
        valueToMetric |= n->node->valueToMetric;
    }
    if (detailed || valueToMetric) {
        rebuilt = std::string(domain);
        for (std::size_t i = 0; i < p.path.size(); ++i) {
            const fe::DescriptorNode& n = *p.path[i]->node;
            const std::string_view value = descriptor.entries[i].value;
            const bool pattern = n.shareThreshold && n.wildcard;
            std::string_view chosen;
            if (detailed) {
                chosen = pattern ? std::string_view(n.value) : value;
            } else if (n.wildcard) {
                chosen = !pattern && n.valueToMetric ? value : std::string_view(n.value);
            } else if (!n.value.empty()) {
                chosen = value;
            } else if (n.valueToMetric) {
                chosen = value;
            }
            rebuilt += '.';
            rebuilt += descriptor.entries[i].key;
            // detailed_metric writes "key_" for an empty value, unless a shared pattern is on
            // the path (then it writes "key"), as the original does
            if (!chosen.empty() || (detailed && !shared)) {
                rebuilt += '_';
                rebuilt += chosen;
            }
        }
        statsKey = rebuilt;
    }
    RlsHit hit;
    hit.domain = domain;
    hit.statsKey = statsKey;
    hit.requestsPerUnit = c.limit->spec->requestsPerUnit;
    hit.hits = c.hits;
    hit.overLimit = over;
    const std::int64_t limit = c.result.decision.limit;
    const std::int64_t used = limit - c.result.decision.remaining;
    hit.nearLimit = !over && used * 5 > limit * 4;
    hit.shadow = p.rule->node->shadowMode;
    options.observer->onHit(hit);
}

// Statuses, the overall code, and the header fields of one call.
void RlsDecider::Impl::finish(const RlsRequest& request, Nanos now, CallState& call,
                              std::vector<Charge>& charges, RlsResult& out) const {
    RlsResponse& response = out.response;
    response.statuses.resize(request.descriptors.size());
    std::vector<PolicyResult> advertised;
    bool anyRegularOver = false;
    std::size_t quotaCount = 0;
    std::size_t quotaOver = 0;
    Nanos retryAfter = 0;
    for (std::size_t i = 0; i < call.descriptors.size(); ++i) {
        const Pending& p = call.descriptors[i];
        RlsStatus& s = response.statuses[i];
        s = RlsStatus{};
        const bool quota = options.globalQuotaMode ||
                           (p.rule && p.rule->node->quotaMode && p.kind == Pending::Kind::Counted);
        if (p.kind == Pending::Kind::Unlimited) {
            s.limitRemaining = kUnlimitedRemaining;
            continue;  // neither regular nor quota
        }
        if (p.kind == Pending::Kind::Counted) {
            // Over when any limit refused; the answer is the refusing limit's, else the one
            // closest to its limit.
            const Charge* decided = nullptr;
            bool over = false;
            for (std::size_t k = p.firstCharge; k < p.firstCharge + p.charges; ++k) {
                Charge& c = charges[k];
                const bool refused = !c.result.decision.allowed;
                if (refused && !over) {
                    decided = &c;
                    over = true;
                } else if (!over && (!decided || c.result.decision.remaining <
                                                     decided->result.decision.remaining)) {
                    decided = &c;
                }
            }
            const CompiledLimit& limit = *decided->limit;
            const Decision& d = decided->result.decision;
            s.currentLimit = limit.answer;
            s.limitRemaining = over ? 0
                                    : static_cast<std::uint32_t>(
                                          std::min<std::int64_t>(d.remaining, kUnlimitedRemaining));
            if (limit.calendar) {
                s.durationUntilReset = untilReset(now, limit.limit);
            } else {
                s.durationUntilReset = over && d.retryAfter > 0 ? d.retryAfter : d.resetAfter;
            }
            const bool shadow = p.rule->node->shadowMode;
            s.code = over && !shadow ? RlsCode::OverLimit : RlsCode::Ok;
            if (over && !shadow) retryAfter = std::max(retryAfter, s.durationUntilReset);
            for (std::size_t k = p.firstCharge; k < p.firstCharge + p.charges; ++k) {
                const Charge& c = charges[k];
                report(request.domain, p, request.descriptors[i], c, !c.result.decision.allowed);
                if (shadow) continue;  // shadow rules tell clients nothing
                PolicyResult r;
                r.policy = static_cast<std::uint32_t>(c.limit->headerPolicy);
                r.decision = c.result.decision;
                r.outcome = c.result.decision.allowed ? PolicyOutcome::Passed
                            : c.result.decision.reason == DenyReason::CostExceedsCapacity
                                ? PolicyOutcome::CostExceedsCapacity
                                : PolicyOutcome::Throttled;
                if (c.limit->calendar) {
                    const Nanos reset = untilReset(now, c.limit->limit);
                    r.decision.resetAfter = reset;
                    if (!r.decision.allowed) r.decision.retryAfter = reset;
                }
                advertised.push_back(std::move(r));
            }
        }
        const bool failed = s.code == RlsCode::OverLimit;
        if (quota) {
            ++quotaCount;
            if (failed) ++quotaOver;
        } else if (failed) {
            anyRegularOver = true;
        }
    }
    const bool over = anyRegularOver || (quotaCount > 0 && quotaOver == quotaCount);
    response.overall = over && !options.globalShadowMode ? RlsCode::OverLimit : RlsCode::Ok;

    std::vector<HttpHeader> headers;
    const bool refused = response.overall == RlsCode::OverLimit;
    const std::size_t used = http::renderHeaders(
        headerPolicies, headerCompiled, advertised, refused ? 429 : 200,
        refused ? RefusalCode::RateLimited : RefusalCode::None, retryAfter, headers, 0);
    response.headers.clear();
    for (std::size_t h = 0; h < used; ++h) {
        response.headers.emplace_back(std::move(headers[h].name), std::move(headers[h].value));
    }
}

RlsDecider::RlsDecider(std::shared_ptr<const fe::RlsConfig> config, std::shared_ptr<Store> store,
                       RlsDeciderOptions options)
    : impl_(
          std::make_unique<Impl>(std::move(config), std::move(store), options, nullptr, nullptr)) {}

RlsDecider::RlsDecider(std::shared_ptr<const fe::RlsConfig> config, const RlsDecider& previous,
                       RlsDeciderOptions options)
    : impl_(std::make_unique<Impl>(std::move(config), previous.impl_->store, options,
                                   previous.impl_->ids, previous.impl_->local)) {}

RlsDecider::~RlsDecider() = default;

const fe::RlsConfig& RlsDecider::config() const {
    return *impl_->config;
}
Store& RlsDecider::store() const {
    return *impl_->store;
}

RlsResult RlsDecider::decide(const RlsRequest& request, Nanos now) const {
    RlsResult out;
    decideBatch(std::span<const RlsRequest>(&request, 1), now, std::span<RlsResult>(&out, 1));
    return out;
}

void RlsDecider::decideBatch(std::span<const RlsRequest> requests, Nanos now,
                             std::span<RlsResult> out) const {
    decideBatchWithin(requests, now, out, impl_->options.storeTimeout, true);
}

void RlsDecider::decideBatch(std::span<const RlsRequest> requests, Nanos now,
                             std::span<RlsResult> out, Nanos storeTimeout) const {
    decideBatchWithin(requests, now, out, storeTimeout, storeTimeout > 0);
}

void RlsDecider::decideBatchWithin(std::span<const RlsRequest> requests, Nanos now,
                                   std::span<RlsResult> out, Nanos storeTimeout,
                                   bool sendToStore) const {
    const Impl& m = *impl_;
    std::vector<Impl::CallState> calls(requests.size());
    std::vector<Impl::Charge> charges;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        m.prepare(requests[i], i, out[i], calls[i], charges);
    }
    // Keys once every charge is in place (the vector no longer moves: requests view its strings).
    std::vector<ConsumeRequest> batch;
    std::vector<std::size_t> batchCharge;
    batch.reserve(charges.size());
    for (std::size_t k = 0; k < charges.size(); ++k) {
        Impl::Charge& c = charges[k];
        if (c.skipStore) continue;
        const Impl::CallState& call = calls[c.call];
        m.keyFor(requests[c.call].descriptors[c.descriptor], call.descriptors[c.descriptor], c);
        ConsumeRequest r;
        r.limitId = c.limit->limitId;
        r.limitName = c.limit->limitName;
        r.limit = &c.limit->limit;
        r.partition = c.partition;
        r.key = c.key;
        r.budget = c.levels > 0 ? &c.budgets[0] : nullptr;
        r.cost = static_cast<std::int64_t>(c.hits);
        r.now = now;
        r.timeout = storeTimeout;
        batch.push_back(r);
        batchCharge.push_back(k);
    }
    std::vector<ConsumeResult> results(batch.size());
    if (sendToStore) {
        if (!batch.empty()) m.store->consumeBatch(batch, results);
    } else {
        for (ConsumeResult& r : results) {
            r.status = StoreStatus::Transport;
            r.error = "no time left of the store timeout";
        }
    }

    // Store errors: the limit's rule, or the decider's.
    std::vector<ConsumeRequest> localBatch;
    std::vector<std::size_t> localCharge;
    std::vector<Limit> localLimits;
    localLimits.reserve(batch.size());
    for (std::size_t b = 0; b < batch.size(); ++b) {
        Impl::Charge& c = charges[batchCharge[b]];
        c.result = std::move(results[b]);
        if (c.result.status == StoreStatus::Ok) continue;
        RlsResult& call = out[c.call];
        RlsStoreErrorRule rule = m.options.onStoreError;
        if (c.limit->onStoreError) {
            switch (*c.limit->onStoreError) {
                case StoreErrorRule::FailOpenOnTransport:
                    rule = RlsStoreErrorRule::FailOpen;
                    break;
                case StoreErrorRule::Deny:
                    rule = RlsStoreErrorRule::Deny;
                    break;
                case StoreErrorRule::Local:
                    rule = RlsStoreErrorRule::Local;
                    break;
            }
        }
        if (c.result.status != StoreStatus::Transport || rule == RlsStoreErrorRule::FailCall) {
            if (call.ok()) {
                call.error = {c.result.status == StoreStatus::Transport ? GrpcCode::Unavailable
                                                                        : GrpcCode::Unknown,
                              "store error: " + c.result.error};
            }
            continue;
        }
        Decision& d = c.result.decision;
        d = Decision{};
        d.limit = c.limit->limit.capacity;
        if (rule == RlsStoreErrorRule::FailOpen) {
            d.allowed = true;
            d.remaining = d.limit;
        } else if (rule == RlsStoreErrorRule::Deny) {
            d.reason = DenyReason::OverLimit;
        } else {
            localLimits.push_back(perReplicaLimit(c.limit->limit, m.options.replicas));
            ConsumeRequest r = batch[b];
            r.limit = &localLimits.back();
            localBatch.push_back(r);
            localCharge.push_back(batchCharge[b]);
        }
    }
    if (!localBatch.empty()) {
        std::vector<ConsumeResult> localResults(localBatch.size());
        m.local->consumeBatch(localBatch, localResults);
        for (std::size_t b = 0; b < localBatch.size(); ++b) {
            charges[localCharge[b]].result = std::move(localResults[b]);
        }
    }
    // Charges answered without the store.
    for (Impl::Charge& c : charges) {
        if (!c.skipStore) continue;
        Decision& d = c.result.decision;
        d = Decision{};
        d.limit = c.limit->limit.capacity;
        if (c.hits == 0) {
            d.allowed = true;  // a check on a limit that cannot check: nothing charged
        } else {
            d.reason = DenyReason::OverLimit;  // requests_per_unit 0
        }
    }
    for (std::size_t i = 0; i < requests.size(); ++i) {
        if (calls[i].failed || !out[i].ok()) {
            out[i].response = {};
            continue;
        }
        m.finish(requests[i], now, calls[i], charges, out[i]);
    }
}

}  // namespace ratelab::serve::rls
