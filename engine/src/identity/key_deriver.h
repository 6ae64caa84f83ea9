#pragma once

// Client identity: who a request belongs to. The limiter calls this once per matching policy;
// work shared by the policies of one request (proxy resolution, SHA-256 of the credential)
// happens once, in RequestContext.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ratelab/ip_address.h"
#include "ratelab/policy.h"
#include "ratelab/request.h"
#include "ratelab/store.h"

namespace ratelab::identity {

/// The client address after trusted-proxy resolution.
struct ClientAddress {
    enum class Status : std::uint8_t {
        None,       ///< no peer, and no forwarded header from a trusted proxy
        Ok,         ///< `address` is the client
        Malformed,  ///< a trusted proxy sent a forwarded header that does not parse: fail closed
    };
    Status status = Status::None;
    IpAddress address;
};

/// Per-request state shared by the policies of one decision. Computes lazily and at most once:
/// the client address (walking the forwarded header right to left while hops are trusted) and
/// the SHA-256 of the Authorization header. Not thread-safe; one per request.
class RequestContext {
public:
    RequestContext(const RequestView& request, const TrustedProxies& proxies);

    const RequestView& request() const { return request_; }
    const ClientAddress& client();
    /// Lowercase hex SHA-256 of the first Authorization header's value; empty when absent.
    std::string_view authorizationHash();

private:
    const RequestView& request_;
    const TrustedProxies& proxies_;
    std::optional<ClientAddress> client_;
    bool authorizationDone_ = false;
    char authorizationHex_[64];
    std::size_t authorizationLength_ = 0;
};

enum class DeriveStatus : std::uint8_t {
    Ok,
    NoIdentity,          ///< nothing to key on: 412 identity_unavailable
    ForwardedMalformed,  ///< the address is needed and the trusted proxy's header is garbage: 412
};

/// A derived bucket key. Reuse one across requests: its strings keep their capacity.
struct DerivedKey {
    std::string partition;    ///< see ConsumeRequest::partition
    std::string key;          ///< "princ:<sha256>", "auth:<sha256>", "ip:<addr>", ...
    std::string scope;        ///< budget scope, empty when no budget applies
    std::string fallbackKey;  ///< charged when the scope is full
    std::uint32_t cap = 0;
    Nanos slotTtl = 0;

    bool hasBudget() const { return !scope.empty(); }
    /// A BucketBudget viewing this key's strings; valid while this DerivedKey is unchanged.
    BucketBudget budget() const { return BucketBudget{scope, fallbackKey, cap, slotTtl}; }
};

/// Derives keys for one policy's KeyConfig and BudgetConfig. Immutable after construction and
/// thread-safe. See DESIGN.md, "Client identity", for the default chain.
class KeyDeriver {
public:
    KeyDeriver(KeyConfig key, BudgetConfig budget);

    /// Fills `out` for this request. Never throws; allocates only when `out` must grow.
    DeriveStatus derive(RequestContext& context, DerivedKey& out) const;

    const KeyConfig& config() const { return key_; }

private:
    KeyConfig key_;
    BudgetConfig budget_;
};

/// Writes "198.51.100.7", "198.51.100.0/24" or "2001:db8:1:2::/64": the address aggregated to
/// the policy's prefix for its family, as used in keys and scopes. Addresses in ::/64 (loopback,
/// unspecified) are never aggregated.
std::string formatKeyAddress(const IpAddress& address, int ipv4Prefix, int ipv6Prefix);

}  // namespace ratelab::identity
