#pragma once

// The arrival a fitted actor draws its requests from (sim/fit/log_fit.h's internals): a session
// or empirical arrival whose distributions are its clients' observations, every number inside
// the scenario loader's bounds.

#include <cstddef>

#include "sim/fit/fit_passes.h"
#include "sim/fit/fit_summary.h"
#include "sim/fit/log_fit.h"
#include "sim/scenario/scenario.h"

namespace ratelab::sim::fit {

/// The arrival of an actor whose clients' requests arrived as `arrivals` shows, at times the log
/// recorded in whole multiples of `resolution` (0: finer). `sessions` holds each client's
/// sessions, `requests` each client's requests (one observation a client).
/// REQUIRES: the actor has at least one client; options.values in 1..kMaxValues.
Arrival fittedArrival(const Arrivals& arrivals, const Summary& sessions, const Summary& requests,
                      Nanos resolution, const FitOptions& options);

}  // namespace ratelab::sim::fit
