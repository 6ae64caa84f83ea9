#include "gui/window/help_menu.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QMenu>
#include <QMenuBar>
#include <QUrl>

#include "gui/window/resource_locator.h"
#include "gui/window/user_interaction.h"

namespace ratelab::gui {

namespace {

// `relative` in a data root on disk; the embedded copy holds no documentation.
QString onDisk(const QString& relative) {
    const QString path = findDataFile(relative);
    return path.isEmpty() || path.startsWith(":/") ? QString() : QDir::cleanPath(path);
}

}  // namespace

QString readmeFile() {
    return onDisk("README.md");
}

QString docsFolder() {
    const QString path = onDisk("docs");
    return QFileInfo(path).isDir() ? path : QString();
}

QString aboutText() {
    QStringList lines;
    lines << QObject::tr("ratelab %1").arg(QCoreApplication::applicationVersion())
          << QObject::tr(
                 "The workbench of the ratelab rate limiter: tune a policy while an attack plays "
                 "against the production engine, compare policies, map the trade-off between "
                 "throttled users and admitted attackers, and export what works.")
          << QString()
          << QObject::tr("Qt %1 (built with %2)")
                 .arg(QString::fromLatin1(qVersion()), QStringLiteral(QT_VERSION_STR))
          << QString();
    const QString readme = readmeFile();
    const QString docs = docsFolder();
    if (readme.isEmpty() && docs.isEmpty()) {
        lines << QObject::tr(
            "Documentation: README.md and docs/ come with the source tree and are installed "
            "in share/ratelab/; neither was found beside this executable.");
    } else {
        lines << QObject::tr("Documentation:");
        if (!readme.isEmpty())
            lines << QStringLiteral("  %1").arg(QDir::toNativeSeparators(readme));
        if (!docs.isEmpty()) lines << QStringLiteral("  %1").arg(QDir::toNativeSeparators(docs));
    }
    return lines.join('\n');
}

QMenu* addHelpMenu(QMenuBar& bar, UserInteraction& ui) {
    QMenu* help = bar.addMenu(QObject::tr("&Help"));
    help->setObjectName("helpMenu");
    QAction* docs = help->addAction(QObject::tr("&Documentation"), &bar, [&ui] {
        const QString folder = docsFolder();
        if (folder.isEmpty()) {
            ui.showError(
                QObject::tr("No documentation found"),
                QObject::tr("README.md and docs/ come with the source tree and are installed in "
                            "share/ratelab/; neither was found beside this executable (looked "
                            "in: %1).")
                    .arg(dataRoots().join(", ")));
            return;
        }
        if (!ui.openExternally(QUrl::fromLocalFile(folder))) {
            ui.showError(QObject::tr("Cannot open the documentation"),
                         QObject::tr("No application on this desktop opens %1.")
                             .arg(QDir::toNativeSeparators(folder)));
        }
    });
    docs->setObjectName("documentationAction");
    docs->setShortcut(QKeySequence::HelpContents);
    QAction* about = help->addAction(QObject::tr("&About ratelab"), &bar, [&ui] {
        ui.showInformation(QObject::tr("About ratelab"), aboutText());
    });
    about->setObjectName("aboutAction");
    about->setMenuRole(QAction::AboutRole);
    return help;
}

}  // namespace ratelab::gui
