// The nginx export's arithmetic: rates in nginx's integer thousandths, and the map from
// $remote_addr to the engine's address groups.

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "formats/export/export_targets.h"

namespace ratelab::formats {

std::string nginxRate(long long milli, long long& applied) {
    if (milli < 1) return "";
    struct Candidate {
        std::string text;
        long long value;
    };
    std::vector<Candidate> candidates;
    for (long long n = std::max(1LL, milli / 1000); n <= milli / 1000 + 1; ++n) {
        candidates.push_back({std::to_string(n) + "r/s", n * 1000});
    }
    for (long long n = std::max(1LL, milli * 60 / 1000 - 1); n <= milli * 60 / 1000 + 2; ++n) {
        if (n * 1000 / 60 >= 1) candidates.push_back({std::to_string(n) + "r/m", n * 1000 / 60});
    }
    // The nearest (ties to the lower), unless it is over 1% faster than the engine: then the
    // fastest that is not faster, so that rounding never loosens a limit by more than 1%.
    const Candidate* nearest = nullptr;
    const Candidate* below = nullptr;
    for (const Candidate& c : candidates) {
        long long d = std::llabs(c.value - milli);
        if (!nearest || d < std::llabs(nearest->value - milli) ||
            (d == std::llabs(nearest->value - milli) && c.value < nearest->value)) {
            nearest = &c;
        }
        if (c.value <= milli && (!below || c.value > below->value)) below = &c;
    }
    const Candidate* chosen = nearest;
    if (!chosen || static_cast<double>(chosen->value) > 1.01 * static_cast<double>(milli)) {
        chosen = below;
    }
    if (!chosen) return "";
    applied = chosen->value;
    return chosen->text;
}

namespace {

const std::string kGroup = "[0-9a-f]{1,4}";

// `count` hex groups separated by ':' ("" for none).
std::string groups(int count) {
    std::string out;
    for (int i = 0; i < count; ++i)
        out += (i ? ":" : "") + kGroup;
    return out;
}

std::string zeros(int count) {
    std::string out;
    for (int i = 0; i < count; ++i)
        out += (i ? ":0" : "0");
    return out;
}

std::string join(const std::string& a, const std::string& b) {
    if (a.empty()) return b;
    if (b.empty()) return a;
    return a + ":" + b;
}

}  // namespace

std::vector<NginxMapEntry> nginxAddressMap(int v4, int v6) {
    std::vector<NginxMapEntry> out;
    const std::string quad = "([0-9]+)\\.([0-9]+)\\.([0-9]+)\\.([0-9]+)$";
    std::string v4Key;
    switch (v4 / 8) {
        case 4:
            v4Key = "$1.$2.$3.$4";
            break;
        case 3:
            v4Key = "$1.$2.$3.0/24";
            break;
        case 2:
            v4Key = "$1.$2.0.0/16";
            break;
        default:
            v4Key = "$1.0.0.0/8";
            break;
    }
    out.push_back({"^" + quad, v4Key});
    // IPv4-mapped IPv6 is the IPv4 address to the engine.
    out.push_back({"^::ffff:" + quad, v4Key});
    const int g = v6 / 16;   // leading 16-bit groups kept
    if (g >= 8) return out;  // the default, $remote_addr, is the whole address
    const std::string suffix = "::/" + std::to_string(v6);
    // ::/64 is never grouped (loopback, unspecified, IPv4-compatible): its first four groups
    // are zero, so nginx writes it as "::" and at most four groups, or "::a.b.c.d".
    out.push_back({"^::(" + kGroup + "(:" + kGroup + "){0,3})?$", "$remote_addr"});
    out.push_back({"^::[0-9]+\\.[0-9]+\\.[0-9]+\\.[0-9]+$", "$remote_addr"});
    // The first g groups written out before any "::".
    out.push_back({"^(" + groups(g) + "):", "$1" + suffix});
    // Otherwise "::" starts within the first g groups: k groups before it, t after it, and
    // z = 8 - k - t >= 2 zero groups in between (nginx compresses runs of two or more).
    for (int k = 0; k < g; ++k) {
        const std::string head = k ? "^(" + groups(k) + ")::" : "^::";
        const std::string headKey = k ? "$1" : "";
        const int capture = k ? 2 : 1;
        // While t <= 8 - g the zeros cover the rest of the first g groups.
        const int most = std::min(6 - k, 8 - g);
        std::string tail =
            most > 0 ? "(" + kGroup + "(:" + kGroup + "){0," + std::to_string(most - 1) + "})?$"
                     : "$";
        // (For k = 0 and at most four groups after "::", the ::/64 entry above comes first.)
        if (k > 0 || most > 4) out.push_back({head + tail, join(headKey, zeros(g - k)) + suffix});
        // Beyond that, the first m = t - (8 - g) groups after "::" are in the prefix too.
        for (int t = 8 - g + 1; t <= 6 - k; ++t) {
            const int m = t - (8 - g);
            const int z = 8 - k - t;
            std::string pattern = head + "(" + groups(m) + ")";
            for (int i = m; i < t; ++i)
                pattern += ":" + kGroup;
            out.push_back({pattern + "$",
                           join(join(headKey, zeros(z)), "$" + std::to_string(capture)) + suffix});
        }
    }
    return out;
}

}  // namespace ratelab::formats
