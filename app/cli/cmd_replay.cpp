// ratelab-cli replay: a recorded access log through a policy; what the policy would have done,
// per request (--decisions) and in sum (the report). Unparsed lines are listed, never dropped.

#include <QCommandLineParser>
#include <algorithm>
#include <chrono>
#include <cinttypes>

#include "cli/command.h"
#include "cli/progress.h"
#include "cli/sim_inputs.h"
#include "sim/access_log.h"
#include "sim/report.h"
#include "sim/scenario_runner.h"

namespace ratelab::cli {

namespace {

constexpr const char* kSynopsis =
    "replay ACCESS.log --policy P.json [--format combined|common|csv] [--decisions OUT.csv] "
    "[--json REPORT.json] [--sample-ms N] [--quiet]";

int replayLog(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.addPositionalArgument("ACCESS.log", "The access log to replay.");
    const QCommandLineOption policyOption("policy", "Policy file.", "P.json");
    const QCommandLineOption formatOption(
        "format", "combined, common or csv (default: guessed from the first line).", "FORMAT");
    const QCommandLineOption decisionsOption(
        "decisions", "Write seq,ts_ms,key,allowed,remaining,retry_after_ms per request.",
        "OUT.csv");
    const QCommandLineOption jsonOption("json", "Write the report as JSON (- for stdout).",
                                        "REPORT.json");
    const QCommandLineOption sampleOption("sample-ms", "Sample interval (default 1000).", "N");
    const QCommandLineOption quietOption("quiet", "Print nothing on success but errors.");
    parser.addOptions(
        {policyOption, formatOption, decisionsOption, jsonOption, sampleOption, quietOption});
    if (!parseCommandLine(parser, arguments, "replay", kSynopsis, 1)) return kBadInput;
    const bool quiet = parser.isSet(quietOption);
    if (!parser.isSet(policyOption)) return badInput("replay", "--policy P.json is required");

    std::optional<PolicySet> policies =
        loadPolicy(parser.value(policyOption).toStdString(), !quiet);
    if (!policies) return kBadInput;

    Nanos sampleInterval = kNanosPerSecond;
    if (parser.isSet(sampleOption)) {
        bool ok = false;
        const qlonglong ms = parser.value(sampleOption).toLongLong(&ok);
        if (!ok || ms < 1 || ms > 86'400'000) {
            return badInput("replay", "--sample-ms \"" + parser.value(sampleOption).toStdString() +
                                          "\": expected 1 to 86400000");
        }
        sampleInterval = ms * kNanosPerMilli;
    }

    const std::string logPath = parser.positionalArguments().at(0).toStdString();
    std::string error;
    const auto started = std::chrono::steady_clock::now();
    std::shared_ptr<const sim::RecordedTraffic> shared =
        loadRecordedTraffic(logPath, parser.value(formatOption).toStdString(), "replay");
    if (!shared) return kBadInput;

    sim::RunnerOptions options;
    options.measureWallTime = false;
    std::FILE* decisionsFile = nullptr;
    std::unique_ptr<DecisionCsvWriter> decisions;
    const std::string decisionsPath = parser.value(decisionsOption).toStdString();
    if (parser.isSet(decisionsOption)) {
        decisionsFile = decisionsPath == "-" ? stdout : std::fopen(decisionsPath.c_str(), "wb");
        if (!decisionsFile) return badInput("replay", decisionsPath + ": cannot write");
        decisions = std::make_unique<DecisionCsvWriter>(decisionsFile, shared->startEpochMs);
        options.decisions = decisions.get();
    }
    sim::ScenarioRunner runner(sim::makeReplayScenario(shared, sampleInterval), *policies, options);
    {
        ProgressBar progress(logPath);
        const std::int64_t total = static_cast<std::int64_t>(shared->requests.size());
        while (!runner.finished()) {
            runner.advance(runner.duration(), 200'000);
            progress.update(
                static_cast<double>(runner.totals().requests) / static_cast<double>(total),
                shortCount(static_cast<double>(runner.totals().requests)) + " lines");
        }
    }
    bool decisionsOk = true;
    if (decisions) {
        decisionsOk = decisions->finish();
        if (decisionsFile != stdout && std::fclose(decisionsFile) != 0) decisionsOk = false;
        if (!decisionsOk) return badInput("replay", decisionsPath + ": cannot write");
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    sim::Timing timing{wall, wall > 0 ? static_cast<double>(runner.totals().requests) / wall : 0};
    sim::Report report = sim::buildReport(runner, timing);
    report.replay = sim::replayInfo(*shared);
    if (parser.isSet(jsonOption) &&
        !writeTextFile(parser.value(jsonOption).toStdString(), sim::reportJson(report), error)) {
        return badInput("replay", error);
    }
    const bool stdoutTaken = parser.value(jsonOption) == "-" || decisionsPath == "-";
    if (!quiet && !stdoutTaken) {
        std::printf("%s: %" PRId64 " lines (%s), %" PRId64 " replayed, %" PRId64
                    " unparsed, %" PRId64 " clients (%" PRId64 " host names)\n",
                    logPath.c_str(), shared->lines,
                    std::string(sim::logFormatName(shared->format)).c_str(),
                    static_cast<std::int64_t>(shared->requests.size()), shared->unparsedCount,
                    static_cast<std::int64_t>(shared->clients.size()), shared->hostNames);
        std::fputs(sim::reportText(report).c_str(), stdout);
    }
    return kSuccess;
}

}  // namespace

RATELAB_CLI_COMMAND({"replay", kSynopsis, "replay an access log through a policy", &replayLog});

}  // namespace ratelab::cli
