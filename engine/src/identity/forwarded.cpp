#include "identity/forwarded.h"

#include "identity/headers.h"

namespace ratelab::identity {

namespace {

bool isTokenChar(char c) {
    // RFC 9110 tchar.
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
    switch (c) {
        case '!':
        case '#':
        case '$':
        case '%':
        case '&':
        case '\'':
        case '*':
        case '+':
        case '-':
        case '.':
        case '^':
        case '_':
        case '`':
        case '|':
        case '~':
            return true;
        default:
            return false;
    }
}

bool isPort(std::string_view text) {
    if (text.empty() || text.size() > 5) return false;
    unsigned value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return false;
        value = value * 10 + static_cast<unsigned>(c - '0');
    }
    return value <= 65535;
}

// RFC 7239 section 6: a node is an address, "[v6]", "unknown" or "_obfuscated", each with an
// optional ":port" (digits, or an obfuscated "_port"). Only addresses identify a client.
std::optional<IpAddress> parseRfc7239Node(std::string_view node) {
    std::string_view address = node;
    std::string_view port;
    if (!node.empty() && node.front() == '[') {
        std::size_t close = node.find(']');
        if (close == std::string_view::npos) return std::nullopt;
        address = node.substr(0, close + 1);
        std::string_view rest = node.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':') return std::nullopt;
            port = rest.substr(1);
            if (port.empty()) return std::nullopt;
        }
    } else {
        std::size_t colon = node.find(':');
        if (colon != std::string_view::npos) {
            address = node.substr(0, colon);
            port = node.substr(colon + 1);
            if (port.empty()) return std::nullopt;
        }
        if (address.find(':') != std::string_view::npos) return std::nullopt;  // bare IPv6
    }
    if (!port.empty() && !isPort(port)) {
        bool obfuscatedPort = port.size() > 1 && port.front() == '_';
        for (std::size_t k = 1; obfuscatedPort && k < port.size(); ++k) {
            char c = port[k];
            obfuscatedPort = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                             (c >= 'A' && c <= 'Z') || c == '.' || c == '_' || c == '-';
        }
        if (!obfuscatedPort) return std::nullopt;
    }
    return IpAddress::parse(address);
}

// Splits the concatenated header lines into elements at commas (outside quoted strings for
// RFC 7239) and keeps the rightmost kMaxForwardedHops of them, newest last.
class HopRing {
public:
    void add(std::string_view element) {
        element = trimOws(element);
        if (element.empty()) return;  // RFC 9110 5.6.1: empty list elements are ignored
        hops_[total_ % kMaxForwardedHops] = element;
        ++total_;
    }
    void splitLine(std::string_view line, bool quoteAware) {
        std::size_t start = 0;
        bool quoted = false;
        for (std::size_t k = 0; k < line.size(); ++k) {
            char c = line[k];
            if (quoteAware && quoted && c == '\\') {
                ++k;  // quoted-pair: the next byte is literal
            } else if (quoteAware && c == '"') {
                quoted = !quoted;
            } else if (c == ',' && !quoted) {
                add(line.substr(start, k - start));
                start = k + 1;
            }
        }
        if (start <= line.size()) add(line.substr(start));
    }
    long total() const { return total_; }
    int kept() const {
        return total_ < kMaxForwardedHops ? static_cast<int>(total_) : kMaxForwardedHops;
    }
    /// The i-th element counting from the right (0 = newest). REQUIRES: i < kept().
    std::string_view fromRight(int i) const { return hops_[(total_ - 1 - i) % kMaxForwardedHops]; }

private:
    std::string_view hops_[kMaxForwardedHops];
    long total_ = 0;
};

bool isTrusted(const IpAddress& address, const TrustedProxies& proxies) {
    for (const Cidr& cidr : proxies.cidrs) {
        if (cidr.contains(address)) return true;
    }
    return false;
}

}  // namespace

ForwardedSyntax forwardedSyntaxFor(std::string_view headerName) {
    if (headerNameEquals(headerName, "x-forwarded-for")) return ForwardedSyntax::List;
    if (headerNameEquals(headerName, "forwarded")) return ForwardedSyntax::Rfc7239;
    return ForwardedSyntax::Single;
}

