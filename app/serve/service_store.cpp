#include "serve/service_store.h"

#include "ratelab/store_factory.h"

namespace ratelab::serve {

bool storeLeavesProcess(const Store& store) {
    // The memory store is the only one inside the process; a batching store names its inner
    // store's kind.
    return store.kind() != "memory";
}

std::shared_ptr<Store> makeServiceStore(const StoreConfig& config, std::string* error) {
    std::shared_ptr<Store> store = makeStore(config, error);
    if (!store || !storeLeavesProcess(*store)) return store;
    return makeBatchingStore(std::move(store));
}

}  // namespace ratelab::serve
