#include "gui/window/window_layout.h"

#include <QByteArray>
#include <QMainWindow>
#include <QSettings>
#include <QSplitter>

namespace ratelab::gui {

namespace {

// Raised when the docks or toolbars change in a way an older saved state would misplace.
constexpr int kLayoutVersion = 1;

constexpr const char* kGeometryKey = "window/geometry";
constexpr const char* kStateKey = "window/state";
constexpr const char* kSplitKey = "window/split";

}  // namespace

bool restoreWindowLayout(const QSettings& settings, QMainWindow& window, QSplitter& split) {
    const QByteArray geometry = settings.value(kGeometryKey).toByteArray();
    if (geometry.isEmpty() || !window.restoreGeometry(geometry)) return false;
    window.restoreState(settings.value(kStateKey).toByteArray(), kLayoutVersion);
    split.restoreState(settings.value(kSplitKey).toByteArray());
    return true;
}

void saveWindowLayout(QSettings& settings, const QMainWindow& window, const QSplitter& split) {
    settings.setValue(kGeometryKey, window.saveGeometry());
    settings.setValue(kStateKey, window.saveState(kLayoutVersion));
    settings.setValue(kSplitKey, split.saveState());
    settings.sync();
}

}  // namespace ratelab::gui
