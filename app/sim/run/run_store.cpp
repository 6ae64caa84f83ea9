#include "sim/run/run_store.h"

#include <cstdio>
#include <random>

#include "ratelab/redis_store.h"

namespace ratelab::sim {

std::unique_ptr<Store> makeRunRedisStore(const std::string& url, const std::string& keyNamespace,
                                         Nanos probeTimeout, std::string* error) {
    std::string scratch;
    if (!error) error = &scratch;
    RedisStoreOptions options;
    options.urls = {url};
    options.timeSource = RedisTimeSource::Caller;
    std::random_device device;
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "-run%08x%08x", device(), device());
    options.keyNamespace = (keyNamespace.empty() ? std::string("ratelab") : keyNamespace) + suffix;
    std::unique_ptr<Store> store = makeRedisStore(options, error);
    if (!store) return nullptr;
    // A check that charges nothing, at time 0: the state it leaves is fresh from the run's first
    // instant on, so that no sample of the run counts it (Store::keyspaceAt).
    const Limit limit;
    ConsumeRequest probe;
    probe.limitId = 4095;
    probe.limitName = "probe";
    probe.limit = &limit;
    probe.partition = "probe";
    probe.key = "probe";
    probe.cost = 0;
    probe.now = 0;
    probe.timeout = probeTimeout;
    const ConsumeResult result = store->consume(probe);
    if (result.status != StoreStatus::Ok) {
        *error = "it does not answer: " +
                 (result.error.empty() ? std::string("no reply") : result.error);
        return nullptr;
    }
    return store;
}

}  // namespace ratelab::sim
