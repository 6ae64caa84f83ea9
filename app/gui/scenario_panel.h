#pragma once

// The scenario picker: the shipped scenarios, the one in use, its title and description, and
// its timeline.

#include <QWidget>

class QComboBox;
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

signals:
    /// The user asked for a scenario file outside the list.
    void openScenarioRequested();

private:
    void showScenario();
    void pick(int index);

    Workbench& workbench_;
    QComboBox* picker_ = nullptr;
    QPushButton* open_ = nullptr;
    QLabel* title_ = nullptr;
    QLabel* notes_ = nullptr;
    TimelineWidget* timeline_ = nullptr;
};

}  // namespace ratelab::gui
