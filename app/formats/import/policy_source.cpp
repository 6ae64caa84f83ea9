#include "formats/import/policy_source.h"

#include <filesystem>

namespace ratelab::formats {

std::optional<std::pair<ImportKind, std::string>> splitImportArgument(std::string_view argument) {
    const std::size_t colon = argument.find(':');
    if (colon == std::string_view::npos || colon + 1 == argument.size()) return std::nullopt;
    const std::optional<ImportKind> kind = parseImportKind(argument.substr(0, colon));
    if (!kind) return std::nullopt;
    return std::pair{*kind, std::string(argument.substr(colon + 1))};
}

PolicyLoadResult loadPolicySource(const std::string& argument, const PolicyCheckOptions& options) {
    const std::optional<std::pair<ImportKind, std::string>> import = splitImportArgument(argument);
    if (!import) return loadPolicyFile(argument, options);
    std::string path = import->second;
    ImportOptions importOptions;
    if (import->first == ImportKind::EnvoyRatelimit) {
        // "CONFIG+ROUTES": the RLS configuration and the route configuration with the actions,
        // unless the whole text names a file.
        std::error_code error;
        const std::size_t plus = path.rfind('+');
        if (plus != std::string::npos && plus > 0 && plus + 1 < path.size() &&
            !std::filesystem::exists(path, error)) {
            importOptions.envoyActions = path.substr(plus + 1);
            path.resize(plus);
        }
    }
    ImportResult imported = importPolicies(import->first, {path}, importOptions);
    PolicyLoadResult loaded;
    loaded.policies = std::move(imported.policies);
    loaded.unreadable = imported.unreadable;
    for (Diagnostic& d : imported.diagnostics) {
        // An import's problems are those of its reading (syntax) or of what it means (lint).
        loaded.levels.push_back(d.severity == Diagnostic::Severity::Error ? CheckLevel::Syntax
                                                                          : CheckLevel::Lint);
        loaded.diagnostics.push_back(std::move(d));
    }
    return loaded;
}

}  // namespace ratelab::formats
