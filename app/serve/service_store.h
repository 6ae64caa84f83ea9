#pragma once

// The store a service decides on, whatever listens for it (the HTTP loops, Envoy's rate limit
// service over gRPC): the store block's store, and for a store outside the process the
// batching store over it, so that the concurrent decisions of every listener and loop go to it
// together rather than one round trip each.

#include <memory>
#include <string>

#include "ratelab/batching_store.h"
#include "ratelab/policy.h"
#include "ratelab/store.h"

namespace ratelab::serve {

/// Whether decisions on `store` leave the process (a Redis store, batched or not), so that a
/// listener should send several together rather than decide each at once. Thread-safe.
bool storeLeavesProcess(const Store& store);

/// makeStore(config), wrapped in a batching store (defaults of BatchingStoreOptions) when it
/// leaves the process. Null with the reason in *error, as makeStore.
std::shared_ptr<Store> makeServiceStore(const StoreConfig& config, std::string* error);

}  // namespace ratelab::serve
