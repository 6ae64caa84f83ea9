#pragma once

// Which networks hold the memory store's buckets, for the fair-share rule of a full store
// (docs/RELIABILITY.md): the tree of aggregates of store/fair_share.h with each node's bucket
// count, the densest child of each node, and per node its own buckets (those whose innermost
// aggregate it is), so that a full store can tell which networks are over their share and find
// the buckets of the densest. It holds only buckets placed among networks
// (ConsumeRequest::place), and only while the store may be full (StoreAccounts::fairEpoch):
// each shard keeps a BucketPlace beside every placed bucket, and the index takes a shard's in
// one step under that shard's lock, shard by shard as new buckets take the store past its
// high-water mark (the rest when it has no room), then is kept up to date until the store has
// room again.
// Not thread-safe: the store guards it with a mutex taken after any shard lock.

#include <cstdint>
#include <vector>

#include "memory/flat_table.h"
#include "ratelab/ip_address.h"
#include "store/fair_share.h"

namespace ratelab::memory {

/// What a shard keeps of a bucket placed among networks, in a table beside its buckets under
/// the same fingerprint: enough to compute the bucket's FairPath when the index is built, and
/// its entry in the index while the index is live.
struct BucketPlace {
    IpAddress address;        ///< as KeyPlace::address
    std::uint64_t order = 0;  ///< store::keyOrder of a key within a peer
    std::uint32_t own = 0;    ///< its FairIndex::Own while the index is live
    std::uint8_t prefix = 0;  ///< as KeyPlace::prefix
    bool withinPeer = false;  ///< as KeyPlace::withinPeer
};

/// The bucket's FairPath, as store::keyPath or store::networkPath gave it.
inline void pathOf(const BucketPlace& place, store::FairPath& out) {
    if (place.withinPeer) {
        store::peerPath(place.address, place.prefix, place.order, out);
    } else {
        store::networkPath(place.address, place.prefix, out);
    }
}

class FairIndex {
public:
    static constexpr std::uint32_t kNone = 0xffffffffu;

    /// One bucket, in its node's list of own buckets.
    struct Own {
        std::uint64_t fingerprint;  ///< the bucket's, in its limit's table
        std::uint64_t order;        ///< FairPath::order, for ties of last use
        std::uint32_t limit;
        std::uint32_t node;
        std::uint32_t prev;
        std::uint32_t next;
        std::uint8_t shard;  ///< which of its limit's shards holds it
        std::uint8_t orderTag;
    };

    /// What the rule says of a new bucket in a full store.
    struct Verdict {
        enum class Kind : std::uint8_t {
            Admit,   ///< it takes the place of one of `victimNode`'s own buckets
            Charge,  ///< it is charged to the bucket of the path's aggregate `level`
            Full,    ///< no aggregate is over its share: the store is full
        };
        Kind kind = Kind::Full;
        std::uint32_t victimNode = kNone;
        std::size_t level = 0;
    };

    FairIndex();

    /// Records a new bucket and returns its entry, for remove().
    /// REQUIRES: path.depth > 0; (limit, fingerprint) not held.
    std::uint32_t add(const store::FairPath& path, std::uint32_t limit, unsigned shard,
                      std::uint64_t fingerprint);
    /// Forgets the bucket of entry `own` (add's result), which went.
    void remove(std::uint32_t own);
    /// Forgets every bucket and returns the memory.
    void clear();
    /// Whether the index holds any bucket.
    bool empty() const { return nodes_[kRoot].count == 0; }

    /// The fair-share rule for a new bucket at `path` (depth 0: a bucket of no network) in a
    /// store with no room: see docs/RELIABILITY.md.
    Verdict decide(const store::FairPath& path);
    /// The node a bucket is taken from when one must go whoever asks (the bucket of an
    /// aggregate over its share, which is always admitted): the densest path from the root.
    /// kNone when the index is empty.
    std::uint32_t densestFromRoot();

    /// A node's own buckets: firstOwn(), then own(i).next until kNone.
    std::uint32_t firstOwn(std::uint32_t node) const { return nodes_[node].firstOwn; }
    const Own& own(std::uint32_t i) const { return owns_[i]; }

    /// The count of buckets held under the aggregate `id` (0 when none), for tests.
    std::int64_t countOf(std::uint64_t id);
    /// Its share of a full store, as decide() computes it along `path` down to `level`.
    double shareOf(const store::FairPath& path, std::size_t level);

    std::size_t bytes() const;

private:
    static constexpr std::uint32_t kRoot = 0;
    /// The densest of a node's children may be its own buckets, named by this.
    static constexpr std::uint32_t kOwnGroup = 0xfffffffeu;

    /// Node::densest when the densest child must be found again.
    static constexpr std::uint32_t kUnknown = 0xfffffffdu;

    struct Node {
        std::uint64_t id = 0;
        std::int64_t count = 0;  ///< buckets under it: its own and its children's
        std::uint32_t own = 0;
        std::uint32_t parent = kNone;
        std::uint32_t kids = 0;  ///< child nodes; each holds at least one bucket
        std::uint32_t firstChild = kNone;
        std::uint32_t prevSibling = kNone;
        std::uint32_t nextSibling = kNone;
        std::uint32_t firstOwn = kNone;
        std::uint32_t densest = kNone;  ///< the densest child node, or kUnknown
    };

    std::uint32_t findNode(std::uint64_t id);
    std::uint32_t makeNode(std::uint64_t id, std::uint32_t parent);
    void freeNode(std::uint32_t n);
    /// Children counted for a share: child nodes, and a non-root node's own buckets as one.
    std::uint32_t shareKids(std::uint32_t n) const;
    /// The densest child of `n` (most buckets, ties to the larger id; its own buckets count as
    /// a child of id 0): a node, or kOwnGroup; kNone when `n` holds nothing.
    std::uint32_t densest(std::uint32_t n);
    std::int64_t countOf(std::uint32_t parent, std::uint32_t child) const;
    /// Follows the densest child from `child` of `parent` down to the node whose own buckets
    /// are the densest.
    std::uint32_t densestLeaf(std::uint32_t parent, std::uint32_t child);
    void grew(std::uint32_t parent, std::uint32_t child);
    void shrank(std::uint32_t parent, std::uint32_t child);

    std::vector<Node> nodes_;
    std::vector<std::uint32_t> freeNodes_;
    std::vector<Own> owns_;
    std::vector<std::uint32_t> freeOwns_;
    /// Node id -> index. The index is live only while the store is full, where its memory
    /// counts against the buckets': it runs 60-75 % full rather than FlatTable's 40-50 %, and a
    /// lookup of a new node (a miss) still ends within a few cache lines.
    FlatTable<std::uint32_t, 75, 75> nodeOf_;
};

}  // namespace ratelab::memory
