#pragma once

// Maps one file's YAML tree to the configuration (rls_config.h), reporting every problem at
// FILE:LINE:COLUMN. Private to this folder.

#include <string>
#include <string_view>
#include <vector>

#include "formats/envoy/rls_config.h"
#include "formats/envoy/yaml_tree.h"
#include "ratelab/diagnostic.h"

namespace ratelab::formats::envoy {

/// Collects one file's diagnostics.
class RlsDiagnostics {
public:
    RlsDiagnostics(std::string file, std::vector<Diagnostic>& out)
        : file_(std::move(file)), out_(out) {}
    void error(YamlMark at, std::string pointer, std::string message) {
        add(Diagnostic::Severity::Error, at, std::move(pointer), std::move(message));
    }
    void warning(YamlMark at, std::string pointer, std::string message) {
        add(Diagnostic::Severity::Warning, at, std::move(pointer), std::move(message));
    }
    const std::string& file() const { return file_; }

private:
    void add(Diagnostic::Severity severity, YamlMark at, std::string pointer, std::string message) {
        Diagnostic d;
        d.severity = severity;
        d.file = file_;
        d.line = at.line;
        d.column = at.column;
        d.pointer = std::move(pointer);
        d.message = std::move(message);
        out_.push_back(std::move(d));
    }
    std::string file_;
    std::vector<Diagnostic>& out_;
};

/// Reads `source` into `config` (its domain added, or merged into one of the same name under
/// options.mergeDomains), appending its diagnostics to `out`. A file with errors may leave
/// part of its content in `config`; the caller drops the configuration then.
void readRlsFile(const RlsSource& source, const RlsLoadOptions& options, RlsConfig& config,
                 std::vector<Diagnostic>& out);

/// Reads a `ratelab:` block (rls_ratelab_block.cpp) into spec.policy, whose numbers default to
/// the spec's unit and requests_per_unit. REQUIRES: block.isMap().
void readRatelabBlock(const YamlNode& block, const std::string& pointer, RateLimitSpec& spec,
                      RlsDiagnostics& sink);

/// The ratelab policy a limit without a `ratelab:` block runs as: the original's window, fixed,
/// aligned on the Unix epoch, `requestsPerUnit` per unit.
Policy calendarWindowPolicy(RateUnit unit, std::uint32_t requestsPerUnit);

}  // namespace ratelab::formats::envoy
