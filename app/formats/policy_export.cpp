#include "formats/policy_export.h"

#include <algorithm>
#include <utility>

#include "formats/export/export_targets.h"

namespace ratelab::formats {

std::string_view exportTargetName(ExportTarget target) {
    switch (target) {
        case ExportTarget::Nginx:
            return "nginx";
        case ExportTarget::Envoy:
            return "envoy";
        case ExportTarget::Haproxy:
            return "haproxy";
        case ExportTarget::EnvoyRatelimit:
            return "envoy-ratelimit";
    }
    return "nginx";
}

std::optional<ExportTarget> parseExportTarget(std::string_view name) {
    for (ExportTarget t : kExportTargets) {
        if (exportTargetName(t) == name) return t;
    }
    return std::nullopt;
}

bool ExportResult::ok() const {
    return std::none_of(notes.begin(), notes.end(),
                        [](const ExportNote& n) { return n.kind == ExportNote::Kind::Refused; });
}

Diagnostic exportNoteDiagnostic(const ExportNote& note, std::string file, int line, int column) {
    return Diagnostic{note.kind == ExportNote::Kind::Refused ? Diagnostic::Severity::Error
                                                             : Diagnostic::Severity::Warning,
                      std::move(file),
                      line,
                      column,
                      note.pointer,
                      note.message};
}

ExportResult exportPolicySet(const PolicySet& policies, ExportTarget target) {
    switch (target) {
        case ExportTarget::Nginx:
            return exportNginx(policies);
        case ExportTarget::Envoy:
            return exportEnvoy(policies);
        case ExportTarget::Haproxy:
            return exportHaproxy(policies);
        case ExportTarget::EnvoyRatelimit:
            return exportEnvoyRatelimit(policies);
    }
    return {};
}

}  // namespace ratelab::formats
