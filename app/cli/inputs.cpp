#include "cli/inputs.h"

#include <cstdio>
#include <limits>

#include "formats/import/policy_source.h"
#include "io/text_file.h"
#include "json/json_document.h"

namespace ratelab::cli {

namespace {

// Standard input read whole, refused past the JSON layer's own size limit. Nullopt with the
// reason appended to `diagnostics`.
std::optional<std::string> readStdin(std::vector<Diagnostic>& diagnostics) {
    std::string error;
    std::optional<std::string> text = io::readAll(stdin, json::Limits{}.maxDocumentBytes, &error);
    if (!text) {
        diagnostics.push_back(Diagnostic{Diagnostic::Severity::Error, kStdinName, 0, 0, "", error});
    }
    return text;
}

}  // namespace

bool printDiagnostics(const std::vector<Diagnostic>& diagnostics, bool warnings) {
    bool errors = false;
    for (const Diagnostic& d : diagnostics) {
        const bool error = d.severity == Diagnostic::Severity::Error;
        errors = errors || error;
        if (error || warnings) std::fprintf(stderr, "%s\n", formatDiagnostic(d).c_str());
    }
    return errors;
}

PolicyLoadResult readPolicyArgument(const std::string& path, const PolicyCheckOptions& options) {
    if (path != "-") return formats::loadPolicySource(path, options);
    PolicyLoadResult failed;
    std::optional<std::string> text = readStdin(failed.diagnostics);
    if (!text) {
        failed.unreadable = true;
        failed.levels.push_back(CheckLevel::Syntax);
        return failed;
    }
    return parsePolicyText(*text, kStdinName, options);
}

ExitCode exitCodeOf(const PolicyLoadResult& loaded) {
    if (loaded.ok()) return kSuccess;
    return loaded.unreadable ? kIoError : kInvalidInput;
}

Result<PolicySet> loadPolicy(const std::string& path, bool warnings) {
    PolicyLoadResult loaded = readPolicyArgument(path);
    printDiagnostics(loaded.diagnostics, warnings);
    if (!loaded.ok()) return exitCodeOf(loaded);
    return std::move(*loaded.policies);
}

Result<sim::Scenario> loadScenario(const std::string& path, bool warnings) {
    sim::ScenarioLoadResult loaded;
    if (path == "-") {
        std::optional<std::string> text = readStdin(loaded.diagnostics);
        if (text) {
            loaded = sim::parseScenarioText(*text, kStdinName);
        } else {
            loaded.unreadable = true;
        }
    } else {
        loaded = sim::loadScenarioFile(path);
    }
    printDiagnostics(loaded.diagnostics, warnings);
    if (!loaded.ok()) return loaded.unreadable ? kIoError : kInvalidInput;
    return std::move(*loaded.scenario);
}

Result<PolicySet> loadPolicyFor(const sim::Scenario& scenario, const std::string& policyPath,
                                bool warnings) {
    PolicyLoadResult loaded;
    if (!policyPath.empty()) {
        loaded = readPolicyArgument(policyPath);
    } else if (!scenario.policyPath.empty()) {
        loaded = sim::loadScenarioPolicy(scenario);
    } else {
        return fail(kUsage, scenario.file + ": the scenario names no policy; pass --policy P.json");
    }
    printDiagnostics(loaded.diagnostics, warnings);
    if (!loaded.ok()) return exitCodeOf(loaded);
    if (printDiagnostics(sim::checkScenarioAgainstPolicy(scenario, *loaded.policies))) {
        return kInvalidInput;
    }
    return std::move(*loaded.policies);
}

}  // namespace ratelab::cli
