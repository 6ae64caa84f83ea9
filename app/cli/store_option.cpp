#include "cli/store_option.h"

#include <cstdio>
#include <random>

#include "ratelab/redis_store.h"

namespace ratelab::cli {

Result<std::shared_ptr<Store>> storeFromOption(const std::string& option) {
    if (option.empty() || option == "memory") return std::shared_ptr<Store>();
    if (!option.starts_with("redis://") && !option.starts_with("unix://")) {
        return fail(kUsage,
                    "--store \"" + option + "\": expected memory or redis://HOST:PORT[/DB]");
    }
    RedisStoreOptions options;
    options.urls = {option};
    // Redis decides on the simulator's virtual clock, and each run writes under its own
    // namespace, so runs against one server never see each other's counters.
    options.timeSource = RedisTimeSource::Caller;
    std::random_device device;
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "%08x%08x", device(), device());
    options.keyNamespace = std::string("ratelab-sim-") + suffix;
    std::string why;
    std::unique_ptr<Store> store = makeRedisStore(options, &why);
    if (!store) return fail(kUsage, "--store \"" + option + "\": " + why);
    // Fail fast on a server that cannot be reached, rather than run a whole scenario failing
    // open: one consumption of a throwaway key in this run's namespace.
    const Limit probeLimit;
    ConsumeRequest probe;
    probe.limitId = 4095;
    probe.limitName = "probe";
    probe.limit = &probeLimit;
    probe.partition = "probe";
    probe.key = "probe";
    probe.now = kNanosPerSecond;
    const ConsumeResult result = store->consume(probe);
    if (result.status != StoreStatus::Ok) {
        return fail(kIoError, "--store \"" + option + "\": " + result.error);
    }
    return std::shared_ptr<Store>(std::move(store));
}

}  // namespace ratelab::cli
