#pragma once

// The window's layout between launches, in QSettings: where the window was and how big
// (saveGeometry), its docks and toolbars (saveState), and the splitter between the views and
// the tables.

class QMainWindow;
class QSettings;
class QSplitter;

namespace ratelab::gui {

/// Restores what saveWindowLayout() wrote. False, changing nothing, when `settings` holds no
/// layout (the first launch) or one this version cannot read. Call before the window is shown.
bool restoreWindowLayout(const QSettings& settings, QMainWindow& window, QSplitter& split);

/// Writes the window's layout to `settings` (when the window closes).
void saveWindowLayout(QSettings& settings, const QMainWindow& window, const QSplitter& split);

}  // namespace ratelab::gui
