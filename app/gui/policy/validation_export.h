#pragma once

// "Export a validated policy": the policy set replayed against the current scenario from the
// start, on a fresh engine, and written with the run's results embedded as the file's
// `validation` block (ratelab/validation_record.h; "validation" in
// resources/schema/policy.schema.json), which `ratelab-cli run --validated-policy` writes too.
// A one-shot job for a pool thread (QtConcurrent); it never touches widgets.

#include <atomic>
#include <optional>
#include <string>

#include "ratelab/policy.h"
#include "sim/report/report.h"
#include "sim/scenario/scenario.h"

namespace ratelab::gui {

struct ValidatedExport {
    std::string text;    ///< the policy file, validation record included; empty on failure
    std::string error;   ///< why there is no text
    sim::Report report;  ///< the run that was embedded
};

/// Replays `scenario` with `policies` (validated, compiled) to the end on the scenario's own
/// memory stores and returns the canonical policy text with the run in its `validation`
/// section; the text is loaded back before it is returned, so what is written validates.
/// `generator` names the tool ("ratelab 0.1.0"). Stops early, with an error, when `cancel` is set.
ValidatedExport buildValidatedExport(const sim::Scenario& scenario, const PolicySet& policies,
                                     std::optional<std::uint64_t> seed,
                                     const std::string& generator,
                                     const std::atomic<bool>* cancel = nullptr);

}  // namespace ratelab::gui
