#pragma once

// Writing a Scenario as a scenario file: what loadScenarioFile() reads back into an equal
// scenario (every field the file format has; defaults left out).

#include <string>

#include "sim/scenario.h"

namespace ratelab::sim {

/// The scenario as JSON text, two-space indented, with a final newline. Deterministic: the
/// same scenario gives the same bytes. REQUIRES: no actor replays a log (`recorded` unset).
std::string scenarioJson(const Scenario& scenario);

}  // namespace ratelab::sim
