#include "identity/key_deriver.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "identity/headers.h"
#include "ratelab/bucket_key.h"

namespace ratelab::identity {

namespace {

// A budget that names no slot lifetime gets the default; the stores raise either to the time
// the bucket takes to refill.
Nanos slotLifetime(const BudgetConfig& budget) {
    return budget.slotTtl > 0 ? budget.slotTtl : kDefaultSlotTtl;
}

// Appends "/<length>" to a buffer.
std::size_t appendPrefixLength(char* out, std::size_t at, int length) {
    out[at++] = '/';
    auto [end, ec] = std::to_chars(out + at, out + at + 3, length);
    (void)ec;  // 0..128 always fits in three digits
    return static_cast<std::size_t>(end - out);
}

bool isInZeroSlash64(const IpAddress& address) {
    const auto& b = address.bytes();
    for (int k = 0; k < 8; ++k) {
        if (b[k] != 0) return false;
    }
    return true;
}

// RFC 6052's well-known NAT64 prefix, 64:ff9b::/96: a stateless translator in front of an
// IPv6-only service (SIIT-DC) hands it every IPv4 client as 64:ff9b::a.b.c.d. Aggregated to a
// /64, all of them would share one bucket; keyed on the embedded IPv4 address, each is itself.
// Only the translator can source these addresses, so no client can pick its own.
bool isWellKnownNat64(const IpAddress& address) {
    static constexpr std::uint8_t kPrefix[12] = {0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    return std::memcmp(address.bytes().data(), kPrefix, sizeof kPrefix) == 0;
}

// out = prefix + a SHA-256 digest's hex. The hex's length is a constant, so the compiler copies
// it with 16-byte moves, which read back exactly the 16-byte stores writeHex() made moments
// before; libc's memcpy read them 32 bytes at a time, and each such load waited for the stores
// to drain (store forwarding fails across two stores).
void assignDigestKey(std::string& out, std::string_view prefix, std::string_view hex) {
    out.resize(prefix.size() + kSha256HexLength);
    std::memcpy(out.data(), prefix.data(), prefix.size());
    std::memcpy(out.data() + prefix.size(), hex.data(), kSha256HexLength);
}

// The scopes of an address's budget levels: the peer's own, and its networks'. Each, and the
// fallback's "ip:", leaves room in a LevelText for a fixed-length copy of the longest address.
constexpr std::string_view kPeerScopePrefix = "peer:";
constexpr std::string_view kNetworkScopePrefix = "net:";
static_assert(kPeerScopePrefix.size() <= LevelText::kMaxPrefix &&
              kNetworkScopePrefix.size() <= LevelText::kMaxPrefix &&
              kAddressKeyPrefix.size() <= LevelText::kMaxPrefix);

// A budget level's two names for one address: level.scope = scopePrefix + the address as keys
// spell it, level.fallbackKey = "ip:" + the same. The address is formatted once, straight into
// the scope, and copied from there at a fixed length (LevelText).
void assignAddressLevel(DerivedKey::Level& level, std::string_view scopePrefix,
                        const IpAddress& address, int ipv4Prefix, int ipv6Prefix) {
    LevelText& scope = level.scope;
    const std::size_t prefix = scopePrefix.size();
    std::memcpy(scope.data(), scopePrefix.data(), prefix);
    char* text = scope.data() + prefix;
    const std::size_t length = formatKeyAddress(address, ipv4Prefix, ipv6Prefix, text);
    scope.resize(prefix + length);
    level.fallbackKey.assignJoined(kAddressKeyPrefix, text, length);
}

std::string_view attributeValue(const RequestView& request, std::string_view name) {
    for (const Attribute& a : request.attributes) {
        if (a.name == name) return a.value;
    }
    return {};
}

}  // namespace

std::size_t formatKeyAddress(const IpAddress& address, int ipv4Prefix, int ipv6Prefix, char* out) {
    // Formatted from the caller's address, never from a copy, since a key is derived per request.
    if (address.isV4()) {
        if (ipv4Prefix >= 32) return address.format(out);
        return appendPrefixLength(out, address.masked(ipv4Prefix).format(out), ipv4Prefix);
    }
    if (isWellKnownNat64(address)) {
        const auto& b = address.bytes();
        return formatKeyAddress(
            IpAddress::fromV4((std::uint32_t{b[12]} << 24) | (std::uint32_t{b[13]} << 16) |
                              (std::uint32_t{b[14]} << 8) | std::uint32_t{b[15]}),
            ipv4Prefix, ipv6Prefix, out);
    }
    // ::/64 holds loopback, the unspecified address and the deprecated IPv4-compatible form:
    // no subscriber is given that prefix, and aggregating it would lump unrelated hosts.
    if (ipv6Prefix >= 128 || isInZeroSlash64(address)) return address.format(out);
    return appendPrefixLength(out, address.masked(ipv6Prefix).format(out), ipv6Prefix);
}

std::string formatKeyAddress(const IpAddress& address, int ipv4Prefix, int ipv6Prefix) {
    char buffer[kMaxKeyAddressLength];
    return std::string(buffer, formatKeyAddress(address, ipv4Prefix, ipv6Prefix, buffer));
}

std::string routeLabel(const RouteMatch& match) {
    if (!match.pathPattern.empty()) return match.pathPattern;
    return match.pathPrefix.empty() ? std::string("/") : match.pathPrefix;
}

// --- RequestContext ---------------------------------------------------------------------------

const ClientAddress& RequestContext::client() {
    if (clientResolved_) return client_;
    clientResolved_ = true;
    if (proxies_->cidrs.empty()) {
        // No trusted proxy: the peer is the client. Written in place; a returned struct copied
        // back as one 16-byte load of narrower stores stalls store forwarding on every request.
        client_.status = ClientAddress::Status::None;
        if (request_->peer) {
            client_.status = ClientAddress::Status::Ok;
            client_.address = *request_->peer;
        }
        return client_;
    }
    client_ = resolveClient(*request_, *proxies_);
    return client_;
}

// --- KeyDeriver -------------------------------------------------------------------------------

bool keysFromCallerInput(const KeyConfig& key) {
    switch (key.source) {
        case KeySource::Default:
            return key.unverifiedAuthorization == UnverifiedAuthorization::Budget;
        case KeySource::Header:
            return true;
        case KeySource::Composite:
            return std::any_of(key.parts.begin(), key.parts.end(), [](const KeyPart& part) {
                return part.kind == KeyPart::Kind::Header || part.kind == KeyPart::Kind::Method;
            });
        case KeySource::Peer:
        case KeySource::Principal:
            return false;
    }
    return false;
}

KeyDeriver::KeyDeriver(KeyConfig key, BudgetConfig budget, std::string route)
    : key_(std::move(key)), budget_(budget), route_(std::move(route)) {
    compositeUnverified_ = key_.source == KeySource::Composite && keysFromCallerInput(key_);
    compositePeer_ = std::any_of(key_.parts.begin(), key_.parts.end(), [](const KeyPart& part) {
        return part.kind == KeyPart::Kind::Peer;
    });
    const auto anyShorter = [&](const std::vector<AddressBudget>& chain, int keyPrefix) {
        return budget_.enabled &&
               std::any_of(chain.begin(), chain.end(), [&](const AddressBudget& network) {
                   return network.prefix < keyPrefix;
               });
    };
    v4Levels_ = anyShorter(budget_.ipv4Prefixes, key_.ipv4Prefix);
    v6Levels_ = anyShorter(budget_.ipv6Prefixes, key_.ipv6Prefix);
}

KeyDeriver::KeyDeriver(const Policy& policy)
    : KeyDeriver(policy.key, policy.budget, routeLabel(policy.match)) {}

void DerivedKey::noteAggregate(int prefix) {
    char* text = aggregateKey.data();
    std::memcpy(text, kAddressKeyPrefix.data(), kAddressKeyPrefix.size());
    aggregateKey.resize(kAddressKeyPrefix.size() +
                        formatKeyAddress(place.address, prefix, prefix,
                                         text + kAddressKeyPrefix.size()));
}

void KeyDeriver::placeKey(const IpAddress& address, bool withinPeer, DerivedKey& out) const {
    if (address.isV4()) {
        out.place.address = address;
        out.place.prefix = static_cast<std::uint8_t>(key_.ipv4Prefix);
    } else if (isWellKnownNat64(address)) {
        const auto& b = address.bytes();
        out.place.address =
            IpAddress::fromV4((std::uint32_t{b[12]} << 24) | (std::uint32_t{b[13]} << 16) |
                              (std::uint32_t{b[14]} << 8) | std::uint32_t{b[15]});
        out.place.prefix = static_cast<std::uint8_t>(key_.ipv4Prefix);
    } else {
        // ::/64 is never aggregated (formatKeyAddress), so it is in no network either.
        if (isInZeroSlash64(address)) return;
        out.place.address = address;
        out.place.prefix = static_cast<std::uint8_t>(key_.ipv6Prefix);
    }
    out.place.withinPeer = withinPeer;
    out.hasPlace = true;
}

DeriveStatus KeyDeriver::derive(RequestContext& context, DerivedKey& out) const {
    out.partitionIs = DerivedKey::Partition::Key;
    out.levelCount = 0;
    out.slotTtl = 0;
    out.hasPlace = false;
    const DeriveStatus status = deriveSource(context, out);
    if (status != DeriveStatus::PartMissing) return status;
    switch (key_.whenMissing) {
        case WhenMissing::Refuse:
            break;
        case WhenMissing::Skip:
            return DeriveStatus::Skip;
        case WhenMissing::Peer:
            return derivePeer(context, out);
        case WhenMissing::Shared:
            out.key.assign(kMissingPartKey);
            return DeriveStatus::Ok;
    }
    return DeriveStatus::NoIdentity;
}

// The key from the policy's source; PartMissing when its header, principal or attribute is
// absent or empty (before anything is written to `out`).
DeriveStatus KeyDeriver::deriveSource(RequestContext& context, DerivedKey& out) const {
    switch (key_.source) {
        case KeySource::Default:
            return deriveDefault(context, out);
        case KeySource::Peer:
            return derivePeer(context, out);
        case KeySource::Header:
            return deriveHeader(context, out);
        case KeySource::Principal: {
            std::string_view hash = context.principalHash();
            if (hash.empty()) return DeriveStatus::PartMissing;
            assignDigestKey(out.key, kPrincipalKeyPrefix, hash);
            out.partitionIs = DerivedKey::Partition::Key;
            return DeriveStatus::Ok;
        }
        case KeySource::Composite:
            return deriveComposite(context, out);
    }
    return DeriveStatus::NoIdentity;
}

DeriveStatus KeyDeriver::deriveDefault(RequestContext& context, DerivedKey& out) const {
    if (std::string_view hash = context.principalHash(); !hash.empty()) {
        assignDigestKey(out.key, kPrincipalKeyPrefix, hash);
        out.partitionIs = DerivedKey::Partition::Key;
        return DeriveStatus::Ok;
    }
    if (key_.unverifiedAuthorization == UnverifiedAuthorization::Budget) {
        if (std::string_view hash = context.authorizationHash(); !hash.empty()) {
            assignDigestKey(out.key, kAuthorizationKeyPrefix, hash);
            return budgetUnverified(context, out);
        }
    }
    return derivePeer(context, out);
}

DeriveStatus KeyDeriver::derivePeer(RequestContext& context, DerivedKey& out) const {
    const ClientAddress& client = context.client();
    if (client.status == ClientAddress::Status::Malformed) return DeriveStatus::ForwardedMalformed;
    if (client.status == ClientAddress::Status::None) return DeriveStatus::NoIdentity;
    // "ip:<addr>", formatted straight into the key's kept capacity: formatting on the stack and
    // copying would read the text back while its bytes are still in the store buffer, a stall
    // that costs more than resize()'s zero fill (docs/BENCHMARKS.md, "Why the code is as it is").
    std::string& key = out.key;
    constexpr std::size_t prefix = kAddressKeyPrefix.size();
    key.resize(prefix + kMaxKeyAddressLength);
    std::memcpy(key.data(), kAddressKeyPrefix.data(), prefix);
    key.resize(prefix + formatKeyAddress(client.address, key_.ipv4Prefix, key_.ipv6Prefix,
                                         key.data() + prefix));
    out.partitionIs = DerivedKey::Partition::Key;
    placeKey(client.address, false, out);
    addAddressLevels(client.address, out);
    return DeriveStatus::Ok;
}

DeriveStatus KeyDeriver::deriveHeader(RequestContext& context, DerivedKey& out) const {
    std::string_view value = firstHeaderValue(context.request().headers, key_.header);
    if (value.empty()) return DeriveStatus::PartMissing;
    char hex[kSha256HexLength];
    if (!sha256Hex(value, hex)) return DeriveStatus::NoIdentity;
    assignDigestKey(out.key, kHeaderKeyPrefix, std::string_view(hex, kSha256HexLength));
    return budgetUnverified(context, out);
}

DeriveStatus KeyDeriver::deriveComposite(RequestContext& context, DerivedKey& out) const {
    const RequestView& request = context.request();
    Sha256PartsHasher hasher;
    char address[kMaxKeyAddressLength];
    for (const KeyPart& part : key_.parts) {
        std::string_view value;
        switch (part.kind) {
            case KeyPart::Kind::Route:
                continue;  // in clear text in the key, ahead of the hash
            case KeyPart::Kind::Method:
                value = request.method;
                break;
            case KeyPart::Kind::Peer: {
                const ClientAddress& client = context.client();
                if (client.status == ClientAddress::Status::Malformed) {
                    return DeriveStatus::ForwardedMalformed;
                }
                if (client.status == ClientAddress::Status::None) return DeriveStatus::NoIdentity;
                value = std::string_view(address, formatKeyAddress(client.address, key_.ipv4Prefix,
                                                                   key_.ipv6Prefix, address));
                break;
            }
            case KeyPart::Kind::Principal:
                value = request.principal;
                break;
            case KeyPart::Kind::Header:
                value = firstHeaderValue(request.headers, part.name);
                break;
            case KeyPart::Kind::Attribute:
                value = attributeValue(request, part.name);
                break;
        }
        if (value.empty()) return DeriveStatus::PartMissing;
        hasher.addPart(value);
    }
    char hex[kSha256HexLength];
    if (!hasher.finishHex(hex)) return DeriveStatus::NoIdentity;
    out.key.assign("comp:").append(route_).append(":").append(hex, kSha256HexLength);
    if (compositeUnverified_) return budgetUnverified(context, out);
    out.partitionIs = DerivedKey::Partition::Key;
    // A key with the address in it is minted along with addresses: it counts against their
    // networks like the address's own bucket.
    if (compositePeer_) {
        placeKey(context.client().address, true, out);
        addAddressLevels(context.client().address, out);
    }
    return DeriveStatus::Ok;
}

DeriveStatus KeyDeriver::budgetUnverified(RequestContext& context, DerivedKey& out) const {
    if (!budget_.enabled) {
        out.partitionIs = DerivedKey::Partition::Key;
        return DeriveStatus::Ok;
    }
    out.levelCount = 0;
    const ClientAddress& client = context.client();
    if (client.status == ClientAddress::Status::Malformed) return DeriveStatus::ForwardedMalformed;
    out.slotTtl = slotLifetime(budget_);
    DerivedKey::Level& level = out.levels[0];
    out.levelCount = 1;
    if (client.status == ClientAddress::Status::None) {
        level.scope.assign("global");
        level.fallbackKey.assign("overflow");
        level.cap = budget_.global;
        level.fallbackPrefix = 0;
        out.partitionIs = DerivedKey::Partition::Scope;
        return DeriveStatus::Ok;
    }
    assignAddressLevel(level, kPeerScopePrefix, client.address, key_.ipv4Prefix, key_.ipv6Prefix);
    level.cap = budget_.perPeer;
    placeKey(client.address, true, out);
    level.fallbackPrefix = out.hasPlace ? out.place.prefix : 0;
    // The address bucket names the partition: a request from the same address without a
    // credential is keyed "ip:<addr>" in the same place, and a key that is its own partition
    // is hashed once in the store. With address budgets, the outermost network's bucket does.
    out.partitionIs = DerivedKey::Partition::OutermostFallback;
    addAddressLevels(client.address, out);
    return DeriveStatus::Ok;
}

// Address budgets and partitions. Every key of one decision must share one partition (one
// shard lock in the memory store, one Redis Cluster slot), or the budget check and the charge
// could not be one atomic step. A /64's bucket counts against its /48 and its /32, and may be
// charged to either network's bucket instead, so the decision touches keys of all three: the
// partition has to be the outermost network, "ip:<the /32>". The price is locality: every
// client inside one /32 (a whole carrier's customers, say) lands in one memory shard and one
// Cluster slot, so a big carrier's traffic meets on one lock and one node. Splitting the chain
// across partitions would need a cross-slot transaction per request, and a check made apart
// from its charge lets a minting client race past every cap; shorter outer prefixes (a /24
// level, say) widen the partition further, which is why the levels are few and configurable.
void KeyDeriver::appendAddressLevels(const IpAddress& address, DerivedKey& out) const {
    const bool v4 = address.isV4() || isWellKnownNat64(address);
    // ::/64 (loopback, unspecified) is never aggregated, so it has no enclosing networks.
    if (!v4 && isInZeroSlash64(address)) return;
    const std::vector<AddressBudget>& chain = v4 ? budget_.ipv4Prefixes : budget_.ipv6Prefixes;
    const int keyPrefix = v4 ? key_.ipv4Prefix : key_.ipv6Prefix;
    for (const AddressBudget& network : chain) {
        if (network.prefix >= keyPrefix || out.levelCount == out.levels.size()) continue;
        DerivedKey::Level& level = out.levels[out.levelCount++];
        assignAddressLevel(level, kNetworkScopePrefix, address,
                           v4 ? network.prefix : key_.ipv4Prefix,
                           v4 ? key_.ipv6Prefix : network.prefix);
        level.cap = network.cap;
        level.fallbackPrefix = static_cast<std::uint8_t>(network.prefix);
        out.slotTtl = slotLifetime(budget_);
        out.partitionIs = DerivedKey::Partition::OutermostFallback;
    }
}

}  // namespace ratelab::identity
