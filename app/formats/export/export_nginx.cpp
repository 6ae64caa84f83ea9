// nginx: limit_req_zone and limit_req at http level, with maps that build each policy's key
// and leave it empty (nginx does not count empty keys) outside the policy's route.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "algorithms/leaky_bucket.h"
#include "formats/export/export_common.h"
#include "formats/export/export_targets.h"
#include "policy/policy_names.h"
#include "policy/policy_paths.h"
#include "ratelab/number_text.h"

namespace ratelab::formats {

namespace {

// nginx keeps a limit_req state in a 128-byte slab slot when the key is at most 48 bytes (an
// address, an address group, a method and a group): about 8000 states per megabyte. A header
// value may be longer; 256-byte slots, 4000 per megabyte.
constexpr std::int64_t kStatesPerMegabyte = 8000;
constexpr std::int64_t kLongKeyStatesPerMegabyte = 4000;

// Four significant digits, for messages.
std::string roughNumber(double x) {
    return numberText(x, 4);
}

std::string quote(std::string_view text) {
    return "\"" + std::string(text) + "\"";
}

// $http_<name>: nginx lower-cases the header name and turns '-' into '_'.
bool headerVariable(std::string_view header, std::string& out) {
    out = "$http_";
    for (char c : header) {
        if (c == '-' || c == '_') {
            out.push_back('_');
        } else if (std::isalnum(static_cast<unsigned char>(c))) {
            out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
        } else {
            return false;
        }
    }
    return true;
}

class NginxExport final : public Exporter {
public:
    explicit NginxExport(const PolicySet& set) : Exporter(ExportTarget::Nginx, set) {}

private:
    std::size_t checkSet() override {
        body_ += "limit_req_status 429;\n";
        modes();
        trustedProxies();
        return set_.policies.size();
    }

    std::string text() const override {
        return preamble(
                   "Include this file inside nginx's http { } block. Its limit_req lines apply to "
                   "every server and location that has no limit_req of its own: nginx inherits "
                   "limit_req only into levels that define none, so a location with its own "
                   "limit_req must repeat these lines to stay limited. A policy's route and "
                   "methods are part of its key: outside them the key is empty, and nginx does not "
                   "count empty keys. nginx matches $uri, the decoded and normalised path, where "
                   "the engine sees the path as sent.",
                   "Not expressible in nginx: budgets of Authorization keys, verified principals "
                   "and attributes, the RateLimit and Retry-After headers (nginx sends none; a 429 "
                   "carries no hint of when to retry), on_store_error and store_timeout_ms (the "
                   "zone is local shared memory). nginx counts time in whole milliseconds and "
                   "rates in thousandths of a request per second.") +
               body_;
    }

    void modes() {
        std::size_t shadow =
            std::count_if(set_.policies.begin(), set_.policies.end(),
                          [](const Policy& p) { return p.mode == PolicyMode::Shadow; });
        if (shadow == 0) return;
        if (shadow == set_.policies.size()) {
            body_ +=
                "# Every policy is in shadow mode: counted, logged, never refused.\n"
                "limit_req_dry_run on;\n";
            return;
        }
        for (std::size_t i = 0; i < set_.policies.size(); ++i) {
            if (set_.policies[i].mode != PolicyMode::Shadow) continue;
            notes_.refuse(i, "/mode",
                          "it is in shadow mode and others are not, but limit_req_dry_run "
                          "applies to every limit_req of the http block; export the shadow "
                          "policies in a file of their own");
        }
    }

    void trustedProxies() {
        const TrustedProxies& proxies = set_.trustedProxies;
        if (proxies.cidrs.empty()) return;
        if (proxies.header == "forwarded") {
            notes_.refuseSet("/trusted_proxies/header",
                             "nginx's realip module cannot read the Forwarded header; use "
                             "x-forwarded-for or x-real-ip");
            return;
        }
        body_ += "\n# Trusted proxies: the client address is read from " + proxies.header +
                 " when the peer is one of these,\n# walking right to left past trusted hops "
                 "(real_ip_recursive). This sets $remote_addr for the\n# whole http block; "
                 "remove any real_ip_header of your own. A header that does not parse leaves\n"
                 "# the proxy's address (the engine refuses such a request with 412).\n";
        for (const Cidr& cidr : proxies.cidrs)
            body_ += "set_real_ip_from " + cidr.toString() + ";\n";
        body_ += std::string("real_ip_header ") +
                 (proxies.header == "x-real-ip" ? "X-Real-IP" : "X-Forwarded-For") + ";\n";
        body_ += "real_ip_recursive on;\n";
    }

