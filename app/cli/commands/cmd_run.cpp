// ratelab-cli run: one scenario, headless, on the virtual clock; the report as text, JSON and
// CSV; exit 0 when every expectation holds, 1 when one fails, 2 on bad input.

#include <chrono>

#include "cli/command.h"
#include "cli/inputs.h"
#include "cli/outputs.h"
#include "cli/progress.h"
#include "cli/store_option.h"
#include "ratelab/number_text.h"
#include "ratelab/policy_file.h"
#include "sim/report/report.h"
#include "sim/run/scenario_runner.h"

namespace ratelab::cli {

namespace {

int runScenario(const Arguments& args) {
    const bool quiet = args.isSet("quiet");
    Result<sim::Scenario> scenario = loadScenario(args.positionals().front(), !quiet);
    if (!scenario) return scenario.failure();
    Result<PolicySet> policies = loadPolicyFor(*scenario, args.value("policy"), !quiet);
    if (!policies) return policies.failure();

    sim::RunnerOptions options;
    if (!args.seed(options.seed)) return kUsage;
    Result<std::shared_ptr<Store>> store = storeFromOption(args.value("store"));
    if (!store) return store.failure();
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
            const double requests = static_cast<double>(runner.requests());
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
    timing.requestsPerSecond = wall > 0 ? static_cast<double>(runner.requests()) / wall : 0.0;
    const sim::Report report = sim::buildReport(runner, timing);

    if (args.isSet("json")) {
        if (ExitCode e = writeOutput(args.value("json"), sim::reportJson(report))) return e;
    }
    if (args.isSet("csv")) {
        const std::string csv = sim::seriesCsv(runner.classNames(), runner.samples());
        if (ExitCode e = writeOutput(args.value("csv"), csv)) return e;
    }
    if (args.isSet("validated-policy")) {
        const std::string text = savePolicyText(
            sim::withValidation(*policies, report, std::string("ratelab ") + RATELAB_VERSION));
        if (ExitCode e = writeOutput(args.value("validated-policy"), text)) return e;
    }
    if (!quiet && !args.stdoutTaken()) {
        std::fputs(sim::reportText(report).c_str(), stdout);
    } else {
        // Quiet, but a failed expectation is still worth one line each, on stderr.
        for (const sim::ExpectationResult& e : report.expectations) {
            if (e.pass) continue;
            std::string bounds;
            if (e.expectation.min) bounds = "min " + numberText(*e.expectation.min, 6);
            if (e.expectation.max) {
                bounds += (bounds.empty() ? "max " : ", max ") + numberText(*e.expectation.max, 6);
            }
            std::fprintf(stderr, "%s: expectation failed: %s = %s (%s)\n", scenario->file.c_str(),
                         e.expectation.metric.c_str(), numberText(e.actual, 6).c_str(),
                         bounds.c_str());
        }
    }
    return report.pass() ? kSuccess : kExpectationFailed;
}

Command runCommand() {
    Command c;
    c.name = "run";
    c.summary = "run a scenario headless and check its expectations";
    c.description =
        "Runs a scenario on the virtual clock and prints its report: per class offered, allowed "
        "and refused requests, the keyspace, and each expectation. Reports are deterministic: "
        "the same scenario, policy and seed give the same bytes (but for \"timing\").";
    c.positionals = {{"SCENARIO.json", "The scenario to run.", Option::Kind::Input}};
    c.options = {
        Option::scenarioPolicy(),
        Option::value("store", "STORE",
                      "memory (default) or a Redis URL: "
                      "redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] or unix:///PATH[?db=N]."),
        Option::output("json", "REPORT.json", "Write the report as JSON."),
        Option::output("csv", "SERIES.csv", "Write the per-sample series as CSV."),
        Option::seed(),
        Option::quiet(),
        Option::output("validated-policy", "OUT.json",
                       "Write the policy with this run embedded as its validation record."),
    };
    c.hasExpectations = true;
    c.run = &runScenario;
    return c;
}

}  // namespace

RATELAB_CLI_COMMAND(runCommand());

}  // namespace ratelab::cli
