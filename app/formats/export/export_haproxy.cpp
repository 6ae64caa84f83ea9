// HAProxy: one stick table per policy counting http_req_rate over a period, tracked from the
// frontend with src,ipmask(v4,v6), and a deny with status 429 above the policy's count.

#include <algorithm>
#include <cmath>

#include "formats/export/export_common.h"
#include "formats/export/export_targets.h"
#include "policy/policy_file_internal.h"
#include "policy/policy_names.h"
#include "policy/policy_paths.h"

namespace ratelab::formats {

namespace {

// HAProxy tracks three stick counters per request unless tune.stick-counters says otherwise.
constexpr std::size_t kStickCounters = 3;
// expire and the rate period are milliseconds in a signed 32-bit field.
constexpr std::int64_t kMaxMs = 2'147'483'647;

std::string duration(std::int64_t ms) {
    if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
    return std::to_string(ms) + "ms";
}

class HaproxyExport final : public Exporter {
public:
    explicit HaproxyExport(const PolicySet& set) : Exporter(ExportTarget::Haproxy, set) {}

private:
    std::size_t checkSet() override {
        if (set_.policies.size() > kStickCounters) {
            notes_.refuseSet(policy::policyPointer(kStickCounters),
                             "HAProxy tracks " + std::to_string(kStickCounters) +
                                 " stick counters per request by default and this file has " +
                                 std::to_string(set_.policies.size()) +
                                 " policies; export at most three at a time");
        }
        trustedProxies();
        return std::min(set_.policies.size(), kStickCounters);
    }

    std::string text() const override {
        return preamble(
                   "HAProxy stick tables. Each policy counts http_req_rate over a period per "
                   "client and denies with 429 above its count. The rate counts every tracked "
                   "request, refused ones included, so a client that keeps sending over the limit "
                   "stays refused until it slows down (the engine charges refused requests "
                   "nothing).",
                   "Not expressible in HAProxy stick tables: budgets of Authorization keys, "
                   "verified principals and attributes, the RateLimit and Retry-After headers, "
                   "on_store_error and store_timeout_ms (tables are in HAProxy's memory; peers "
                   "replicate entries, not one shared count).") +
               "# 1. One backend per policy, holding its table:\n" + tables_ + "\n" +
               frontendIntro() + proxies_ + rules_;
    }

    static std::string frontendIntro() {
        return "# 2. In each frontend, before any use_backend or default_backend rule, in this "
               "order:\n";
    }

    void trustedProxies() {
        const TrustedProxies& proxies = set_.trustedProxies;
        if (proxies.cidrs.empty()) return;
        if (proxies.header == "forwarded") {
            notes_.refuseSet("/trusted_proxies/header",
                             "HAProxy reads an address from X-Forwarded-For or X-Real-IP; the "
                             "Forwarded header cannot be exported");
            return;
        }
        std::string cidrs;
        for (const Cidr& cidr : proxies.cidrs)
            cidrs += " " + cidr.toString();
        proxies_ += "    # Trusted proxies: the client is the last " + proxies.header +
                    " entry when the peer is one of them.\n";
        proxies_ +=
            "    # Approximated: one proxy tier (the engine walks right to left past "
            "every trusted hop); a\n    # header that does not parse leaves the proxy's "
            "address (the engine answers 412).\n";
        proxies_ += "    acl ratelab_trusted_proxy src" + cidrs + "\n";
        proxies_ +=
            "    http-request set-src hdr_ip(" + proxies.header + ",-1) if ratelab_trusted_proxy\n";
        notes_.approximateSet("/trusted_proxies/cidrs",
                              "the client is the last forwarded entry from a trusted proxy (one "
                              "proxy tier); the engine walks right to left past every trusted hop");
    }

