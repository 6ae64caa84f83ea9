// ratelab-cli run: one scenario, headless, on the virtual clock; the report as text, JSON and
// CSV; exit 0 when every expectation holds, 1 when one fails, 2 on bad input.

#include <QCommandLineParser>
#include <chrono>

#include "cli/command.h"
#include "cli/progress.h"
#include "cli/sim_inputs.h"
#include "ratelab/policy_file.h"
#include "sim/report.h"
#include "sim/scenario_runner.h"

namespace ratelab::cli {

namespace {

constexpr const char* kSynopsis =
    "run SCENARIO.json [--policy P.json] [--store memory|redis://HOST:PORT[/DB]] "
    "[--json REPORT.json] [--csv SERIES.csv] [--seed N] [--quiet] [--validated-policy OUT.json]";

int runScenario(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.addPositionalArgument("SCENARIO.json", "The scenario to run.");
    const QCommandLineOption policyOption("policy", "Policy file (default: the scenario's).",
                                          "P.json");
    const QCommandLineOption storeOption("store", "memory (default) or redis://HOST:PORT[/DB].",
                                         "STORE");
    const QCommandLineOption jsonOption("json", "Write the report as JSON (- for stdout).",
                                        "REPORT.json");
    const QCommandLineOption csvOption("csv", "Write the per-sample series as CSV.", "SERIES.csv");
    const QCommandLineOption seedOption("seed", "Override the scenario's seed.", "N");
    const QCommandLineOption quietOption("quiet", "Print nothing on success but errors.");
    const QCommandLineOption validatedOption(
        "validated-policy", "Write the policy with this run embedded as its validation record.",
        "OUT.json");
    parser.addOptions({policyOption, storeOption, jsonOption, csvOption, seedOption, quietOption,
                       validatedOption});
    if (!parseCommandLine(parser, arguments, "run", kSynopsis, 1)) return kBadInput;
    const bool quiet = parser.isSet(quietOption);

    std::optional<sim::Scenario> scenario =
        loadScenario(parser.positionalArguments().at(0).toStdString(), !quiet);
    if (!scenario) return kBadInput;
    std::string policyPath = parser.isSet(policyOption) ? parser.value(policyOption).toStdString()
                                                        : scenario->policyPath;
    if (policyPath.empty()) {
        return badInput("run",
                        scenario->file + ": the scenario names no policy; pass --policy P.json");
    }
    std::optional<PolicySet> policies = loadPolicy(policyPath, !quiet);
    if (!policies) return kBadInput;
    if (printDiagnostics(sim::checkScenarioAgainstPolicy(*scenario, *policies))) return kBadInput;

    sim::RunnerOptions options;
    if (parser.isSet(seedOption)) {
        std::string error;
        options.seed = parseSeed(parser.value(seedOption).toStdString(), error);
        if (!options.seed) return badInput("run", error);
    }
    std::string error;
    std::optional<std::shared_ptr<Store>> store =
        storeFromOption(parser.value(storeOption).toStdString(), error);
    if (!store) return badInput("run", error);
    options.store = *store;
    options.measureWallTime = false;
    if (!options.store && policies->store.kind == StoreConfig::Kind::Redis && !quiet) {
        std::fprintf(stderr,
                     "ratelab-cli run: note: simulating on memory stores; the policy's Redis store "
                     "is used only with --store redis://HOST:PORT\n");
    }

    const auto started = std::chrono::steady_clock::now();
    sim::ScenarioRunner runner(*scenario, *policies, options);
    {
        ProgressBar progress(scenario->name);
        const Nanos slice = std::max<Nanos>(runner.duration() / 200, 1);
        while (!runner.finished()) {
            runner.advance(runner.now() + slice, progress.enabled() ? 2'000'000 : INT64_MAX);
            const double wall =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            const double requests = static_cast<double>(runner.totals().requests);
            progress.update(
                static_cast<double>(runner.now()) / static_cast<double>(runner.duration()),
                shortCount(requests) + " requests, " + shortCount(wall > 0 ? requests / wall : 0) +
                    "/s");
        }
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    sim::Timing timing;
    timing.wallSeconds = wall;
    timing.requestsPerSecond =
        wall > 0 ? static_cast<double>(runner.totals().requests) / wall : 0.0;
    const sim::Report report = sim::buildReport(runner, timing);

    if (parser.isSet(jsonOption) &&
        !writeTextFile(parser.value(jsonOption).toStdString(), sim::reportJson(report), error)) {
        return badInput("run", error);
    }
    if (parser.isSet(csvOption) &&
        !writeTextFile(parser.value(csvOption).toStdString(),
                       sim::seriesCsv(runner.classNames(), runner.samples()), error)) {
        return badInput("run", error);
    }
    if (parser.isSet(validatedOption) &&
        !writeTextFile(parser.value(validatedOption).toStdString(),
                       savePolicyText(sim::withValidation(
                           *policies, report, std::string("ratelab ") + RATELAB_VERSION)),
                       error)) {
        return badInput("run", error);
    }
    const bool jsonOnStdout = parser.value(jsonOption) == "-";
    if (!quiet && !jsonOnStdout) {
        std::fputs(sim::reportText(report).c_str(), stdout);
    } else {
        // Quiet, but a failed expectation is still worth one line each, on stderr.
        for (const sim::ExpectationResult& e : report.expectations) {
            if (e.pass) continue;
            char bounds[96] = "";
            if (e.expectation.min && e.expectation.max) {
                std::snprintf(bounds, sizeof bounds, "min %g, max %g", *e.expectation.min,
                              *e.expectation.max);
            } else if (e.expectation.min) {
                std::snprintf(bounds, sizeof bounds, "min %g", *e.expectation.min);
            } else if (e.expectation.max) {
                std::snprintf(bounds, sizeof bounds, "max %g", *e.expectation.max);
            }
            std::fprintf(stderr, "%s: expectation failed: %s = %g (%s)\n", scenario->file.c_str(),
                         e.expectation.metric.c_str(), e.actual, bounds);
        }
    }
    return report.pass() ? kSuccess : kExpectationFailed;
}

}  // namespace

RATELAB_CLI_COMMAND({"run", kSynopsis, "run a scenario headless and check its expectations",
                     &runScenario});

}  // namespace ratelab::cli
