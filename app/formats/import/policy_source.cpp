#include "formats/import/policy_source.h"

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
    ImportResult imported = importPolicies(import->first, {import->second});
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
