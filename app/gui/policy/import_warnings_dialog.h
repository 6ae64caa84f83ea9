#pragma once

// What an import carried over differently, one row per warning (where, what), and under the
// list the lines of the configuration around the selected warning, its line marked: the user
// reads each warning beside the directive it is about.

#include <QDialog>
#include <vector>

#include "ratelab/diagnostic.h"

class QPlainTextEdit;
class QTableWidget;

namespace ratelab::gui {

class ImportWarningsDialog final : public QDialog {
    Q_OBJECT

public:
    /// `kind` names the product ("nginx"); `warnings` are the import's diagnostics, each at
    /// FILE:LINE:COLUMN of a file the import read (line 0: the whole import).
    ImportWarningsDialog(const QString& kind, const std::vector<Diagnostic>& warnings,
                         QWidget* parent = nullptr);

    /// Selects row `row` and shows its lines (also what a click does).
    void showWarning(int row);
    /// The excerpt shown for the selected warning: up to two lines either side, each as
    /// "NNN| text", the warning's own line marked ">".
    QString excerpt() const;

private:
    std::vector<Diagnostic> warnings_;
    QTableWidget* table_;
    QPlainTextEdit* source_;
};

/// The lines of `file` around `line` (1-based), `context` either side, as "  NNN| text" with
/// the line itself marked "> NNN| text"; one sentence when the file cannot be read. Reads at
/// most the first 4 MiB of the file.
QString sourceExcerpt(const QString& file, int line, int context = 2);

}  // namespace ratelab::gui
