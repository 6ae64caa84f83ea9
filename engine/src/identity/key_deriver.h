#pragma once

// Client identity: who a request belongs to. The limiter calls this once per matching policy;
// work shared by the policies of one request (proxy resolution, SHA-256 of the credential)
// happens once, in RequestContext.

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "identity/forwarded.h"
#include "identity/headers.h"
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
    std::string_view authorizationHash() {
        if (authorization_.done) return cached(authorization_, {});
        return cached(authorization_, firstHeaderValue(request_->headers, "authorization"));
    }
    /// Lowercase hex SHA-256 of the verified principal; empty when there is none.
    std::string_view principalHash() { return cached(principal_, request_->principal); }

private:
    // A hash computed at most once: empty when its input is absent or hashing failed.
    struct CachedHash {
        bool done = false;
        bool present = false;
        char hex[kSha256HexLength];
    };
    // Inline, as are the two above: most requests carry no principal, many no Authorization
    // header, and a call to learn that cost the IPv4 simulator stream about 50 instructions a
    // request.
    std::string_view cached(CachedHash& slot, std::string_view input) {
        if (!slot.done) {
            slot.done = true;
            slot.present = !input.empty() && sha256Hex(input, slot.hex);
        }
        return slot.present ? std::string_view(slot.hex, kSha256HexLength) : std::string_view();
    }

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
    Skip,                ///< the key's part is missing and key.when_missing is "skip"
    /// The key's header, principal or attribute is absent or empty. Only between KeyDeriver's
    /// own steps: derive() turns it into what key.when_missing says.
    PartMissing,
};

/// Longest text formatKeyAddress writes: an IPv6 address (45) plus "/128".
inline constexpr std::size_t kMaxKeyAddressLength = 49;

/// A budget level's name, kept in place: "peer:" or "net:" and an address as keys spell it
/// (formatKeyAddress), "ip:" and the same, "global" or "overflow". Every such name fits, with
/// room for a fixed-length copy of the longest address after the longest prefix, so a level is
/// written without std::string's zero fill on resize() and without a call to copy the address,
/// once per budget level of every keyed request.
class LevelText {
public:
    static constexpr std::size_t kCapacity = 64;
    static constexpr std::size_t kMaxPrefix = kCapacity - kMaxKeyAddressLength;

    operator std::string_view() const { return {text_, size_}; }
    char* data() { return text_; }
    const char* data() const { return text_; }
    std::size_t size() const { return size_; }
    /// REQUIRES: n <= kCapacity, and the first n bytes written through data().
    void resize(std::size_t n) { size_ = static_cast<std::uint8_t>(n); }
    /// `prefix` and the address text at `address` (kMaxKeyAddressLength bytes readable there,
    /// `length` of them the address). REQUIRES: prefix.size() <= kMaxPrefix.
    void assignJoined(std::string_view prefix, const char* address, std::size_t length) {
        std::memcpy(text_, prefix.data(), prefix.size());
        std::memcpy(text_ + prefix.size(), address, kMaxKeyAddressLength);
        size_ = static_cast<std::uint8_t>(prefix.size() + length);
    }
    /// REQUIRES: text.size() <= kCapacity (a constant name).
    void assign(std::string_view text) {
        std::memcpy(text_, text.data(), text.size());
        size_ = static_cast<std::uint8_t>(text.size());
    }

private:
    char text_[kCapacity] = {};  // zeroed once, so a fixed-length copy reads no indeterminate byte
    std::uint8_t size_ = 0;
};

/// A derived bucket key. Reuse one across requests: its strings keep their capacity.
struct DerivedKey {
    /// Which of the strings below the partition is (see ConsumeRequest::partition): it is
    /// always one of them, so it is named rather than copied.
    enum class Partition : std::uint8_t { Key, OutermostFallback, Scope };

