#pragma once

// File > Export to: the edited policies as nginx, Envoy or HAProxy configuration, made by the
// engine's exporters (formats/policy_export.h, as `ratelab-cli export` makes it). What the
// target carries over differently is put to the user before anything is written; what it
// cannot express at all is shown as an error and nothing is written.

#include <QString>

#include "formats/policy_export.h"

namespace ratelab::gui {

class PolicyDocument;
class UserInteraction;

/// "nginx", "Envoy", "HAProxy": the target as menus and dialogs name it.
QString exportTargetTitle(formats::ExportTarget target);

struct TargetExportOutcome {
    bool written = false;
    QString path;     ///< the file written; empty when nothing was
    QString message;  ///< one line for the status bar
};

/// Exports `document`'s policies for `target` and writes them where the user chooses, asking
/// and telling through `ui`, in this order: a document with errors is refused; a target that
/// refuses any part shows its reasons; approximations are confirmed (confirmExport) or the
/// export is cancelled; then the file dialog and the write (all or nothing). The export is
/// text generation and the file small: this returns promptly. GUI thread.
TargetExportOutcome exportPolicyTo(const PolicyDocument& document, formats::ExportTarget target,
                                   UserInteraction& ui);

}  // namespace ratelab::gui
