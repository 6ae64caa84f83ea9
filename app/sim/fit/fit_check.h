#pragma once

// How faithful a fit is (sim/fit/log_fit.h's internals): the log replayed and the fitted
// scenario run under the same policies, counted alike per class.

#include <string>

#include "sim/fit/fit_passes.h"
#include "sim/fit/log_fit.h"

namespace ratelab::sim::fit {

/// Replays the log through `reader` under `check` and runs `fit.scenario` (as scenarioJson()
/// writes it and the loader reads it back) under it. False when the replay stopped
/// (reading.error, or progress said stop), or the fitted scenario does not load (`error`).
/// REQUIRES: fit.classes set; check.policies validated and compiled.
bool checkFit(FitReader& reader, const FitResult& fit, const FitCheckPolicies& check, FitCheck& out,
              std::string& error);

}  // namespace ratelab::sim::fit