    /// One budget level (BucketBudget): level 0 is the innermost.
    struct Level {
        LevelText scope;        ///< "peer:198.51.100.7", "net:2001:db8:1::/48", "global"
        LevelText fallbackKey;  ///< charged when the scope is full
        std::uint32_t cap = 0;
        std::uint8_t fallbackPrefix = 0;  ///< BucketBudget::fallbackPrefix
    };

    std::string key;  ///< "princ:<sha256>", "auth:<sha256>", "ip:<addr>", ...
    std::array<Level, kMaxBudgetLevels> levels;
    std::size_t levelCount = 0;  ///< 0: no budget applies
    Nanos slotTtl = 0;
    Partition partitionIs = Partition::Key;
    /// Where the key sits among the networks a full store is shared between, when it was
    /// derived from an address (ConsumeRequest::place).
    KeyPlace place;
    bool hasPlace = false;
    /// "ip:<network>": the bucket a full store charged instead (kChargedAggregate), written by
    /// noteAggregate().
    LevelText aggregateKey;

    std::string_view partition() const {
        switch (partitionIs) {
            case Partition::OutermostFallback:
                return levels[levelCount - 1].fallbackKey;
            case Partition::Scope:
                return levels[0].scope;
            case Partition::Key:
                break;
        }
        return key;
    }
    bool hasBudget() const { return levelCount > 0; }
    /// The innermost budget scope ("peer:..." for a credential), empty without a budget.
    std::string_view scope() const { return hasBudget() ? levels[0].scope : std::string_view(); }
    /// The key a store charged: the key itself (level 0), a level's fallback (1..levelCount),
    /// or the network noteAggregate() named (kChargedAggregate).
    std::string_view chargedKey(std::size_t chargedLevel) const {
        if (chargedLevel == kChargedAggregate) return aggregateKey;
        return chargedLevel == 0 || chargedLevel > levelCount
                   ? std::string_view(key)
                   : std::string_view(levels[chargedLevel - 1].fallbackKey);
    }
    /// The partition of the key a store charged: a network's own bucket is its own partition.
    std::string_view chargedPartition(std::size_t chargedLevel) const {
        return chargedLevel == kChargedAggregate ? std::string_view(aggregateKey) : partition();
    }
    /// Names the network a full store charged instead of the key: the place's address at
    /// `prefix` ("ip:2001:db8::/32"). REQUIRES: hasPlace.
    void noteAggregate(int prefix);
    /// The chain as BucketBudgets viewing this key's strings, written into `out`; returns the
    /// innermost level, or null without a budget. Valid while this DerivedKey and `out` are
    /// unchanged.
    const BucketBudget* budget(std::array<BucketBudget, kMaxBudgetLevels>& out) const {
        if (levelCount == 0) return nullptr;
        for (std::size_t i = levelCount; i-- > 0;) {
            out[i] = BucketBudget{levels[i].scope, levels[i].fallbackKey, levels[i].cap, slotTtl,
                                  i + 1 < levelCount ? &out[i + 1] : nullptr,
                                  levels[i].fallbackPrefix};
        }
        return &out[0];
    }
};

/// Whether keys of this configuration can come from input the caller writes, and are therefore
/// held by a bucket budget: the Authorization header under `default` (unverified_authorization
/// "budget"), a named header, a composite with a header or method part. The key deriver budgets
/// exactly these; the policy checks, lints and exports ask here.
bool keysFromCallerInput(const KeyConfig& key);

/// keysFromCallerInput() and the budget enabled: whether the engine budgets this policy's keys.
inline bool budgetApplies(const KeyConfig& key, const BudgetConfig& budget) {
    return budget.enabled && keysFromCallerInput(key);
}

/// The text a composite key's `route` part stands for: the policy's route pattern, or its path
/// prefix. The policy's route, not the request's path, so that "/login/" or "/login/x" cannot
/// mint a fresh per-account bucket under a policy matching "/login".
std::string routeLabel(const RouteMatch& match);

