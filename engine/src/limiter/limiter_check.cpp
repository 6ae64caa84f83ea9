// Deciding: Limiter::check and checkBatch.

#include <algorithm>
#include <array>
#include <optional>
#include <span>

#include "limiter/limiter_impl.h"

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

}  // namespace

// --- deciding -------------------------------------------------------------------------------
//
// check() and checkBatch() share one walk. Per request, the matching policies are visited in
// order: a bypass or an identity failure is settled at once, a derived key becomes a store call.
// Store calls are sent in batches (Store::consumeBatch), in the order one-by-one deciding would
// make them: a request that may reach a later policy waits for its call's answer before any
// later request's call is queued, so every store sees exactly the sequence of calls, and every
// observer exactly the sequence of events, that deciding the requests one by one produces.

namespace {

// What one queued store call belongs to.
struct CallOwner {
    std::uint32_t request = 0;  // index into the batch
    std::uint32_t result = 0;   // index into that request's policy results
};

// Where one request's walk stands.
struct RequestWork {
    identity::RequestContext context;
    std::uint32_t nextPolicy = 0;  // where the walk resumes
    // Routing::MostSpecific: the specificity of the most specific route matching the request.
    std::uint64_t route = 0;
};

// Scratch space of one thread's batches, grown to the largest batch and reused, so that
// steady-state calls do not allocate. A request makes at most one store call per policy, so a
// batch of n requests has n * policies call slots, used in order. Calls view their derived
// key's strings and point at their budget chain, so nothing here moves while a batch runs.
struct BatchWork {
    // Raw views of the vectors below, refreshed when they grow.
    RequestWork* requests = nullptr;
    identity::DerivedKey* derived = nullptr;                        // per call slot
    std::array<BucketBudget, kMaxBudgetLevels>* budgets = nullptr;  // per call slot: its chain
    ConsumeRequest* calls = nullptr;
    ConsumeResult* results = nullptr;
    CallOwner* owners = nullptr;
    std::int32_t* callOf = nullptr;  // per (request, result): its call, or -1

    void reserve(std::size_t n, std::size_t policyCount) {
        if (n <= requestCapacity_ && n * policyCount <= slotCapacity_) return;
        requestCapacity_ = std::max(requestCapacity_, n);
        slotCapacity_ = std::max(slotCapacity_, requestCapacity_ * policyCount);
        requests_.resize(requestCapacity_);
        derived_.resize(slotCapacity_);
        budgets_.resize(slotCapacity_);
        calls_.resize(slotCapacity_);
        results_.resize(slotCapacity_);
        owners_.resize(slotCapacity_);
        callOf_.resize(slotCapacity_);
        requests = requests_.data();
        derived = derived_.data();
        budgets = budgets_.data();
        calls = calls_.data();
        results = results_.data();
        owners = owners_.data();
        callOf = callOf_.data();
    }

private:
    std::size_t requestCapacity_ = 0;
    std::size_t slotCapacity_ = 0;
    std::vector<RequestWork> requests_;
    std::vector<identity::DerivedKey> derived_;
    std::vector<std::array<BucketBudget, kMaxBudgetLevels>> budgets_;
    std::vector<ConsumeRequest> calls_;
    std::vector<ConsumeResult> results_;
    std::vector<CallOwner> owners_;
    std::vector<std::int32_t> callOf_;
};

BatchWork& batchWork() {
    thread_local BatchWork work;
    return work;
}

}  // namespace

struct Limiter::Batch {
    const Impl& impl;
    std::span<const RequestView> requests;
    std::span<const Nanos> times;  // one per request, or a single time for all
    std::span<Check> out;
    BatchWork& work;
    std::size_t policyCount = 0;
    std::size_t queued = 0;  // calls [0, queued) are queued
    std::size_t sent = 0;    // and [0, sent) were sent and resolved

    Batch(const Impl& i, std::span<const RequestView> r, std::span<const Nanos> t,
          std::span<Check> o)
        : impl(i)
        , requests(r)
        , times(t)
        , out(o)
        , work(batchWork())
        , policyCount(i.policies.policies.size()) {
        work.reserve(requests.size(), policyCount);
    }

    Nanos timeOf(std::size_t i) const { return times.size() == 1 ? times[0] : times[i]; }

