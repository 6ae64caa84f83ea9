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

namespace ratelab::cli {

namespace {

constexpr const char* kSynopsis =
    "sweep SCENARIO.json [--policy P.json] --vary capacity=5:100:5 [--vary refill=0.5:10:0.5] "
    "[--csv OUT.csv] [--threads N] [--quiet]";

double metric(const sim::SweepResult& result, const sim::Scenario& scenario,
              const sim::SweepCell& cell, const std::string& name) {
    return sim::summaryMetric(name, result.classNames, cell.totals, scenario.duration,
                              scenario.sampleInterval)
        .value_or(0);
}

int sweepScenario(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.addPositionalArgument("SCENARIO.json", "The scenario to sweep.");
    const QCommandLineOption policyOption("policy", "Policy file (default: the scenario's).",
                                          "P.json");
    const QCommandLineOption varyOption(
        "vary", "[POLICY.]FIELD=FROM:TO:STEP; FIELD is capacity, refill, window_ms or cost.",
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
                char number[32];
                std::snprintf(number, sizeof number, "%g", best->values[a]);
                values += axes[a].field + "=" + number;
            }
            std::fprintf(summary,
                         "best of %zu cells meeting every expectation: %s "
                         "(legit.throttled_fraction %g, attacker.allowed_per_s %g)\n",
                         static_cast<std::size_t>(
                             std::count_if(result.cells.begin(), result.cells.end(),
                                           [](const sim::SweepCell& c) { return c.pass; })),
                         values.c_str(), key(*best).first, key(*best).second);
        } else {
            std::fprintf(summary, "no cell of %zu meets every expectation\n", result.cells.size());
        }
    }
    return best ? kSuccess : kExpectationFailed;
}

}  // namespace

RATELAB_CLI_COMMAND({"sweep", kSynopsis, "run a scenario over a grid of capacities and refills",
                     &sweepScenario});

}  // namespace ratelab::cli
