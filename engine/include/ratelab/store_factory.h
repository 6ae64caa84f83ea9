#pragma once

#include <memory>
#include <string>

#include "ratelab/policy.h"
#include "ratelab/store.h"

namespace ratelab {

/// The store a policy file's `store` block describes: the memory store with its bucket cap, or
/// Redis (standalone, or Cluster with several URLs) under its namespace on the server's clock.
/// The AUTH password is read here, once, from the variable or file the block names (a changed
/// password takes a new store). Null, with the reason in *error (when `error` is not null; it
/// names the variable or file, never the secret), when the configuration cannot be used; an
/// unreachable Redis is not an error here (calls answer StoreStatus::Transport until it comes
/// back).
std::unique_ptr<Store> makeStore(const StoreConfig& config, std::string* error);

}  // namespace ratelab
