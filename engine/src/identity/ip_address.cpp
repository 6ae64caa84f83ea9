#include "ratelab/ip_address.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace ratelab {

namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

int hexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Strict dotted quad: exactly four decimal octets of one to three digits, each <= 255, and no
// leading zero. inet_aton() reads "010" as octal 8 while most other parsers read it as 10; a
// key or a trust decision must not depend on which reading a peer assumed, so we refuse it.
bool parseV4(std::string_view text, std::uint32_t& out) {
    std::uint32_t value = 0;
    std::size_t i = 0;
    for (int octet = 0; octet < 4; ++octet) {
        if (octet > 0) {
            if (i >= text.size() || text[i] != '.') return false;
            ++i;
        }
        std::size_t start = i;
        unsigned part = 0;
        while (i < text.size() && isDigit(text[i]) && i - start < 3) {
            part = part * 10 + static_cast<unsigned>(text[i] - '0');
            ++i;
        }
        std::size_t digits = i - start;
        if (digits == 0 || part > 255) return false;
        if (digits > 1 && text[start] == '0') return false;
        value = (value << 8) | part;
    }
    if (i != text.size()) return false;
    out = value;
    return true;
}

// RFC 4291 section 2.2 text: eight groups of one to four hex digits, at most one "::" standing
// for one or more zero groups, and an optional dotted-quad tail in the last 32 bits.
bool parseV6(std::string_view text, std::array<std::uint8_t, 16>& out) {
    std::uint16_t groups[8] = {};
    int count = 0;
    int gap = -1;  // index in `groups` where "::" stands
    std::size_t i = 0;
    const std::size_t n = text.size();
    if (n < 2) return false;
    if (text[0] == ':') {
        if (text[1] != ':') return false;
        gap = 0;
        i = 2;
    }
    while (i < n) {
        if (count >= 8) return false;
        std::size_t end = i;
        bool dotted = false;
        while (end < n && text[end] != ':') {
            dotted = dotted || text[end] == '.';
            ++end;
        }
        std::string_view chunk = text.substr(i, end - i);
        if (dotted) {
            std::uint32_t v4 = 0;
            if (end != n || count > 6 || !parseV4(chunk, v4)) return false;
            groups[count++] = static_cast<std::uint16_t>(v4 >> 16);
            groups[count++] = static_cast<std::uint16_t>(v4 & 0xffff);
            i = end;
            break;
        }
        if (chunk.empty() || chunk.size() > 4) return false;
        unsigned value = 0;
        for (char c : chunk) {
            int h = hexValue(c);
            if (h < 0) return false;
            value = (value << 4) | static_cast<unsigned>(h);
        }
        groups[count++] = static_cast<std::uint16_t>(value);
        i = end;
        if (i == n) break;
        ++i;  // the ':'
        if (i < n && text[i] == ':') {
            if (gap >= 0) return false;
            gap = count;
            ++i;
        } else if (i == n) {
            return false;  // a single trailing ':'
        }
    }
    if (gap < 0) {
        if (count != 8) return false;
    } else {
        if (count > 7) return false;  // "::" stands for at least one group
        int tail = count - gap;
        for (int k = 0; k < tail; ++k)
            groups[7 - k] = groups[count - 1 - k];
        for (int k = gap; k < 8 - tail; ++k)
            groups[k] = 0;
    }
    for (int k = 0; k < 8; ++k) {
        out[2 * k] = static_cast<std::uint8_t>(groups[k] >> 8);
        out[2 * k + 1] = static_cast<std::uint8_t>(groups[k] & 0xff);
    }
    return true;
}

// Clears every bit from `bit` on (counted over all 128 bits), a 64-bit word at a time. Cleared
// byte by byte, a masked address is read back by the 16-byte copy that returns it before those
// stores can have reached the cache (store forwarding fails across several stores): deriving an
// IPv6 key with its /48 and /32 levels took a tenth longer.
void clearFrom(std::array<std::uint8_t, 16>& b, int bit) {
    if (bit >= 128) return;
    std::uint64_t words[2];
    std::memcpy(words, b.data(), sizeof words);
    for (int w = 0; w < 2; ++w) {
        const int kept = std::clamp(bit - 64 * w, 0, 64);  // leading bits of this word kept
        std::uint64_t mask = kept == 0 ? 0 : ~std::uint64_t{0} << (64 - kept);
        if constexpr (std::endian::native == std::endian::little) mask = __builtin_bswap64(mask);
        words[w] &= mask;
    }
    std::memcpy(b.data(), words, sizeof words);
}

