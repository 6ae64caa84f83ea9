#include "gui/window/diagnostics_text.h"

namespace ratelab::gui {

QString diagnosticsText(const std::vector<Diagnostic>& diagnostics) {
    QString text = QString::fromStdString(formatDiagnostics(diagnostics));
    if (text.endsWith('\n')) text.chop(1);
    return text;
}

}  // namespace ratelab::gui
