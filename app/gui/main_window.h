#pragma once

// The workbench window. It builds the widgets and connects them to the Workbench; the state
// lives in the Workbench's models and in the simulator.

#include <QMainWindow>

class QTabWidget;

namespace ratelab::gui {

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
    MainWindow(Workbench& workbench, UserInteraction& ui, QWidget* parent = nullptr);

    PolicyEditor* policyEditor() const { return editor_; }
    ChartsPanel* charts() const { return charts_; }
    RunControls* runControls() const { return controls_; }
    ScenarioPanel* scenarioPanel() const { return scenario_; }
    /// In a dock, hidden until the scenario panel's Edit button shows it.
    ScenarioEditor* scenarioEditor() const { return scenarioEditor_; }
    TradeoffPanel* tradeoffPanel() const { return tradeoff_; }
    /// Brings the trade-off map's tab to the front (the charts' tab is in front at first).
    void showTradeoff();

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void buildMenus();
    void updateTitle();

    Workbench& workbench_;
    UserInteraction& ui_;
    PolicyEditor* editor_ = nullptr;
    ChartsPanel* charts_ = nullptr;
    RunControls* controls_ = nullptr;
    ScenarioPanel* scenario_ = nullptr;
    ScenarioEditor* scenarioEditor_ = nullptr;
    CompareViews* compare_ = nullptr;
    TradeoffPanel* tradeoff_ = nullptr;
    QTabWidget* views_ = nullptr;
};

}  // namespace ratelab::gui