    void run() {
        const std::size_t n = requests.size();
        for (std::size_t i = 0; i < n; ++i) {
            Check& c = out[i];
            c.allowed = true;
            c.status = 200;
            c.code = RefusalCode::None;
            c.retryAfter = 0;
            c.used_ = 0;
            c.refusedBy_ = static_cast<std::size_t>(-1);
            c.settles_ = false;
            work.requests[i].context.reset(requests[i], impl.policies.trustedProxies);
            work.requests[i].nextPolicy = 0;
            if (impl.policies.routing == Routing::MostSpecific) {
                work.requests[i].route = mostSpecificRoute(requests[i]);
            }
        }
        for (std::size_t i = 0; i < n; ++i) {
            // A request whose call may be followed by another of its own is resolved before
            // the next request's calls are queued.
            while (walk(i)) {
                flush();
            }
        }
        flush();
        if (impl.options.observer) {
            for (std::size_t i = 0; i < n; ++i)
                reportEvents(i);
        }
    }

    // Visits request i's policies from where its walk stopped. Returns true when it queued a
    // store call and a later policy still matches (the call must be answered first).
    bool walk(std::size_t i) {
        const RequestView& request = requests[i];
        Check& c = out[i];
        RequestWork& w = work.requests[i];
        const Policy* policies = impl.policies.policies.data();
        for (std::size_t p = w.nextPolicy; p < policyCount; ++p) {
            const Policy& policy = policies[p];
            const CompiledPolicy& compiled = impl.compiled[p];
            if (!applies(p, request, w)) continue;
            if (c.used_ == c.results_.size()) c.results_.emplace_back();
            const std::size_t resultIndex = c.used_++;
            PolicyResult& r = c.results_[resultIndex];
            std::int32_t& call = work.callOf[i * policyCount + resultIndex];
            call = -1;
            r.policy = static_cast<std::uint32_t>(p);
            r.tier = 0;
            r.decision = Decision{};
            r.chargedFallback = false;
            r.charge.pending = false;
            if (c.captureKeys) {
                r.key.clear();
                r.scope.clear();
            }
            if (impl.bypassed(policy, request, w.context)) {
                r.outcome = PolicyOutcome::Bypassed;
                continue;
            }
            const std::size_t k = queued;
            identity::DerivedKey& key = work.derived[k];
            const identity::DeriveStatus status = compiled.deriver.derive(w.context, key);
            if (status == identity::DeriveStatus::Skip) {
                --c.used_;  // the policy does not apply: as if its route had not matched
                continue;
            }
            if (status != identity::DeriveStatus::Ok) {
                const bool malformed = status == identity::DeriveStatus::ForwardedMalformed;
                r.outcome =
                    malformed ? PolicyOutcome::ForwardedMalformed : PolicyOutcome::NoIdentity;
                if (settle(i, policy, r,
                           malformed ? RefusalCode::ForwardedMalformed
                                     : RefusalCode::IdentityUnavailable)) {
                    return false;
                }
                continue;
            }
            r.tier = impl.tierOf(policy, request);
            const Limit& limit = compiled.limit(r.tier);
            // Built in one expression: member-wise assignment after a default construction
            // costs a 104-byte zero fill per request.
            work.calls[k] = ConsumeRequest{
                compiled.firstLimitId + r.tier,
                compiled.limitNames[r.tier],
                &limit,
                key.partition(),
                key.key,
                key.budget(work.budgets[k]),
                request.cost > 0 ? request.cost : policy.cost,
                timeOf(i),
                impl.storeTimeout(policy),
                key.hasPlace ? &key.place : nullptr,
            };
            work.owners[k] =
                CallOwner{static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(resultIndex)};
            call = static_cast<std::int32_t>(k);
            queued = k + 1;
            w.nextPolicy = static_cast<std::uint32_t>(p + 1);
            return laterPolicyApplies(request, w, p + 1);
        }
        w.nextPolicy = static_cast<std::uint32_t>(policyCount);
        return false;
    }

    // Whether policy p charges the request: its route matches, and under most_specific routing
    // no matching route is more specific.
    bool applies(std::size_t p, const RequestView& request, const RequestWork& w) const {
        const CompiledPolicy& compiled = impl.compiled[p];
        if (!compiled.matchesEverything &&
            !impl.policies.policies[p].match.matches(request.method, request.path)) {
            return false;
        }
        return impl.policies.routing == Routing::All || compiled.routeSpecificity == w.route;
    }