    void writePolicy(std::size_t i) override {
        const Policy& p = set_.policies[i];
        std::vector<std::string> common =
            commonChecks(set_, i, notes_, {KeyPart::Kind::Route, KeyPart::Kind::Peer});
        std::string comments = "\n    # Policy " + p.name + ": " + describe(p) + "\n";
        auto approximate = [&](std::string_view field, std::string message) {
            comments += commentLines(
                "    #   approximated: ", notes_.approximate(i, field, message), "    #     ");
        };
        for (const std::string& c : common)
            comments += commentLines("    #   approximated: ", c, "    #     ");

        RequestNumbers n = requestNumbers(p);
        std::int64_t periodMs = 0;
        std::int64_t count = n.atOnce;
        switch (p.algorithm) {
            case Algorithm::TokenBucket:
            case Algorithm::Gcra:
            case Algorithm::LeakyBucket:
                periodMs = std::llround(1000.0 * static_cast<double>(n.atOnce) / n.ratePerSecond);
                approximate("/algorithm",
                            "a bucket of " + std::to_string(n.atOnce) + " refilled at " +
                                numberText(n.ratePerSecond) + " per second becomes at most " +
                                std::to_string(n.atOnce) + " requests over any " +
                                duration(std::max<std::int64_t>(periodMs, 1)) +
                                " (its time to refill): the same burst and average rate, "
                                "stricter for a client that keeps sending after a burst" +
                                (p.algorithm == Algorithm::LeakyBucket && !p.nodelay
                                     ? "; HAProxy cannot delay requests"
                                     : ""));
                break;
            case Algorithm::HaproxyRate:
                periodMs = n.windowMs;  // HAProxy's own counter: nothing to approximate
                break;
            case Algorithm::FixedWindow:
            case Algorithm::SlidingLog:
            case Algorithm::SlidingWindow:
                periodMs = n.windowMs;
                approximate("/algorithm",
                            std::string(algorithmName(p.algorithm)) +
                                " is HAProxy's rate over a period, which weighs the previous "
                                "period by how much of it the last " +
                                duration(periodMs) + " still cover" +
                                (p.algorithm == Algorithm::SlidingWindow
                                     ? ", the same estimate as sliding_window's"
                                     : ""));
                break;
        }
        if (periodMs < 1) {
            notes_.refuse(i, "/refill_per_second",
                          "it refills its whole bucket in under 1 ms, "
                          "HAProxy's finest period");
            return;
        }
        const bool own = p.algorithm == Algorithm::HaproxyRate;
        if (!own && 2 * periodMs > kMaxMs) {
            notes_.refuse(i,
                          p.algorithm == Algorithm::FixedWindow ||
                                  p.algorithm == Algorithm::SlidingLog ||
                                  p.algorithm == Algorithm::SlidingWindow
                              ? "/window_ms"
                              : "/capacity",
                          "it needs a period of " + duration(periodMs) +
                              "; HAProxy's stick-table expiry must be twice that and stay under "
                              "24.8 days");
            return;
        }

        const std::string table = "ratelab_" + identifier(p.name) +
                                  (i > 0 && identifier(p.name) == identifier(set_.policies[0].name)
                                       ? "_" + std::to_string(i)
                                       : "");
        const std::string sc = std::to_string(i);
        std::string type;
        std::string key;
        std::string missing;
        switch (p.key.source) {
            case KeySource::Default:
            case KeySource::Peer:
            case KeySource::Composite:
                type = "ipv6";
                key = "src,ipmask(" + std::to_string(p.key.ipv4Prefix) + "," +
                      std::to_string(p.key.ipv6Prefix) + ")";
                if (p.key.source == KeySource::Composite &&
                    std::none_of(p.key.parts.begin(), p.key.parts.end(),
                                 [](const KeyPart& k) { return k.kind == KeyPart::Kind::Peer; })) {
                    type = "integer";
                    key = "int(1)";  // one bucket for the whole route
                }
                break;
            case KeySource::Header:
                type = "binary len 20";
                key = "req.fhdr(" + p.key.header + ",1),sha1";
                missing = "!{ req.fhdr(" + p.key.header + ",1) -m found }";
                break;
            case KeySource::Principal:
                return;
        }

        // Conditions: the route, the methods, not a bypassed address.
        std::string acls;
        std::string when;
        if (!policy::matchesEveryPath(p.match)) {
            acls += "    acl " + table + "_route path -m reg '" +
                    policy::pathRegex(p.match, false) + "'\n";
            when += " " + table + "_route";
        }
        if (!p.match.methods.empty()) {
            acls += "    acl " + table + "_method method";
            for (const std::string& m : p.match.methods)
                acls += " " + m;
            acls += "\n";
            when += " " + table + "_method";
        }
        if (!p.bypass.cidrs.empty()) {
            acls += "    acl " + table + "_bypass src";
            for (const Cidr& cidr : p.bypass.cidrs)
                acls += " " + cidr.toString();
            acls += "\n";
            when += " !" + table + "_bypass";
        }
        std::string condition = when.empty() ? "" : " if" + when;

        // haproxy_rate carries the table's own expire (none: entries stay until the table is
        // full); the others expire once their period's count has decayed.
        const std::int64_t expireMs = own ? p.expireMs : 2 * periodMs;
        tables_ += "backend " + table + "\n    stick-table type " + type + " size " +
                   std::to_string(set_.store.maxBuckets) +
                   (expireMs > 0 ? " expire " + duration(expireMs) : "") + " store http_req_rate(" +
                   duration(periodMs) + ")\n";

        // Counting refused requests, the deny reads the rate after track-sc counted the request;
        // otherwise (count_refused false) it reads the entry before tracking, as the policy
        // does.
        const bool denyFirst = own && !p.countRefused;
        std::string over = (denyFirst ? "{ " + key + ",table_http_req_rate(" + table + ")"
                                      : "{ sc_http_req_rate(" + sc + ")") +
                           " gt " + std::to_string(count) + " }";
        if (p.mode == PolicyMode::Shadow) {
            approximate("/mode", "shadow mode sets the variables txn." + table +
                                     "_over (and _nokey without a key) instead of refusing; log "
                                     "them with %[var(txn." +
                                     table + "_over)]");
        }
        std::string out = comments + acls;
        if (!missing.empty() && p.mode == PolicyMode::Shadow) {
            out += "    # Without the header there is no key (the engine would answer 412).\n";
            out += "    http-request set-var(txn." + table + "_nokey) bool(true) if" + when + " " +
                   missing + "\n";
        } else if (!missing.empty()) {
            // `return`, not `deny deny_status 412`: HAProxy has no default error page for 412
            // and refuses that deny_status.
            out +=
                "    # Without the header there is no key: refused with 412, as the engine "
                "does.\n";
            out += "    http-request return status 412 if" + when + " " + missing + "\n";
        }
        const std::string track =
            "    http-request track-sc" + sc + " " + key + " table " + table + condition + "\n";
        if (!denyFirst) out += track;
        if (p.mode == PolicyMode::Shadow) {
            out += "    http-request set-var(txn." + table + "_over) bool(true) if" + when + " " +
                   over + "\n";
        } else {
            out += "    http-request deny deny_status 429 if" + when + " " + over + "\n";
        }
        if (denyFirst) out += track;
        rules_ += out;
    }

    std::string tables_;
    std::string proxies_;
    std::string rules_;
};

}  // namespace

ExportResult exportHaproxy(const PolicySet& set) {
    return HaproxyExport(set).run();
}

}  // namespace ratelab::formats