std::optional<IpAddress> parseForwardedNode(std::string_view element) {
    if (std::optional<IpAddress> plain = IpAddress::parse(element)) return plain;
    if (!element.empty() && element.front() == '[') {
        std::size_t close = element.find("]:");
        if (close == std::string_view::npos || !isPort(element.substr(close + 2))) {
            return std::nullopt;
        }
        return IpAddress::parse(element.substr(0, close + 1));
    }
    std::size_t colon = element.find(':');
    if (colon == std::string_view::npos || element.find(':', colon + 1) != std::string_view::npos ||
        !isPort(element.substr(colon + 1))) {
        return std::nullopt;
    }
    std::optional<IpAddress> address = IpAddress::parse(element.substr(0, colon));
    if (!address || !address->isV4()) return std::nullopt;
    return address;
}

std::optional<IpAddress> parseForwardedElement(std::string_view element) {
    std::optional<IpAddress> result;
    bool seenFor = false;
    std::size_t k = 0;
    const std::size_t n = element.size();
    while (k < n) {
        // pair = token "=" value; pairs separated by ";" with optional whitespace around.
        while (k < n && (element[k] == ' ' || element[k] == '\t'))
            ++k;
        std::size_t nameStart = k;
        while (k < n && isTokenChar(element[k]))
            ++k;
        std::string_view name = element.substr(nameStart, k - nameStart);
        if (name.empty() || k >= n || element[k] != '=') return std::nullopt;
        ++k;
        // The longest quoted value of interest, "[ffff:...:255.255.255.255]:65535", is 53
        // bytes; anything longer in `for` is not an address.
        char unquoted[64];
        std::size_t length = 0;
        bool overflow = false;
        std::string_view value;
        if (k < n && element[k] == '"') {
            ++k;
            bool closed = false;
            while (k < n) {
                char c = element[k++];
                if (c == '"') {
                    closed = true;
                    break;
                }
                if (c == '\\') {
                    if (k >= n) return std::nullopt;
                    c = element[k++];
                }
                if (length < sizeof unquoted) {
                    unquoted[length++] = c;
                } else {
                    overflow = true;
                }
            }
            if (!closed) return std::nullopt;
            value = std::string_view(unquoted, length);
        } else {
            std::size_t valueStart = k;
            while (k < n && isTokenChar(element[k]))
                ++k;
            value = element.substr(valueStart, k - valueStart);
            if (value.empty()) return std::nullopt;
        }
        while (k < n && (element[k] == ' ' || element[k] == '\t'))
            ++k;
        if (k < n) {
            if (element[k] != ';') return std::nullopt;
            ++k;
            if (k >= n) return std::nullopt;  // a trailing ';' leaves an empty pair
        }
        if (headerNameEquals(name, "for")) {
            if (seenFor || overflow) return std::nullopt;
            seenFor = true;
            result = parseRfc7239Node(value);
            if (!result) return std::nullopt;
        }
    }
    return result;
}

ClientAddress resolveClient(const RequestView& request, const TrustedProxies& proxies) {
    ClientAddress client;
    if (request.peer == nullptr) return client;
    client.status = ClientAddress::Status::Ok;
    client.address = *request.peer;
    if (proxies.cidrs.empty() || !isTrusted(*request.peer, proxies)) return client;

    const ForwardedSyntax syntax = forwardedSyntaxFor(proxies.header);
    HopRing ring;
    bool present = false;
    for (const Header& header : request.headers) {
        if (!headerNameEquals(header.name, proxies.header)) continue;
        present = true;
        ring.splitLine(header.value, syntax == ForwardedSyntax::Rfc7239);
    }
    if (!present) return client;  // the proxy itself is calling, or it names nobody else

    client.status = ClientAddress::Status::Malformed;
    client.address = IpAddress();
    if (ring.total() == 0) return client;
    if (syntax == ForwardedSyntax::Single && ring.total() != 1) return client;
    for (int i = 0; i < ring.kept(); ++i) {
        std::string_view hop = ring.fromRight(i);
        std::optional<IpAddress> address = syntax == ForwardedSyntax::Rfc7239
                                               ? parseForwardedElement(hop)
                                               : parseForwardedNode(hop);
        if (!address) return client;
        client.address = *address;
        if (!isTrusted(*address, proxies)) {
            client.status = ClientAddress::Status::Ok;
            return client;
        }
    }
    // Every hop we hold is trusted: the leftmost is the client, unless the chain was longer
    // than we keep, in which case we cannot know where it starts.
    if (ring.total() > kMaxForwardedHops) {
        client.address = IpAddress();
        return client;
    }
    client.status = ClientAddress::Status::Ok;
    return client;
}

}  // namespace ratelab::identity
