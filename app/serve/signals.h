#pragma once

// Running a sidecar as a process: SIGHUP reloads the policy file, SIGTERM and SIGINT drain and
// stop (a second one cuts what is left at once).

#include "serve/sidecar.h"

namespace ratelab::serve {

/// Blocks SIGHUP, SIGTERM and SIGINT in the calling thread, so that threads started afterwards
/// (the sidecar's loops) inherit the mask and only waitForSignals() sees them. Call before
/// Sidecar::start(). False if the mask cannot be set.
bool blockServiceSignals();

/// Serves until SIGTERM or SIGINT, reloading on SIGHUP; then drains and returns 0 once every
/// in-flight request has been answered (or the drain timeout cut the rest, which is logged).
int waitForSignals(Sidecar& sidecar);

}  // namespace ratelab::serve
