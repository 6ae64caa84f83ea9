#include "gui/policy/target_export.h"

#include <QDir>
#include <QFileInfo>
#include <QObject>
#include <QStringList>

#include <vector>

#include "gui/policy/policy_document.h"
#include "gui/window/diagnostics_text.h"
#include "gui/window/file_write.h"
#include "gui/window/resource_locator.h"
#include "gui/window/user_interaction.h"

namespace ratelab::gui {

namespace {

// How a target's configuration file is named and offered in the file dialog.
struct TargetFile {
    const char* suffix;
    const char* filter;
};

TargetFile targetFile(formats::ExportTarget target) {
    switch (target) {
        case formats::ExportTarget::Nginx:
            return {".nginx.conf", QT_TR_NOOP("nginx configuration (*.conf)")};
        case formats::ExportTarget::Envoy:
            return {".envoy.yaml", QT_TR_NOOP("Envoy configuration (*.yaml *.yml)")};
        case formats::ExportTarget::Haproxy:
            return {".haproxy.cfg", QT_TR_NOOP("HAProxy configuration (*.cfg)")};
        case formats::ExportTarget::EnvoyRatelimit:
            return {".ratelimit.yaml",
                    QT_TR_NOOP("Envoy rate limit service configuration (*.yaml *.yml)")};
    }
    return {".conf", QT_TR_NOOP("All files (*)")};
}

// Beside the policy file when it is on disk ("api.json" -> "api.nginx.conf"), else in the
// current folder.
QString suggestedPath(const PolicyDocument& document, formats::ExportTarget target) {
    const QString policy = document.path();
    const QDir dir = !policy.isEmpty() && !isEmbedded(policy) ? QFileInfo(policy).absoluteDir()
                                                              : QDir::current();
    const QString stem =
        policy.isEmpty() ? QStringLiteral("policy") : QFileInfo(policy).completeBaseName();
    return dir.filePath(stem + QString::fromLatin1(targetFile(target).suffix));
}

}  // namespace

QString exportTargetTitle(formats::ExportTarget target) {
    switch (target) {
        case formats::ExportTarget::Nginx:
            return QStringLiteral("nginx");
        case formats::ExportTarget::Envoy:
            return QStringLiteral("Envoy");
        case formats::ExportTarget::Haproxy:
            return QStringLiteral("HAProxy");
        case formats::ExportTarget::EnvoyRatelimit:
            return QStringLiteral("Envoy rate limit service");
    }
    return {};
}

TargetExportOutcome exportPolicyTo(const PolicyDocument& document, formats::ExportTarget target,
                                   UserInteraction& ui) {
    TargetExportOutcome out;
    const QString title = exportTargetTitle(target);
    const QString errorTitle = QObject::tr("Cannot export to %1").arg(title);
    if (document.policies().policies.empty()) {
        ui.showError(errorTitle,
                     QObject::tr("Open a policy file first: there is nothing to export."));
        out.message = QObject::tr("Nothing exported: no policy");
        return out;
    }
    if (document.hasErrors()) {
        std::vector<Diagnostic> errors;
        for (const Diagnostic& d : document.diagnostics()) {
            if (d.severity == Diagnostic::Severity::Error) errors.push_back(d);
        }
        ui.showError(errorTitle,
                     QObject::tr("The policy set has errors; nothing was exported.\n\n%1")
                         .arg(diagnosticsText(errors)));
        out.message = QObject::tr("Nothing exported: the policy set has errors");
        return out;
    }

    const formats::ExportResult result = formats::exportPolicySet(document.policies(), target);
    const std::string name = document.displayName().toStdString();
    std::vector<Diagnostic> refused;
    QStringList approximated;
    for (const formats::ExportNote& note : result.notes) {
        const Diagnostic d = formats::exportNoteDiagnostic(note, name);
        if (note.kind == formats::ExportNote::Kind::Refused) {
            refused.push_back(d);
        } else {
            approximated << QString::fromStdString(formatDiagnostic(d));
        }
    }
    if (!result.ok()) {
        ui.showError(errorTitle,
                     QObject::tr("%1 cannot express this policy set; nothing was exported.\n\n%2")
                         .arg(title, diagnosticsText(refused)));
        out.message = QObject::tr("Nothing exported: %1 cannot express this policy set").arg(title);
        return out;
    }
    if (!approximated.isEmpty() && !ui.confirmExport(title, approximated)) {
        out.message = QObject::tr("Export to %1 cancelled").arg(title);
        return out;
    }

    const QString path =
        ui.chooseSaveFile(QObject::tr("Export to %1").arg(title), suggestedPath(document, target),
                          QObject::tr(targetFile(target).filter));
    if (path.isEmpty()) {
        out.message = QObject::tr("Export to %1 cancelled").arg(title);
        return out;
    }
    QString error;
    if (!writeWholeFile(
            path, QByteArrayView(result.text.data(), static_cast<qsizetype>(result.text.size())),
            error)) {
        ui.showError(errorTitle, error);
        out.message = QObject::tr("Nothing exported: %1").arg(error);
        return out;
    }
    out.written = true;
    out.path = path;
    out.message = approximated.isEmpty()
                      ? QObject::tr("Exported %1 as %2 configuration")
                            .arg(QDir::toNativeSeparators(path), title)
                      : QObject::tr("Exported %1 as %2 configuration, %n part(s) approximated",
                                    nullptr, static_cast<int>(approximated.size()))
                            .arg(QDir::toNativeSeparators(path), title);
    return out;
}

}  // namespace ratelab::gui
