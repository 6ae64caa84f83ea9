// ratelab-cli replay: recorded access logs through a policy; what the policy would have done,
// per request (--decisions) and in sum (the report). The logs are streamed in bounded memory;
// every line is replayed, replayed with a warning, or listed as not replayed.

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
    "replay ACCESS.log... --policy P.json [--format combined|common|csv|nginx|caddy|json] "
    "[--log-format 'STRING'] [--field ROLE=PATH]... [--reorder-window SECONDS] "
    "[--decisions OUT.csv] [--json REPORT.json] [--sample-ms N] [--quiet]";

// Lines of each kind printed on stderr; the report lists up to kMaxListedLines.
constexpr std::size_t kPrintedLines = 20;

int replayLog(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.addPositionalArgument(
        "ACCESS.log",
        "The logs to replay, oldest first (rotated: access.log.2.gz access.log.1 "
        "access.log); .gz is read as gzip, - is standard input.");
    const QCommandLineOption policyOption("policy", "Policy file.", "P.json");
    const LogInputOptions logOptions;
    const QCommandLineOption decisionsOption(
        "decisions",
        "Write seq,ts_ms,key,allowed,remaining,retry_after_ms,file,line per request (- for "
        "stdout).",
        "OUT.csv");
    const QCommandLineOption jsonOption("json", "Write the report as JSON (- for stdout).",
                                        "REPORT.json");
    const QCommandLineOption sampleOption("sample-ms", "Sample interval (default 1000).", "N");
    const QCommandLineOption quietOption("quiet", "Print nothing on success but errors.");
    logOptions.addTo(parser);
    parser.addOptions({policyOption, decisionsOption, jsonOption, sampleOption, quietOption});
    if (!parseCommandLine(parser, arguments, "replay", kSynopsis, -1)) return kBadInput;
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

    std::string inputError;
    std::optional<sim::ReplayInput> readInput = logOptions.read(parser, inputError);
    if (!readInput) return badInput("replay", inputError);
    const sim::ReplayInput& input = *readInput;

    const auto started = std::chrono::steady_clock::now();
    sim::LogReading reading;
    auto stream = std::make_shared<sim::LogStream>(input, reading);
    if (!stream->start()) {
        printDiagnostics({*reading.error});
        return kBadInput;
    }
    if (!quiet && !reading.detection.empty()) {
        std::fprintf(stderr, "%s: format %s\n", input.files.front().c_str(),
                     reading.detection.c_str());
    }

    sim::RunnerOptions options;
    options.measureWallTime = false;
    std::FILE* decisionsFile = nullptr;
    std::unique_ptr<DecisionCsvWriter> decisions;
    const std::string decisionsPath = parser.value(decisionsOption).toStdString();
    if (parser.isSet(decisionsOption)) {
        decisionsFile = decisionsPath == "-" ? stdout : std::fopen(decisionsPath.c_str(), "wb");
        if (!decisionsFile) return badInput("replay", decisionsPath + ": cannot write");
        decisions = std::make_unique<DecisionCsvWriter>(decisionsFile, &reading);
        options.decisions = decisions.get();
    }
    sim::ScenarioRunner runner(
        sim::makeReplayScenario(std::make_shared<sim::StreamedLog>(stream, input.files.front()),
                                sampleInterval),
        *policies, options);
    {
        ProgressBar progress(input.files.size() == 1
                                 ? input.files.front()
                                 : std::to_string(input.files.size()) + " logs");
        while (!runner.finished()) {
            runner.advance(runner.duration(), 200'000);
            const std::int64_t total = stream->bytesTotal();
            progress.update(
                total > 0 ? static_cast<double>(stream->bytesRead()) / static_cast<double>(total)
                          : 0.0,
                shortCount(static_cast<double>(runner.requests())) + " lines");
        }
    }
    bool decisionsOk = true;
    if (decisions) {
        decisionsOk = decisions->finish();
        if (decisionsFile != stdout && std::fclose(decisionsFile) != 0) decisionsOk = false;
    }
    if (reading.error) {
        printDiagnostics({*reading.error});
        return kBadInput;
    }
    if (!decisionsOk) return badInput("replay", decisionsPath + ": cannot write");
    printDiagnostics(sim::readingDiagnostics(reading, kPrintedLines), !quiet);
    const std::string where =
        input.files.size() == 1
            ? input.files.front()
            : input.files.front() + " and " + std::to_string(input.files.size() - 1) + " more";
    if (reading.replayed == 0) {
        return badInput("replay", where + ": no request could be read from the log");
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    sim::Timing timing{wall, wall > 0 ? static_cast<double>(runner.requests()) / wall : 0};
    sim::Report report = sim::buildReplayReport(runner, timing, reading);
    std::string error;
    if (parser.isSet(jsonOption) &&
        !writeTextFile(parser.value(jsonOption).toStdString(), sim::reportJson(report), error)) {
        return badInput("replay", error);
    }
    const bool stdoutTaken = parser.value(jsonOption) == "-" || decisionsPath == "-";
    if (!quiet && !stdoutTaken) {
        std::printf("%s: %" PRId64 " lines (%s), %" PRId64 " replayed (%" PRId64
                    " damaged), %" PRId64 " unparsed, %" PRId64
                    " out of the reorder window, %" PRId64 " clients (%" PRId64 " host names)\n",
                    where.c_str(), reading.lines, reading.format.c_str(), reading.replayed,
                    reading.damagedCount, reading.unparsedCount, reading.outOfWindowCount,
                    reading.clients, reading.hostNames);
        std::fputs(sim::reportText(report).c_str(), stdout);
    }
    return kSuccess;
}

}  // namespace

RATELAB_CLI_COMMAND({"replay", kSynopsis, "replay access logs through a policy", &replayLog});

}  // namespace ratelab::cli
