#include "gui/window/recent_files.h"

#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QSettings>

#include "gui/window/user_interaction.h"

namespace ratelab::gui {

namespace {

// The settings keys, one per kind, in Kind's order.
constexpr const char* kKeys[RecentFiles::kKindCount] = {"recent/policies", "recent/scenarios",
                                                        "recent/accessLogs"};
// Path -> [format, nginx log_format, json fields] of the listed access logs not detected.
constexpr const char* kLogFormatsKey = "recent/accessLogFormats";

QString headingOf(RecentFiles::Kind kind) {
    switch (kind) {
        case RecentFiles::Kind::Policy:
            return RecentFilesMenu::tr("Policies");
        case RecentFiles::Kind::Scenario:
            return RecentFilesMenu::tr("Scenarios");
        case RecentFiles::Kind::AccessLog:
            return RecentFilesMenu::tr("Access logs");
    }
    return {};
}

}  // namespace

RecentFiles::RecentFiles(QSettings* settings, QObject* parent)
    : QObject(parent), settings_(settings) {
    if (!settings_) return;
    for (int k = 0; k < kKindCount; ++k) {
        for (const QString& path : settings_->value(kKeys[k]).toStringList()) {
            if (!path.isEmpty() && !lists_[k].contains(path) && lists_[k].size() < kMaxRecent)
                lists_[k] << path;
        }
    }
    const QVariantMap formats = settings_->value(kLogFormatsKey).toMap();
    for (auto it = formats.begin(); it != formats.end(); ++it) {
        const QStringList parts = it.value().toStringList();
        if (parts.size() == 3 && lists_[index(Kind::AccessLog)].contains(it.key()))
            logFormats_.insert(it.key(), LogFormatChoice{parts[0], parts[1], parts[2]});
    }
}

void RecentFiles::add(Kind kind, const QString& path, const LogFormatChoice& format) {
    if (path.isEmpty() || path.startsWith(":/")) return;
    const QString absolute = QDir::cleanPath(QFileInfo(path).absoluteFilePath());
    QStringList& list = lists_[index(kind)];
    const bool isLog = kind == Kind::AccessLog;
    if (!list.isEmpty() && list.front() == absolute && (!isLog || logFormat(absolute) == format))
        return;
    list.removeAll(absolute);
    list.prepend(absolute);
    while (list.size() > kMaxRecent)
        logFormats_.remove(list.takeLast());
    if (isLog) {
        if (format == LogFormatChoice{}) {
            logFormats_.remove(absolute);
        } else {
            logFormats_.insert(absolute, format);
        }
    }
    save();
}

void RecentFiles::remove(Kind kind, const QString& path) {
    if (lists_[index(kind)].removeAll(path) > 0) {
        if (kind == Kind::AccessLog) logFormats_.remove(path);
        save();
    }
}

void RecentFiles::clear() {
    for (QStringList& list : lists_)
        list.clear();
    logFormats_.clear();
    save();
}

void RecentFiles::save() {
    if (settings_) {
        for (int k = 0; k < kKindCount; ++k)
            settings_->setValue(kKeys[k], lists_[k]);
        QVariantMap formats;
        for (auto it = logFormats_.begin(); it != logFormats_.end(); ++it) {
            formats.insert(it.key(), QStringList{it.value().format, it.value().nginxFormat,
                                                 it.value().jsonFields});
        }
        settings_->setValue(kLogFormatsKey, formats);
        settings_->sync();  // a crash later still leaves the lists
    }
    emit changed();
}

RecentFilesMenu::RecentFilesMenu(RecentFiles& files, UserInteraction& ui, Opener open,
                                 QWidget* parent)
    : QMenu(tr("Open &recent"), parent), files_(files), ui_(ui), open_(std::move(open)) {
    setObjectName("recentFilesMenu");
    setToolTipsVisible(true);
    // A fixed set of actions, shown or hidden: picking one changes the lists, and an action
    // must not be deleted while it is being triggered.
    for (int k = 0; k < RecentFiles::kKindCount; ++k) {
        const auto kind = static_cast<RecentFiles::Kind>(k);
        Section& section = sections_[static_cast<std::size_t>(k)];
        section.separator = addSeparator();
        section.heading = addAction(headingOf(kind));
        section.heading->setEnabled(false);
        for (int i = 0; i < RecentFiles::kMaxRecent; ++i) {
            QAction* item = addAction(QString());
            connect(item, &QAction::triggered, this, [this, kind, i] {
                const QStringList& paths = files_.files(kind);
                if (i < paths.size()) pick(kind, QString(paths[i]));
            });
            section.items.push_back(item);
        }
    }
    none_ = addAction(tr("No recent files"));
    none_->setEnabled(false);
    clearSeparator_ = addSeparator();
    clear_ = addAction(tr("&Clear recent files"), &files_, &RecentFiles::clear);
    clear_->setObjectName("clearRecentFiles");
    connect(&files_, &RecentFiles::changed, this, &RecentFilesMenu::rebuild);
    rebuild();
}

QStringList RecentFilesMenu::shownFiles(RecentFiles::Kind kind) const {
    QStringList shown;
    for (const QAction* item : sections_[static_cast<std::size_t>(kind)].items) {
        if (item->isVisible()) shown << item->data().toString();
    }
    return shown;
}

QAction* RecentFilesMenu::actionFor(RecentFiles::Kind kind, const QString& path) const {
    for (QAction* item : sections_[static_cast<std::size_t>(kind)].items) {
        if (item->isVisible() && item->data().toString() == path) return item;
    }
    return nullptr;
}

void RecentFilesMenu::rebuild() {
    bool any = false;
    for (int k = 0; k < RecentFiles::kKindCount; ++k) {
        const QStringList& paths = files_.files(static_cast<RecentFiles::Kind>(k));
        Section& section = sections_[static_cast<std::size_t>(k)];
        section.separator->setVisible(any && !paths.isEmpty());
        section.heading->setVisible(!paths.isEmpty());
        for (int i = 0; i < RecentFiles::kMaxRecent; ++i) {
            QAction* item = section.items[static_cast<std::size_t>(i)];
            const bool shown = i < paths.size();
            item->setVisible(shown);
            const QString path = shown ? paths[i] : QString();
            item->setText(QFileInfo(path).fileName());
            item->setData(path);
            item->setToolTip(QDir::toNativeSeparators(path));
            item->setStatusTip(QDir::toNativeSeparators(path));
        }
        any = any || !paths.isEmpty();
    }
    none_->setVisible(!any);
    clearSeparator_->setVisible(any);
    clear_->setVisible(any);
}

void RecentFilesMenu::pick(RecentFiles::Kind kind, const QString& path) {
    if (!QFileInfo::exists(path)) {
        files_.remove(kind, path);
        ui_.showError(tr("Cannot open a recent file"),
                      tr("%1 no longer exists. It was removed from the recent files.")
                          .arg(QDir::toNativeSeparators(path)));
        return;
    }
    open_(kind, path);
}

}  // namespace ratelab::gui
