#pragma once

// Writing a Scenario as a scenario file: what loadScenarioFile() reads back into an equal
// scenario (every field the file format has; defaults left out, any other value written, so a
// value out of range reaches the reader rather than being dropped).

#include <string>

#include "sim/scenario/scenario.h"

namespace ratelab::sim {

/// The scenario as JSON text, two-space indented, with a final newline. Deterministic: the
/// same scenario gives the same bytes. REQUIRES: no actor replays a log (`recorded` unset).
std::string scenarioJson(const Scenario& scenario);

/// The scenario as the loader reads back the file scenarioJson() writes: every check and every
/// message of loadScenarioFile(), with the diagnostics' pointers into that text and `file` (which
/// also resolves `policy`) kept. How an edited scenario (the workbench's scenario editor) is
/// held to the rules a saved file will meet. REQUIRES: as scenarioJson().
ScenarioLoadResult reloadScenario(const Scenario& scenario);

}  // namespace ratelab::sim
