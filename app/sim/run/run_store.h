#pragma once

// The shared store a simulated run can use instead of its own memory stores: Redis, on the
// run's virtual clock. Used by `ratelab-cli run --store` and the workbench's store choice alike.

#include <memory>
#include <string>

#include "ratelab/limit.h"
#include "ratelab/store.h"

namespace ratelab::sim {

/// A Redis store for one run: caller time (Redis decides on the run's virtual clock), under
/// `keyNamespace` plus a suffix of its own so that every run starts from empty buckets and
/// runs against one server never meet (Redis keeps caller-time keys for minutes), and probed
/// once so that a server that does not answer is found before the run rather than as a run of
/// fail-open passes. Null, with the reason in *error (never the URL's password), when the URL
/// does not parse or the server does not answer within `probeTimeout` (0: the store's default
/// call bound). Blocks for at most that long. Thread-safe.
std::unique_ptr<Store> makeRunRedisStore(const std::string& url, const std::string& keyNamespace,
                                         Nanos probeTimeout, std::string* error);

}  // namespace ratelab::sim
