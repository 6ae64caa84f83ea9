#pragma once

// The scenario picker: the shipped scenarios, the one in use, its title (marked when edited)
// and description, and its timeline.

#include <QWidget>

class QAction;
class QComboBox;
class QHBoxLayout;
class QLabel;
class QPushButton;

namespace ratelab::gui {

class TimelineWidget;
class Workbench;

class ScenarioPanel : public QWidget {
    Q_OBJECT

public:
    explicit ScenarioPanel(Workbench& workbench, QWidget* parent = nullptr);

    TimelineWidget* timeline() const { return timeline_; }
    /// Puts a button for `action` (showing the scenario editor) beside Open.
    void addEditAction(QAction* action);

signals:
    /// The user asked for a scenario file outside the list.
    void openScenarioRequested();

private:
    void showScenario();
    /// The title, and the picker on the scenario in use.
    void showTitle();
    void pick(int index);

    Workbench& workbench_;
    QHBoxLayout* head_ = nullptr;
    QComboBox* picker_ = nullptr;
    QPushButton* open_ = nullptr;
    QLabel* title_ = nullptr;
    QLabel* notes_ = nullptr;
    TimelineWidget* timeline_ = nullptr;
};

}  // namespace ratelab::gui
