#include "gui/policy/validation_export.h"

#include <algorithm>
#include <chrono>

#include "ratelab/policy_file.h"
#include "sim/run/scenario_runner.h"

namespace ratelab::gui {

ValidatedExport buildValidatedExport(const sim::Scenario& scenario, const PolicySet& policies,
                                     std::optional<std::uint64_t> seed,
                                     const std::string& generator,
                                     const std::atomic<bool>* cancel) {
    ValidatedExport out;
    std::vector<Diagnostic> problems = validatePolicySet(policies, "policy");
    problems.erase(std::remove_if(problems.begin(), problems.end(),
                                  [](const Diagnostic& d) {
                                      return d.severity != Diagnostic::Severity::Error;
                                  }),
                   problems.end());
    for (const Diagnostic& d : sim::checkScenarioAgainstPolicy(scenario, policies)) {
        if (d.severity == Diagnostic::Severity::Error) problems.push_back(d);
    }
    if (!problems.empty()) {
        out.error = formatDiagnostics(problems);
        return out;
    }

    sim::RunnerOptions options;
    options.seed = seed;
    options.measureWallTime = false;
    const auto start = std::chrono::steady_clock::now();
    sim::ScenarioRunner runner(scenario, policies, options);
    while (!runner.finished()) {
        if (cancel && cancel->load(std::memory_order_relaxed)) {
            out.error = "the export was cancelled";
            return out;
        }
        runner.advance(runner.duration(), 1'000'000);
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const sim::RunTotals totals = runner.totals();
    sim::Timing timing{wall, wall > 0 ? static_cast<double>(totals.requests) / wall : 0.0};
    out.report = sim::buildReport(runner, timing);

    PolicySet exported = policies;
    ValidationRecord record;
    record.generator = generator;
    record.runs.push_back(sim::validationRun(out.report));
    exported.validation = std::move(record);
    std::string text = savePolicyText(exported);

    // What is written must load: check it here rather than let the user find out in production.
    PolicyLoadResult check = parsePolicyText(text, "export");
    if (!check.ok()) {
        for (const Diagnostic& d : check.diagnostics)
            out.error += formatDiagnostic(d) + "\n";
        return out;
    }
    out.text = std::move(text);
    return out;
}

}  // namespace ratelab::gui
