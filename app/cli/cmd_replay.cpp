// ratelab-cli replay: a recorded access log through a policy; what the policy would have done,
// per request (--decisions) and in sum (the report). Unparsed lines are listed, never dropped.

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cinttypes>

#include "cli/command.h"
#include "cli/decision_csv.h"
#include "cli/inputs.h"
#include "cli/outputs.h"
#include "cli/progress.h"
#include "sim/access_log.h"
#include "sim/report.h"
#include "sim/scenario_runner.h"

namespace ratelab::cli {

namespace {

// Unparsed lines printed on stderr; the report lists up to kMaxUnparsedListed.
constexpr std::size_t kPrintedUnparsed = 20;

int replayLog(const Arguments& args) {
    const bool quiet = args.isSet("quiet");
    Result<PolicySet> policies = loadPolicy(args.value("policy"), !quiet);
    if (!policies) return policies.failure();
    Nanos sampleInterval = kNanosPerSecond;
    if (args.isSet("sample-ms")) {
        const std::string text = args.value("sample-ms");
        std::int64_t ms = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
        if (ec != std::errc() || end != text.data() + text.size() || ms < 1 || ms > 86'400'000) {
            return fail(kUsage, "--sample-ms \"" + text + "\": expected 1 to 86400000");
        }
        sampleInterval = ms * kNanosPerMilli;
    }
    const std::string logPath =
        args.positionals().front() == "-" ? kStdinName : args.positionals().front();
    std::optional<sim::LogFormat> format;
    if (args.isSet("format")) {
        format = sim::parseLogFormat(args.value("format"));
        if (!format) {
            return fail(kUsage, "--format \"" + args.value("format") +
                                    "\": expected combined, common or csv");
        }
    }
    const auto started = std::chrono::steady_clock::now();
    Result<sim::RecordedTraffic> traffic =
        loadAccessLogArgument(args.positionals().front(), format);
    if (!traffic) return traffic.failure();
    for (std::size_t i = 0; i < traffic->unparsed.size() && i < kPrintedUnparsed; ++i) {
        std::fprintf(stderr, "%s:%" PRId64 ": cannot parse (%s): %s\n", logPath.c_str(),
                     traffic->unparsed[i].line, std::string(logFormatName(traffic->format)).c_str(),
                     traffic->unparsed[i].reason.c_str());
    }
    if (traffic->unparsedCount > 0) {
        std::fprintf(stderr, "%s: %" PRId64 " of %" PRId64 " lines could not be parsed%s\n",
                     logPath.c_str(), traffic->unparsedCount, traffic->lines,
                     traffic->unparsedCount > static_cast<std::int64_t>(kPrintedUnparsed)
                         ? " (the report lists their line numbers)"
                         : "");
    }
    if (traffic->requests.empty()) {
        return fail(kInvalidInput, logPath + ": no request could be read from the log");
    }

    auto shared = std::make_shared<const sim::RecordedTraffic>(std::move(*traffic));
    sim::RunnerOptions options;
    options.measureWallTime = false;
    std::unique_ptr<OutputStream> decisionsFile;
    std::unique_ptr<DecisionCsvWriter> decisions;
    if (args.isSet("decisions")) {
        decisionsFile = std::make_unique<OutputStream>(args.value("decisions"));
        if (!decisionsFile->file()) return kIoError;
        decisions =
            std::make_unique<DecisionCsvWriter>(decisionsFile->file(), shared->startEpochMs);
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
    if (decisions) {
        if (ExitCode e = decisionsFile->close(decisions->finish())) return e;
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    sim::Timing timing{wall, wall > 0 ? static_cast<double>(runner.totals().requests) / wall : 0};
    sim::Report report = sim::buildReport(runner, timing);
    report.replay = sim::replayInfo(*shared);
    if (args.isSet("json")) {
        if (ExitCode e = writeOutput(args.value("json"), sim::reportJson(report))) return e;
    }
    if (!quiet && !args.stdoutTaken()) {
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

Command replayCommand() {
    Command c;
    c.name = "replay";
    c.summary = "replay an access log through a policy";
    c.description =
        "Replays a recorded access log through a policy on the log's own clock: what the policy "
        "would have done, per request (--decisions) and in sum (the report). Unparsed lines are "
        "listed with their numbers, never dropped silently.";
    c.positionals = {{"ACCESS.log", "The access log to replay.", Option::Kind::Input}};
    c.options = {
        Option::input("policy", "P.json", "The policy file.").asRequired(),
        Option::value("format", "FORMAT",
                      "combined, common or csv (default: guessed from the first line)."),
        Option::output("decisions", "OUT.csv",
                       "Write seq,ts_ms,key,allowed,remaining,retry_after_ms per request."),
        Option::output("json", "REPORT.json", "Write the report as JSON."),
        Option::value("sample-ms", "N", "Sample interval in ms (default 1000)."),
        Option::flag("quiet", "Print nothing on success but errors."),
    };
    c.run = &replayLog;
    return c;
}

}  // namespace

RATELAB_CLI_COMMAND(replayCommand());

}  // namespace ratelab::cli
