// Envoy: one local rate limit HTTP filter per policy, each building its descriptor with the
// filter's own rate_limits actions and holding one token bucket per distinct client
// (wildcard descriptor entries).

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "formats/export/export_common.h"
#include "formats/export/export_targets.h"
#include "policy/policy_names.h"
#include "policy/policy_paths.h"

namespace ratelab::formats {

namespace {

constexpr std::int64_t kMaxUint32 = 4'294'967'295;
constexpr std::int64_t kMinFillMs = 50;

struct Bucket {
    std::int64_t maxTokens = 0;
    std::int64_t tokensPerFill = 0;
    std::int64_t fillMs = 0;
};

std::string seconds(std::int64_t ms) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%lld.%03llds", static_cast<long long>(ms / 1000),
                  static_cast<long long>(ms % 1000));
    return buffer;
}

// tokens_per_fill / fill_interval equal to `rate` per second with a whole number of ms >= 50,
// when one exists with at most 100000 tokens per fill.
bool exactFill(double rate, Bucket& b) {
    for (std::int64_t n = 1; n <= 100'000; ++n) {
        double ms = static_cast<double>(n) * 1000.0 / rate;
        if (ms > 1e12) return false;
        double whole = std::round(ms);
        if (whole >= kMinFillMs && std::fabs(ms - whole) <= 1e-9 * ms) {
            b.tokensPerFill = n;
            b.fillMs = static_cast<std::int64_t>(whole);
            return true;
        }
    }
    return false;
}

class EnvoyExport final : public Exporter {
public:
    explicit EnvoyExport(const PolicySet& set) : Exporter(ExportTarget::Envoy, set) {}

private:
    std::size_t checkSet() override {
        trustedProxies();
        return set_.policies.size();
    }

    std::string text() const override {
        return preamble(
                   "Envoy local rate limit filters, one per policy, for the HTTP connection "
                   "manager: put these entries in its http_filters, in this order, before "
                   "envoy.filters.http.router. Each filter builds its descriptor with its own "
                   "rate_limits actions and keeps one token bucket per client (wildcard descriptor "
                   "entries), so it needs an Envoy with filter-level rate_limits and dynamic "
                   "descriptors (envoyproxy/envoy PR #36623 and later). Requests outside a "
                   "policy's route produce no descriptor and are not counted (the filter has no "
                   "default bucket).",
                   "Not expressible in Envoy's local rate limit: budgets of Authorization keys, "
                   "verified principals and attributes, the IETF and draft-7 RateLimit headers "
                   "(legacy policies get Envoy's X-RateLimit-* draft 03 headers), Retry-After, "
                   "on_store_error and store_timeout_ms (buckets are in Envoy's memory), exempt "
                   "address ranges. Each filter keeps at most max_dynamic_descriptors client "
                   "buckets and evicts the least recently used, which starts that client over "
                   "with a full bucket.") +
               proxies_ + "http_filters:\n" + body_;
    }

    void trustedProxies() {
        const TrustedProxies& proxies = set_.trustedProxies;
        if (proxies.cidrs.empty()) return;
        if (proxies.header != "x-forwarded-for") {
            notes_.refuseSet("/trusted_proxies/header",
                             "Envoy reads the client address from X-Forwarded-For only (its "
                             "custom-header detection does not check that the peer is a trusted "
                             "proxy); " +
                                 proxies.header + " cannot be exported");
            return;
        }
        proxies_ += commentLines(
            "# ",
            "Trusted proxies: masked_remote_address uses the client address the connection "
            "manager derives from X-Forwarded-For. Configure the connection manager to trust "
            "only these proxies, walking right to left, e.g.:");
        proxies_ +=
            "#   original_ip_detection_extensions:\n"
            "#   - name: envoy.http.original_ip_detection.xff\n"
            "#     typed_config:\n"
            "#       \"@type\": type.googleapis.com/envoy.extensions.http."
            "original_ip_detection.xff.v3.XffConfig\n"
            "#       xff_trusted_cidrs:\n"
            "#         cidrs:\n";
        for (const Cidr& cidr : proxies.cidrs) {
            proxies_ += "#         - {address_prefix: \"" + cidr.network().toString() +
                        "\", prefix_len: " + std::to_string(cidr.prefixLength()) + "}\n";
        }
        proxies_ += "\n";
    }

