#pragma once

// The workbench window. It builds the widgets and connects them to the Workbench; the state
// lives in the Workbench's models and in the simulator. With settings it remembers its layout
// and the files opened from it between launches.

#include <QMainWindow>

#include <optional>

#include "gui/session/log_format_choice.h"
#include "gui/window/recent_files.h"

class QSettings;
class QSplitter;
class QTabWidget;

namespace ratelab::gui {

class ChartExport;
class ChartsPanel;
class CompareViews;
class PolicyEditor;
class RunControls;
class ScenarioEditor;
class ScenarioPanel;
class TradeoffPanel;
class UserInteraction;
class Workbench;

class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    /// `settings` (may be null: nothing is remembered past this window) holds the layout,
    /// restored here, saved when the window closes, and the recent files. It outlives the
    /// window.
    MainWindow(Workbench& workbench, UserInteraction& ui, QSettings* settings = nullptr,
               QWidget* parent = nullptr);

    PolicyEditor* policyEditor() const { return editor_; }
    ChartsPanel* charts() const { return charts_; }
    /// The charts' context menus: save as PNG, series as CSV.
    ChartExport* chartExport() const { return chartExport_; }
    RunControls* runControls() const { return controls_; }
    ScenarioPanel* scenarioPanel() const { return scenario_; }
    /// In a dock, hidden until the scenario panel's Edit button shows it.
    ScenarioEditor* scenarioEditor() const { return scenarioEditor_; }
    TradeoffPanel* tradeoffPanel() const { return tradeoff_; }
    /// Brings the trade-off map's tab to the front (the charts' tab is in front at first).
    void showTradeoff();
    /// Whether the constructor restored a saved layout (else the caller sizes the window).
    bool restoredLayout() const { return restoredLayout_; }
    RecentFiles& recentFiles() const { return *recent_; }
    RecentFilesMenu* recentFilesMenu() const { return recentMenu_; }
    QSplitter* splitter() const { return split_; }

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void buildMenus();
    void updateTitle();
    /// Opens a file the user picked through the workbench and, once it opened, lists it
    /// under File > Open recent.
    /// An access log opens as `format` says (all empty: detected), and is listed with it.
    void openFile(RecentFiles::Kind kind, const QString& path, const LogFormatChoice& format = {});
    /// Asks how the log at `path` is written (the last answer proposed); false when the user
    /// cancelled or the answer is wrong (then shown as an error).
    bool askLogFormat(const QString& path, std::optional<sim::LogFormatOptions>& format);

    Workbench& workbench_;
    UserInteraction& ui_;
    QSettings* settings_;
    RecentFiles* recent_ = nullptr;
    RecentFilesMenu* recentMenu_ = nullptr;
    bool restoredLayout_ = false;
    LogFormatChoice logFormat_;  // the last answer about a log's format
    PolicyEditor* editor_ = nullptr;
    ChartsPanel* charts_ = nullptr;
    ChartExport* chartExport_ = nullptr;
    RunControls* controls_ = nullptr;
    ScenarioPanel* scenario_ = nullptr;
    ScenarioEditor* scenarioEditor_ = nullptr;
    CompareViews* compare_ = nullptr;
    TradeoffPanel* tradeoff_ = nullptr;
    QTabWidget* views_ = nullptr;
    QSplitter* split_ = nullptr;
};

}  // namespace ratelab::gui
