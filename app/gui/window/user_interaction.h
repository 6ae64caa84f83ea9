#pragma once

// Everything the workbench asks or tells the user through a dialog, behind one interface, so
// tests replace the dialogs with a recorder and never block on a modal window.

#include <QString>
#include <QStringList>
#include <vector>

#include "gui/session/log_format_choice.h"
#include "ratelab/diagnostic.h"

class QUrl;
class QWidget;

namespace ratelab::gui {

class UserInteraction {
public:
    enum class UnsavedChoice { Save, Discard, Cancel };

    virtual ~UserInteraction() = default;

    /// An error the user must see, e.g. a file's diagnostics ("FILE:LINE:COLUMN: error: ...").
    virtual void showError(const QString& title, const QString& text) = 0;
    /// Something to read that is not a problem (About). `text` is plain text.
    virtual void showInformation(const QString& title, const QString& text) = 0;
    /// Hands `url` (a folder or a file) to the desktop's own application for it, e.g. the file
    /// manager. False when nothing could open it.
    virtual bool openExternally(const QUrl& url) = 0;
    /// What to do with unsaved edits of `documentName` before they would be replaced.
    virtual UnsavedChoice askUnsavedChanges(const QString& documentName) = 0;
    /// A file to open or save; empty when the user cancelled.
    virtual QString chooseOpenFile(const QString& title, const QString& directory,
                                   const QString& filter) = 0;
    virtual QString chooseSaveFile(const QString& title, const QString& suggested,
                                   const QString& filter) = 0;
    /// Whether to write an export to `target` ("nginx") that carries over part of the policies
    /// differently: `notes` says what and how, one diagnostic line each. True to write it.
    virtual bool confirmExport(const QString& target, const QStringList& notes) = 0;
    /// How the access log at `path` is written. `choice` holds the previous answer on entry and
    /// the new one on return; false when the user cancelled.
    virtual bool chooseLogFormat(const QString& path, LogFormatChoice& choice) = 0;
    /// Whether to keep a scenario fitted to `log`, seeing how faithful it is: `rows` compare,
    /// per class, the log replayed and the fitted scenario run under the policies in use (one
    /// line each, "legit: throttled 94 / 98, ..."). True to write and open it.
    virtual bool confirmFit(const QString& log, const QStringList& rows) = 0;
    /// Which product's configuration the file at `path` is: one of `kinds` ("nginx", ...).
    /// `chosen` holds the detected index on entry (-1: none detected) and the choice on return;
    /// false when the user cancelled.
    virtual bool chooseImportKind(const QString& path, const QStringList& kinds, int& chosen) = 0;
    /// What an import from `kind` ("nginx") carried over differently: `warnings`, each at
    /// FILE:LINE:COLUMN of a file it read, listed beside the lines they are about.
    virtual void showImportWarnings(const QString& kind,
                                    const std::vector<Diagnostic>& warnings) = 0;
};

/// The real thing: QMessageBox, QFileDialog and QDesktopServices, parented to `parent` (may be
/// set later).
class DialogInteraction final : public UserInteraction {
public:
    explicit DialogInteraction(QWidget* parent = nullptr) : parent_(parent) {}
    void setParent(QWidget* parent) { parent_ = parent; }

    void showError(const QString& title, const QString& text) override;
    void showInformation(const QString& title, const QString& text) override;
    bool openExternally(const QUrl& url) override;
    UnsavedChoice askUnsavedChanges(const QString& documentName) override;
    QString chooseOpenFile(const QString& title, const QString& directory,
                           const QString& filter) override;
    QString chooseSaveFile(const QString& title, const QString& suggested,
                           const QString& filter) override;
    bool confirmExport(const QString& target, const QStringList& notes) override;
    bool chooseLogFormat(const QString& path, LogFormatChoice& choice) override;
    bool confirmFit(const QString& log, const QStringList& rows) override;
    bool chooseImportKind(const QString& path, const QStringList& kinds, int& chosen) override;
    void showImportWarnings(const QString& kind, const std::vector<Diagnostic>& warnings) override;

private:
    QWidget* parent_;
};

}  // namespace ratelab::gui