    // The address key: $binary_remote_addr, or a map to the engine's address groups.
    bool addressKey(std::size_t i, const std::string& var, std::string& key, std::string& out) {
        const Policy& p = set_.policies[i];
        bool ok = true;
        if (p.key.ipv4Prefix % 8 != 0) {
            notes_.refuse(i, "/key/ipv4_prefix",
                          "it groups IPv4 addresses by /" + std::to_string(p.key.ipv4Prefix) +
                              "; nginx's map can group whole octets only (/8, /16, /24, /32)");
            ok = false;
        }
        if (p.key.ipv6Prefix % 16 != 0) {
            notes_.refuse(i, "/key/ipv6_prefix",
                          "it groups IPv6 addresses by /" + std::to_string(p.key.ipv6Prefix) +
                              "; nginx's map can group whole 16-bit fields only (/16, /32, /48, "
                              "/64, ...)");
            ok = false;
        }
        if (!ok) return false;
        if (p.key.ipv4Prefix == 32 && p.key.ipv6Prefix == 128) {
            key = "$binary_remote_addr";
            return true;
        }
        key = var;
        out += "# The client address grouped as the engine groups it: IPv4 by /" +
               std::to_string(p.key.ipv4Prefix) + ", IPv6 by /" + std::to_string(p.key.ipv6Prefix) +
               " (::/64 never).\n";
        out += "map $remote_addr " + var + " {\n";
        for (const NginxMapEntry& e : nginxAddressMap(p.key.ipv4Prefix, p.key.ipv6Prefix)) {
            out += "    " + quote("~" + e.pattern) + " " + quote(e.value) + ";\n";
        }
        out += "    default $remote_addr;\n}\n";
        return true;
    }

