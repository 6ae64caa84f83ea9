#include "ratelab/store_factory.h"

#include "ratelab/memory_store.h"
#include "ratelab/redis_store.h"

namespace ratelab {

std::unique_ptr<Store> makeStore(const StoreConfig& config, std::string* error) {
    if (config.kind == StoreConfig::Kind::Memory) {
        MemoryStoreOptions options;
        options.maxBuckets = config.maxBuckets;
        return makeMemoryStore(options);
    }
    RedisStoreOptions options;
    options.urls = config.urls;
    options.keyNamespace = config.keyNamespace;
    return makeRedisStore(options, error);
}

}  // namespace ratelab
