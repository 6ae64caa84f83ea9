// What the importers' fields become in the fields the policy loader reads, and the warnings
// that say how each differs from the product.

#include "formats/import/engine_fit.h"

#include <string>

namespace ratelab::formats {

void fitNginxToEngine(PolicyJson& file, const std::vector<SourcePos>& at, ImportLog& log) {
    PolicyJson fitted = PolicyJson::array();
    for (std::size_t i = 0; i < file["policies"].size(); ++i) {
        PolicyJson& policy = file["policies"][i];
        if (!policy.contains("limits")) {
            fitted.push_back(std::move(policy));
            continue;
        }
        // Zones on one key: nginx checks them all, charges none when one refuses, and delays
        // by the longest. One policy per zone, in the order nginx checks them.
        std::string zones;
        for (const PolicyJson& limit : policy["limits"])
            zones += (zones.empty() ? "" : ", ") + limit["name"].get<std::string>();
        log.warning(at[i], "nginx charges none of the zones " + zones +
                               " when one of them refuses a request; the import writes a "
                               "policy per zone, and a request a later one refuses stays "
                               "charged by the ones before it");
        const PolicyJson limits = policy["limits"];
        policy.erase("limits");
        const std::string name = policy["name"].get<std::string>();
        for (const PolicyJson& limit : limits) {
            PolicyJson one;
            for (auto it = policy.begin(); it != policy.end(); ++it) {
                one[it.key()] = it.value();
                if (it.key() != "match") continue;
                for (auto f = limit.begin(); f != limit.end(); ++f) {
                    if (f.key() != "name") one[f.key()] = f.value();
                }
            }
            one["name"] = name + "." + limit["name"].get<std::string>();
            fitted.push_back(std::move(one));
        }
    }
    file["policies"] = std::move(fitted);
}

void fitHaproxyToEngine(PolicyJson& file, const std::vector<SourcePos>& at, ImportLog& log) {
    for (std::size_t i = 0; i < file["policies"].size(); ++i) {
        PolicyJson& policy = file["policies"][i];
        if (policy.value("algorithm", "") != "haproxy_rate") continue;
        const std::int64_t window = policy["window_ms"].get<std::int64_t>();
        policy["algorithm"] = "sliding_window";
        log.warning(at[i],
                    "HAProxy's rate counter weights the previous period by the share of it "
                    "still inside the window, in whole milliseconds; the import uses the "
                    "engine's sliding window, which weights it in 1/65536 steps");
        if (policy.value("count_refused", false)) {
            log.warning(at[i],
                        "HAProxy counts the requests this rule denies too (they are tracked "
                        "before it); the sliding window counts admitted requests only, so a "
                        "client that keeps sending past the limit is let through again "
                        "sooner");
        }
        // Denied before it is counted, the rule reads the count without the request itself:
        // `gt X` lets X + 1 through, where the sliding window's capacity counts the request.
        if (!policy.value("count_refused", true))
            policy["capacity"] = policy["capacity"].get<std::int64_t>() + 1;
        if (policy["capacity"].get<std::int64_t>() < 1) {
            log.warning(at[i],
                        "a threshold of 0 refuses every request the counter has counted; "
                        "ratelab's limits hold at least one request a window, so the import "
                        "lets the first through");
            policy["capacity"] = 1;
        }
        policy.erase("count_refused");
        if (policy.contains("expire_ms")) {
            const std::int64_t expire = policy["expire_ms"].get<std::int64_t>();
            if (expire < 2 * window) {
                log.warning(at[i], "HAProxy forgets a key " + std::to_string(expire) +
                                       " ms after its last use; the sliding window forgets it "
                                       "after two idle periods (" +
                                       std::to_string(2 * window) + " ms)");
            }
            policy.erase("expire_ms");
        }
    }
}

}  // namespace ratelab::formats