/// Derives keys for one policy's KeyConfig and BudgetConfig. Immutable after construction and
/// thread-safe. The default chain (KeySource::Default): the verified principal, else the
/// Authorization header (hashed, within the budget; skipped under unverified_authorization
/// "ignore"), else the peer address aggregated to its prefix, else no key (412).
///
/// Keys made from caller-controlled input (the Authorization header under `default`, a named
/// header, a composite with a header or method part) are budgeted: while the budget is enabled
/// each peer (or, without one, the whole service) holds at most `per_peer` (`global`) of them.
/// Keys made from a client address (its own bucket, and credentials budgeted on it) also count
/// against the address budget's enclosing networks (budget.ipv6_prefixes / ipv4_prefixes).
class KeyDeriver {
public:
    /// `route` is the policy's routeLabel(); only composite keys use it.
    KeyDeriver(KeyConfig key, BudgetConfig budget, std::string route = "/");
    /// The policy's key rules, budget and route.
    explicit KeyDeriver(const Policy& policy);

    /// Fills `out` for this request. Never throws; allocates only when `out` must grow. A header,
    /// principal or composite key whose part is missing follows key.when_missing: NoIdentity
    /// (refuse), Skip, the peer's key (peer), or kMissingPartKey (shared).
    DeriveStatus derive(RequestContext& context, DerivedKey& out) const;

    const KeyConfig& config() const { return key_; }
    const BudgetConfig& budgetConfig() const { return budget_; }

private:
    DeriveStatus deriveSource(RequestContext& context, DerivedKey& out) const;
    DeriveStatus deriveDefault(RequestContext& context, DerivedKey& out) const;
    DeriveStatus derivePeer(RequestContext& context, DerivedKey& out) const;
    DeriveStatus deriveHeader(RequestContext& context, DerivedKey& out) const;
    DeriveStatus deriveComposite(RequestContext& context, DerivedKey& out) const;
    /// Sets `out`'s partition and budget for an unverified key already in out.key.
    DeriveStatus budgetUnverified(RequestContext& context, DerivedKey& out) const;
    /// Appends the address budget's levels for `address` (its /48, then its /32, ...) and makes
    /// the outermost one's bucket the partition. Nothing when no level applies, without a call
    /// for an IPv4 address when no IPv4 level can (the default budget has IPv6 levels only).
    void addAddressLevels(const IpAddress& address, DerivedKey& out) const {
        if (address.isV4() ? v4Levels_ : v4Levels_ || v6Levels_) appendAddressLevels(address, out);
    }
    /// REQUIRES: the budget is enabled (v4Levels_ or v6Levels_ says so).
    void appendAddressLevels(const IpAddress& address, DerivedKey& out) const;
    /// Places the key among networks: `address` keyed at the policy's prefix for its family,
    /// the key that network's own bucket or one made within it.
    void placeKey(const IpAddress& address, bool withinPeer, DerivedKey& out) const;

    KeyConfig key_;
    BudgetConfig budget_;
    std::string route_;
    bool compositeUnverified_ = false;  ///< a composite part is caller-controlled
    bool compositePeer_ = false;        ///< a composite part is the client address
    /// Whether the address budget has a level for IPv4 (and IPv4-embedding NAT64) addresses,
    /// and for other IPv6 addresses: enabled, with a prefix shorter than the key's.
    bool v4Levels_ = false;
    bool v6Levels_ = false;
};

/// Writes "198.51.100.7", "198.51.100.0/24" or "2001:db8:1:2::/64": the address aggregated to
/// the policy's prefix for its family, as used in keys and scopes. Addresses in ::/64 (loopback,
/// unspecified) are never aggregated; IPv4 translated into 64:ff9b::/96 (RFC 6052) is IPv4. `out`
/// holds at least kMaxKeyAddressLength bytes; returns the length written. Allocates nothing.
std::size_t formatKeyAddress(const IpAddress& address, int ipv4Prefix, int ipv6Prefix, char* out);
std::string formatKeyAddress(const IpAddress& address, int ipv4Prefix, int ipv6Prefix);

}  // namespace ratelab::identity
