#include "ratelab/diagnostic.h"

#include <algorithm>

namespace ratelab {

std::string formatDiagnostic(const Diagnostic& d) {
    std::string out = d.file;
    if (d.line > 0) {
        out += ":" + std::to_string(d.line) + ":" + std::to_string(d.column);
    }
    out += d.severity == Diagnostic::Severity::Error ? ": error: " : ": warning: ";
    out += d.message;
    if (!d.pointer.empty()) out += " (at " + d.pointer + ")";
    return out;
}

std::string formatDiagnostics(const std::vector<Diagnostic>& diagnostics) {
    std::string out;
    for (const Diagnostic& d : diagnostics) out += formatDiagnostic(d) + "\n";
    return out;
}

bool hasErrors(const std::vector<Diagnostic>& diagnostics) {
    return std::any_of(diagnostics.begin(), diagnostics.end(), [](const Diagnostic& d) {
        return d.severity == Diagnostic::Severity::Error;
    });
}

}  // namespace ratelab