    std::uint64_t mostSpecificRoute(const RequestView& request) const {
        std::uint64_t best = 0;
        for (std::size_t p = 0; p < policyCount; ++p) {
            const CompiledPolicy& compiled = impl.compiled[p];
            if (compiled.routeSpecificity > best &&
                (compiled.matchesEverything ||
                 impl.policies.policies[p].match.matches(request.method, request.path))) {
                best = compiled.routeSpecificity;
            }
        }
        return best;
    }

    bool laterPolicyApplies(const RequestView& request, const RequestWork& w,
                            std::size_t from) const {
        for (std::size_t p = from; p < policyCount; ++p) {
            if (applies(p, request, w)) return true;
        }
        return false;
    }

    // Sends the queued calls, then resolves them in order.
    void flush() {
        const std::size_t from = sent;
        const std::size_t count = queued - from;
        if (count == 0) return;
        impl.store->consumeBatch({work.calls + from, count}, {work.results + from, count});
        sent = queued;
        for (std::size_t k = from; k < sent; ++k)
            resolve(k);
    }

    // Turns call k's store answer into its policy's outcome.
    void resolve(std::size_t k) {
        const CallOwner owner = work.owners[k];
        Check& c = out[owner.request];
        PolicyResult& r = c.results_[owner.result];
        const Policy& policy = impl.policies.policies[r.policy];
        const ConsumeResult& result = work.results[k];
        r.chargedFallback = result.chargedFallback;
        noteCharged(k, result);
        RefusalCode refusal = RefusalCode::None;
        if (result.status == StoreStatus::Ok) {
            r.decision = result.decision;
            if (result.decision.allowed) {
                r.outcome = PolicyOutcome::Passed;
                recordCharge(k, c, r, false);
            } else if (result.decision.reason == DenyReason::CostExceedsCapacity) {
                r.outcome = PolicyOutcome::CostExceedsCapacity;
                refusal = RefusalCode::CostExceedsCapacity;
            } else {
                r.outcome = policy.mode == PolicyMode::Shadow ? PolicyOutcome::ShadowThrottled
                                                              : PolicyOutcome::Throttled;
                refusal = RefusalCode::RateLimited;
            }
        } else if (result.status == StoreStatus::Transport &&
                   policy.onStoreError == StoreErrorRule::Local) {
            decideLocally(k, r, refusal);
        } else if (result.status != StoreStatus::Transport) {
            storeFailed(result, r, refusal);
        } else if (policy.onStoreError == StoreErrorRule::Deny) {
            r.outcome = PolicyOutcome::FailedClosed;
            refusal = RefusalCode::StoreUnavailable;
        } else {
            r.outcome = PolicyOutcome::FailedOpen;
        }
        if (c.captureKeys) {
            r.key = chargedKey(static_cast<std::int32_t>(k));
            r.scope = work.derived[k].scope();
        }
        settle(owner.request, policy, r, refusal);
    }

    // The shared store is unreachable and the policy says "local": decide call k on this
    // process's share of the limit. The next request asks the shared store again (its client
    // backs off a stalled server, so that costs little), so decisions return to it once it
    // answers. A decision taken here keeps the shared store's transport error in
    // work.results[k] for the report; a local store that failed replaces it.
    void decideLocally(std::size_t k, PolicyResult& r, RefusalCode& refusal) {
        ConsumeRequest onLocal = work.calls[k];
        onLocal.limit = &impl.compiled[r.policy].localLimits[r.tier];
        ConsumeResult local = impl.local->consume(onLocal);
        ConsumeResult& result = work.results[k];
        r.chargedFallback = local.chargedFallback;
        if (local.status != StoreStatus::Ok) {
            storeFailed(local, r, refusal);
            result = std::move(local);
            return;
        }
        result.chargedFallback = local.chargedFallback;
        result.chargedLevel = local.chargedLevel;
        result.chargedPrefix = local.chargedPrefix;
        result.stamp = local.stamp;
        noteCharged(k, result);
        r.outcome = PolicyOutcome::DecidedLocally;
        r.decision = local.decision;
        if (local.decision.allowed) {
            recordCharge(k, out[work.owners[k].request], r, true);
        } else {
            refusal = local.decision.reason == DenyReason::CostExceedsCapacity
                          ? RefusalCode::CostExceedsCapacity
                          : RefusalCode::RateLimited;
        }
    }

