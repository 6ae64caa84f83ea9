#pragma once

// The files the user opened from the window, most recent first: policies, scenarios and access
// logs, at most kMaxRecent of each, remembered between launches in QSettings. File > Open
// recent lists them; a file that has gone since is dropped when picked, with a message saying
// so. An access log keeps how it was read (its format, as the user gave it), so that it opens
// again the same way.

#include <QHash>
#include <QMenu>
#include <QObject>
#include <QString>
#include <QStringList>

#include <array>
#include <functional>
#include <vector>

#include "gui/session/log_format_choice.h"

class QSettings;

namespace ratelab::gui {

class UserInteraction;

/// GUI thread only.
class RecentFiles : public QObject {
    Q_OBJECT

public:
    enum class Kind { Policy, Scenario, AccessLog };
    static constexpr int kKindCount = 3;
    static constexpr int kMaxRecent = 8;

    /// Reads the lists from `settings` and writes them back on every change. Null: the lists
    /// last as long as this object (tests, scripted runs). `settings` outlives this object.
    explicit RecentFiles(QSettings* settings, QObject* parent = nullptr);

    /// Most recent first, absolute paths.
    const QStringList& files(Kind kind) const { return lists_[index(kind)]; }
    /// `path` becomes the most recent of its kind: an earlier entry of the same file moves to
    /// the front, and the oldest beyond kMaxRecent goes. Embedded files (":/...") are skipped.
    /// An access log keeps `format`, how it was read.
    void add(Kind kind, const QString& path, const LogFormatChoice& format = {});
    /// How the listed access log `path` was last read; all empty when its format was detected
    /// (or it is not listed).
    LogFormatChoice logFormat(const QString& path) const { return logFormats_.value(path); }
    void remove(Kind kind, const QString& path);
    void clear();

signals:
    void changed();

private:
    static int index(Kind kind) { return static_cast<int>(kind); }
    void save();

    QSettings* settings_;
    std::array<QStringList, kKindCount> lists_;
    QHash<QString, LogFormatChoice> logFormats_;  // listed access logs read in a stated format
};

/// File > Open recent: each kind's files under its heading, then "Clear recent files". Picking
/// one calls `open`, or, when the file no longer exists, says so through `ui` and drops it.
class RecentFilesMenu : public QMenu {
    Q_OBJECT

public:
    using Opener = std::function<void(RecentFiles::Kind, const QString&)>;

    RecentFilesMenu(RecentFiles& files, UserInteraction& ui, Opener open,
                    QWidget* parent = nullptr);

    /// The paths the menu lists under `kind`'s heading, top first.
    QStringList shownFiles(RecentFiles::Kind kind) const;
    /// The entry for `path` under `kind`; null when it is not listed.
    QAction* actionFor(RecentFiles::Kind kind, const QString& path) const;

private:
    struct Section {
        QAction* separator = nullptr;
        QAction* heading = nullptr;
        std::vector<QAction*> items;  // kMaxRecent of them, the unused ones hidden
    };

    void rebuild();
    void pick(RecentFiles::Kind kind, const QString& path);

    RecentFiles& files_;
    UserInteraction& ui_;
    Opener open_;
    std::array<Section, RecentFiles::kKindCount> sections_;
    QAction* none_ = nullptr;
    QAction* clearSeparator_ = nullptr;
    QAction* clear_ = nullptr;
};

}  // namespace ratelab::gui
