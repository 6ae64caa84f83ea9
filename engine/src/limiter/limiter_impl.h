#pragma once

// The limiter's state, shared by its files: limiter/limiter.cpp (building, retuning, settling) and
// limiter/limiter_check.cpp (deciding). Private to the engine.

#include <xxhash.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "support/hex.h"
#include "identity/key_deriver.h"
#include "policy/compiled_policy.h"
#include "ratelab/limiter.h"
#include "ratelab/memory_store.h"

namespace ratelab {

namespace limiter_detail {

inline bool isIn(const std::vector<std::string>& list, std::string_view value) {
    return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace limiter_detail

struct Limiter::Impl {
    PolicySet policies;
    std::shared_ptr<Store> store;
    LimiterOptions options;
    std::vector<CompiledPolicy> compiled;  // one per policy, in order
    // Where policies with on_store_error "local" decide while the shared store is unreachable:
    // this process's own memory, created when the first such policy appears. A limiter built
    // to take over from another (a reload) takes over its local buckets too, as it does the
    // shared ones' limit ids.
    std::shared_ptr<Store> local;

    std::uint32_t nextLimitId = 0;  // never reused, so a fresh policy never meets old buckets

    Impl(PolicySet p, std::shared_ptr<Store> s, LimiterOptions o, const Impl* previous = nullptr)
        : policies(std::move(p)), store(std::move(s)), options(o) {
        if (options.keyHashSecret == 0) {
            std::random_device device;
            options.keyHashSecret = (static_cast<std::uint64_t>(device()) << 32) ^ device();
        }
        if (previous) {
            nextLimitId = previous->nextLimitId;
            local = previous->local;
        }
        for (const Policy& policy : policies.policies) {
            std::uint32_t firstId = nextLimitId;
            bool carried = false;
            if (previous) {
                for (std::size_t j = 0; j < previous->policies.policies.size(); ++j) {
                    if (keepsBucketState(previous->policies.policies[j], policy)) {
                        firstId = previous->compiled[j].firstLimitId;
                        carried = true;
                        break;
                    }
                }
            }
            compiled.push_back(
                compilePolicy(policy, firstId, policies.store.replicas, options.unixTimeAtZero));
            if (!carried) {
                nextLimitId += static_cast<std::uint32_t>(compiled.back().limitNames.size());
            }
        }
        makeLocalStore();
    }

    // The memory store of on_store_error "local", once a policy has local limits.
    void makeLocalStore() {
        for (const CompiledPolicy& c : compiled) {
            if (local || c.localLimits.empty()) continue;
            // Seeded from the key-hash secret: random in a server, fixed where a simulator
            // fixes the secret, so that its runs (and reports) repeat.
            MemoryStoreOptions memory;
            memory.maxBuckets = policies.store.maxBuckets;
            memory.hashSeed = options.keyHashSecret ^ 0x6c6f63616c;
            if (memory.hashSeed == 0) memory.hashSeed = 1;
            memory.shards = options.localStoreShards;
            local = makeMemoryStore(memory);
        }
    }

    // The bound of a store call for `policy`: its store_timeout_ms, shortened to the limiter's
    // maxStoreTimeout when that is shorter. The one place a call's timeout is decided.
    Nanos storeTimeout(const Policy& policy) const {
        const Nanos cap = options.maxStoreTimeout;
        return cap > 0 && cap < policy.storeTimeout ? cap : policy.storeTimeout;
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
        if (!request.principal.empty() && limiter_detail::isIn(policy.bypass.principals, request.principal))
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
        writeHex64(XXH3_64bits_withSeed(key.data(), key.size(), options.keyHashSecret), out);
    }

    // The store call for result r of a Check, if its response changes anything.
    // The store call that applies `status` to result r's charge; false when it changes nothing
    // or the result was decided elsewhere (another limiter, limits retuned since).
    bool settleRequest(const PolicyResult& r, int status, Nanos now, SettleRequest& out) const {
        if (!r.charge.pending || r.policy >= compiled.size()) return false;
        const CompiledPolicy& c = compiled[r.policy];
        if (c.generation != r.charge.generation) return false;
        const Policy& policy = policies.policies[r.policy];
        const std::int64_t cost = settleCost(policy.charge, status, r.charge.cost);
        if (cost == 0) return false;
        const std::vector<Limit>& limits = r.charge.local ? c.localLimits : c.limits;
        if (r.tier >= limits.size() || (r.charge.local && !local)) return false;
        out = SettleRequest{r.charge.limitId,   c.limitNames[r.tier],
                            &limits[r.tier],    r.charge.partition,
                            r.charge.key,       cost,
                            r.charge.stamp,     now,
                            storeTimeout(policy)};
        return true;
    }

    /// `refused`: this policy refused the request (Check::refusal()).
    void report(const Policy& policy, const RequestView& request, std::string_view key,
                const PolicyResult& r, const ConsumeResult* storeResult, Nanos now,
                std::uint32_t index, bool refused) const {
        LimitObserver* observer = options.observer;
        if (!observer) return;
        char hash[16];
        keyHash(key, hash);
        std::string_view hashView(hash, key.empty() ? 0 : sizeof hash);
        if (storeResult && storeResult->status != StoreStatus::Ok) {
            observer->onStoreError(StoreErrorEvent{policy.name, request.path, hashView, key,
                                                   storeResult->status, storeResult->error,
                                                   r.outcome, now, index, r.decision, refused});
        } else {
            observer->onLimitHit(LimitEvent{policy.name, request.path, hashView, key, r.outcome,
                                            r.decision, now, index, refused});
        }
    }
};

}  // namespace ratelab
