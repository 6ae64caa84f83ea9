#include "ratelab/limiter.h"

#include <xxhash.h>

#include <algorithm>
#include <random>

#include "http/response.h"
#include "identity/key_deriver.h"
#include "policy/tier_limit.h"

namespace ratelab {

namespace {

int statusOf(RefusalCode code) {
    switch (code) {
        case RefusalCode::IdentityUnavailable:
        case RefusalCode::ForwardedMalformed:
            return 412;
        case RefusalCode::StoreUnavailable:
        case RefusalCode::StoreRefused:
            return 503;
        case RefusalCode::RateLimited:
        case RefusalCode::CostExceedsCapacity:
            return 429;
        case RefusalCode::None:
            break;
    }
    return 200;
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
    };

    PolicySet policies;
    std::shared_ptr<Store> store;
    LimiterOptions options;
    std::vector<Compiled> compiled;

    Impl(PolicySet p, std::shared_ptr<Store> s, LimiterOptions o)
        : policies(std::move(p)), store(std::move(s)), options(o) {
        if (options.keyHashSecret == 0) {
            std::random_device device;
            options.keyHashSecret = (static_cast<std::uint64_t>(device()) << 32) ^ device();
        }
        std::uint32_t nextId = 0;
        for (const Policy& policy : policies.policies) {
            Compiled c{identity::KeyDeriver(policy), nextId, {}, false};
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
                                                   r.outcome, now});
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
            const BucketBudget budget = derived.budget();
            // Built in one expression: member-wise assignment after a default construction
            // costs an 88-byte zero fill (rep stos) per request.
            const ConsumeRequest consume{
                compiled.firstLimitId + r.tier,
                compiled.limitNames[r.tier],
                &limit,
                derived.partition(),
                derived.key,
                derived.hasBudget() ? &budget : nullptr,
                request.cost > 0 ? request.cost : policy.cost,
                now,
                policy.storeTimeout,
            };
            ConsumeResult result = impl.store->consume(consume);
            r.chargedFallback = result.chargedFallback;
            if (out.captureKeys) {
                r.key = result.chargedFallback ? derived.fallbackKey : derived.key;
                r.scope = derived.scope;
            }
            const std::string_view chargedKey = result.chargedFallback
                                                    ? std::string_view(derived.fallbackKey)
                                                    : std::string_view(derived.key);
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
            } else {
                if (result.status == StoreStatus::Refused) {
                    r.outcome = PolicyOutcome::StoreRefused;
                    refusal = RefusalCode::StoreRefused;
                } else if (policy.onStoreError == StoreErrorRule::Deny) {
                    r.outcome = PolicyOutcome::FailedClosed;
                    refusal = RefusalCode::StoreUnavailable;
                } else {
                    r.outcome = PolicyOutcome::FailedOpen;
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
