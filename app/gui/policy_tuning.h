#pragma once

// Which edits the running engine can take in place (the sliders), and which need a new run.

#include "ratelab/policy.h"

namespace ratelab::gui {

/// True when `edited` differs from `running` only in what Limiter::retune replaces in place:
/// capacity, refill, window, delay/nodelay, cost, mode, header style, store-error rule, store
/// timeout and tier numbers. Anything else (name, route, algorithm, key rules, budget, bypass,
/// tier names) changes which bucket a request lands in, so it takes effect on Reset.
bool isLiveTunable(const Policy& running, const Policy& edited);

/// The same over whole sets: same policies in the same order, store and proxies unchanged,
/// each policy live-tunable.
bool isLiveTunable(const PolicySet& running, const PolicySet& edited);

}  // namespace ratelab::gui