// Decimal text of every octet, four bytes each (digits, then the length in the last byte):
// the simulator formats millions of addresses a second, and a table lookup plus one 4-byte copy
// beats three divisions.
struct OctetTable {
    char text[256][4];
    constexpr OctetTable() : text() {
        for (unsigned v = 0; v < 256; ++v) {
            char* t = text[v];
            if (v >= 100) {
                t[0] = static_cast<char>('0' + v / 100);
                t[1] = static_cast<char>('0' + v / 10 % 10);
                t[2] = static_cast<char>('0' + v % 10);
                t[3] = 3;
            } else if (v >= 10) {
                t[0] = static_cast<char>('0' + v / 10);
                t[1] = static_cast<char>('0' + v % 10);
                t[3] = 2;
            } else {
                t[0] = static_cast<char>('0' + v);
                t[3] = 1;
            }
        }
    }
};
constexpr OctetTable kOctets;

char* writeOctet(char* p, unsigned v) {
    std::memcpy(p, kOctets.text[v],
                4);  // writes up to one byte past the digits: callers leave room
    return p + kOctets.text[v][3];
}

char* writeGroup(char* p, unsigned v) {
    if (v >= 0x1000) *p++ = kHexDigits[(v >> 12) & 0xf];
    if (v >= 0x100) *p++ = kHexDigits[(v >> 8) & 0xf];
    if (v >= 0x10) *p++ = kHexDigits[(v >> 4) & 0xf];
    *p++ = kHexDigits[v & 0xf];
    return p;
}

// Parses a decimal prefix length: one to three digits, no leading zero, at most `max`.
bool parsePrefixLength(std::string_view text, int max, int& out) {
    if (text.empty() || text.size() > 3) return false;
    if (text.size() > 1 && text[0] == '0') return false;
    int value = 0;
    for (char c : text) {
        if (!isDigit(c)) return false;
        value = value * 10 + (c - '0');
    }
    if (value > max) return false;
    out = value;
    return true;
}

}  // namespace

std::optional<IpAddress> IpAddress::parse(std::string_view text) {
    IpAddress address;
    if (!text.empty() && text.front() == '[') {
        if (text.size() < 2 || text.back() != ']') return std::nullopt;
        text = text.substr(1, text.size() - 2);
        if (text.find(':') == std::string_view::npos) return std::nullopt;  // "[1.2.3.4]"
    }
    if (text.find(':') == std::string_view::npos) {
        std::uint32_t v4 = 0;
        if (!parseV4(text, v4)) return std::nullopt;
        return fromV4(v4);
    }
    // Zone ids ("fe80::1%eth0") name an interface of this host: meaningless as a client
    // identity, and refused rather than silently dropped. parseV6 refuses '%' and ports.
    if (!parseV6(text, address.bytes_)) return std::nullopt;
    return address;
}

IpAddress IpAddress::fromV4(std::uint32_t hostOrder) {
    IpAddress address;
    address.bytes_[10] = 0xff;
    address.bytes_[11] = 0xff;
    address.bytes_[12] = static_cast<std::uint8_t>(hostOrder >> 24);
    address.bytes_[13] = static_cast<std::uint8_t>(hostOrder >> 16);
    address.bytes_[14] = static_cast<std::uint8_t>(hostOrder >> 8);
    address.bytes_[15] = static_cast<std::uint8_t>(hostOrder);
    return address;
}

IpAddress IpAddress::fromBytes(const std::array<std::uint8_t, 16>& bytes) {
    IpAddress address;
    address.bytes_ = bytes;
    return address;
}

std::uint32_t IpAddress::v4() const {
    return (std::uint32_t{bytes_[12]} << 24) | (std::uint32_t{bytes_[13]} << 16) |
           (std::uint32_t{bytes_[14]} << 8) | std::uint32_t{bytes_[15]};
}

IpAddress IpAddress::masked(int prefixLength) const {
    IpAddress result = *this;
    if (prefixLength < 0) prefixLength = 0;
    if (isV4()) {
        if (prefixLength > 32) prefixLength = 32;
        clearFrom(result.bytes_, 96 + prefixLength);
    } else {
        if (prefixLength > 128) prefixLength = 128;
        clearFrom(result.bytes_, prefixLength);
    }
    return result;
}

