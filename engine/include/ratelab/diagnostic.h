#pragma once

// How the engine's public API reports errors, everywhere:
//   - Checking an input file or a policy set reports every problem found, each a Diagnostic
//     pinned to FILE:LINE:COLUMN and a JSON pointer (policy_file.h).
//   - Anything else that can fail (makeStore, makeRedisStore, parseRedisUrl, IpAddress::parse,
//     parseAlgorithm, ...) returns an empty value, nullptr or nullopt, and, when it takes a
//     `std::string* error` that is not null, writes one sentence saying what is wrong there.
//   - The request path never fails that way: a store call answers with ConsumeResult::status
//     and ::error, a decision with a Verdict. Nothing in the engine throws.

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
/// Every diagnostic formatted as above, each on its own line ending in "\n".
std::string formatDiagnostics(const std::vector<Diagnostic>& diagnostics);

bool hasErrors(const std::vector<Diagnostic>& diagnostics);

}  // namespace ratelab
