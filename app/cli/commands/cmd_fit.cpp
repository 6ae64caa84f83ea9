// ratelab-cli fit: a scenario fitted to recorded access logs (sim/fit/log_fit.h), read with the
// replay's options and keyed by a policy's rules, written as a scenario file that loads,
// validates and runs like any other.

#include <cinttypes>
#include <filesystem>

#include "cli/command.h"
#include "cli/inputs.h"
#include "cli/log_options.h"
#include "cli/outputs.h"
#include "cli/progress.h"
#include "ratelab/number_text.h"
#include "sim/log/recorded_traffic.h"
#include "sim/fit/log_fit.h"
#include "sim/scenario/scenario_writer.h"

namespace ratelab::cli {

namespace {

// The policy the scenario names, as a path from the folder the scenario is written to.
std::string policyReference(const std::string& policy, const std::string& output) {
    namespace fs = std::filesystem;
    const fs::path from =
        output == "-" ? fs::current_path() : fs::absolute(fs::path(output)).parent_path();
    fs::path relative = fs::absolute(policy).lexically_normal().lexically_relative(from);
    return relative.empty() ? fs::absolute(policy).string() : relative.generic_string();
}

// "12 / 14 (+16.7 %)": the replay's figure, the fitted run's, and how far apart.
std::string sideBySide(std::int64_t replayed, std::int64_t fitted) {
    std::string text = std::to_string(replayed) + " / " + std::to_string(fitted);
    if (replayed > 0) {
        const double off =
            100.0 * static_cast<double>(fitted - replayed) / static_cast<double>(replayed);
        text += " (" + std::string(off >= 0 ? "+" : "") + fixedText(off, 1) + " %)";
    }
    return text;
}

// The checks, one table per policy: per class, the log replayed and the fitted scenario run.
void printChecks(std::FILE* out, const sim::FitResult& fit) {
    for (const sim::FitCheck& check : fit.checks) {
        std::fprintf(out, "under %s, replayed log / fitted scenario:\n", check.name.c_str());
        std::fprintf(out, "  %-10s %-24s %-24s %-20s %s\n", "class", "requests", "throttled",
                     "clients", "throttled clients");
        for (std::size_t c = 0; c < check.replayed.size(); ++c) {
            const sim::CheckFigures& r = check.replayed[c];
            const sim::CheckFigures& f = check.fitted[c];
            std::fprintf(out, "  %-10s %-24s %-24s %-20s %s\n", fit.classes[c].name.c_str(),
                         sideBySide(r.requests, f.requests).c_str(),
                         sideBySide(r.throttled, f.throttled).c_str(),
                         (std::to_string(r.clients) + " / " + std::to_string(f.clients)).c_str(),
                         sideBySide(r.throttledClients, f.throttledClients).c_str());
        }
    }
}

int fitLog(const Arguments& args) {
    const bool quiet = args.isSet("quiet");
    const std::string output = args.value("output");

    sim::FitOptions options;
    if (!args.wholeNumber("top", 0, 10'000, options.top)) return kUsage;
    if (!args.number("scale", 0.001, 1000, options.scale)) return kUsage;
    double sessionGap = static_cast<double>(options.sessionGap) / 1e9;
    if (!args.number("session-gap", 0.001, 3600, sessionGap, "seconds")) return kUsage;
    options.sessionGap = static_cast<Nanos>(sessionGap * 1e9);
    if (args.isSet("model")) {
        const std::string model = args.value("model");
        if (model == "session") {
            options.model = sim::FitModel::Session;
        } else if (model == "empirical") {
            options.model = sim::FitModel::Empirical;
        } else {
            return fail(kUsage, "--model \"" + model + "\": expected session or empirical");
        }
    }
    if (args.isSet("attacker-if")) {
        const std::string text = args.value("attacker-if");
        std::string error;
        options.attackerIf = sim::ClassRule::parse(text, error);
        if (!options.attackerIf) return fail(kUsage, "--attacker-if '" + text + "': " + error);
    }
    Result<sim::ReplayInput> input = readLogInput(args);
    if (!input) return input.failure();

    PolicySet policies;
    if (args.isSet("policy")) {
        const std::string path = args.value("policy");
        Result<PolicySet> loaded = loadPolicy(path, !quiet);
        if (!loaded) return loaded.failure();
        policies = std::move(*loaded);
        options.policy = policyReference(path, output);
    } else {
        policies = sim::defaultFitPolicies();
    }

    for (const std::string& path : args.values("check-policy")) {
        Result<PolicySet> loaded = loadPolicy(path, !quiet);
        if (!loaded) return loaded.failure();
        std::string name = std::filesystem::path(path).filename().string();
        if (path == "-") name = "stdin";
        options.checks.push_back({std::move(name), std::move(*loaded)});
    }

    const std::string where = logInputName(*input);
    sim::LogReading reading;
    std::optional<sim::FitResult> fitted;
    {
        ProgressBar progress(where);
        fitted = sim::fitScenario(
            *input, policies, options, reading, [&](std::int64_t done, std::int64_t total) {
                progress.update(total > 0 ? static_cast<double>(done) / static_cast<double>(total)
                                          : 0.0);
                return true;
            });
    }
    printLogDetection(*input, reading, !quiet);
    if (ExitCode e = finishLogReading(*input, reading, !quiet)) return e;
    if (!fitted) return kInvalidInput;  // unreachable: this progress never stops a fit
    const sim::FitResult& fit = *fitted;
    for (const std::string& warning : fit.warnings)
        std::fprintf(stderr, "ratelab-cli fit: warning: %s\n", warning.c_str());
    const std::string text = sim::scenarioJson(fit.scenario);
    // What is written must load as it would from the file: checked before it is written.
    const std::string name = output == "-" ? std::string("stdout") : output;
    sim::ScenarioLoadResult check = sim::parseScenarioText(text, name);
    if (!check.ok()) {
        printDiagnostics(check.diagnostics);
        return fail(kInvalidInput, where + ": the log does not fit in a scenario file");
    }
    if (ExitCode e = writeOutput(output, text)) return e;
    // Asked for by name, the checks are printed even with --quiet.
    printChecks(args.stdoutTaken() ? stderr : stdout, fit);
    if (!quiet && !args.stdoutTaken()) {
        std::printf("%s: %" PRId64 " requests of %" PRId64
                    " clients over %s s -> %s (%zu actors)\n",
                    where.c_str(), fit.requests, fit.clients,
                    fixedText(static_cast<double>(fit.scenario.duration) / 1e9, 0).c_str(),
                    output.c_str(), fit.scenario.actors.size());
        for (const sim::FitClass& c : fit.classes) {
            std::printf("  %-10s %8" PRId64 " clients %10" PRId64 " requests %4" PRId64 " actors\n",
                        c.name.c_str(), c.clients, c.requests, c.actors);
        }
    }
    return kSuccess;
}

Command fitCommand() {
    Command c;
    c.name = "fit";
    c.summary = "fit a scenario to access logs";
    c.description =
        "Writes a scenario fitted to recorded access logs: the busiest clients as actors of "
        "their own, the rest as crowds per class whose instances are clients of their own, over "
        "the logs' duration. Each client's requests are split into sessions where a gap is "
        "longer than --session-gap, and each actor draws its sessions, their sizes and spans "
        "and the idle gaps between them from what its clients showed, so bursts stay bursts. "
        "Clients are keyed as a replay under --policy keys them; credentials in the logs are "
        "replaced by synthetic ones. What is written is loaded back before it is written; "
        "--check-policy then replays the logs and runs the scenario under other policies and "
        "prints the two side by side.";
    c.positionals = {{"ACCESS.log",
                      "The logs, oldest first (rotated: access.log.2.gz access.log.1 "
                      "access.log); .gz is read as gzip.",
                      Option::Kind::Input, true}};
    c.options = {
        Option::output("output", "SCENARIO.json", "Write the scenario here.")
            .withShort('o')
            .asRequired(),
        Option::input("policy", "P.json",
                      "Identify clients by this policy's key rules, as a replay under it would "
                      "(trusted proxies, prefixes, credentials), and name it in the scenario. "
                      "Default: the engine's default key (principal, then Authorization, then "
                      "the address)."),
        Option::value("top", "N",
                      "Clients fitted as actors of their own, the busiest first (default 10)."),
        Option::input("check-policy", "P.json",
                      "After fitting, replay the logs and run the fitted scenario under this "
                      "policy, and print per class the requests, throttled requests, clients and "
                      "throttled clients of both (keys as this policy derives them).")
            .asRepeated(),
        Option::value("scale", "N",
                      "The crowds' instances are N times the clients (0.001 to 1000, default 1): "
                      "the same clients' shapes, N times as many. Single clients stay single."),
        Option::value("session-gap", "SECONDS",
                      "Requests further apart than this start a new session (default " +
                          numberText(static_cast<double>(sim::FitOptions{}.sessionGap) / 1e9) +
                          ")."),
        Option::value("model", "MODEL",
                      "session (default): sessions with their sizes, spans and idle gaps; or "
                      "empirical: every gap drawn alike, which turns bursts into runs of short "
                      "gaps."),
        Option::value("attacker-if", "RULE",
                      "Class \"attacker\" for the clients this rule holds for, \"legit\" for the "
                      "others (default: all legit). Terms, all of which must hold: rate>P99.9 "
                      "(requests per second over the log, a number or a percentile of the "
                      "clients'), requests>=N, status=401 ratio>0.5 (the share of the client's "
                      "requests with that status; 4xx and lists such as 401,403 work), "
                      "status=CODES count>N; operators > >= < <= =."),
    };
    for (Option& o : logInputOptions())
        c.options.push_back(std::move(o));
    c.options.push_back(Option::quiet());
    c.run = &fitLog;
    return c;
}

}  // namespace

RATELAB_CLI_COMMAND(fitCommand());

}  // namespace ratelab::cli
