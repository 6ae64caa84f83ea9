// ratelab-cli replay: recorded access logs through a policy; what the policy would have done,
// per request (--decisions) and in sum (the report). The logs are streamed in bounded memory;
// every line is replayed, replayed with a warning, or listed as not replayed.

#include <algorithm>
#include <chrono>
#include <cinttypes>

#include "cli/command.h"
#include "cli/decision_csv.h"
#include "cli/inputs.h"
#include "cli/log_options.h"
#include "cli/outputs.h"
#include "cli/progress.h"
#include "sim/log/recorded_traffic.h"
#include "sim/report/report.h"
#include "sim/run/scenario_runner.h"

namespace ratelab::cli {

namespace {

int replayLogs(const Arguments& args) {
    const bool quiet = args.isSet("quiet");
    std::int64_t sampleMs = 1000;
    if (!args.wholeNumber("sample-ms", 1, 86'400'000, sampleMs)) return kUsage;
    Result<sim::ReplayInput> read = readLogInput(args);
    if (!read) return read.failure();
    Result<PolicySet> policies = loadPolicy(args.value("policy"), !quiet);
    if (!policies) return policies.failure();

    const sim::ReplayInput& input = *read;
    const auto started = std::chrono::steady_clock::now();
    sim::LogReading reading;
    Result<std::shared_ptr<sim::LogStream>> opened = openLogStream(input, reading, !quiet);
    if (!opened) return opened.failure();
    const std::shared_ptr<sim::LogStream>& stream = *opened;

    sim::RunnerOptions options;
    options.measureWallTime = false;
    std::unique_ptr<OutputStream> decisionsFile;
    std::unique_ptr<DecisionCsvWriter> decisions;
    if (args.isSet("decisions")) {
        decisionsFile = std::make_unique<OutputStream>(args.value("decisions"));
        if (!decisionsFile->file()) return kIoError;
        decisions = std::make_unique<DecisionCsvWriter>(decisionsFile->file(), &reading);
        options.decisions = decisions.get();
    }
    sim::ScenarioRunner runner(
        sim::makeReplayScenario(std::make_shared<sim::StreamedLog>(stream, input.files.front()),
                                sampleMs * kNanosPerMilli),
        *policies, options);
    {
        ProgressBar progress(logInputName(input));
        while (!runner.finished()) {
            runner.advance(runner.duration(), 200'000);
            progress.update(stream->fractionRead(),
                            shortCount(static_cast<double>(runner.requests())) + " lines");
        }
    }
    if (decisions) {
        if (ExitCode e = decisionsFile->close(decisions->finish())) return e;
    }
    if (ExitCode e = finishLogReading(input, reading, !quiet)) return e;
    const std::string where = logInputName(input);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    sim::Timing timing{wall, wall > 0 ? static_cast<double>(runner.requests()) / wall : 0};
    sim::Report report = sim::buildReplayReport(runner, timing, reading);
    if (args.isSet("json")) {
        if (ExitCode e = writeOutput(args.value("json"), sim::reportJson(report))) return e;
    }
    if (!quiet && !args.stdoutTaken()) {
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

Command replayCommand() {
    Command c;
    c.name = "replay";
    c.summary = "replay access logs through a policy";
    c.description =
        "Replays recorded access logs through a policy on the logs' own clock: what the policy "
        "would have done, per request (--decisions) and in sum (the report). The logs are "
        "streamed in bounded memory; every line is replayed, replayed with a warning, or listed "
        "as not replayed, never dropped silently.";
    c.positionals = {{"ACCESS.log",
                      "The logs to replay, oldest first (rotated: access.log.2.gz access.log.1 "
                      "access.log); .gz is read as gzip.",
                      Option::Kind::Input, true}};
    c.options = {
        Option::policy("policy", "P.json", "The policy file.").asRequired(),
        Option::output("decisions", "OUT.csv",
                       "Write seq,ts_ms,key,allowed,remaining,retry_after_ms,file,line per "
                       "request."),
        Option::output("json", "REPORT.json", "Write the report as JSON."),
        Option::value("sample-ms", "N", "Sample interval in ms (default 1000)."),
        Option::quiet(),
    };
    const std::vector<Option> logOptions = logInputOptions();
    c.options.insert(c.options.begin() + 1, logOptions.begin(), logOptions.end());
    c.run = &replayLogs;
    return c;
}

}  // namespace

RATELAB_CLI_COMMAND(replayCommand());

}  // namespace ratelab::cli
