// ratelab-cli tune: the recommendation. For a scenario, a sweep over the --vary grid read as a
// decision: the Pareto frontier (least legitimate throttling against least attacker traffic)
// and the one cell to pick. For an access log, which has no classes, the limits that leave a
// stated share of its clients never throttled. -o writes the tuned policy with the run that
// checked it embedded. Exit 0 with a recommendation, 1 without one, 2 on bad input.

#include <QCommandLineParser>
#include <cinttypes>
#include <mutex>
#include <thread>

#include "cli/command.h"
#include "cli/progress.h"
#include "cli/sim_inputs.h"
#include "json/json_reader.h"
#include "ratelab/policy_file.h"
#include "sim/access_log.h"
#include "sim/log_tuning.h"
#include "sim/report_json.h"
#include "sim/scenario_runner.h"
#include "sim/tradeoff.h"

namespace ratelab::cli {

namespace {

constexpr const char* kSynopsis =
    "tune (SCENARIO.json --vary FIELD=FROM:TO:STEP... | ACCESS.log --keep-unthrottled SHARE) "
    "[--policy P.json] [-o TUNED.json] [--json OUT.json] [--threads N] [--top N] "
    "[--format combined|common|csv] [--quiet]";

std::string generator() {
    return std::string("ratelab ") + RATELAB_VERSION;
}

// Writes the tuned set with its checking run embedded; the text must load back without errors.
bool writeTuned(const std::string& path, const PolicySet& tuned, const sim::Report& report,
                std::string& error) {
    const std::string text = savePolicyText(sim::withValidation(tuned, report, generator()));
    const PolicyLoadResult back = parsePolicyText(text, path);
    if (!back.ok()) {
        error = path + ": the tuned policy does not load back: " +
                (back.diagnostics.empty() ? std::string("?") : back.diagnostics[0].message);
        return false;
    }
    return writeTextFile(path, text, error);
}

void printFrontier(const sim::Scenario& scenario, const sim::TradeoffMap& map) {
    std::printf(
        "%s over %zu cells: %zu meet every expectation; the frontier (least legitimate "
        "throttling first):\n",
        scenario.name.c_str(), map.result.cells.size(), map.passing);
    for (std::size_t i : map.frontier) {
        const sim::SweepCell& cell = map.result.cells[i];
        std::printf(
            "  %-36s legit throttled %9s%%  attacker %10s/s  %s%s\n",
            sim::cellValuesText(map.axes, cell.values).c_str(),
            json::numberText(std::round(map.points[i].legitThrottled * 1e6) / 1e4).c_str(),
            json::numberText(sim::report_json::rounded(map.points[i].attackerAdmitted)).c_str(),
            cell.pass ? "pass" : "fail",
            map.recommended && *map.recommended == i ? "  <- recommended" : "");
    }
}

int tuneScenario(const sim::Scenario& scenario, const PolicySet& policies,
                 const std::vector<sim::SweepAxis>& axes, int threads, const std::string& output,
                 const std::string& jsonPath, bool quiet) {
    ProgressBar progress("tune");
    std::mutex progressLock;
    sim::SweepOptions options;
    options.threads = threads;
    options.progress = [&](std::size_t done, std::size_t all) {
        std::lock_guard<std::mutex> lock(progressLock);
        progress.update(static_cast<double>(done) / static_cast<double>(all),
                        std::to_string(done) + " of " + std::to_string(all) + " cells");
    };
    sim::SweepResult result = sim::runSweep(scenario, policies, axes, options);
    progress.finish();
    if (!result.error.empty()) return badInput("tune", result.error);
    const sim::TradeoffMap map = sim::readTradeoff(scenario, axes, std::move(result));

    std::string error;
    if (!jsonPath.empty() &&
        !writeTextFile(jsonPath, sim::tradeoffJson(scenario, policies, map), error)) {
        return badInput("tune", error);
    }
    const bool stdoutTaken = jsonPath == "-" || output == "-";
    if (!quiet && !stdoutTaken) {
        printFrontier(scenario, map);
        std::printf("%s\n", sim::recommendationText(scenario, map).c_str());
    }
    if (!map.recommended) return kExpectationFailed;

    // The pick, run on its own: what -o embeds, and a check that it holds alone.
    const std::vector<double>& values = map.result.cells[*map.recommended].values;
    std::optional<PolicySet> tuned = sim::applySweepValues(policies, axes, values, error);
    sim::RunnerOptions runnerOptions;
    runnerOptions.measureWallTime = false;
    sim::ScenarioRunner runner(scenario, *tuned, runnerOptions);
    runner.runToEnd();
    const sim::Report report = sim::buildReport(runner, sim::Timing{});
    if (!report.pass()) {
        std::fprintf(stderr, "ratelab-cli tune: the recommended cell fails when run alone\n");
        return kExpectationFailed;
    }
    if (!output.empty() && !writeTuned(output, *tuned, report, error))
        return badInput("tune", error);
    if (!quiet && !output.empty() && !stdoutTaken) {
        std::printf("wrote %s (%s, checked by a run of its own)\n", output.c_str(),
                    sim::cellValuesText(axes, values).c_str());
    }
    return kSuccess;
}

int tunePolicy(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.addPositionalArgument(
        "INPUT", "A scenario (a .json file) to sweep, or an access log (anything else).");
    const QCommandLineOption policyOption(
        "policy", "Policy file (default for a scenario: the one it names).", "P.json");
    const QCommandLineOption varyOption(
        "vary",
        QString::fromStdString("Scenarios: [POLICY.]FIELD=FROM:TO:STEP; FIELD is " +
                               sim::sweepFieldList() + "."),
        "AXIS");
    const QCommandLineOption keepOption(
        "keep-unthrottled",
        "Access logs: the share of clients that must never be throttled, e.g. 0.99.", "SHARE");
    const QCommandLineOption tunedOption(
        "policy-name", "Access logs: the policy to tune (default: the first).", "NAME");
    const QCommandLineOption outOption(
        {"o", "output"}, "Write the tuned policy, its checking run embedded.", "TUNED.json");
    const QCommandLineOption jsonOption("json", "Write the result as JSON (- for stdout).",
                                        "OUT.json");
    const QCommandLineOption threadsOption("threads", "Cells run at once (default: the cores).",
                                           "N");
    const QCommandLineOption topOption("top", "Throttled clients listed (default 20).", "N", "20");
    const QCommandLineOption formatOption(
        "format", "An access log's format: combined, common or csv (default: guessed).", "FORMAT");
    const QCommandLineOption quietOption("quiet", "Print nothing on success but errors.");
    parser.addOptions({policyOption, varyOption, keepOption, tunedOption, outOption, jsonOption,
                       threadsOption, topOption, formatOption, quietOption});
    if (!parseCommandLine(parser, arguments, "tune", kSynopsis, 1)) return kBadInput;
    const bool quiet = parser.isSet(quietOption);
    const std::string input = parser.positionalArguments().at(0).toStdString();
    const std::string output = parser.value(outOption).toStdString();
    const std::string jsonPath = parser.value(jsonOption).toStdString();

    if (!input.ends_with(".json")) {
        if (parser.isSet(varyOption)) {
            return badInput("tune", input +
                                        ": an access log has no classes to trade off; use "
                                        "--keep-unthrottled SHARE");
        }
        if (!parser.isSet(keepOption)) {
            return badInput("tune", "--keep-unthrottled SHARE is needed for an access log");
        }
        bool ok = false;
        const double keep = parser.value(keepOption).toDouble(&ok);
        if (!ok || !(keep > 0 && keep <= 1)) {
            return badInput("tune", "--keep-unthrottled \"" +
                                        parser.value(keepOption).toStdString() +
                                        "\": expected a share above 0 and at most 1");
        }
        const qlonglong top = parser.value(topOption).toLongLong(&ok);
        if (!ok || top < 0 || top > 1'000'000) {
            return badInput("tune", "--top \"" + parser.value(topOption).toStdString() +
                                        "\": expected 0 to 1000000");
        }
        if (!parser.isSet(policyOption)) return badInput("tune", "--policy P.json is required");
        std::optional<PolicySet> policies =
            loadPolicy(parser.value(policyOption).toStdString(), !quiet);
        if (!policies) return kBadInput;
        std::shared_ptr<const sim::RecordedTraffic> traffic =
            loadRecordedTraffic(input, parser.value(formatOption).toStdString(), "tune");
        if (!traffic) return kBadInput;
        const sim::Scenario replay = sim::makeReplayScenario(traffic, kNanosPerSecond);
        std::string error;
        std::optional<sim::ToleranceTuning> tuning =
            sim::tuneToTolerance(replay, *policies, parser.value(tunedOption).toStdString(), keep,
                                 static_cast<std::size_t>(top), error);
        if (!tuning) return badInput("tune", error);
        if (!jsonPath.empty() && !writeTextFile(jsonPath, sim::toleranceJson(*tuning), error)) {
            return badInput("tune", error);
        }
        if (!output.empty() && !writeTuned(output, tuning->tuned, tuning->report, error)) {
            return badInput("tune", error);
        }
        if (!quiet && jsonPath != "-" && output != "-") {
            std::fputs(sim::toleranceText(*tuning).c_str(), stdout);
        }
        return tuning->keptShare() + 1e-12 >= keep ? kSuccess : kExpectationFailed;
    }

    if (parser.isSet(keepOption)) {
        return badInput("tune",
                        "--keep-unthrottled applies to access logs; a scenario is tuned "
                        "to its expectations with --vary");
    }
    std::vector<sim::SweepAxis> axes;
    std::string error;
    for (const QString& text : parser.values(varyOption)) {
        std::optional<sim::SweepAxis> axis = sim::parseSweepAxis(text.toStdString(), error);
        if (!axis) return badInput("tune", error);
        axes.push_back(std::move(*axis));
    }
    if (axes.empty()) return badInput("tune", "at least one --vary FIELD=FROM:TO:STEP is needed");
    int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (parser.isSet(threadsOption)) {
        bool ok = false;
        threads = parser.value(threadsOption).toInt(&ok);
        if (!ok || threads < 1 || threads > 256) {
            return badInput("tune", "--threads \"" + parser.value(threadsOption).toStdString() +
                                        "\": expected 1 to 256");
        }
    }
    std::optional<sim::Scenario> scenario = loadScenario(input, !quiet);
    if (!scenario) return kBadInput;
    const std::string policyPath = parser.isSet(policyOption)
                                       ? parser.value(policyOption).toStdString()
                                       : scenario->policyPath;
    if (policyPath.empty()) {
        return badInput("tune", scenario->file + ": the scenario names no policy; pass --policy");
    }
    std::optional<PolicySet> policies = loadPolicy(policyPath, !quiet);
    if (!policies) return kBadInput;
    if (printDiagnostics(sim::checkScenarioAgainstPolicy(*scenario, *policies))) return kBadInput;
    return tuneScenario(*scenario, *policies, axes, threads, output, jsonPath, quiet);
}

}  // namespace

RATELAB_CLI_COMMAND({"tune", kSynopsis,
                     "recommend limits: the frontier of a sweep, or a log's tolerance",
                     &tunePolicy});

}  // namespace ratelab::cli