std::size_t IpAddress::format(char* out) const {
    char* p = out;
    if (isV4()) {
        p = writeOctet(p, bytes_[12]);
        *p++ = '.';
        p = writeOctet(p, bytes_[13]);
        *p++ = '.';
        p = writeOctet(p, bytes_[14]);
        *p++ = '.';
        p = writeOctet(p, bytes_[15]);
        return static_cast<std::size_t>(p - out);
    }
    unsigned groups[8];
    for (int k = 0; k < 8; ++k)
        groups[k] = (unsigned{bytes_[2 * k]} << 8) | bytes_[2 * k + 1];
    // RFC 5952 4.2: compress the longest run of two or more zero groups, the first on a tie.
    int bestStart = -1;
    int bestLength = 1;
    for (int k = 0; k < 8;) {
        if (groups[k] != 0) {
            ++k;
            continue;
        }
        int start = k;
        while (k < 8 && groups[k] == 0)
            ++k;
        if (k - start > bestLength) {
            bestStart = start;
            bestLength = k - start;
        }
    }
    for (int k = 0; k < 8; ++k) {
        if (k == bestStart) {
            *p++ = ':';
            *p++ = ':';
            k += bestLength - 1;
            continue;
        }
        if (k > 0 && k != bestStart + bestLength) *p++ = ':';
        p = writeGroup(p, groups[k]);
    }
    return static_cast<std::size_t>(p - out);
}

std::string IpAddress::toString() const {
    char buffer[48];
    return std::string(buffer, format(buffer));
}

Cidr::Cidr(IpAddress network, int prefixLength) {
    int max = network.isV4() ? 32 : 128;
    if (prefixLength < 0) prefixLength = 0;
    if (prefixLength > max) prefixLength = max;
    prefixLength_ = prefixLength;
    network_ = network.masked(prefixLength);
}

std::optional<Cidr> Cidr::parse(std::string_view text, bool strict) {
    std::size_t slash = text.find('/');
    std::string_view addressText = text.substr(0, slash);
    std::optional<IpAddress> address = IpAddress::parse(addressText);
    if (!address) return std::nullopt;
    bool v6Text = addressText.find(':') != std::string_view::npos;
    int length = address->isV4() && !v6Text ? 32 : 128;
    if (slash != std::string_view::npos &&
        !parsePrefixLength(text.substr(slash + 1), length, length)) {
        return std::nullopt;
    }
    // "::ffff:10.0.0.0/104" is 10.0.0.0/8: an IPv4-mapped network written in IPv6 text counts
    // its length over 128 bits. A shorter length reaches outside the mapped space and stays IPv6.
    int familyLength = length;
    if (address->isV4() && v6Text) {
        if (length >= 96) {
            familyLength = length - 96;
        } else {
            std::array<std::uint8_t, 16> bytes = address->bytes();
            clearFrom(bytes, length);
            IpAddress network = IpAddress::fromBytes(bytes);
            if (strict && !(network == *address)) return std::nullopt;
            Cidr cidr;
            cidr.network_ = network;
            cidr.prefixLength_ = length;
            return cidr;
        }
    }
    IpAddress network = address->masked(familyLength);
    if (strict && !(network == *address)) return std::nullopt;
    return Cidr(network, familyLength);
}

bool Cidr::contains(const IpAddress& address) const {
    if (network_.isV4()) {
        if (!address.isV4()) return false;
        if (prefixLength_ == 0) return true;
        std::uint32_t mask = ~std::uint32_t{0} << (32 - prefixLength_);
        return ((address.v4() ^ network_.v4()) & mask) == 0;
    }
    const auto& a = address.bytes();
    const auto& b = network_.bytes();
    int whole = prefixLength_ / 8;
    if (std::memcmp(a.data(), b.data(), static_cast<std::size_t>(whole)) != 0) return false;
    int rest = prefixLength_ % 8;
    if (rest == 0) return true;
    auto mask = static_cast<std::uint8_t>(0xff00 >> rest);
    return ((a[whole] ^ b[whole]) & mask) == 0;
}

std::string Cidr::toString() const {
    std::string text = network_.toString();
    text += '/';
    text += std::to_string(prefixLength_);
    return text;
}

}  // namespace ratelab
