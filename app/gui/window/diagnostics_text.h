#pragma once

// Diagnostics as the workbench's dialogs show them: one formatDiagnostic() line each
// ("FILE:LINE:COLUMN: error: message (at /pointer)").

#include <QString>

#include <vector>

#include "ratelab/diagnostic.h"

namespace ratelab::gui {

/// One line per diagnostic, in order, joined by newlines.
QString diagnosticsText(const std::vector<Diagnostic>& diagnostics);

}  // namespace ratelab::gui
