// ratelab-cli sweep: one scenario over a grid of policy numbers, cells run on every core; one
// CSV row per cell, and the best cell that meets every expectation.

#include <algorithm>
#include <charconv>
#include <mutex>
#include <thread>

#include "cli/command.h"
#include "cli/inputs.h"
#include "cli/outputs.h"
#include "cli/progress.h"
#include "ratelab/number_text.h"
#include "sim/metrics.h"
#include "sim/sweep.h"

namespace ratelab::cli {

namespace {

double metric(const sim::SweepResult& result, const sim::Scenario& scenario,
              const sim::SweepCell& cell, const std::string& name) {
    return sim::summaryMetric(name, result.classNames, cell.totals, scenario.duration,
                              scenario.sampleInterval)
        .value_or(0);
}

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
    if (args.isSet("threads")) {
        const std::string text = args.value("threads");
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), threads);
        if (ec != std::errc() || end != text.data() + text.size() || threads < 1 || threads > 256) {
            return fail(kUsage, "--threads \"" + text + "\": expected 1 to 256");
        }
    }
    Result<sim::Scenario> scenario = loadScenario(args.positionals().front(), !quiet);
    if (!scenario) return scenario.failure();
    Result<PolicySet> policies = loadPolicyFor(*scenario, args.value("policy"), !quiet);
    if (!policies) return policies.failure();

    ProgressBar progress("sweep");
    std::mutex progressLock;
    sim::SweepOptions options;
    options.threads = threads;
    options.progress = [&](std::size_t done, std::size_t all) {
        std::lock_guard<std::mutex> lock(progressLock);
        progress.update(static_cast<double>(done) / static_cast<double>(all),
                        std::to_string(done) + " of " + std::to_string(all) + " cells");
    };
    const sim::SweepResult result = sim::runSweep(*scenario, *policies, axes, options);
    progress.finish();
    if (!result.error.empty()) return fail(kUsage, result.error);  // an axis the policy refuses
    const std::string out = args.value("csv", "-");
    if (ExitCode e = writeOutput(out, sim::sweepCsv(*scenario, axes, result))) return e;

    // The best passing cell: fewest legitimate requests throttled, then fewest attacker passes.
    const sim::SweepCell* best = nullptr;
    auto key = [&](const sim::SweepCell& c) {
        return std::make_pair(metric(result, *scenario, c, "legit.throttled_fraction"),
                              metric(result, *scenario, c, "attacker.allowed_per_s"));
    };
    for (const sim::SweepCell& cell : result.cells) {
        if (cell.pass && (!best || key(cell) < key(*best))) best = &cell;
    }
    if (!quiet) {
        std::FILE* summary = out == "-" ? stderr : stdout;
        if (best) {
            std::string values;
            for (std::size_t a = 0; a < axes.size(); ++a) {
                if (!values.empty()) values += " ";
                values += axes[a].field + "=" + numberText(best->values[a], 6);
            }
            std::fprintf(summary,
                         "best of %zu cells meeting every expectation: %s "
                         "(legit.throttled_fraction %s, attacker.allowed_per_s %s)\n",
                         static_cast<std::size_t>(
                             std::count_if(result.cells.begin(), result.cells.end(),
                                           [](const sim::SweepCell& c) { return c.pass; })),
                         values.c_str(), numberText(key(*best).first, 6).c_str(),
                         numberText(key(*best).second, 6).c_str());
        } else {
            std::fprintf(summary, "no cell of %zu meets every expectation\n", result.cells.size());
        }
    }
    return best ? kSuccess : kExpectationFailed;
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
        Option::input("policy", "P.json", "The policy file (default: the scenario's)."),
        Option::value("vary", "AXIS",
                      "[POLICY.]FIELD=FROM:TO:STEP; FIELD is capacity, refill, window_ms or cost.")
            .asRequired()
            .asRepeated(),
        Option::output("csv", "OUT.csv", "Where to write one row per cell (default: -)."),
        Option::value("threads", "N", "Cells run at once (default: the cores)."),
        Option::flag("quiet", "Print nothing on success but errors."),
    };
    c.hasExpectations = true;
    c.run = &sweepScenario;
    return c;
}

}  // namespace

RATELAB_CLI_COMMAND(sweepCommand());

}  // namespace ratelab::cli
