#include "ratelab/limiter.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <random>

#include "http/response.h"
#include "identity/key_deriver.h"
#include "policy/tier_limit.h"
#include "ratelab/memory_store.h"

namespace ratelab {

namespace {

int statusOf(RefusalCode code) {
    switch (code) {
        case RefusalCode::IdentityUnavailable:
        case RefusalCode::ForwardedMalformed:
            return 412;
        case RefusalCode::StoreUnavailable:
        case RefusalCode::StoreRefused:
        case RefusalCode::StoreFull:
            return 503;
        case RefusalCode::RateLimited:
        case RefusalCode::CostExceedsCapacity:
            return 429;
        case RefusalCode::None:
            break;
    }
    return 200;
}

// A reachable store that refused: 503 under every policy, whatever on_store_error says.
void storeFailed(const ConsumeResult& result, PolicyResult& r, RefusalCode& refusal) {
    if (result.status == StoreStatus::Full) {
        r.outcome = PolicyOutcome::StoreFull;
        refusal = RefusalCode::StoreFull;
    } else if (result.status == StoreStatus::Refused) {
        r.outcome = PolicyOutcome::StoreRefused;
        refusal = RefusalCode::StoreRefused;
    }
}

bool isIn(const std::vector<std::string>& list, std::string_view value) {
    return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

struct Limiter::Impl {
    // What the limiter keeps per policy, beside the policy itself.
    struct Compiled {
        identity::KeyDeriver deriver;
        std::uint32_t firstLimitId = 0;
        std::vector<std::string> limitNames;  // per tier ("api/premium"), or just "api"
        bool matchesEverything = false;       // "/" with no methods: skip matching per request
        std::vector<Limit> localLimits;       // per tier: on_store_error "local"'s limit
    };

    PolicySet policies;
    std::shared_ptr<Store> store;
    LimiterOptions options;
    std::vector<Compiled> compiled;
    // Where policies with on_store_error "local" decide while the shared store is unreachable:
    // this process's own memory, created when the first such policy appears.
    std::unique_ptr<Store> local;

    Impl(PolicySet p, std::shared_ptr<Store> s, LimiterOptions o)
        : policies(std::move(p)), store(std::move(s)), options(o) {
        if (options.keyHashSecret == 0) {
            std::random_device device;
            options.keyHashSecret = (static_cast<std::uint64_t>(device()) << 32) ^ device();
        }
        std::uint32_t nextId = 0;
        for (const Policy& policy : policies.policies) {
            Compiled c{identity::KeyDeriver(policy), nextId, {}, false, {}};
            const RouteMatch& m = policy.match;
            c.matchesEverything = m.methods.empty() && m.pathPattern.empty() &&
                                  (m.pathPrefix.empty() || m.pathPrefix == "/");
            if (policy.tiers && !policy.tiers->tiers.empty()) {
                for (const Tier& tier : policy.tiers->tiers)
                    c.limitNames.push_back(policy.name + "/" + tier.name);
            } else {
                c.limitNames.push_back(policy.name);
            }
            nextId += static_cast<std::uint32_t>(c.limitNames.size());
            compiled.push_back(std::move(c));
            compileLocal(compiled.size() - 1);
        }
    }

    // The per-replica limits of policy i, and the local store they need.
    void compileLocal(std::size_t i) {
        const Policy& policy = policies.policies[i];
        Compiled& c = compiled[i];
        c.localLimits.clear();
        if (policy.onStoreError != StoreErrorRule::Local) return;
        const int replicas = policies.store.replicas;
        if (policy.tiers && !policy.tiers->tiers.empty()) {
            for (const Tier& tier : policy.tiers->tiers)
                c.localLimits.push_back(perReplicaLimit(tier.limit, replicas));
        } else {
            c.localLimits.push_back(perReplicaLimit(policy.limit, replicas));
        }
        if (!local) {
            MemoryStoreOptions memory;
            memory.maxBuckets = policies.store.maxBuckets;
            local = makeMemoryStore(memory);
        }
    }

    std::uint32_t tierOf(const Policy& policy, const RequestView& request) const {
        if (!policy.tiers || policy.tiers->tiers.empty()) return 0;
        const TierConfig& tiers = *policy.tiers;
        std::string_view wanted = tiers.defaultTier;
        for (const Attribute& a : request.attributes) {
            if (a.name == tiers.attribute) {
                wanted = a.value;
                break;
            }
        }
        for (std::uint32_t i = 0; i < tiers.tiers.size(); ++i) {
            if (tiers.tiers[i].name == wanted) return i;
        }
        for (std::uint32_t i = 0; i < tiers.tiers.size(); ++i) {
            if (tiers.tiers[i].name == tiers.defaultTier) return i;
        }
        return 0;
    }

    bool bypassed(const Policy& policy, const RequestView& request,
                  identity::RequestContext& context) const {
        if (!request.principal.empty() && isIn(policy.bypass.principals, request.principal))
            return true;
        if (policy.bypass.cidrs.empty()) return false;
        const identity::ClientAddress& client = context.client();
        if (client.status != identity::ClientAddress::Status::Ok) return false;
        for (const Cidr& cidr : policy.bypass.cidrs) {
            if (cidr.contains(client.address)) return true;
        }
        return false;
    }

    // 16 hex digits naming a key in events without revealing it.
    void keyHash(std::string_view key, char (&out)[16]) const {
        static const char* const kHex = "0123456789abcdef";
        std::uint64_t h = XXH3_64bits_withSeed(key.data(), key.size(), options.keyHashSecret);
        for (int i = 15; i >= 0; --i) {
            out[i] = kHex[h & 15];
            h >>= 4;
        }
    }

    void report(const Policy& policy, const RequestView& request, std::string_view key,
                const PolicyResult& r, const ConsumeResult* storeResult, Nanos now) const {
        LimitObserver* observer = options.observer;
        if (!observer) return;
        char hash[16];
        keyHash(key, hash);
        std::string_view hashView(hash, key.empty() ? 0 : sizeof hash);
        if (storeResult && storeResult->status != StoreStatus::Ok) {
            observer->onStoreError(StoreErrorEvent{policy.name, request.path, hashView,
                                                   storeResult->status, storeResult->error,
                                                   r.outcome, now, r.decision});
        } else {
            observer->onLimitHit(
                LimitEvent{policy.name, request.path, hashView, r.outcome, r.decision, now});
        }
    }
};

Limiter::Limiter(PolicySet policies, std::shared_ptr<Store> store, LimiterOptions options)
    : impl_(std::make_unique<Impl>(std::move(policies), std::move(store), options)) {}

Limiter::~Limiter() = default;

const PolicySet& Limiter::policies() const {
    return impl_->policies;
}
Store& Limiter::store() const {
    return *impl_->store;
}
const Store* Limiter::localStore() const {
    return impl_->local.get();
}

std::uint32_t Limiter::limitId(std::size_t policyIndex, std::size_t tier) const {
    return impl_->compiled[policyIndex].firstLimitId + static_cast<std::uint32_t>(tier);
}

void Limiter::retune(std::size_t policyIndex, const Policy& updated) {
    Policy& p = impl_->policies.policies[policyIndex];
    p.capacity = updated.capacity;
    p.refillPerSecond = updated.refillPerSecond;
    p.windowMs = updated.windowMs;
    p.delay = updated.delay;
    p.nodelay = updated.nodelay;
    p.cost = updated.cost;
    p.mode = updated.mode;
    p.headers = updated.headers;
    p.onStoreError = updated.onStoreError;
    p.storeTimeout = updated.storeTimeout;
    p.limit =
        compileLimit(p.algorithm, p.capacity, p.refillPerSecond, p.windowMs, p.delay, p.nodelay);
    if (p.tiers && updated.tiers && updated.tiers->tiers.size() == p.tiers->tiers.size()) {
        p.tiers = updated.tiers;
        for (Tier& tier : p.tiers->tiers) {
            tier.limit =
                compileLimit(p.algorithm, tier.capacity > 0 ? tier.capacity : p.capacity,
                             tier.refillPerSecond > 0 ? tier.refillPerSecond : p.refillPerSecond,
                             tier.windowMs > 0 ? tier.windowMs : p.windowMs, p.delay, p.nodelay);
        }
    }
    impl_->compileLocal(policyIndex);
}

void Limiter::check(const RequestView& request, Nanos now, Check& out) const {
    const Impl& impl = *impl_;
    out.allowed = true;
    out.status = 200;
    out.code = RefusalCode::None;
    out.retryAfter = 0;
    out.used_ = 0;
    identity::RequestContext context(request, impl.policies.trustedProxies);
    thread_local identity::DerivedKey derived;

    for (std::size_t i = 0; i < impl.policies.policies.size(); ++i) {
        const Policy& policy = impl.policies.policies[i];
        const auto& compiled = impl.compiled[i];
        if (!compiled.matchesEverything && !policy.match.matches(request.method, request.path)) {
            continue;
        }
        if (out.used_ == out.results_.size()) out.results_.emplace_back();
        PolicyResult& r = out.results_[out.used_++];
        r.policy = static_cast<std::uint32_t>(i);
        r.tier = 0;
        r.decision = Decision{};
        r.chargedFallback = false;
        if (out.captureKeys) {
            r.key.clear();
            r.scope.clear();
        }
        const bool shadow = policy.mode == PolicyMode::Shadow;
        RefusalCode refusal = RefusalCode::None;

        if (impl.bypassed(policy, request, context)) {
            r.outcome = PolicyOutcome::Bypassed;
            continue;
        }
        identity::DeriveStatus status = compiled.deriver.derive(context, derived);
        if (status != identity::DeriveStatus::Ok) {
            const bool malformed = status == identity::DeriveStatus::ForwardedMalformed;
            r.outcome = malformed ? PolicyOutcome::ForwardedMalformed : PolicyOutcome::NoIdentity;
            refusal =
                malformed ? RefusalCode::ForwardedMalformed : RefusalCode::IdentityUnavailable;
            impl.report(policy, request, {}, r, nullptr, now);
        } else {
            r.tier = impl.tierOf(policy, request);
            const Limit& limit = limitOf(policy, r.tier);
            // Per thread, like `derived` whose strings it views: no per-request zero fill.
            thread_local std::array<BucketBudget, kMaxBudgetLevels> budgets;
            // Built in one expression: member-wise assignment after a default construction
            // costs an 88-byte zero fill (rep stos) per request.
            const ConsumeRequest consume{
                compiled.firstLimitId + r.tier,
                compiled.limitNames[r.tier],
                &limit,
                derived.partition(),
                derived.key,
                derived.budget(budgets),
                request.cost > 0 ? request.cost : policy.cost,
                now,
                policy.storeTimeout,
            };
            ConsumeResult result = impl.store->consume(consume);
            r.chargedFallback = result.chargedFallback;
            if (out.captureKeys) {
                r.key = derived.chargedKey(result.chargedLevel);
                r.scope = derived.scope();
            }
            const std::string_view chargedKey = derived.chargedKey(result.chargedLevel);
            if (result.status == StoreStatus::Ok) {
                r.decision = result.decision;
                if (result.decision.allowed) {
                    r.outcome = PolicyOutcome::Passed;
                } else if (result.decision.reason == DenyReason::CostExceedsCapacity) {
                    r.outcome = PolicyOutcome::CostExceedsCapacity;
                    refusal = RefusalCode::CostExceedsCapacity;
                    impl.report(policy, request, chargedKey, r, nullptr, now);
                } else {
                    r.outcome = shadow ? PolicyOutcome::ShadowThrottled : PolicyOutcome::Throttled;
                    refusal = RefusalCode::RateLimited;
                    impl.report(policy, request, chargedKey, r, nullptr, now);
                }
            } else if (result.status == StoreStatus::Transport &&
                       policy.onStoreError == StoreErrorRule::Local) {
                // The shared store is unreachable: decide on this process's share of the limit.
                // The next request asks the shared store again (its client backs off a stalled
                // server, so that costs little), so decisions return to it once it answers.
                ConsumeRequest onLocal = consume;
                onLocal.limit = &compiled.localLimits[r.tier];
                const ConsumeResult local = impl.local->consume(onLocal);
                r.chargedFallback = local.chargedFallback;
                if (local.status == StoreStatus::Ok) {
                    r.outcome = PolicyOutcome::DecidedLocally;
                    r.decision = local.decision;
                    if (!local.decision.allowed) {
                        refusal = local.decision.reason == DenyReason::CostExceedsCapacity
                                      ? RefusalCode::CostExceedsCapacity
                                      : RefusalCode::RateLimited;
                    }
                    impl.report(policy, request, chargedKey, r, &result, now);
                } else {
                    storeFailed(local, r, refusal);
                    impl.report(policy, request, chargedKey, r, &local, now);
                }
            } else {
                storeFailed(result, r, refusal);
                if (result.status == StoreStatus::Transport) {
                    if (policy.onStoreError == StoreErrorRule::Deny) {
                        r.outcome = PolicyOutcome::FailedClosed;
                        refusal = RefusalCode::StoreUnavailable;
                    } else {
                        r.outcome = PolicyOutcome::FailedOpen;
                    }
                }
                impl.report(policy, request, chargedKey, r, &result, now);
            }
        }

        // Shadow policies decide, count and report, and never refuse.
        if (refusal == RefusalCode::None || shadow) continue;
        out.code = refusal;
        out.status = statusOf(refusal);
        if (refusal == RefusalCode::RateLimited) out.retryAfter = r.decision.retryAfter;
        out.allowed = false;
        // Like nested middleware layers: a refused request goes no further, so it does not
        // spend the quota of the policies after the one that refused it.
        break;
    }
}

void Limiter::decide(const RequestView& request, Nanos now, Verdict& out, bool explain) const {
    out.check.captureKeys = explain;
    check(request, now, out.check);
    out.allowed = out.check.allowed;
    out.status = out.check.status;
    out.code = out.check.code;
    const std::size_t count = http::renderHeaders(impl_->policies, out.check, out.headers, 0);
    out.headers.resize(count);
    if (out.allowed) {
        out.contentType.clear();
        out.body.clear();
    } else {
        out.contentType = "application/problem+json";
        const PolicyResult& refusing = out.check.policies().back();
        const std::int64_t cost =
            request.cost > 0 ? request.cost : impl_->policies.policies[refusing.policy].cost;
        http::renderProblem(impl_->policies, out.check, cost, out.body);
    }
}

Verdict Limiter::decide(const RequestView& request, Nanos now, bool explain) const {
    Verdict verdict;
    decide(request, now, verdict, explain);
    return verdict;
}

}  // namespace ratelab
