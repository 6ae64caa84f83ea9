// ratelab-cli diff: two policies on the very same requests (one pass, the traffic generated
// once): per class and per actor (per client for a log) what each decided and the difference,
// the requests that flip, and the legitimate instances that become collateral. Exit 0 when B
// meets every expectation of the scenario, 1 when it does not.

#include <chrono>

#include "cli/command.h"
#include "cli/inputs.h"
#include "cli/log_options.h"
#include "cli/outputs.h"
#include "cli/progress.h"
#include "sim/decide/comparison.h"
#include "sim/log/recorded_traffic.h"
#include "sim/run/scenario_runner.h"

namespace ratelab::cli {

namespace {

int diffPolicies(const Arguments& args) {
    const bool quiet = args.isSet("quiet");
    const std::string input = args.positionals().front();
    const bool isScenario = input.ends_with(".json");
    std::size_t top = 20;
    if (!args.wholeNumber("top", std::size_t(0), std::size_t(1'000'000), top)) return kUsage;
    sim::RunnerOptions options;
    options.measureWallTime = false;
    if (!args.seed(options.seed)) return kUsage;
    if (isScenario && args.positionals().size() > 1)
        return fail(kUsage, "diff compares on one scenario; several inputs must be logs");
    for (const char* logOption : {"format", "log-format", "field", "reorder-window"}) {
        if (isScenario && args.isSet(logOption)) {
            return fail(kUsage,
                        std::string("--") + logOption + " applies to access logs, not to " + input);
        }
    }

    const auto started = std::chrono::steady_clock::now();
    std::optional<sim::Scenario> scenario;
    std::optional<sim::ReplayInput> log;  // a log's input, streamed in bounded memory
    sim::LogReading reading;              // filled in as it streams
    std::shared_ptr<sim::LogStream> stream;
    if (isScenario) {
        Result<sim::Scenario> loaded = loadScenario(input, !quiet);
        if (!loaded) return loaded.failure();
        scenario = std::move(*loaded);
    } else {
        if (!args.isSet("policy"))
            return fail(kUsage, input + ": a log names no policy A; pass --policy A.json");
        Result<sim::ReplayInput> read = readLogInput(args);
        if (!read) return read.failure();
        log = std::move(*read);
        Result<std::shared_ptr<sim::LogStream>> opened = openLogStream(*log, reading, !quiet);
        if (!opened) return opened.failure();
        stream = *opened;
        scenario = sim::makeReplayScenario(
            std::make_shared<sim::StreamedLog>(stream, log->files.front()), kNanosPerSecond);
    }
    Result<PolicySet> a = loadPolicyFor(*scenario, args.value("policy"), !quiet);
    if (!a) return a.failure();
    Result<PolicySet> b = loadPolicyFor(*scenario, args.value("against"), !quiet);
    if (!b) return b.failure();

    std::unique_ptr<OutputStream> flipsFile;
    std::unique_ptr<sim::FlipCsvWriter> flips;
    if (args.isSet("flips")) {
        flipsFile = std::make_unique<OutputStream>(args.value("flips"));
        if (!flipsFile->file()) return kIoError;
        flips = std::make_unique<sim::FlipCsvWriter>(flipsFile->file(), *scenario,
                                                     stream ? &reading : nullptr);
        options.flips = flips.get();
    }
    sim::ScenarioRunner runner(*scenario, std::vector<PolicySet>{*a, *b}, options);
    {
        ProgressBar progress(log ? logInputName(*log) : scenario->name);
        const Nanos slice = std::max<Nanos>(runner.duration() / 200, 1);
        while (!runner.finished()) {
            if (stream) {  // a stream's duration is known at its end: it goes by bytes read
                runner.advance(runner.duration(), 200'000);
            } else {
                runner.advance(runner.now() + slice, progress.enabled() ? 1'000'000 : INT64_MAX);
            }
            const double done =
                stream ? stream->fractionRead()
                       : static_cast<double>(runner.now()) / static_cast<double>(runner.duration());
            progress.update(
                done, shortCount(static_cast<double>(runner.requests())) + " requests, twice");
        }
    }
    if (flips) {
        if (ExitCode e = flipsFile->close(flips->finish())) return e;
    }
    if (log) {
        if (ExitCode e = finishLogReading(*log, reading, !quiet)) return e;
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    sim::Timing timing{wall, wall > 0 ? static_cast<double>(runner.requests()) / wall : 0};
    const sim::Comparison comparison =
        log ? sim::buildReplayComparison(runner, top, timing, reading)
            : sim::buildComparison(runner, top, timing);

    if (args.isSet("json")) {
        if (ExitCode e = writeOutput(args.value("json"), sim::comparisonJson(comparison))) return e;
    }
    if (!quiet && !args.stdoutTaken()) std::fputs(sim::comparisonText(comparison).c_str(), stdout);
    return comparison.passB() ? kSuccess : kExpectationFailed;
}

Command diffCommand() {
    Command c;
    c.name = "diff";
    c.summary = "compare two policies on the very same requests (a scenario or a log)";
    c.description =
        "Runs policy A and policy B on the very same requests in one pass (a scenario's traffic "
        "generated once, or each line of an access log) and prints, per class and per actor "
        "(per client for a log), what each decided and the difference; the requests that flip "
        "(allowed under A and throttled under B, and the reverse); and the legitimate instances "
        "that become collateral (throttled under B, never under A), most affected first. Exit 0 "
        "when B meets every expectation of the scenario (a log has none), 1 when it does not. "
        "Deterministic: the same inputs and seed give the same bytes (but for \"timing\").";
    c.positionals = {{"INPUT",
                      "A scenario (a .json file) or access logs (anything else), oldest first "
                      "as for replay; logs are streamed in bounded memory.",
                      Option::Kind::Input, true}};
    c.options = {
        Option::policy("policy", "A.json",
                       "Policy A, the reference (default for a scenario: the one it names)."),
        Option::policy("against", "B.json", "Policy B, the candidate.").asRequired(),
        Option::output("json", "OUT.json", "Write the comparison as JSON."),
        Option::output("flips", "OUT.csv",
                       "Write seq,ts_ms,actor,key,a,b per request decided differently."),
        Option::value("top", "N", "Collateral instances and changed clients listed (default 20)."),
        Option::seed(),
    };
    for (Option& o : logInputOptions())
        c.options.push_back(std::move(o));
    c.options.push_back(Option::quiet());
    c.hasExpectations = true;
    c.run = &diffPolicies;
    return c;
}

}  // namespace

RATELAB_CLI_COMMAND(diffCommand());

}  // namespace ratelab::cli
