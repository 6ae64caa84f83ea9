#pragma once

#include <memory>
#include <string>

#include "cli/inputs.h"
#include "ratelab/store.h"

namespace ratelab::cli {

/// The store for a simulation's --store: "memory" (or nothing) gives null, the scenario's own
/// memory stores; a redis:// or unix:// URL connects to that Redis in caller-time mode, under a
/// namespace of its own, and is probed once. kUsage for an unusable option, kIoError for a
/// server that cannot be reached (printed).
Result<std::shared_ptr<Store>> storeFromOption(const std::string& option);

}  // namespace ratelab::cli
