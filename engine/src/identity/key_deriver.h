#pragma once

// Client identity: who a request belongs to. The limiter calls this once per matching policy;
// work shared by the policies of one request (proxy resolution, SHA-256 of the credential)
// happens once, in RequestContext.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "identity/forwarded.h"
#include "identity/sha256.h"
#include "ratelab/ip_address.h"
#include "ratelab/policy.h"
#include "ratelab/request.h"
#include "ratelab/store.h"

namespace ratelab::identity {

/// Per-request state shared by the policies of one decision. Computes lazily and at most once:
/// the client address (walking the forwarded header right to left while hops are trusted) and
/// the SHA-256 of the Authorization header and of the principal. Not thread-safe; one per
/// request (reset() starts the next one). `request` and `proxies` must outlive its use.
class RequestContext {
public:
    RequestContext() = default;
    RequestContext(const RequestView& request, const TrustedProxies& proxies) {
        reset(request, proxies);
    }
    /// Forgets everything computed for the previous request.
    void reset(const RequestView& request, const TrustedProxies& proxies) {
        request_ = &request;
        proxies_ = &proxies;
        clientResolved_ = false;
        authorization_.done = false;
        principal_.done = false;
    }

    const RequestView& request() const { return *request_; }
    const ClientAddress& client();
    /// Lowercase hex SHA-256 of the first Authorization header's value (trimmed); empty when
    /// absent or blank.
    std::string_view authorizationHash();
    /// Lowercase hex SHA-256 of the verified principal; empty when there is none.
    std::string_view principalHash();

private:
    // A hash computed at most once: empty when its input is absent or hashing failed.
    struct CachedHash {
        bool done = false;
        bool present = false;
        char hex[kSha256HexLength];
    };
    std::string_view cached(CachedHash& slot, std::string_view input);

    const RequestView* request_ = nullptr;
    const TrustedProxies* proxies_ = nullptr;
    ClientAddress client_;
    bool clientResolved_ = false;
    CachedHash authorization_;
    CachedHash principal_;
};

enum class DeriveStatus : std::uint8_t {
    Ok,
    NoIdentity,          ///< nothing to key on: 412 identity_unavailable
    ForwardedMalformed,  ///< the address is needed and the trusted proxy's header is garbage: 412
};

/// A derived bucket key. Reuse one across requests: its strings keep their capacity.
struct DerivedKey {
    /// Which of the strings below the partition is (see ConsumeRequest::partition): it is
    /// always one of them, so it is named rather than copied.
    enum class Partition : std::uint8_t { Key, FallbackKey, Scope };

    std::string key;          ///< "princ:<sha256>", "auth:<sha256>", "ip:<addr>", ...
    std::string scope;        ///< budget scope, empty when no budget applies
    std::string fallbackKey;  ///< charged when the scope is full
    std::uint32_t cap = 0;
    Nanos slotTtl = 0;
    Partition partitionIs = Partition::Key;

    std::string_view partition() const {
        switch (partitionIs) {
            case Partition::FallbackKey:
                return fallbackKey;
            case Partition::Scope:
                return scope;
            case Partition::Key:
                break;
        }
        return key;
    }
    bool hasBudget() const { return !scope.empty(); }
    /// A BucketBudget viewing this key's strings; valid while this DerivedKey is unchanged.
    BucketBudget budget() const { return BucketBudget{scope, fallbackKey, cap, slotTtl}; }
};

/// The text a composite key's `route` part stands for: the policy's route pattern, or its path
/// prefix. The policy's route, not the request's path, so that "/login/" or "/login/x" cannot
/// mint a fresh per-account bucket under a policy matching "/login".
std::string routeLabel(const RouteMatch& match);

/// Derives keys for one policy's KeyConfig and BudgetConfig. Immutable after construction and
/// thread-safe. See DESIGN.md, "Client identity", for the default chain.
///
/// Keys made from caller-controlled input (the Authorization header under `default`, a named
/// header, a composite with a header or method part) are budgeted: while the budget is enabled
/// each peer (or, without one, the whole service) holds at most `per_peer` (`global`) of them.
class KeyDeriver {
public:
    /// `route` is the policy's routeLabel(); only composite keys use it.
    KeyDeriver(KeyConfig key, BudgetConfig budget, std::string route = "/");
    /// The policy's key rules, budget and route.
    explicit KeyDeriver(const Policy& policy);

    /// Fills `out` for this request. Never throws; allocates only when `out` must grow.
    DeriveStatus derive(RequestContext& context, DerivedKey& out) const;

    const KeyConfig& config() const { return key_; }
    const BudgetConfig& budgetConfig() const { return budget_; }

private:
    DeriveStatus deriveDefault(RequestContext& context, DerivedKey& out) const;
    DeriveStatus derivePeer(RequestContext& context, DerivedKey& out) const;
    DeriveStatus deriveHeader(RequestContext& context, DerivedKey& out) const;
    DeriveStatus deriveComposite(RequestContext& context, DerivedKey& out) const;
    /// Sets `out`'s partition and budget for an unverified key already in out.key.
    DeriveStatus budgetUnverified(RequestContext& context, DerivedKey& out) const;

    KeyConfig key_;
    BudgetConfig budget_;
    std::string route_;
    bool compositeUnverified_ = false;  ///< a composite part is caller-controlled
};

/// Longest text formatKeyAddress writes: an IPv6 address (45) plus "/128".
inline constexpr std::size_t kMaxKeyAddressLength = 49;

/// Writes "198.51.100.7", "198.51.100.0/24" or "2001:db8:1:2::/64": the address aggregated to
/// the policy's prefix for its family, as used in keys and scopes. Addresses in ::/64 (loopback,
/// unspecified) are never aggregated; IPv4 translated into 64:ff9b::/96 (RFC 6052) is IPv4. `out`
/// holds at least kMaxKeyAddressLength bytes; returns the length written. Allocates nothing.
std::size_t formatKeyAddress(const IpAddress& address, int ipv4Prefix, int ipv6Prefix, char* out);
std::string formatKeyAddress(const IpAddress& address, int ipv4Prefix, int ipv6Prefix);

}  // namespace ratelab::identity
