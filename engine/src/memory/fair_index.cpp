#include "memory/fair_index.h"

namespace ratelab::memory {

namespace {

// The node table's load does not depend on its size (fair_index.h): never "large" (FlatTable).
constexpr std::size_t kIndexLargeBytes = std::size_t(1) << 40;

}  // namespace

FairIndex::FairIndex() {
    nodes_.emplace_back();  // the root
}

std::uint32_t FairIndex::findNode(std::uint64_t id) {
    auto* slot = nodeOf_.find(id);
    return slot ? slot->state : kNone;
}

std::uint32_t FairIndex::makeNode(std::uint64_t id, std::uint32_t parent) {
    std::uint32_t n;
    if (!freeNodes_.empty()) {
        n = freeNodes_.back();
        freeNodes_.pop_back();
        nodes_[n] = Node{};
    } else {
        n = static_cast<std::uint32_t>(nodes_.size());
        nodes_.emplace_back();
    }
    Node& node = nodes_[n];
    node.id = id;
    node.parent = parent;
    Node& p = nodes_[parent];
    node.nextSibling = p.firstChild;
    if (p.firstChild != kNone) nodes_[p.firstChild].prevSibling = n;
    p.firstChild = n;
    ++p.kids;
    nodeOf_.insert(id, n, kIndexLargeBytes);
    return n;
}

void FairIndex::freeNode(std::uint32_t n) {
    Node& node = nodes_[n];
    Node& p = nodes_[node.parent];
    if (node.prevSibling != kNone) {
        nodes_[node.prevSibling].nextSibling = node.nextSibling;
    } else {
        p.firstChild = node.nextSibling;
    }
    if (node.nextSibling != kNone) nodes_[node.nextSibling].prevSibling = node.prevSibling;
    --p.kids;
    if (p.densest == n) p.densest = p.kids == 0 ? kNone : kUnknown;
    nodeOf_.erase(nodeOf_.find(node.id));
    node.id = 0;
    freeNodes_.push_back(n);
}

std::uint32_t FairIndex::shareKids(std::uint32_t n) const {
    const Node& node = nodes_[n];
    return node.kids + (n != kRoot && node.own > 0 ? 1u : 0u);
}

std::int64_t FairIndex::countOf(std::uint32_t parent, std::uint32_t child) const {
    if (child == kNone) return 0;
    return child == kOwnGroup ? nodes_[parent].own : nodes_[child].count;
}

std::uint32_t FairIndex::densest(std::uint32_t n) {
    Node& node = nodes_[n];
    if (node.densest == kUnknown) {
        std::uint32_t best = kNone;
        for (std::uint32_t c = node.firstChild; c != kNone; c = nodes_[c].nextSibling) {
            const Node& child = nodes_[c];
            if (best == kNone || child.count > nodes_[best].count ||
                (child.count == nodes_[best].count && child.id > nodes_[best].id)) {
                best = c;
            }
        }
        node.densest = best;
    }
    // Its own buckets are a child of id 0: they win only with strictly more buckets.
    if (n != kRoot && node.own > 0 &&
        (node.densest == kNone ||
         static_cast<std::int64_t>(node.own) > nodes_[node.densest].count)) {
        return kOwnGroup;
    }
    return node.densest;
}

// A child's count went up by one.
void FairIndex::grew(std::uint32_t parent, std::uint32_t child) {
    Node& p = nodes_[parent];
    if (p.densest == kUnknown) return;
    const Node& c = nodes_[child];
    if (p.densest == kNone || c.count > nodes_[p.densest].count ||
        (c.count == nodes_[p.densest].count && c.id > nodes_[p.densest].id)) {
        p.densest = child;
    }
}

// A child's count went down by one (it may be gone since).
void FairIndex::shrank(std::uint32_t parent, std::uint32_t child) {
    Node& p = nodes_[parent];
    if (p.densest == child) p.densest = kUnknown;
}

std::uint32_t FairIndex::add(const store::FairPath& path, std::uint32_t limit, unsigned shard,
                             std::uint64_t fingerprint) {
    std::uint32_t n = kRoot;
    ++nodes_[kRoot].count;
    for (std::size_t i = 0; i < path.depth; ++i) {
        std::uint32_t c = findNode(path.node[i]);
        if (c == kNone) c = makeNode(path.node[i], n);
        ++nodes_[c].count;
        grew(n, c);
        n = c;
    }
    std::uint32_t o;
    if (!freeOwns_.empty()) {
        o = freeOwns_.back();
        freeOwns_.pop_back();
    } else {
        o = static_cast<std::uint32_t>(owns_.size());
        owns_.emplace_back();
    }
    Node& leaf = nodes_[n];
    owns_[o] = Own{
        fingerprint,  path.order, limit, n, kNone, leaf.firstOwn, static_cast<std::uint8_t>(shard),
        path.orderTag};
    if (leaf.firstOwn != kNone) owns_[leaf.firstOwn].prev = o;
    leaf.firstOwn = o;
    ++leaf.own;
    return o;
}

void FairIndex::remove(std::uint32_t o) {
    const Own own = owns_[o];
    Node& leaf = nodes_[own.node];
    if (own.prev != kNone) {
        owns_[own.prev].next = own.next;
    } else {
        leaf.firstOwn = own.next;
    }
    if (own.next != kNone) owns_[own.next].prev = own.prev;
    --leaf.own;
    freeOwns_.push_back(o);
    for (std::uint32_t n = own.node; n != kRoot;) {
        const std::uint32_t parent = nodes_[n].parent;
        --nodes_[n].count;
        shrank(parent, n);
        if (nodes_[n].count == 0) freeNode(n);
        n = parent;
    }
    --nodes_[kRoot].count;
}

void FairIndex::clear() {
    FairIndex empty;
    std::swap(nodes_, empty.nodes_);
    std::swap(freeNodes_, empty.freeNodes_);
    std::swap(owns_, empty.owns_);
    std::swap(freeOwns_, empty.freeOwns_);
    std::swap(nodeOf_, empty.nodeOf_);
}

std::uint32_t FairIndex::densestLeaf(std::uint32_t parent, std::uint32_t child) {
    while (child != kOwnGroup) {
        parent = child;
        child = densest(parent);
        if (child == kNone) return kNone;  // an inconsistent tree: nothing to take
    }
    return parent;
}

std::uint32_t FairIndex::densestFromRoot() {
    const std::uint32_t top = densest(kRoot);
    return top == kNone ? kNone : densestLeaf(kRoot, top);
}

// Shares divide the buckets placed among networks: the root's share is all of them, a child's
// its parent's share over the parent's children (the newcomer's own counted when it holds
// none). Where the newcomer's path parts from the densest path, it is admitted when its
// aggregate has room for one more within its share and the densest sibling holds more than the
// same share; otherwise it is charged to the outermost aggregate of its path over its share;
// with none, the store is full.
FairIndex::Verdict FairIndex::decide(const store::FairPath& path) {
    Verdict v;
    std::uint32_t parent = kRoot;
    double share = static_cast<double>(nodes_[kRoot].count);
    bool parted = false;
    for (std::size_t i = 0; i <= path.depth && !parted; ++i) {
        // Level i: the newcomer's aggregate path.node[i], or (i == depth) its own group.
        const bool ownGroup = i == path.depth;
        if (ownGroup && parent == kRoot) {
            // A bucket of no network: a newcomer beside the top-level aggregates.
            const std::uint32_t d = densest(kRoot);
            const double s = share / static_cast<double>(nodes_[kRoot].kids + 1);
            if (d != kNone && 1 <= s && static_cast<double>(nodes_[d].count) > s) {
                v.kind = Verdict::Kind::Admit;
                v.victimNode = densestLeaf(kRoot, d);
            }
            return v;
        }
        const std::uint32_t a = ownGroup ? kOwnGroup : findNode(path.node[i]);
        const bool present = ownGroup ? nodes_[parent].own > 0 : a != kNone;
        const double s = share / static_cast<double>(shareKids(parent) + (present ? 0 : 1));
        const std::uint32_t d = densest(parent);
        if (present && d == a && !ownGroup) {
            parent = a;
            share = s;
            continue;
        }
        if (d != kOwnGroup || !ownGroup) {
            const double countA = static_cast<double>(present ? countOf(parent, a) : 0);
            const double countD = static_cast<double>(countOf(parent, d));
            if (d != kNone && countA + 1 <= s && countD > s) {
                v.kind = Verdict::Kind::Admit;
                v.victimNode = d == kOwnGroup ? parent : densestLeaf(parent, d);
                return v;
            }
        }
        parted = true;
    }
    // Not admitted: charged to the outermost aggregate of its path over its share.
    parent = kRoot;
    share = static_cast<double>(nodes_[kRoot].count);
    for (std::size_t i = 0; i < path.depth; ++i) {
        const std::uint32_t a = findNode(path.node[i]);
        if (a == kNone) break;
        const double s = share / static_cast<double>(shareKids(parent));
        if (static_cast<double>(nodes_[a].count) > s) {
            v.kind = Verdict::Kind::Charge;
            v.level = i;
            return v;
        }
        parent = a;
        share = s;
    }
    return v;
}

std::int64_t FairIndex::countOf(std::uint64_t id) {
    const std::uint32_t n = findNode(id);
    return n == kNone ? 0 : nodes_[n].count;
}

double FairIndex::shareOf(const store::FairPath& path, std::size_t level) {
    std::uint32_t parent = kRoot;
    double share = static_cast<double>(nodes_[kRoot].count);
    for (std::size_t i = 0; i <= level && i < path.depth; ++i) {
        const std::uint32_t a = findNode(path.node[i]);
        share /= static_cast<double>(shareKids(parent) + (a == kNone ? 1 : 0));
        if (a == kNone) break;
        parent = a;
    }
    return share;
}

std::size_t FairIndex::bytes() const {
    return nodes_.capacity() * sizeof(Node) + owns_.capacity() * sizeof(Own) +
           (freeNodes_.capacity() + freeOwns_.capacity()) * sizeof(std::uint32_t) + nodeOf_.bytes();
}

}  // namespace ratelab::memory
