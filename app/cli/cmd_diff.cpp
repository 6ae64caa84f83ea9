// ratelab-cli diff: two policies on the very same requests (one pass, the traffic generated
// once): per class and per actor (per client for a log) what each decided and the difference,
// the requests that flip, and the legitimate instances that become collateral. Exit 0 when B
// meets every expectation of the scenario, 1 when it does not, 2 on bad input.

#include <QCommandLineParser>
#include <chrono>
#include <cinttypes>

#include "cli/command.h"
#include "cli/progress.h"
#include "cli/sim_inputs.h"
#include "sim/access_log.h"
#include "sim/comparison.h"
#include "sim/scenario_runner.h"

namespace ratelab::cli {

namespace {

constexpr const char* kSynopsis =
    "diff (SCENARIO.json | ACCESS.log) [--policy A.json] --against B.json [--json OUT.json] "
    "[--flips OUT.csv] [--top N] [--format combined|common|csv] [--seed N] [--quiet]";

int diffPolicies(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.addPositionalArgument("INPUT",
                                 "A scenario (a .json file) or an access log (anything else).");
    const QCommandLineOption policyOption(
        "policy", "Policy A, the reference (default for a scenario: the one it names).", "A.json");
    const QCommandLineOption againstOption("against", "Policy B, the candidate.", "B.json");
    const QCommandLineOption jsonOption("json", "Write the comparison as JSON (- for stdout).",
                                        "OUT.json");
    const QCommandLineOption flipsOption(
        "flips", "Write seq,ts_ms,actor,key,a,b per request decided differently (- for stdout).",
        "OUT.csv");
    const QCommandLineOption topOption(
        "top", "Collateral instances and changed clients listed (default 20).", "N", "20");
    const QCommandLineOption formatOption(
        "format", "An access log's format: combined, common or csv (default: guessed).", "FORMAT");
    const QCommandLineOption seedOption("seed", "Override the scenario's seed.", "N");
    const QCommandLineOption quietOption("quiet", "Print nothing on success but errors.");
    parser.addOptions({policyOption, againstOption, jsonOption, flipsOption, topOption,
                       formatOption, seedOption, quietOption});
    if (!parseCommandLine(parser, arguments, "diff", kSynopsis, 1)) return kBadInput;
    const bool quiet = parser.isSet(quietOption);
    if (!parser.isSet(againstOption)) return badInput("diff", "--against B.json is required");
    bool ok = false;
    const qlonglong top = parser.value(topOption).toLongLong(&ok);
    if (!ok || top < 0 || top > 1'000'000) {
        return badInput("diff", "--top \"" + parser.value(topOption).toStdString() +
                                    "\": expected 0 to 1000000");
    }
    sim::RunnerOptions options;
    options.measureWallTime = false;
    if (parser.isSet(seedOption)) {
        std::string error;
        const std::optional<std::uint64_t> seed =
            parseSeed(parser.value(seedOption).toStdString(), error);
        if (!seed) return badInput("diff", error);
        options.seed = seed;
    }

    const auto started = std::chrono::steady_clock::now();
    const std::string input = parser.positionalArguments().at(0).toStdString();
    std::optional<sim::Scenario> scenario;
    std::shared_ptr<const sim::RecordedTraffic> traffic;
    if (input.ends_with(".json")) {
        if (parser.isSet(formatOption)) {
            return badInput("diff", "--format applies to access logs, not to " + input);
        }
        scenario = loadScenario(input, !quiet);
        if (!scenario) return kBadInput;
    } else {
        traffic = loadRecordedTraffic(input, parser.value(formatOption).toStdString(), "diff");
        if (!traffic) return kBadInput;
        scenario = sim::makeReplayScenario(traffic, kNanosPerSecond);
    }
    const std::string policyPath = parser.isSet(policyOption)
                                       ? parser.value(policyOption).toStdString()
                                       : scenario->policyPath;
    if (policyPath.empty()) {
        return badInput("diff", input + ": no policy A; pass --policy A.json");
    }
    std::optional<PolicySet> a = loadPolicy(policyPath, !quiet);
    if (!a) return kBadInput;
    std::optional<PolicySet> b = loadPolicy(parser.value(againstOption).toStdString(), !quiet);
    if (!b) return kBadInput;
    if (printDiagnostics(sim::checkScenarioAgainstPolicy(*scenario, *a)) ||
        printDiagnostics(sim::checkScenarioAgainstPolicy(*scenario, *b))) {
        return kBadInput;
    }

    std::FILE* flipsFile = nullptr;
    std::unique_ptr<sim::FlipCsvWriter> flips;
    const std::string flipsPath = parser.value(flipsOption).toStdString();
    if (parser.isSet(flipsOption)) {
        flipsFile = flipsPath == "-" ? stdout : std::fopen(flipsPath.c_str(), "wb");
        if (!flipsFile) return badInput("diff", flipsPath + ": cannot write");
        flips = std::make_unique<sim::FlipCsvWriter>(flipsFile, *scenario,
                                                     traffic ? traffic->reading.startEpochMicros / 1000 : 0);
        options.flips = flips.get();
    }
    sim::ScenarioRunner runner(*scenario, std::vector<PolicySet>{*a, *b}, options);
    {
        ProgressBar progress(scenario->name);
        const Nanos slice = std::max<Nanos>(runner.duration() / 200, 1);
        while (!runner.finished()) {
            runner.advance(runner.now() + slice, progress.enabled() ? 1'000'000 : INT64_MAX);
            progress.update(
                static_cast<double>(runner.now()) / static_cast<double>(runner.duration()),
                shortCount(static_cast<double>(runner.requests())) + " requests, twice");
        }
    }
    if (flips) {
        const bool written =
            flips->finish() && (flipsFile == stdout || std::fclose(flipsFile) == 0);
        if (!written) return badInput("diff", flipsPath + ": cannot write");
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    sim::Timing timing{wall, wall > 0 ? static_cast<double>(runner.requests()) / wall : 0};
    sim::Comparison comparison =
        sim::buildComparison(runner, static_cast<std::size_t>(top), timing);
    if (traffic) comparison.replay = sim::replayInfo(traffic->reading);

    std::string error;
    if (parser.isSet(jsonOption) && !writeTextFile(parser.value(jsonOption).toStdString(),
                                                   sim::comparisonJson(comparison), error)) {
        return badInput("diff", error);
    }
    const bool stdoutTaken = parser.value(jsonOption) == "-" || flipsPath == "-";
    if (!quiet && !stdoutTaken) std::fputs(sim::comparisonText(comparison).c_str(), stdout);
    return comparison.passB() ? kSuccess : kExpectationFailed;
}

}  // namespace

RATELAB_CLI_COMMAND({"diff", kSynopsis,
                     "compare two policies on the very same requests (a scenario or a log)",
                     &diffPolicies});

}  // namespace ratelab::cli
