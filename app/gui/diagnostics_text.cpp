#include "diagnostics_text.h"

#include <QStringList>

namespace ratelab::gui {

QString diagnosticsText(const std::vector<Diagnostic>& diagnostics) {
    QStringList lines;
    for (const Diagnostic& d : diagnostics)
        lines << QString::fromStdString(formatDiagnostic(d));
    return lines.join('\n');
}

}  // namespace ratelab::gui
