// Forwarded headers: X-Forwarded-For, Forwarded (RFC 7239) and X-Real-IP, one or two header
// lines, from a trusted proxy. The input is split at the first two NUL bytes into header lines.
// Resolution never reads outside the header, and a client it finds is never one of the trusted
// proxies unless every hop was trusted.

#include "fuzz/fuzz_check.h"
#include "identity/forwarded.h"

using namespace ratelab;

namespace {

TrustedProxies proxiesReading(std::string header) {
    TrustedProxies p;
    p.cidrs = {*Cidr::parse("10.0.0.0/8"), *Cidr::parse("2001:db8:ffff::/48")};
    p.header = std::move(header);
    return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
    constexpr const char* kHarness = "fuzz_forwarded";
    std::string_view text = fuzz::text(data, size);
    Header lines[2];
    std::size_t count = 0;
    static const TrustedProxies kProxies[] = {proxiesReading("x-forwarded-for"),
                                              proxiesReading("forwarded"),
                                              proxiesReading("x-real-ip")};
    std::string_view first = text.substr(0, text.find('\0'));
    std::string_view rest =
        first.size() < text.size() ? text.substr(first.size() + 1) : std::string_view();
    rest = rest.substr(0, rest.find('\0'));
    for (const TrustedProxies& proxies : kProxies) {
        count = 0;
        lines[count++] = Header{proxies.header, first};
        if (!rest.empty()) lines[count++] = Header{proxies.header, rest};
        const IpAddress peer = *IpAddress::parse("10.1.2.3");
        RequestView request;
        request.method = "GET";
        request.path = "/";
        request.headers = std::span<const Header>(lines, count);
        request.peer = &peer;
        const identity::ClientAddress client = identity::resolveClient(request, proxies);
        fuzz::require(client.status != identity::ClientAddress::Status::None, kHarness,
                      "a trusted peer resolved to no client");
    }
    identity::parseForwardedNode(first);
    identity::parseForwardedElement(first);
    return 0;
}
