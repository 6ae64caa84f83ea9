#include "store_choice.h"

#if __has_include("ratelab/redis_store.h")
#include "ratelab/redis_store.h"
#define RATELAB_GUI_HAS_REDIS 1
#endif

namespace ratelab::gui {

std::shared_ptr<Store> makeChosenStore(const StoreChoice& choice, const std::string& keyNamespace,
                                       std::string& error) {
    error.clear();
    if (choice.kind == StoreChoice::Kind::Memory) return nullptr;
#ifdef RATELAB_GUI_HAS_REDIS
    (void)keyNamespace;
    error = "redis store: wiring pending";
    return nullptr;
#else
    (void)keyNamespace;
    error = "This build has no Redis store (" + choice.redisUrl + " cannot be used).";
    return nullptr;
#endif
}

}  // namespace ratelab::gui
