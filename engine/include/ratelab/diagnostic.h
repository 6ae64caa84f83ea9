#pragma once

#include <string>
#include <vector>

namespace ratelab {

/// One problem found in an input file, pinned to where it is.
struct Diagnostic {
    enum class Severity { Error, Warning };
    Severity severity = Severity::Error;
    std::string file;
    int line = 0;         ///< 1-based; 0 when the problem has no position (an unreadable file)
    int column = 0;       ///< 1-based, in characters
    std::string pointer;  ///< JSON pointer of the value, e.g. "/policies/0/capacity"; may be empty
    std::string message;
};

/// "FILE:LINE:COLUMN: error: message (at /json/pointer)".
std::string formatDiagnostic(const Diagnostic& diagnostic);

bool hasErrors(const std::vector<Diagnostic>& diagnostics);

}  // namespace ratelab
