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

}  // namespace ratelab::formats
