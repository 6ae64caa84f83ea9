// ratelab-cli tune: the recommendation. For a scenario, a sweep over the --vary grid read as a
// decision: the Pareto frontier (least legitimate throttling against least attacker traffic)
// and the one cell to pick. For an access log, which has no classes, the limits that leave a
// stated share of its clients never throttled. -o writes the tuned policy with the run that
// checked it embedded. Exit 0 with a recommendation, 1 without one.

#include <charconv>
#include <cinttypes>
#include <cmath>
#include <thread>

#include "cli/command.h"
#include "cli/inputs.h"
#include "cli/log_options.h"
#include "cli/outputs.h"
#include "cli/progress.h"
#include "json/json_reader.h"
#include "ratelab/number_text.h"
#include "ratelab/policy_file.h"
#include "sim/decide/log_tuning.h"
#include "sim/decide/tradeoff.h"
#include "sim/log/recorded_traffic.h"
#include "sim/report/report_json.h"
#include "sim/run/scenario_runner.h"

namespace ratelab::cli {

namespace {

// Writes the tuned set with its checking run embedded; the text must load back without errors.
ExitCode writeTuned(const std::string& path, const PolicySet& tuned, const sim::Report& report) {
    const std::string text = savePolicyText(
        sim::withValidation(tuned, report, std::string("ratelab ") + RATELAB_VERSION));
    const PolicyLoadResult back = parsePolicyText(text, path);
    if (!back.ok()) {
        printDiagnostics(back.diagnostics);
        return fail(kInvalidInput, path + ": the tuned policy does not load back");
    }
    return writeOutput(path, text);
}

void printFrontier(const sim::Scenario& scenario, const sim::TradeoffMap& map) {
    std::printf(
        "%s over %zu cells: %zu meet every expectation; the frontier (least legitimate "
        "throttling first):\n",
        scenario.name.c_str(), map.result.cells.size(), map.passing);
    for (std::size_t i : map.frontier) {
        const sim::SweepCell& cell = map.result.cells[i];
        std::printf("  %-36s legit throttled %9s%%  attacker %10s/s  %s%s\n",
                    sim::cellValuesText(map.axes, cell.values).c_str(),
                    numberText(std::round(map.points[i].legitThrottled * 1e6) / 1e4).c_str(),
                    numberText(sim::report_json::rounded(map.points[i].attackerAdmitted)).c_str(),
                    cell.pass ? "pass" : "fail",
                    map.recommended && *map.recommended == i ? "  <- recommended" : "");
    }
}

int tuneScenario(const Arguments& args, const std::string& input) {
    const bool quiet = args.isSet("quiet");
    std::vector<sim::SweepAxis> axes;
    std::string error;
    for (const std::string& text : args.values("vary")) {
        std::optional<sim::SweepAxis> axis = sim::parseSweepAxis(text, error);
        if (!axis) return fail(kUsage, error);
        axes.push_back(std::move(*axis));
    }
    if (axes.empty()) return fail(kUsage, "at least one --vary FIELD=FROM:TO:STEP is needed");
    int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (!args.wholeNumber("threads", 1, 256, threads)) return kUsage;
    Result<sim::Scenario> scenario = loadScenario(input, !quiet);
    if (!scenario) return scenario.failure();
    Result<PolicySet> policies = loadPolicyFor(*scenario, args.value("policy"), !quiet);
    if (!policies) return policies.failure();

    ProgressBar progress("tune");
    sim::SweepOptions options;
    options.threads = threads;
    options.progress = cellProgress(progress);
    sim::SweepResult result = sim::runSweep(*scenario, *policies, axes, options);
    progress.finish();
    if (!result.error.empty()) return fail(kUsage, result.error);  // an axis the policy refuses
    const sim::TradeoffMap map = sim::readTradeoff(*scenario, axes, std::move(result));

    if (args.isSet("json")) {
        const std::string text = sim::tradeoffJson(*scenario, *policies, map);
        if (ExitCode e = writeOutput(args.value("json"), text)) return e;
    }
    if (!quiet && !args.stdoutTaken()) {
        printFrontier(*scenario, map);
        std::printf("%s\n", sim::recommendationText(*scenario, map).c_str());
    }
    if (!map.recommended) return kExpectationFailed;

    // The pick, run on its own: what -o embeds, and a check that it holds alone.
    const std::vector<double>& values = map.result.cells[*map.recommended].values;
    std::optional<PolicySet> tuned = sim::applySweepValues(*policies, axes, values, error);
    if (!tuned) return fail(kUsage, error);
    sim::RunnerOptions runnerOptions;
    runnerOptions.measureWallTime = false;
    sim::ScenarioRunner runner(*scenario, *tuned, runnerOptions);
    runner.runToEnd();
    const sim::Report report = sim::buildReport(runner, sim::Timing{});
    if (!report.pass()) {
        return fail(kExpectationFailed, "the recommended cell fails when run alone");
    }
    if (args.isSet("output")) {
        if (ExitCode e = writeTuned(args.value("output"), *tuned, report)) return e;
        if (!quiet && !args.stdoutTaken()) {
            std::printf("wrote %s (%s, checked by a run of its own)\n",
                        args.value("output").c_str(), sim::cellValuesText(axes, values).c_str());
        }
    }
    return kSuccess;
}

int tuneLog(const Arguments& args, const std::string& input) {
    const bool quiet = args.isSet("quiet");
    if (args.isSet("vary")) {
        return fail(kUsage, input +
                                ": an access log has no classes to trade off; use "
                                "--keep-unthrottled SHARE");
    }
    if (!args.isSet("keep-unthrottled")) {
        return fail(kUsage, "--keep-unthrottled SHARE is needed for an access log");
    }
    const std::string keepText = args.value("keep-unthrottled");
    double keep = 0;
    {
        auto [end, ec] = std::from_chars(keepText.data(), keepText.data() + keepText.size(), keep);
        if (ec != std::errc() || end != keepText.data() + keepText.size() ||
            !(keep > 0 && keep <= 1)) {
            return fail(kUsage, "--keep-unthrottled \"" + keepText +
                                    "\": expected a share above 0 and at most 1");
        }
    }
    std::size_t top = 20;
    if (!args.wholeNumber("top", std::size_t(0), std::size_t(1'000'000), top)) return kUsage;
    if (!args.isSet("policy")) return fail(kUsage, "--policy P.json is required for a log");
    Result<PolicySet> policies = loadPolicy(args.value("policy"), !quiet);
    if (!policies) return policies.failure();
    Result<sim::ReplayInput> log = readLogInput(args);
    if (!log) return log.failure();
    sim::LogReading reading;
    std::string error;
    std::optional<sim::ToleranceTuning> tuning;
    {
        ProgressBar progress(logInputName(*log));
        sim::StreamedReplays replays(*log, reading,
                                     [&](double done) { progress.update(done, "read twice"); });
        tuning =
            sim::tuneToTolerance(replays, *policies, args.value("policy-name"), keep, top, error);
    }
    printLogDetection(*log, reading, !quiet);
    if (ExitCode e = finishLogReading(*log, reading, !quiet)) return e;
    if (!tuning) return fail(kInvalidInput, error);
    if (args.isSet("json")) {
        if (ExitCode e = writeOutput(args.value("json"), sim::toleranceJson(*tuning))) return e;
    }
    if (args.isSet("output")) {
        if (ExitCode e = writeTuned(args.value("output"), tuning->tuned, tuning->report)) return e;
    }
    if (!quiet && !args.stdoutTaken()) std::fputs(sim::toleranceText(*tuning).c_str(), stdout);
    return tuning->keptShare() + 1e-12 >= keep ? kSuccess : kExpectationFailed;
}

int tunePolicy(const Arguments& args) {
    const std::string input = args.positionals().front();
    if (!input.ends_with(".json")) return tuneLog(args, input);
    if (args.positionals().size() > 1)
        return fail(kUsage, "tune sweeps one scenario; several inputs must be logs");
    if (args.isSet("keep-unthrottled")) {
        return fail(kUsage,
                    "--keep-unthrottled applies to access logs; a scenario is tuned to its "
                    "expectations with --vary");
    }
    for (const char* logOption :
         {"format", "log-format", "field", "reorder-window", "policy-name"}) {
        if (args.isSet(logOption)) {
            return fail(kUsage,
                        std::string("--") + logOption + " applies to access logs, not to " + input);
        }
    }
    return tuneScenario(args, input);
}

Command tuneCommand() {
    Command c;
    c.name = "tune";
    c.summary = "recommend limits: the frontier of a sweep, or a log's tolerance";
    c.description =
        "For a scenario: runs the --vary grid (as sweep does), prints the Pareto frontier (least "
        "legitimate throttling against least attacker traffic admitted) and recommends one "
        "cell: among those meeting every expectation, the least legitimate throttling, then the "
        "least attacker traffic, then the smallest numbers. For an access log, which has no "
        "classes: the limits that keep --keep-unthrottled of its clients never throttled, from "
        "the distribution of per-client request rates, and which clients would be throttled and "
        "how often. -o writes the tuned policy with the run that checked it embedded (as run "
        "--validated-policy does). Exit 0 with a recommendation, 1 without one.";
    c.positionals = {{"INPUT",
                      "A scenario (a .json file) to sweep, or access logs (anything else), oldest "
                      "first as for replay; logs are streamed, twice.",
                      Option::Kind::Input, true}};
    c.options = {
        Option::policy("policy", "P.json",
                       "The policy file (default for a scenario: the one it names)."),
        Option::value(
            "vary", "AXIS",
            "Scenarios: [POLICY.]FIELD=FROM:TO:STEP; FIELD is " + sim::sweepFieldList() + ".")
            .asRepeated(),
        Option::value("keep-unthrottled", "SHARE",
                      "Access logs: the share of clients that must never be throttled, e.g. 0.99."),
        Option::value("policy-name", "NAME",
                      "Access logs: the policy to tune (default: the first)."),
        Option::output("output", "TUNED.json", "Write the tuned policy, its checking run embedded.")
            .withShort('o'),
        Option::output("json", "OUT.json", "Write the result as JSON."),
        Option::value("threads", "N", "Scenarios: cells run at once (default: the cores)."),
        Option::value("top", "N", "Access logs: throttled clients listed (default 20)."),
    };
    for (Option& o : logInputOptions())
        c.options.push_back(std::move(o));
    c.options.push_back(Option::quiet());
    c.hasExpectations = true;
    c.run = &tunePolicy;
    return c;
}

}  // namespace

RATELAB_CLI_COMMAND(tuneCommand());

}  // namespace ratelab::cli
