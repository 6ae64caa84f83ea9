#pragma once

// Which store a run uses: the embedded memory store, or a Redis server on the virtual clock.

#include <memory>
#include <string>

#include "ratelab/limit.h"
#include "ratelab/store.h"

namespace ratelab::gui {

struct StoreChoice {
    enum class Kind { Memory, Redis };
    Kind kind = Kind::Memory;
    std::string redisUrl = "redis://127.0.0.1:6379/0";  ///< Kind::Redis only
    friend bool operator==(const StoreChoice&, const StoreChoice&) = default;
};

/// How long building a Redis store waits for the server to answer a first call.
inline constexpr Nanos kRedisProbeTimeout = kNanosPerSecond;

/// Builds the store a run uses. Memory: null, so the runner builds the scenario's own stores
/// (one shared, or one per replica). Redis: a store in caller-time mode (it takes the virtual
/// clock's `now`) under a key namespace of its own (`keyNamespace` plus a suffix unique to the
/// run, so every run starts from empty buckets), and one probe call to find out whether the
/// server answers; on failure returns null and sets `error` to a message naming the URL and
/// what went wrong. Blocks for at most kRedisProbeTimeout: call it on the worker thread,
/// never on the GUI thread.
std::shared_ptr<Store> makeChosenStore(const StoreChoice& choice, const std::string& keyNamespace,
                                       std::string& error);

}  // namespace ratelab::gui
