#include "gui/session/store_choice.h"

#include "ratelab/redis_url.h"
#include "sim/run/run_store.h"

namespace ratelab::gui {

std::shared_ptr<Store> makeChosenStore(const StoreChoice& choice, const std::string& keyNamespace,
                                       std::string& error) {
    error.clear();
    if (choice.kind == StoreChoice::Kind::Memory) return nullptr;
    std::unique_ptr<Store> store =
        sim::makeRunRedisStore(choice.redisUrl, keyNamespace, kRedisProbeTimeout, &error);
    if (!store) {
        error = "Cannot use Redis at " + redactRedisUrl(choice.redisUrl) + ": " + error +
                ". Start a server there, or choose the memory store.";
        return nullptr;
    }
    return std::shared_ptr<Store>(std::move(store));
}

}  // namespace ratelab::gui
