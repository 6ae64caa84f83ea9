#pragma once

// Where a bucket sits among the networks a full store is shared between (the fair-share rule,
// docs/RELIABILITY.md), written once for every store: the aggregates a bucket counts against,
// outermost first, each named by a 64-bit id that the memory store and the Redis scripts both
// use, and the bucket's place among the buckets of its innermost aggregate.
//
// The aggregates of a network bucket address/q are its enclosing networks every 8 bits, from
// IPv6 /16 to /64 and IPv4 /8 to /24, shorter than q. A key made within a peer (a credential
// budgeted on the address, a composite key with the address in it) counts against the peer's
// network address/p as one more, innermost, aggregate. A key not derived from an address has
// none. Every aggregate has at most 256 network children (the next 8 bits), so no node of the
// tree is ever wide except the root and a peer's keys.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ratelab/store.h"

namespace ratelab::store {

/// Six IPv6 levels below /64 (or seven with keys longer than /64) and a peer.
inline constexpr std::size_t kMaxFairDepth = 8;

/// The aggregates of one bucket and its place among its innermost aggregate's own buckets.
struct FairPath {
    std::size_t depth = 0;  ///< aggregates; 0: none, the fair-share rule does not place it
    std::array<std::uint64_t, kMaxFairDepth> node{};   ///< ids, outermost first; never 0
    std::array<std::uint8_t, kMaxFairDepth> prefix{};  ///< each aggregate's network prefix
    /// Orders the buckets of one aggregate where their last use ties: a network bucket by its
    /// bits below the aggregate (`orderTag` its prefix), a key within a peer by the first 64
    /// bits of its digest (`orderTag` 0).
    std::uint64_t order = 0;
    std::uint8_t orderTag = 0;
};

/// The aggregates of the bucket a request's key names (`key` its text, for the order of a key
/// within a peer).
void keyPath(const KeyPlace& place, std::string_view key, FairPath& out);

/// The aggregates of a key made within the peer address/prefix whose place among the peer's
/// keys is `order` (keyOrder of its text): keyPath for a key within a peer, from what the
/// memory store keeps of it.
void peerPath(const IpAddress& address, int prefix, std::uint64_t order, FairPath& out);

/// The order of a key made within a peer among the peer's keys: the last 16 hex digits of its
/// text (the digest's), 0 when it does not end in them.
std::uint64_t keyOrder(std::string_view key);

/// The aggregates of the network bucket "ip:<address/prefix>" (a budget level's fallback, or
/// the bucket of an aggregate over its share).
void networkPath(const IpAddress& address, int prefix, FairPath& out);

/// "ip:<address/prefix>", the bucket of the network, as keys spell it (its own partition).
std::string networkKey(const IpAddress& address, int prefix);

/// A node id as the Redis scripts name it: 16 lowercase hex digits.
void nodeHex(std::uint64_t id, char out[16]);

/// A bucket's place among its aggregate's own buckets as the Redis scripts compare it (16 hex
/// of `order`, 2 of `orderTag`, 8 of the limit id): the same order as the memory store's
/// (order, orderTag, limit).
std::string ownOrderText(const FairPath& path, std::uint32_t limitId);

}  // namespace ratelab::store
