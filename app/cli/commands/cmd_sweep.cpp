// ratelab-cli sweep: one scenario over a grid of policy numbers, cells run on every core; one
// CSV row per cell, and the best cell that meets every expectation.

#include <algorithm>
#include <thread>

#include "cli/command.h"
#include "cli/inputs.h"
#include "cli/outputs.h"
#include "cli/progress.h"
#include "ratelab/number_text.h"
#include "sim/report/counters.h"
#include "sim/decide/sweep.h"
#include "sim/decide/tradeoff.h"

namespace ratelab::cli {

namespace {

int sweepScenario(const Arguments& args) {
    const bool quiet = args.isSet("quiet");
    std::vector<sim::SweepAxis> axes;
    std::string error;
    for (const std::string& text : args.values("vary")) {
        std::optional<sim::SweepAxis> axis = sim::parseSweepAxis(text, error);
        if (!axis) return fail(kUsage, error);
        axes.push_back(std::move(*axis));
    }
    int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (!args.wholeNumber("threads", 1, 256, threads)) return kUsage;
    Result<sim::Scenario> scenario = loadScenario(args.positionals().front(), !quiet);
    if (!scenario) return scenario.failure();
    Result<PolicySet> policies = loadPolicyFor(*scenario, args.value("policy"), !quiet);
    if (!policies) return policies.failure();

    ProgressBar progress("sweep");
    sim::SweepOptions options;
    options.threads = threads;
    options.progress = cellProgress(progress);
    const sim::SweepResult result = sim::runSweep(*scenario, *policies, axes, options);
    progress.finish();
    if (!result.error.empty()) return fail(kUsage, result.error);  // an axis the policy refuses
    const std::string out = args.value("csv", "-");
    if (ExitCode e = writeOutput(out, sim::sweepCsv(*scenario, axes, result))) return e;

    // The best passing cell, by the rule `tune` recommends with.
    const std::size_t cells = result.cells.size();
    const sim::TradeoffMap map = sim::readTradeoff(*scenario, axes, result);
    if (!quiet) {
        std::FILE* summary = out == "-" ? stderr : stdout;
        if (map.recommended) {
            const sim::TradeoffPoint& p = map.points[*map.recommended];
            std::fprintf(summary,
                         "best of %zu cells meeting every expectation: %s "
                         "(legitimate throttled fraction %s, attacker allowed per second %s)\n",
                         map.passing,
                         sim::cellValuesText(axes, result.cells[*map.recommended].values).c_str(),
                         numberText(p.legitThrottled, 6).c_str(),
                         numberText(p.attackerAdmitted, 6).c_str());
        } else {
            std::fprintf(summary, "no cell of %zu meets every expectation\n", cells);
        }
    }
    return map.recommended ? kSuccess : kExpectationFailed;
}

Command sweepCommand() {
    Command c;
    c.name = "sweep";
    c.summary = "run a scenario over a grid of capacities and refills";
    c.description =
        "Runs a scenario once per cell of a grid of policy numbers, cells on every core, and "
        "writes one CSV row per cell; then names the best cell that meets every expectation "
        "(fewest legitimate requests throttled, then fewest attacker passes). Example: --vary "
        "capacity=5:100:5 --vary refill=0.5:10:0.5.";
    c.positionals = {{"SCENARIO.json", "The scenario to sweep.", Option::Kind::Input}};
    c.options = {
        Option::scenarioPolicy(),
        Option::value("vary", "AXIS",
                      "[POLICY.]FIELD=FROM:TO:STEP; FIELD is " + sim::sweepFieldList() + ".")
            .asRequired()
            .asRepeated(),
        Option::output("csv", "OUT.csv", "Where to write one row per cell (default: -)."),
        Option::value("threads", "N", "Cells run at once (default: the cores)."),
        Option::quiet(),
    };
    c.hasExpectations = true;
    c.run = &sweepScenario;
    return c;
}

}  // namespace

RATELAB_CLI_COMMAND(sweepCommand());

}  // namespace ratelab::cli
