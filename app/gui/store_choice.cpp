#include "store_choice.h"

#include <atomic>
#include <chrono>
#include <cstdio>

#include "ratelab/redis_store.h"

namespace ratelab::gui {

namespace {

// Keys of one run: "<namespace>-wb<time><n>:{...}". Redis in caller-time mode keeps keys
// for minutes after their last write; a run that reused the previous run's names would start
// from its buckets. A fresh namespace per run starts empty, and the old keys expire by themselves.
std::string runNamespace(const std::string& base) {
    static std::atomic<unsigned> counter{0};
    const auto stamp = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
    char suffix[48];
    std::snprintf(suffix, sizeof suffix, "-wb%llx%x", static_cast<unsigned long long>(stamp),
                  counter.fetch_add(1));
    return (base.empty() ? std::string("ratelab") : base) + suffix;
}

}  // namespace

std::shared_ptr<Store> makeChosenStore(const StoreChoice& choice, const std::string& keyNamespace,
                                       std::string& error) {
    error.clear();
    if (choice.kind == StoreChoice::Kind::Memory) return nullptr;

    RedisStoreOptions options;
    options.urls = {choice.redisUrl};
    options.keyNamespace = runNamespace(keyNamespace);
    options.timeSource = RedisTimeSource::Caller;
    std::string why;
    std::unique_ptr<Store> store = makeRedisStore(options, &why);
    if (!store) {
        error = "Redis store " + choice.redisUrl + ": " + why;
        return nullptr;
    }
    // The store connects lazily and answers Transport while a server is unreachable; a run
    // against a server that is not there would only show fail-open passes. One probe call
    // finds out now, within the timeout, and says so.
    Limit limit;
    limit.capacity = 1;
    ConsumeRequest probe;
    probe.limitName = "workbench-probe";
    probe.limit = &limit;
    probe.partition = "probe";
    probe.key = "probe";
    probe.now = 0;
    probe.timeout = kRedisProbeTimeout;
    const ConsumeResult result = store->consume(probe);
    if (result.status != StoreStatus::Ok) {
        error = "Cannot use Redis at " + choice.redisUrl + ": " +
                (result.error.empty() ? std::string("no answer") : result.error) +
                ". Start a server there, or choose the memory store.";
        return nullptr;
    }
    return std::shared_ptr<Store>(std::move(store));
}

}  // namespace ratelab::gui
