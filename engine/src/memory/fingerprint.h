#pragma once

// How the memory store names what it keeps: every key, partition and budget scope is a 64-bit
// keyed hash (xxh3 with the store's secret seed), never the text itself. The one place these
// rules live: a budget's fallback charge must land in the very bucket the same key has when it
// is asked for directly, and a scope must be found again by every request that names it.

// xxh3 inlined: a call through the shared library's PLT costs as much as hashing 16 bytes.
// Only the memory store's translation units include this header.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstdint>
#include <string_view>

namespace ratelab::memory {

/// 0 marks an empty table slot, so no fingerprint is 0.
inline std::uint64_t nonZero(std::uint64_t x) {
    return x != 0 ? x : 1;
}

/// A partition's hash: picks the shard, and seeds the hashes of the keys inside it.
inline std::uint64_t partitionHash(std::string_view partition, std::uint64_t seed) {
    return XXH3_64bits_withSeed(partition.data(), partition.size(), seed);
}

/// A second, independent 64-bit value from a hash (xxh3's own final mix, with another constant),
/// for keys that are their own partition: one hash of the key serves both purposes.
inline std::uint64_t remix(std::uint64_t h) {
    h ^= h >> 37;
    h *= 0x165667919E3779F9ULL;
    h ^= h >> 32;
    return h;
}

/// A bucket's fingerprint: its key hashed within its partition. A key that is its own partition
/// (the address bucket, principal and header keys) is hashed once, as the partition. Used for
/// keys and budget fallbacks alike.
inline std::uint64_t keyFingerprint(std::string_view key, std::string_view partition,
                                    std::uint64_t partitionHash, std::uint64_t seed) {
    const bool same =
        key.size() == partition.size() && (key.data() == partition.data() || key == partition);
    if (same) return nonZero(remix(partitionHash));
    return nonZero(XXH3_64bits_withSeed(key.data(), key.size(), partitionHash ^ seed));
}

/// A budget scope's fingerprint within its partition. A scope named like its partition (the
/// peerless "global") reuses the partition's hash: one xxh3 fewer per budgeted request.
inline std::uint64_t scopeFingerprint(std::string_view scope, std::string_view partition,
                                      std::uint64_t partitionHash, std::uint64_t seed) {
    if (scope == partition) return nonZero(remix(partitionHash ^ 0x5C0BEULL));
    return nonZero(XXH3_64bits_withSeed(scope.data(), scope.size(), partitionHash ^ ~seed));
}

}  // namespace ratelab::memory
