// ratelab-cli fit: a scenario fitted to recorded access logs (sim/log_fit.h), read with the
// replay's options and keyed by a policy's rules, written as a scenario file that loads,
// validates and runs like any other.

#include <QCommandLineParser>
#include <cinttypes>
#include <filesystem>

#include "cli/command.h"
#include "cli/progress.h"
#include "cli/sim_inputs.h"
#include "sim/access_log.h"
#include "sim/log_fit.h"
#include "sim/scenario_json.h"

namespace ratelab::cli {

namespace {

constexpr const char* kSynopsis =
    "fit ACCESS.log... -o SCENARIO.json [--policy P.json] [--top N] [--attacker-if RULE] "
    "[--format combined|common|csv|nginx|caddy|json] [--log-format 'STRING'] "
    "[--field ROLE=PATH]... [--reorder-window SECONDS] [--quiet]";

constexpr std::size_t kPrintedLines = 20;

// The policy the scenario names, as a path from the folder the scenario is written to.
std::string policyReference(const std::string& policy, const std::string& output) {
    namespace fs = std::filesystem;
    const fs::path from =
        output == "-" ? fs::current_path() : fs::absolute(fs::path(output)).parent_path();
    fs::path relative = fs::absolute(policy).lexically_normal().lexically_relative(from);
    return relative.empty() ? fs::absolute(policy).string() : relative.generic_string();
}

int fitLog(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.addPositionalArgument(
        "ACCESS.log",
        "The logs, oldest first (rotated: access.log.2.gz access.log.1 access.log); .gz is "
        "read as gzip, - is standard input.");
    const QCommandLineOption outputOption(
        {"o", "output"}, "Write the scenario here (- for stdout).", "SCENARIO.json");
    const QCommandLineOption policyOption(
        "policy",
        "Identify clients by this policy's key rules, as a replay under it would (trusted "
        "proxies, prefixes, credentials), and name it in the scenario. Default: the engine's "
        "default key (principal, then Authorization, then the address).",
        "P.json");
    const QCommandLineOption topOption(
        "top", "Clients fitted as actors of their own, the busiest first (default 10).", "N");
    const QCommandLineOption attackerOption(
        "attacker-if",
        "Class \"attacker\" for the clients this rule holds for, \"legit\" for the others "
        "(default: all legit). Terms, all of which must hold: rate>P99.9 (requests per second "
        "over the log, a number or a percentile of the clients'), requests>=N, status=401 "
        "ratio>0.5 (the share of the client's requests with that status; 4xx and lists such "
        "as 401,403 work), status=CODES count>N; operators > >= < <= =.",
        "RULE");
    const QCommandLineOption quietOption("quiet", "Print nothing on success but errors.");
    const LogInputOptions logOptions;
    parser.addOptions({outputOption, policyOption, topOption, attackerOption});
    logOptions.addTo(parser);
    parser.addOption(quietOption);
    if (!parseCommandLine(parser, arguments, "fit", kSynopsis, -1)) return kUsage;
    const bool quiet = parser.isSet(quietOption);
    if (!parser.isSet(outputOption)) return usageError("fit", "-o SCENARIO.json is required");
    const std::string output = parser.value(outputOption).toStdString();

    sim::FitOptions options;
    if (parser.isSet(topOption)) {
        bool ok = false;
        options.top = parser.value(topOption).toLongLong(&ok);
        if (!ok || options.top < 0 || options.top > 10'000) {
            return usageError("fit", "--top \"" + parser.value(topOption).toStdString() +
                                         "\": expected 0 to 10000");
        }
    }
    if (parser.isSet(attackerOption)) {
        const std::string text = parser.value(attackerOption).toStdString();
        std::string error;
        options.attackerIf = sim::ClassRule::parse(text, error);
        if (!options.attackerIf) {
            return usageError("fit", "--attacker-if '" + text + "': " + error);
        }
    }
    std::string inputError;
    std::optional<sim::ReplayInput> input = logOptions.read(parser, inputError);
    if (!input) return usageError("fit", inputError);

    PolicySet policies;
    if (parser.isSet(policyOption)) {
        const std::string path = parser.value(policyOption).toStdString();
        std::optional<PolicySet> loaded = loadPolicy(path, !quiet);
        if (!loaded) return kBadInput;
        policies = std::move(*loaded);
        options.policy = policyReference(path, output);
    } else {
        policies = sim::defaultFitPolicies();
    }

    sim::LogReading reading;
    std::shared_ptr<sim::RecordedTraffic> traffic;
    {
        ProgressBar progress(input->files.size() == 1
                                 ? input->files.front()
                                 : std::to_string(input->files.size()) + " logs");
        traffic = sim::loadAccessLog(*input, reading, [&](std::int64_t done, std::int64_t total) {
            progress.update(total > 0 ? static_cast<double>(done) / static_cast<double>(total)
                                      : 0.0);
            return true;
        });
    }
    if (!traffic) {
        if (reading.error) printDiagnostics({*reading.error});
        return kBadInput;
    }
    if (!quiet && !reading.detection.empty()) {
        std::fprintf(stderr, "%s: format %s\n", input->files.front().c_str(),
                     reading.detection.c_str());
    }
    printDiagnostics(sim::readingDiagnostics(reading, kPrintedLines), !quiet);
    const std::string where =
        input->files.size() == 1
            ? input->files.front()
            : input->files.front() + " and " + std::to_string(input->files.size() - 1) + " more";
    if (traffic->requests.empty()) {
        return badInput("fit", where + ": no request could be read from the log");
    }

    sim::FitResult fit = sim::fitScenario(traffic, policies, options);
    for (const std::string& warning : fit.warnings)
        std::fprintf(stderr, "ratelab-cli fit: warning: %s\n", warning.c_str());
    const std::string text = sim::scenarioJson(fit.scenario);
    // What is written must load as it would from the file: checked before it is written.
    const std::string name = output == "-" ? std::string("stdout") : output;
    sim::ScenarioLoadResult check = sim::parseScenarioText(text, name);
    if (!check.ok()) {
        printDiagnostics(check.diagnostics);
        return badInput("fit", where + ": the log does not fit in a scenario file");
    }
    std::string error;
    if (!writeTextFile(output, text, error)) return badInput("fit", error);
    if (!quiet && output != "-") {
        std::printf("%s: %" PRId64 " requests of %" PRId64
                    " clients over %.0f s -> %s (%zu "
                    "actors)\n",
                    where.c_str(), static_cast<std::int64_t>(traffic->requests.size()), fit.clients,
                    static_cast<double>(fit.scenario.duration) / 1e9, output.c_str(),
                    fit.scenario.actors.size());
        for (const sim::FitClass& c : fit.classes) {
            std::printf("  %-10s %8" PRId64 " clients %10" PRId64 " requests %4" PRId64 " actors\n",
                        c.name.c_str(), c.clients, c.requests, c.actors);
        }
    }
    return kSuccess;
}

}  // namespace

RATELAB_CLI_COMMAND({"fit", kSynopsis, "fit a scenario to access logs", &fitLog});

}  // namespace ratelab::cli
