#include "store/fair_share.h"

#include <xxhash.h>

#include <bit>
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

// Bits [from, to) of the address, in its family's own numbering, as an integer (to - from <= 64):
// the address as one 128-bit number, shifted, rather than a loop over bits.
std::uint64_t bitsOf(const IpAddress& address, int from, int to) {
    if (to <= from) return 0;
    const int offset = address.isV4() ? 96 : 0;
    unsigned __int128 value = 0;
    for (std::uint8_t byte : address.bytes())
        value = (value << 8) | byte;
    value <<= from + offset;
    return static_cast<std::uint64_t>(value >> (128 - (to - from)));
}

// Eight lowercase hex digits, loaded as one word (the first digit in the lowest byte), to their
// value; false when one is not [0-9a-f]. Each range test adds to the low seven bits of every
// byte, so no byte carries into the next.
bool hexWord(std::uint64_t x, std::uint32_t& out) {
    static_assert(std::endian::native == std::endian::little);
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
    constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
    const std::uint64_t ascii = ~x & kHigh;
    const std::uint64_t low = x & ~kHigh;
    const std::uint64_t atLeast0 = (low + (0x80 - '0') * kOnes) & kHigh;
    const std::uint64_t atMost9 = ~(low + (0x80 - '9' - 1) * kOnes) & kHigh;
    const std::uint64_t atLeastA = (low + (0x80 - 'a') * kOnes) & kHigh;
    const std::uint64_t atMostF = ~(low + (0x80 - 'f' - 1) * kOnes) & kHigh;
    if ((ascii & ((atLeast0 & atMost9) | (atLeastA & atMostF))) != kHigh) return false;
    const std::uint64_t letter = (x >> 6) & kOnes;  // 'a'-'f' have bit 6 set, digits do not
    std::uint64_t v = (x & 0x0f0f0f0f0f0f0f0fULL) + letter * 9;
    // The nibbles, the first digit most significant.
    v = ((v << 4) | (v >> 8)) & 0x00ff00ff00ff00ffULL;
    v = ((v << 8) | (v >> 16)) & 0x0000ffff0000ffffULL;
    v = ((v << 16) | (v >> 32)) & 0x00000000ffffffffULL;
    out = static_cast<std::uint32_t>(v);
    return true;
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

void peerPath(const IpAddress& address, int prefix, std::uint64_t order, FairPath& out) {
    const int from = networkLevels(address, prefix, out);
    const std::uint8_t family = address.isV4() ? 0 : kIpv6;
    const std::uint64_t parent = out.depth > 0 ? out.node[out.depth - 1] : 0;
    out.node[out.depth] = childId(parent, kPeer | family, prefix, bitsOf(address, from, prefix));
    out.prefix[out.depth] = static_cast<std::uint8_t>(prefix);
    ++out.depth;
    out.order = order;
    out.orderTag = 0;
}

std::uint64_t keyOrder(std::string_view key) {
    // Keys made within a peer end in a digest's hex ("auth:<sha256>", "comp:/x:<sha256>"):
    // decoded eight digits at a time, since every new bucket of such a key asks.
    if (key.size() < 16) return 0;
    std::uint64_t first, second;
    std::memcpy(&first, key.data() + key.size() - 16, 8);
    std::memcpy(&second, key.data() + key.size() - 8, 8);
    std::uint32_t high, low;
    if (!hexWord(first, high) || !hexWord(second, low)) return 0;
    return (std::uint64_t{high} << 32) | low;
}

void keyPath(const KeyPlace& place, std::string_view key, FairPath& out) {
    if (!place.withinPeer) {
        networkPath(place.address, place.prefix, out);
        return;
    }
    peerPath(place.address, place.prefix, keyOrder(key), out);
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
