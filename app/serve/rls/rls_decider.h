#pragma once

// The decisions of Envoy's rate limit service, as envoyproxy/ratelimit makes them, over
// ratelab's stores and algorithms: each descriptor of a call matched against the configuration's
// tree (the most specific node), its rule's limits charged on a key made of the domain, the
// matched path and the descriptor's values, and the answers put together as the original does
// (overall code, quota mode, shadow rules, replaces, unlimited). docs/SERVE.md has the mapping.

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "formats/envoy/rls_config.h"
#include "ratelab/store.h"
#include "serve/rls/rls_types.h"

namespace ratelab::serve::rls {

/// What the decider reports about each limit it charged, for the service's counters (the
/// original's total_hits, over_limit, near_limit, within_limit, shadow_mode).
struct RlsHit {
    std::string_view domain;
    /// "<domain>.<key_value>.<key>...": the matched path as the original names its counters
    /// (with detailed_metric, the request's own values).
    std::string_view statsKey;
    std::uint32_t requestsPerUnit = 0;
    std::uint64_t hits = 0;  ///< the hits addend charged
    bool overLimit = false;  ///< over, shadow rules included
    bool nearLimit = false;  ///< within, past 80 % of the limit
    bool shadow = false;     ///< the rule is in shadow mode
};

/// Receives the decider's reports. Called from the deciding threads; must be thread-safe.
class RlsObserver {
public:
    virtual ~RlsObserver() = default;
    virtual void onHit(const RlsHit& hit) = 0;
    /// A descriptor of a domain no file declares.
    virtual void onDomainNotFound(std::string_view domain) { (void)domain; }
};

/// What happens to a limit when its store cannot be reached (StoreStatus::Transport). A store
/// that answers with a refusal (out of memory, read-only) always fails the call.
enum class RlsStoreErrorRule : std::uint8_t {
    FailCall,  ///< the call ends in UNAVAILABLE, as the original's does; Envoy's filter decides
    FailOpen,  ///< the limit passes
    Deny,      ///< the limit is over
    /// The limit is decided on this process's own memory, on its share of the limit
    /// (perReplicaLimit with `replicas`).
    Local,
};

struct RlsDeciderOptions {
    /// The original's SHADOW_MODE: an over-limit call is answered OK (statuses keep their codes).
    bool globalShadowMode = false;
    /// The original's QUOTA_MODE: every descriptor is in quota mode.
    bool globalQuotaMode = false;
    /// For the limits whose ratelab block does not name on_store_error.
    RlsStoreErrorRule onStoreError = RlsStoreErrorRule::FailCall;
    int replicas = 1;  ///< processes sharing the store (RlsStoreErrorRule::Local)
    /// The store's limit ids this decider takes, from here up: above those of an HTTP limiter
    /// sharing the store (which start at 0). Kept from the decider a reload replaces.
    std::uint32_t firstLimitId = 2048;
    /// Bound on each store call (nanoseconds; 0: the store's default), a service's
    /// --store-timeout-ms. Past it the store answers StoreStatus::Transport and the limit's
    /// store-error rule decides.
    Nanos storeTimeout = 0;
    /// Not owned; must outlive the decider. Null: no reports.
    RlsObserver* observer = nullptr;
};

/// Decides ShouldRateLimit calls. Immutable once built; decide() and decideBatch() are
/// thread-safe (the shipped stores are). Never throws on a call.
class RlsDecider {
public:
    /// A decider for `config` over `store`. REQUIRES: config loaded without errors.
    RlsDecider(std::shared_ptr<const formats::envoy::RlsConfig> config,
               std::shared_ptr<Store> store, RlsDeciderOptions options = {});
    /// A reload: a decider for `config` on `previous`'s store. A rule whose domain, matched path
    /// and limit numbers are unchanged keeps its counters (its buckets have the same keys and
    /// limit ids); `previous` may go on deciding meanwhile. REQUIRES: as above.
    RlsDecider(std::shared_ptr<const formats::envoy::RlsConfig> config, const RlsDecider& previous,
               RlsDeciderOptions options = {});
    ~RlsDecider();
    RlsDecider(const RlsDecider&) = delete;
    RlsDecider& operator=(const RlsDecider&) = delete;

    /// Decides one call at `now` (Unix time: the original's windows are aligned on it).
    RlsResult decide(const RlsRequest& request, Nanos now) const;

    /// Decides requests[i] into out[i], exactly as decide() on each in turn would, with every
    /// limit the batch charges sent to the store in one consumeBatch() call.
    /// REQUIRES: out.size() >= requests.size().
    void decideBatch(std::span<const RlsRequest> requests, Nanos now,
                     std::span<RlsResult> out) const;

    /// As decideBatch() above, with every store call bounded by `storeTimeout` (nanoseconds) in
    /// place of the options' storeTimeout: a listener that queued the calls gives what is left of
    /// their bound. `storeTimeout` <= 0: the calls have no time left, nothing is sent to the store
    /// and every limit it would have charged is decided by its store-error rule, as when the store
    /// cannot be reached. REQUIRES: as above.
    void decideBatch(std::span<const RlsRequest> requests, Nanos now, std::span<RlsResult> out,
                     Nanos storeTimeout) const;

    const formats::envoy::RlsConfig& config() const;
    Store& store() const;

private:
    void decideBatchWithin(std::span<const RlsRequest> requests, Nanos now,
                           std::span<RlsResult> out, Nanos storeTimeout, bool sendToStore) const;

    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// The proto's unit for a configuration's unit.
RlsUnit rlsUnit(formats::envoy::RateUnit unit);

}  // namespace ratelab::serve::rls
