#include "cli/store_option.h"

#include "ratelab/redis_url.h"
#include "sim/run/run_store.h"

namespace ratelab::cli {

Result<std::shared_ptr<Store>> storeFromOption(const std::string& option) {
    if (option.empty() || option == "memory") return std::shared_ptr<Store>();
    std::string why;
    if (!parseRedisUrl(option, &why)) {
        return fail(kUsage, "--store \"" + redactRedisUrl(option) +
                                "\": expected memory or a Redis URL: " + why);
    }
    std::unique_ptr<Store> store = sim::makeRunRedisStore(option, "ratelab-sim", 0, &why);
    if (!store) return fail(kIoError, "--store \"" + redactRedisUrl(option) + "\": " + why);
    return std::shared_ptr<Store>(std::move(store));
}

}  // namespace ratelab::cli