    void writePolicy(std::size_t i) override {
        const Policy& p = set_.policies[i];
        std::vector<std::string> common = commonChecks(
            set_, i, notes_, {KeyPart::Kind::Route, KeyPart::Kind::Peer, KeyPart::Kind::Method});
        std::string comments = "# Policy " + p.name + ": " + describe(p) + "\n";
        auto approximate = [&](std::string_view field, std::string message) {
            comments +=
                commentLines("#   approximated: ", notes_.approximate(i, field, message), "#     ");
        };
        comments += approximationComments(common);
        if (refuseSlidingWindow(p, i, notes_, "Envoy's token bucket")) return;
        if (!p.bypass.cidrs.empty()) {
            notes_.refuse(i, "/bypass/cidrs",
                          "it exempts address ranges, which Envoy's local "
                          "rate limit cannot; disable the filter on a route for them instead");
        }

        // Numbers.
        RequestNumbers n = requestNumbers(p);
        Bucket bucket;
        bucket.maxTokens = n.atOnce;
        if (p.algorithm == Algorithm::FixedWindow) {
            if (n.windowMs < kMinFillMs) {
                notes_.refuse(i, "/window_ms",
                              "it has a window of " + std::to_string(n.windowMs) +
                                  " ms; Envoy refills at most every 50 ms");
                return;
            }
            bucket.tokensPerFill = n.atOnce;
            bucket.fillMs = n.windowMs;
            approximate("/algorithm",
                        "a fixed window of " + std::to_string(n.atOnce) + " per " +
                            std::to_string(n.windowMs) + " ms is a token bucket of " +
                            std::to_string(n.atOnce) + " refilled " + std::to_string(n.atOnce) +
                            " per window: the same worst case of twice the quota across one "
                            "window boundary");
        } else {
            if (p.algorithm == Algorithm::LeakyBucket) {
                approximate("/algorithm",
                            "nginx's leaky bucket (burst " + std::to_string(p.capacity) +
                                ") is a token bucket of burst + 1 = " + std::to_string(n.atOnce) +
                                " here" +
                                (p.nodelay ? std::string()
                                           : "; Envoy cannot delay requests, so those nginx "
                                             "would delay pass at once"));
            }
            if (!exactFill(n.ratePerSecond, bucket)) {
                bucket.fillMs = std::max<std::int64_t>(
                    kMinFillMs, static_cast<std::int64_t>(std::llround(1000.0 / n.ratePerSecond)));
                bucket.tokensPerFill = std::max<std::int64_t>(
                    1, std::llround(n.ratePerSecond * static_cast<double>(bucket.fillMs) / 1000.0));
                double applied = static_cast<double>(bucket.tokensPerFill) * 1000.0 /
                                 static_cast<double>(bucket.fillMs);
                approximate("/refill_per_second",
                            "the engine runs " + numberText(n.ratePerSecond) +
                                " per second; Envoy's nearest whole-millisecond fill gives " +
                                numberText(applied));
            }
        }
        if (bucket.maxTokens > kMaxUint32 || bucket.tokensPerFill > kMaxUint32) {
            notes_.refuse(i, "/capacity", "it needs more than 4294967295 tokens per bucket");
            return;
        }
        if (p.headers == HeaderStyle::Ietf || p.headers == HeaderStyle::Draft7) {
            approximate("/headers",
                        "Envoy sends no " +
                            std::string(policy::nameOf(policy::kHeaderStyles, p.headers)) +
                            " RateLimit headers");
        }

        // Actions and descriptor entries.
        const std::string name = names_.take(identifier(p.name));
        std::string scope;  // header_value_match action for the route and methods
        std::string scopeEntry;
        if (!policy::matchesEveryPath(p.match) || !p.match.methods.empty()) {
            scope =
                "      - header_value_match:\n"
                "          descriptor_key: ratelab_route\n"
                "          descriptor_value: " +
                name +
                "\n"
                "          headers:\n";
            if (!policy::matchesEveryPath(p.match)) {
                scope +=
                    "          - name: \":path\"\n"
                    "            string_match:\n"
                    "              safe_regex:\n"
                    "                regex: '" +
                    policy::pathRegex(p.match, true) + "'\n";
            }
            if (!p.match.methods.empty()) {
                std::string methods;
                for (const std::string& m : p.match.methods)
                    methods += (methods.empty() ? "" : "|") + m;
                scope +=
                    "          - name: \":method\"\n"
                    "            string_match:\n"
                    "              safe_regex:\n"
                    "                regex: '^(" +
                    methods + ")$'\n";
            }
            scopeEntry = "      - key: ratelab_route\n        value: " + name + "\n";
        }
        std::string address =
            "      - masked_remote_address:\n"
            "          v4_prefix_mask_len: " +
            std::to_string(p.key.ipv4Prefix) +
            "\n          v6_prefix_mask_len: " + std::to_string(p.key.ipv6Prefix) + "\n";
        std::string addressEntry = "      - key: masked_remote_address\n";
        std::vector<std::pair<std::string, std::string>> limits;  // actions, entries
        switch (p.key.source) {
            case KeySource::Default:
            case KeySource::Peer:
                limits.push_back({scope + address, scopeEntry + addressEntry});
                break;
            case KeySource::Header: {
                limits.push_back({scope +
                                      "      - request_headers:\n"
                                      "          header_name: " +
                                      p.key.header +
                                      "\n"
                                      "          descriptor_key: ratelab_header\n",
                                  scopeEntry + "      - key: ratelab_header\n"});
                limits.push_back({scope +
                                      "      - header_value_match:\n"
                                      "          descriptor_key: ratelab_no_header\n"
                                      "          descriptor_value: \"true\"\n"
                                      "          expect_match: false\n"
                                      "          headers:\n"
                                      "          - name: " +
                                      p.key.header +
                                      "\n"
                                      "            present_match: true\n" +
                                      address,
                                  scopeEntry +
                                      "      - key: ratelab_no_header\n"
                                      "        value: \"true\"\n" +
                                      addressEntry});
                approximate("/key/header",
                            "requests without " + p.key.header +
                                " are limited by their address here; the engine refuses them "
                                "with 412");
                break;
            }
            case KeySource::Composite: {
                std::string actions = scope;
                std::string entries = scopeEntry;
                for (const KeyPart& part : p.key.parts) {
                    if (part.kind == KeyPart::Kind::Method) {
                        actions +=
                            "      - request_headers:\n"
                            "          header_name: \":method\"\n"
                            "          descriptor_key: ratelab_method\n";
                        entries += "      - key: ratelab_method\n";
                    } else if (part.kind == KeyPart::Kind::Peer) {
                        actions += address;
                        entries += addressEntry;
                    }
                }
                if (entries.empty()) {
                    actions +=
                        "      - generic_key:\n"
                        "          descriptor_key: ratelab_route\n"
                        "          descriptor_value: " +
                        name + "\n";
                    entries += "      - key: ratelab_route\n        value: " + name + "\n";
                }
                limits.push_back({actions, entries});
                break;
            }
            case KeySource::Principal:
                return;
        }

        std::string out = comments;
        out += "- name: ratelab." + name + "\n";
        out += "  typed_config:\n";
        out +=
            "    \"@type\": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3."
            "LocalRateLimit\n";
        out += "    stat_prefix: ratelab_" + name + "\n";
        out +=
            "    filter_enabled:\n"
            "      runtime_key: ratelab_" +
            name +
            "_enabled\n"
            "      default_value: {numerator: 100, denominator: HUNDRED}\n";
        out +=
            "    filter_enforced:\n"
            "      runtime_key: ratelab_" +
            name +
            "_enforced\n"
            "      default_value: {numerator: " +
            std::string(p.mode == PolicyMode::Shadow ? "0" : "100") + ", denominator: HUNDRED}\n";
        if (p.mode == PolicyMode::Shadow) {
            out += "    # shadow mode: decided and counted (stat rate_limited), never enforced\n";
        }
        out += "    always_consume_default_token_bucket: false\n";
        out += "    max_dynamic_descriptors: " +
               std::to_string(std::min<std::int64_t>(set_.store.maxBuckets, kMaxUint32)) + "\n";
        if (p.headers == HeaderStyle::Legacy) {
            out += "    enable_x_ratelimit_headers: DRAFT_VERSION_03\n";
        }
        out += "    rate_limits:\n";
        for (const auto& [actions, entries] : limits)
            out += "    - actions:\n" + actions;
        out += "    descriptors:\n";
        for (const auto& [actions, entries] : limits) {
            out += "    - entries:\n" + entries;
            out +=
                "      token_bucket:\n"
                "        max_tokens: " +
                std::to_string(bucket.maxTokens) +
                "\n"
                "        tokens_per_fill: " +
                std::to_string(bucket.tokensPerFill) +
                "\n"
                "        fill_interval: " +
                seconds(bucket.fillMs) + "\n";
        }
        body_ += out;
    }

    std::string body_;
    std::string proxies_;
    UniqueNames names_;
};

}  // namespace

ExportResult exportEnvoy(const PolicySet& set) {
    return EnvoyExport(set).run();
}

}  // namespace ratelab::formats
