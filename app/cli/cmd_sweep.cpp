// ratelab-cli sweep: one scenario over a grid of policy numbers, cells run on every core; one
// CSV row per cell, and the best cell that meets every expectation.

#include <QCommandLineParser>
#include <algorithm>
#include <mutex>
#include <thread>

#include "cli/command.h"
#include "cli/progress.h"
#include "cli/sim_inputs.h"
#include "sim/metrics.h"
#include "sim/sweep.h"
#include "sim/tradeoff.h"

namespace ratelab::cli {

namespace {

constexpr const char* kSynopsis =
    "sweep SCENARIO.json [--policy P.json] --vary capacity=5:100:5 [--vary refill=0.5:10:0.5] "
    "[--csv OUT.csv] [--threads N] [--quiet]";

int sweepScenario(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.addPositionalArgument("SCENARIO.json", "The scenario to sweep.");
    const QCommandLineOption policyOption("policy", "Policy file (default: the scenario's).",
                                          "P.json");
    const QCommandLineOption varyOption(
        "vary",
        QString::fromStdString("[POLICY.]FIELD=FROM:TO:STEP; FIELD is " + sim::sweepFieldList() +
                               "."),
        "AXIS");
    const QCommandLineOption csvOption("csv", "Write one row per cell (default: stdout).",
                                       "OUT.csv");
    const QCommandLineOption threadsOption("threads", "Cells run at once (default: the cores).",
                                           "N");
    const QCommandLineOption quietOption("quiet", "Print nothing on success but errors.");
    parser.addOptions({policyOption, varyOption, csvOption, threadsOption, quietOption});
    if (!parseCommandLine(parser, arguments, "sweep", kSynopsis, 1)) return kBadInput;
    const bool quiet = parser.isSet(quietOption);

    std::vector<sim::SweepAxis> axes;
    std::string error;
    for (const QString& text : parser.values(varyOption)) {
        std::optional<sim::SweepAxis> axis = sim::parseSweepAxis(text.toStdString(), error);
        if (!axis) return badInput("sweep", error);
        axes.push_back(std::move(*axis));
    }
    if (axes.empty()) return badInput("sweep", "at least one --vary FIELD=FROM:TO:STEP is needed");
    int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (parser.isSet(threadsOption)) {
        bool ok = false;
        threads = parser.value(threadsOption).toInt(&ok);
        if (!ok || threads < 1 || threads > 256) {
            return badInput("sweep", "--threads \"" + parser.value(threadsOption).toStdString() +
                                         "\": expected 1 to 256");
        }
    }

    std::optional<sim::Scenario> scenario =
        loadScenario(parser.positionalArguments().at(0).toStdString(), !quiet);
    if (!scenario) return kBadInput;
    const std::string policyPath = parser.isSet(policyOption)
                                       ? parser.value(policyOption).toStdString()
                                       : scenario->policyPath;
    if (policyPath.empty()) {
        return badInput("sweep",
                        scenario->file + ": the scenario names no policy; pass --policy P.json");
    }
    std::optional<PolicySet> policies = loadPolicy(policyPath, !quiet);
    if (!policies) return kBadInput;
    if (printDiagnostics(sim::checkScenarioAgainstPolicy(*scenario, *policies))) return kBadInput;

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
    if (!result.error.empty()) return badInput("sweep", result.error);

    const std::string csv = sim::sweepCsv(*scenario, axes, result);
    const std::string out = parser.isSet(csvOption) ? parser.value(csvOption).toStdString() : "-";
    if (!writeTextFile(out, csv, error)) return badInput("sweep", error);

    // The best passing cell, by the rule `tune` recommends with.
    const std::size_t cells = result.cells.size();
    const sim::TradeoffMap map = sim::readTradeoff(*scenario, axes, result);
    if (!quiet) {
        std::FILE* summary = out == "-" ? stderr : stdout;
        if (map.recommended) {
            const sim::TradeoffPoint& p = map.points[*map.recommended];
            std::fprintf(summary,
                         "best of %zu cells meeting every expectation: %s "
                         "(legitimate throttled fraction %g, attacker allowed per second %g)\n",
                         map.passing,
                         sim::cellValuesText(axes, result.cells[*map.recommended].values).c_str(),
                         p.legitThrottled, p.attackerAdmitted);
        } else {
            std::fprintf(summary, "no cell of %zu meets every expectation\n", cells);
        }
    }
    return map.recommended ? kSuccess : kExpectationFailed;
}

}  // namespace

RATELAB_CLI_COMMAND({"sweep", kSynopsis, "run a scenario over a grid of capacities and refills",
                     &sweepScenario});

}  // namespace ratelab::cli
