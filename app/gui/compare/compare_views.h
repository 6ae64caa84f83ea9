#pragma once

// Compare mode in the window: the banner that says which policy is A and which is B, the actor
// table's A, B and delta columns (the table shows the compared model), the flips tab, and the
// menu and toolbar actions that enter and leave the mode. The state is the Workbench's.

#include <QObject>

class QAction;
class QLabel;
class QMenuBar;
class QTabWidget;
class QTableView;
class QToolBar;
class QWidget;

namespace ratelab::gui {

struct RunShape;
class UserInteraction;
class Workbench;

class CompareViews : public QObject {
    Q_OBJECT

public:
    /// `tabs` holds `actorsView` (the per-actor table); the flips tab is added beside it while
    /// comparing. Widgets are parented to `tabs`' window.
    CompareViews(Workbench& workbench, UserInteraction& ui, QTabWidget* tabs,
                 QTableView* actorsView);

    /// The line above the charts naming A and B; hidden outside compare mode.
    QWidget* banner() const { return banner_; }
    /// Adds the Compare menu and the toolbar's toggle.
    void addActions(QMenuBar* menus, QToolBar* toolbar);

private:
    void showMode(bool comparing);
    void showLabels(const RunShape& shape);
    void chooseFile();

    Workbench& workbench_;
    UserInteraction& ui_;
    QTabWidget* tabs_;
    QTableView* actorsView_;
    QWidget* banner_ = nullptr;
    QLabel* bannerText_ = nullptr;
    QWidget* flipsPage_ = nullptr;
    QAction* toggle_ = nullptr;
    QAction* leave_ = nullptr;
    bool flipsSized_ = false;  // the flips table's columns were fitted to rows
};

}  // namespace ratelab::gui
