#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace ratelab {

/// An IPv4 or IPv6 address. IPv4 is held as its IPv4-mapped IPv6 form (::ffff:a.b.c.d), so an
/// IPv4-mapped IPv6 address and the plain IPv4 address are the same value. Plain value type.
class IpAddress {
public:
    IpAddress() = default;

    /// Parses dotted IPv4, RFC 4291 IPv6 text (with "::" and an embedded IPv4 tail) and a
    /// bracketed "[v6]"; zone ids and ports are refused. Returns nullopt on anything malformed.
    static std::optional<IpAddress> parse(std::string_view text);
    static IpAddress fromV4(std::uint32_t hostOrder);
    static IpAddress fromBytes(const std::array<std::uint8_t, 16>& bytes);

    /// True for IPv4 and IPv4-mapped IPv6 addresses (::ffff:0:0/96).
    bool isV4() const {
        static constexpr std::uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        return std::memcmp(bytes_.data(), kMapped, sizeof kMapped) == 0;  // two word compares
    }
    std::uint32_t v4() const;  ///< REQUIRES: isV4(). Host byte order.
    const std::array<std::uint8_t, 16>& bytes() const { return bytes_; }

    /// The address with every bit past `prefixLength` cleared. The length counts in the
    /// address's own family: 0..32 for IPv4, 0..128 for IPv6.
    IpAddress masked(int prefixLength) const;

    /// Canonical text: dotted quad for IPv4, RFC 5952 for IPv6.
    std::string toString() const;
    /// Writes the canonical text into `out` (at least 46 bytes) and returns its length.
    std::size_t format(char* out) const;

    friend bool operator==(const IpAddress&, const IpAddress&) = default;

private:
    std::array<std::uint8_t, 16> bytes_{};
};

/// A network in CIDR notation ("10.0.0.0/8", "2001:db8::/32"). A bare address is a host route.
class Cidr {
public:
    Cidr() = default;
    Cidr(IpAddress network, int prefixLength);

    /// Parses "address/length" or a bare address. Refuses host bits set past the prefix only
    /// when `strict` is true (validation asks for strict; lookups do not care).
    static std::optional<Cidr> parse(std::string_view text, bool strict = false);

    bool contains(const IpAddress& address) const;
    const IpAddress& network() const { return network_; }
    int prefixLength() const { return prefixLength_; }  ///< in the family's own bits
    std::string toString() const;

    friend bool operator==(const Cidr&, const Cidr&) = default;

private:
    IpAddress network_;
    int prefixLength_ = 0;
};

}  // namespace ratelab