    // A full store charged the bucket of a network over its share: its key is named now.
    void noteCharged(std::size_t k, const ConsumeResult& result) {
        identity::DerivedKey& key = work.derived[k];
        if (result.chargedLevel == kChargedAggregate && key.hasPlace) {
            key.noteAggregate(result.chargedPrefix);
        }
    }

    // Keeps what settle() needs of call k's charge, for a policy that charges by outcome.
    void recordCharge(std::size_t k, Check& c, PolicyResult& r, bool local) {
        const CompiledPolicy& compiled = impl.compiled[r.policy];
        if (!compiled.settles) return;
        const ConsumeRequest& call = work.calls[k];
        const ConsumeResult& result = work.results[k];
        PolicyResult::Charge& charge = r.charge;
        charge.pending = true;
        charge.local = local;
        charge.level = result.chargedLevel;
        charge.limitId = call.limitId;
        charge.cost = call.cost;
        charge.stamp = result.stamp;
        charge.generation = compiled.generation;
        charge.key.assign(work.derived[k].chargedKey(result.chargedLevel));
        charge.partition.assign(work.derived[k].chargedPartition(result.chargedLevel));
        c.settles_ = true;
    }

    // Applies a policy's refusal to its request; returns whether the request is refused.
    // Shadow policies decide, count and report, and never refuse. Like nested middleware
    // layers, a refused request goes no further, so it does not spend the quota of the
    // policies after the one that refused it.
    bool settle(std::size_t i, const Policy& policy, const PolicyResult& r, RefusalCode refusal) {
        if (refusal == RefusalCode::None || policy.mode == PolicyMode::Shadow) return false;
        Check& c = out[i];
        c.refusedBy_ = static_cast<std::size_t>(&r - c.results_.data());
        c.code = refusal;
        c.status = statusOf(refusal);
        if (refusal == RefusalCode::RateLimited) c.retryAfter = r.decision.retryAfter;
        c.allowed = false;
        work.requests[i].nextPolicy = static_cast<std::uint32_t>(policyCount);
        return true;
    }

    // Limit hits and store failures of request i, in policy order.
    void reportEvents(std::size_t i) const {
        const Check& c = out[i];
        const auto index = static_cast<std::uint32_t>(i);
        for (std::size_t ri = 0; ri < c.used_; ++ri) {
            const PolicyResult& r = c.results_[ri];
            const Policy& policy = impl.policies.policies[r.policy];
            const std::int32_t k = work.callOf[i * policyCount + ri];
            const bool refused = c.refusal() == &r;
            switch (r.outcome) {
                case PolicyOutcome::Passed:
                case PolicyOutcome::Bypassed:
                    break;
                case PolicyOutcome::NoIdentity:
                case PolicyOutcome::ForwardedMalformed:
                    impl.report(policy, requests[i], {}, r, nullptr, timeOf(i), index, refused);
                    break;
                case PolicyOutcome::Throttled:
                case PolicyOutcome::ShadowThrottled:
                case PolicyOutcome::CostExceedsCapacity:
                    impl.report(policy, requests[i], chargedKey(k), r, nullptr, timeOf(i), index,
                                refused);
                    break;
                case PolicyOutcome::FailedOpen:
                case PolicyOutcome::FailedClosed:
                case PolicyOutcome::StoreRefused:
                case PolicyOutcome::StoreFull:
                case PolicyOutcome::DecidedLocally:
                    impl.report(policy, requests[i], chargedKey(k), r, &work.results[k], timeOf(i),
                                index, refused);
                    break;
            }
        }
    }

    std::string_view chargedKey(std::int32_t k) const {
        return work.derived[k].chargedKey(work.results[k].chargedLevel);
    }
};

void Limiter::check(const RequestView& request, Nanos now, Check& out) const {
    Batch(*impl_, {&request, 1}, {&now, 1}, {&out, 1}).run();
}

void Limiter::checkBatch(std::span<const RequestView> requests, Nanos now,
                         std::span<Check> out) const {
    Batch(*impl_, requests, {&now, 1}, out).run();
}

void Limiter::checkBatch(std::span<const RequestView> requests, std::span<const Nanos> times,
                         std::span<Check> out) const {
    Batch(*impl_, requests, times, out).run();
}

}  // namespace ratelab
