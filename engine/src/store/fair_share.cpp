#include "store/fair_share.h"

#include <xxhash.h>

#include <cstring>

#include "identity/key_deriver.h"
#include "ratelab/bucket_key.h"

namespace ratelab::store {

namespace {

// The levels the rule knows, per family, in the family's own bits.
constexpr std::array<int, 3> kV4Levels = {8, 16, 24};
constexpr std::array<int, 7> kV6Levels = {16, 24, 32, 40, 48, 56, 64};

constexpr std::uint8_t kNetwork = 1;
constexpr std::uint8_t kPeer = 2;
constexpr std::uint8_t kIpv6 = 4;

// Bits [from, to) of the address, in its family's own numbering, as an integer (to - from <= 64).
std::uint64_t bitsOf(const IpAddress& address, int from, int to) {
    const int offset = address.isV4() ? 96 : 0;
    std::uint64_t value = 0;
    for (int bit = from + offset; bit < to + offset; ++bit) {
        const int b = (address.bytes()[static_cast<std::size_t>(bit / 8)] >> (7 - bit % 8)) & 1;
        value = (value << 1) | static_cast<std::uint64_t>(b);
    }
    return value;
}

// A child's id: its parent's (0 for the root), its kind and network, hashed.
std::uint64_t childId(std::uint64_t parent, std::uint8_t kind, int prefix, std::uint64_t value) {
    unsigned char buffer[18];
    std::memcpy(buffer, &parent, 8);
    std::memcpy(buffer + 8, &value, 8);
    buffer[16] = kind;
    buffer[17] = static_cast<unsigned char>(prefix);
    const std::uint64_t id = XXH3_64bits(buffer, sizeof buffer);
    return id != 0 ? id : 1;
}

// The network aggregates of address/q into `out`; returns the innermost level (0: none).
int networkLevels(const IpAddress& address, int q, FairPath& out) {
    out.depth = 0;
    const bool v4 = address.isV4();
    const std::uint8_t family = v4 ? 0 : kIpv6;
    const int* levels = v4 ? kV4Levels.data() : kV6Levels.data();
    const std::size_t count = v4 ? kV4Levels.size() : kV6Levels.size();
    std::uint64_t parent = 0;
    int from = 0;
    for (std::size_t i = 0; i < count && levels[i] < q; ++i) {
        parent = childId(parent, kNetwork | family, levels[i], bitsOf(address, from, levels[i]));
        out.node[out.depth] = parent;
        out.prefix[out.depth] = static_cast<std::uint8_t>(levels[i]);
        ++out.depth;
        from = levels[i];
    }
    return from;
}

}  // namespace

void networkPath(const IpAddress& address, int prefix, FairPath& out) {
    const int from = networkLevels(address, prefix, out);
    out.order = from < prefix ? bitsOf(address, from, prefix) : 0;
    out.orderTag = static_cast<std::uint8_t>(prefix);
}

void keyPath(const KeyPlace& place, std::string_view key, FairPath& out) {
    if (!place.withinPeer) {
        networkPath(place.address, place.prefix, out);
        return;
    }
    const int from = networkLevels(place.address, place.prefix, out);
    const std::uint8_t family = place.address.isV4() ? 0 : kIpv6;
    const std::uint64_t parent = out.depth > 0 ? out.node[out.depth - 1] : 0;
    out.node[out.depth] = childId(parent, kPeer | family, place.prefix,
                                  bitsOf(place.address, from, place.prefix));
    out.prefix[out.depth] = place.prefix;
    ++out.depth;
    // Keys made within a peer end in a digest's hex ("auth:<sha256>", "comp:/x:<sha256>").
    out.order = 0;
    out.orderTag = 0;
    if (key.size() < 16) return;
    for (char c : key.substr(key.size() - 16)) {
        const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (digit < 0) {
            out.order = 0;
            return;
        }
        out.order = (out.order << 4) | static_cast<std::uint64_t>(digit);
    }
}

std::string networkKey(const IpAddress& address, int prefix) {
    return std::string(kAddressKeyPrefix) + identity::formatKeyAddress(address, prefix, prefix);
}

void nodeHex(std::uint64_t id, char out[16]) {
    for (int i = 15; i >= 0; --i) {
        out[i] = "0123456789abcdef"[id & 0xf];
        id >>= 4;
    }
}

std::string ownOrderText(const FairPath& path, std::uint32_t limitId) {
    std::string text(26, '0');
    nodeHex(path.order, text.data());
    static constexpr char kHex[] = "0123456789abcdef";
    text[16] = kHex[path.orderTag >> 4];
    text[17] = kHex[path.orderTag & 0xf];
    for (int i = 25; i >= 18; --i) {
        text[static_cast<std::size_t>(i)] = kHex[limitId & 0xf];
        limitId >>= 4;
    }
    return text;
}

}  // namespace ratelab::store
