// IP and CIDR text: every address that parses prints canonically, and the canonical text parses
// back to the same address (and prints the same again); likewise CIDRs, strict and loose; masks
// and key prefixes keep the address inside its own network.

#include "fuzz/fuzz_check.h"
#include "identity/key_deriver.h"
#include "ratelab/ip_address.h"

using namespace ratelab;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
    constexpr const char* kHarness = "fuzz_ip";
    const std::string_view text = fuzz::text(data, size);
    if (auto address = IpAddress::parse(text)) {
        const std::string canonical = address->toString();
        char buffer[64];
        const std::size_t n = address->format(buffer);
        fuzz::require(std::string_view(buffer, n) == canonical, kHarness,
                      "format() and toString() disagree");
        const auto back = IpAddress::parse(canonical);
        fuzz::require(back && *back == *address, kHarness,
                      "canonical text does not parse back: " + canonical);
        fuzz::require(back->toString() == canonical, kHarness, "canonical text is not stable");
        const int bits = address->isV4() ? 32 : 128;
        for (int length = 0; length <= bits; length += 8) {
            const Cidr network(address->masked(length), length);
            fuzz::require(network.contains(*address), kHarness,
                          "an address is outside its own masked network");
        }
        char key[identity::kMaxKeyAddressLength];
        for (int v6 : {1, 48, 64, 127, 128}) {
            const std::size_t k = identity::formatKeyAddress(*address, 24, v6, key);
            fuzz::require(k > 0 && k <= identity::kMaxKeyAddressLength, kHarness,
                          "a key address of impossible length");
        }
    }
    for (bool strict : {true, false}) {
        if (auto cidr = Cidr::parse(text, strict)) {
            const std::string canonical = cidr->toString();
            const auto back = Cidr::parse(canonical, /*strict=*/true);
            fuzz::require(back && *back == *cidr, kHarness,
                          "canonical CIDR text does not parse back: " + canonical);
            fuzz::require(cidr->contains(cidr->network()), kHarness,
                          "a network does not contain its own address");
        }
    }
    return 0;
}