    void writePolicy(std::size_t i) override {
        const Policy& p = set_.policies[i];
        std::vector<std::string> common = commonChecks(
            set_, i, notes_, {KeyPart::Kind::Route, KeyPart::Kind::Peer, KeyPart::Kind::Method});
        std::string out = "\n# Policy " + p.name + ": " + describe(p) + "\n";
        auto approximate = [&](std::string_view field, std::string message) {
            out +=
                commentLines("#   approximated: ", notes_.approximate(i, field, message), "#     ");
        };
        out += approximationComments(common);
        if (refuseSlidingWindow(p, i, notes_, "nginx's leaky bucket")) return;
        const std::string base = identifier(p.name);
        const std::string zone = names_.take("ratelab_" + base);
        const std::string prefix = "$" + zone;

        // The key before scoping.
        std::string key;
        bool longKey = false;
        bool usesAddress = p.key.source == KeySource::Default || p.key.source == KeySource::Peer ||
                           p.key.source == KeySource::Header;
        for (const KeyPart& part : p.key.parts)
            usesAddress |= part.kind == KeyPart::Kind::Peer;
        std::string address;
        if (usesAddress && !addressKey(i, prefix + "_addr", address, out)) return;
        switch (p.key.source) {
            case KeySource::Default:
            case KeySource::Peer:
                key = address;
                break;
            case KeySource::Header: {
                std::string variable;
                if (!headerVariable(p.key.header, variable)) {
                    notes_.refuse(i, "/key/header",
                                  "it keys on header \"" + p.key.header +
                                      "\", whose name nginx cannot turn into a $http_ variable");
                    return;
                }
                longKey = true;
                approximate("/key/header",
                            "requests without " + p.key.header +
                                " are limited by their address here; the engine refuses them "
                                "with 412");
                out += "map " + variable + " " + prefix + "_id {\n    \"\" " +
                       quote("a:" + address) + ";\n    default " + quote("h:" + variable) +
                       ";\n}\n";
                key = prefix + "_id";
                break;
            }
            case KeySource::Composite: {
                for (const KeyPart& part : p.key.parts) {
                    if (part.kind == KeyPart::Kind::Method)
                        key += (key.empty() ? "" : ":") + std::string("$request_method");
                    if (part.kind == KeyPart::Kind::Peer) key += (key.empty() ? "" : ":") + address;
                }
                if (key.empty()) key = "route";  // one bucket for the whole route
                break;
            }
            case KeySource::Principal:
                return;  // refused by commonChecks
        }

        // Scope: bypassed addresses, methods and the route empty the key.
        std::string source;
        std::string pattern = "^";
        if (!p.bypass.cidrs.empty()) {
            out += "geo " + prefix + "_bypass {\n    default 0;\n";
            for (const Cidr& cidr : p.bypass.cidrs)
                out += "    " + cidr.toString() + " 1;\n";
            out += "}\n";
            source += prefix + "_bypass ";
            pattern += "0 ";
        }
        if (!p.match.methods.empty()) {
            source += "$request_method ";
            pattern += "(";
            for (std::size_t m = 0; m < p.match.methods.size(); ++m) {
                pattern += (m ? "|" : "") + p.match.methods[m];
            }
            pattern += ") ";
        }
        std::string zoneKey = key;
        if (!source.empty() || !policy::matchesEveryPath(p.match)) {
            source += "$uri";
            pattern += policy::pathRegex(p.match, false).substr(1);
            out += "map " + quote(source) + " " + prefix + "_key {\n    " + quote("~" + pattern) +
                   " " + quote(key) + ";\n    default \"\";\n}\n";
            zoneKey = prefix + "_key";
        } else if (key.find(':') != std::string::npos || key == "route") {
            zoneKey = quote(key);
        }

        // Numbers.
        RequestNumbers n = requestNumbers(p);
        long long milli = 0;
        std::string burstNote;
        std::int64_t burst = 0;
        switch (p.algorithm) {
            case Algorithm::LeakyBucket:
                milli = algorithms::leakyRate(compileLimit(p)) / p.cost;  // nginx's own rate unit
                burst = n.atOnce - 1;
                break;
            case Algorithm::TokenBucket:
            case Algorithm::Gcra:
                milli = static_cast<long long>(std::floor(n.ratePerSecond * 1000 + 1e-6));
                burst = n.atOnce - 1;
                approximate("/algorithm",
                            "a token bucket of capacity " + std::to_string(n.atOnce) +
                                " is nginx's burst=" + std::to_string(burst) +
                                " nodelay: the same admissions, counted in whole milliseconds");
                break;
            default:  // fixed window
                milli = static_cast<long long>(std::floor(n.ratePerSecond * 1000 + 1e-6));
                burst = n.atOnce - 1;
                approximate("/algorithm",
                            "a fixed window of " + std::to_string(n.atOnce) + " per " +
                                std::to_string(n.windowMs) + " ms is a bucket of " +
                                std::to_string(n.atOnce) +
                                " refilled at the same average rate: "
                                "smooth where the window resets at once, with the same worst "
                                "case of twice the quota across one window boundary");
                break;
        }
        long long applied = 0;
        std::string rate = nginxRate(milli, applied);
        if (rate.empty()) {
            notes_.refuse(
                i, p.algorithm == Algorithm::FixedWindow ? "/window_ms" : "/refill_per_second",
                "it runs at " + roughNumber(n.ratePerSecond * 60) +
                    " requests per minute, below nginx's slowest rate (1r/m)");
            return;
        }
        if (applied != milli) {
            approximate(p.algorithm == Algorithm::FixedWindow ? "/window_ms" : "/refill_per_second",
                        "the engine runs " + numberText(static_cast<double>(milli) / 1000) +
                            " requests per second (in nginx's thousandths); " + rate + " runs " +
                            numberText(static_cast<double>(applied) / 1000));
        }
        if (p.algorithm == Algorithm::LeakyBucket && !p.nodelay && p.cost > 1) {
            approximate("/delay", "delay is divided by the cost too");
        }

        const std::int64_t states = set_.store.maxBuckets;
        const std::int64_t perMb = longKey ? kLongKeyStatesPerMegabyte : kStatesPerMegabyte;
        const std::int64_t megabytes = std::max<std::int64_t>(1, (states + perMb - 1) / perMb);
        out += "# Zone sized for max_buckets = " + std::to_string(states) + " keys (about " +
               std::to_string(perMb) + " per MB); each zone holds its own.\n";
        out += "limit_req_zone " + zoneKey + " zone=" + zone + ":" + std::to_string(megabytes) +
               "m rate=" + rate + ";\n";
        out += "limit_req zone=" + zone;
        if (burst > 0) out += " burst=" + std::to_string(burst);
        bool nodelay = p.algorithm != Algorithm::LeakyBucket || p.nodelay;
        if (nodelay) {
            out += " nodelay";
        } else if (p.delay / p.cost > 0) {
            out += " delay=" + std::to_string(p.delay / p.cost);
        }
        out += ";\n";
        body_ += out;
    }

    std::string body_;
    UniqueNames names_;
};

}  // namespace

ExportResult exportNginx(const PolicySet& set) {
    return NginxExport(set).run();
}

}  // namespace ratelab::formats
