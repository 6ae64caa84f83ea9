#include "gui/window/user_interaction.h"

#include <QComboBox>
#include <QDesktopServices>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QInputDialog>
#include <QLineEdit>
#include <QMessageBox>
#include <QUrl>

#include "gui/policy/import_warnings_dialog.h"

namespace ratelab::gui {

void DialogInteraction::showError(const QString& title, const QString& text) {
    QMessageBox box(QMessageBox::Critical, title, title, QMessageBox::Ok, parent_);
    box.setObjectName("errorDialog");
    // Diagnostics read best in a fixed font, one per line; the full text stays selectable.
    box.setInformativeText(
        QStringLiteral("<pre style='font-family:monospace'>%1</pre>").arg(text.toHtmlEscaped()));
    box.setTextInteractionFlags(Qt::TextSelectableByMouse);
    box.exec();
}

void DialogInteraction::showInformation(const QString& title, const QString& text) {
    QMessageBox box(QMessageBox::Information, title, text, QMessageBox::Ok, parent_);
    box.setObjectName("informationDialog");
    box.setTextFormat(Qt::PlainText);
    box.setTextInteractionFlags(Qt::TextSelectableByMouse);
    box.exec();
}

bool DialogInteraction::openExternally(const QUrl& url) {
    return QDesktopServices::openUrl(url);
}

UserInteraction::UnsavedChoice DialogInteraction::askUnsavedChanges(const QString& documentName) {
    QMessageBox box(QMessageBox::Warning, QObject::tr("Unsaved changes"),
                    QObject::tr("%1 has unsaved changes.").arg(documentName),
                    QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, parent_);
    box.setInformativeText(QObject::tr("Save them first, or discard them?"));
    box.setDefaultButton(QMessageBox::Save);
    switch (box.exec()) {
        case QMessageBox::Save:
            return UnsavedChoice::Save;
        case QMessageBox::Discard:
            return UnsavedChoice::Discard;
        default:
            return UnsavedChoice::Cancel;
    }
}

QString DialogInteraction::chooseOpenFile(const QString& title, const QString& directory,
                                          const QString& filter) {
    return QFileDialog::getOpenFileName(parent_, title, directory, filter);
}

QString DialogInteraction::chooseSaveFile(const QString& title, const QString& suggested,
                                          const QString& filter) {
    return QFileDialog::getSaveFileName(parent_, title, suggested, filter);
}

bool DialogInteraction::confirmExport(const QString& target, const QStringList& notes) {
    QMessageBox box(QMessageBox::Warning, QObject::tr("Export to %1").arg(target),
                    QObject::tr("%1 cannot express everything in this policy set.").arg(target),
                    QMessageBox::Save | QMessageBox::Cancel, parent_);
    box.setObjectName("confirmExportDialog");
    // One paragraph per note: they are sentences, long ones, and wrap.
    QString list;
    for (const QString& note : notes)
        list += QStringLiteral("<li>%1</li>").arg(note.toHtmlEscaped());
    box.setInformativeText(
        QStringLiteral("<p>%1</p><ul>%2</ul>")
            .arg(QObject::tr("Save it anyway? These parts are carried over differently (the "
                             "export says so in its comments too):")
                     .toHtmlEscaped(),
                 list));
    box.setTextInteractionFlags(Qt::TextSelectableByMouse);
    box.setDefaultButton(QMessageBox::Save);
    return box.exec() == QMessageBox::Save;
}

bool DialogInteraction::confirmFit(const QString& log, const QStringList& rows) {
    QMessageBox box(QMessageBox::Question, QObject::tr("Fit a scenario to %1").arg(log),
                    QObject::tr("The log replayed and the fitted scenario run under the policies "
                                "in use (replayed / fitted):"),
                    QMessageBox::Save | QMessageBox::Cancel, parent_);
    box.setObjectName("confirmFitDialog");
    QString table;
    for (const QString& row : rows)
        table += QStringLiteral("<li>%1</li>").arg(row.toHtmlEscaped());
    box.setInformativeText(
        QStringLiteral("<ul>%1</ul><p>%2</p>")
            .arg(table, QObject::tr("Save the scenario and open it?").toHtmlEscaped()));
    box.setTextInteractionFlags(Qt::TextSelectableByMouse);
    box.setDefaultButton(QMessageBox::Save);
    return box.exec() == QMessageBox::Save;
}

bool DialogInteraction::chooseImportKind(const QString& path, const QStringList& kinds,
                                         int& chosen) {
    bool ok = false;
    const QString label =
        chosen >= 0
            ? QObject::tr("%1 reads as a %2 configuration; import it as:")
                  .arg(QFileInfo(path).fileName(), kinds[chosen])
            : QObject::tr("Which product's configuration is %1?").arg(QFileInfo(path).fileName());
    const QString kind = QInputDialog::getItem(parent_, QObject::tr("Import limits"), label, kinds,
                                               std::max(chosen, 0), false, &ok);
    if (!ok) return false;
    chosen = static_cast<int>(kinds.indexOf(kind));
    return chosen >= 0;
}

void DialogInteraction::showImportWarnings(const QString& kind,
                                           const std::vector<Diagnostic>& warnings) {
    ImportWarningsDialog dialog(kind, warnings, parent_);
    dialog.exec();
}

bool DialogInteraction::chooseLogFormat(const QString& path, LogFormatChoice& choice) {
    QDialog dialog(parent_);
    dialog.setObjectName("logFormatDialog");
    dialog.setWindowTitle(QObject::tr("How %1 is written").arg(QFileInfo(path).fileName()));
    auto* form = new QFormLayout(&dialog);
    auto* format = new QComboBox(&dialog);
    format->addItem(QObject::tr("detect from the first lines"), QString());
    for (sim::LogFormat f : sim::allLogFormats()) {
        const QString name = QString::fromStdString(std::string(sim::logFormatName(f)));
        format->addItem(name, name);
    }
    format->setCurrentIndex(std::max(0, format->findData(choice.format)));
    auto* nginx = new QLineEdit(choice.nginxFormat, &dialog);
    nginx->setPlaceholderText(QString::fromStdString(std::string(sim::kNginxMainFormat)));
    nginx->setMinimumWidth(nginx->fontMetrics().averageCharWidth() * 80);
    auto* fields = new QLineEdit(choice.jsonFields, &dialog);
    fields->setPlaceholderText("client=request.remote_ip time=ts method=request.method");
    form->addRow(QObject::tr("Format"), format);
    form->addRow(QObject::tr("nginx log_format"), nginx);
    form->addRow(QObject::tr("JSON fields (ROLE=PATH ...)"), fields);
    const auto follow = [format, nginx, fields] {
        nginx->setEnabled(format->currentData().toString() == "nginx");
        fields->setEnabled(format->currentData().toString() == "json");
    };
    QObject::connect(format, &QComboBox::currentIndexChanged, &dialog, follow);
    follow();
    auto* buttons =
        new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel, &dialog);
    QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    form->addRow(buttons);
    if (dialog.exec() != QDialog::Accepted) return false;
    choice.format = format->currentData().toString();
    choice.nginxFormat = nginx->text();
    choice.jsonFields = fields->text();
    return true;
}

}  // namespace ratelab::gui
