#include "gui/compare/compare_views.h"

#include <QAction>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTabWidget>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>

#include "gui/window/resource_locator.h"
#include "gui/window/user_interaction.h"
#include "gui/session/workbench.h"

namespace ratelab::gui {

CompareViews::CompareViews(Workbench& workbench, UserInteraction& ui, QTabWidget* tabs,
                           QTableView* actorsView)
    : QObject(tabs), workbench_(workbench), ui_(ui), tabs_(tabs), actorsView_(actorsView) {
    banner_ = new QWidget(tabs->window());
    banner_->setObjectName("compareBanner");
    auto* row = new QHBoxLayout(banner_);
    row->setContentsMargins(6, 2, 6, 2);
    bannerText_ = new QLabel(banner_);
    bannerText_->setObjectName("compareBannerText");
    bannerText_->setTextFormat(Qt::PlainText);
    auto* leave = new QPushButton(tr("Leave compare mode"), banner_);
    leave->setObjectName("leaveCompareButton");
    row->addWidget(bannerText_, 1);
    row->addWidget(leave);
    banner_->setVisible(false);
    connect(leave, &QPushButton::clicked, &workbench_, &Workbench::leaveCompare);

    // Outside compare mode the page is in no tab: hidden, or it would be drawn over the tabs.
    flipsPage_ = new QWidget(tabs);
    flipsPage_->hide();
    auto* column = new QVBoxLayout(flipsPage_);
    column->setContentsMargins(2, 2, 2, 2);
    auto* summary = new QLabel(flipsPage_);
    summary->setObjectName("flipsSummary");
    summary->setWordWrap(true);
    summary->setTextFormat(Qt::PlainText);
    auto* table = new QTableView(flipsPage_);
    table->setObjectName("flipsTable");
    table->setModel(&workbench_.flips());
    table->setAlternatingRowColors(true);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->verticalHeader()->setVisible(false);
    table->horizontalHeader()->setStretchLastSection(true);
    column->addWidget(summary);
    column->addWidget(table, 1);
    connect(&workbench_.flips(), &CompareFlipsModel::summaryChanged, summary, &QLabel::setText);
    // The flips arrive a few times a second: the columns fit the first rows and then stay where
    // the user may have dragged them. Queued for the same reason as the actor table's below.
    connect(
        &workbench_.flips(), &QAbstractItemModel::modelReset, table,
        [this, table] {
            if (flipsSized_ || workbench_.flips().rowCount() == 0) return;
            table->resizeColumnsToContents();
            flipsSized_ = true;
        },
        Qt::QueuedConnection);
    // Queued: the view learns of the new rows in its own modelReset slot, which runs after this
    // one (it connects when the model is set, later than here).
    connect(
        &workbench_.comparedActors(), &QAbstractItemModel::modelReset, actorsView_,
        [this] { actorsView_->resizeColumnsToContents(); }, Qt::QueuedConnection);

    connect(&workbench_, &Workbench::compareChanged, this, &CompareViews::showMode);
    connect(&workbench_.session(), &SimulationSession::runLoaded, this, &CompareViews::showLabels);
}

void CompareViews::addActions(QMenuBar* menus, QToolBar* toolbar) {
    QMenu* menu = menus->addMenu(tr("&Compare"));
    menu->setObjectName("compareMenu");
    QAction* loaded = menu->addAction(tr("Compare with the policy as &loaded"), &workbench_,
                                      &Workbench::compareWithLoaded);
    loaded->setObjectName("compareWithLoadedAction");
    loaded->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
    QAction* file =
        menu->addAction(tr("Compare against a policy &file..."), this, &CompareViews::chooseFile);
    file->setObjectName("compareAgainstFileAction");
    leave_ = menu->addAction(tr("L&eave compare mode"), &workbench_, &Workbench::leaveCompare);
    leave_->setObjectName("leaveCompareAction");
    leave_->setEnabled(workbench_.isComparing());

    toggle_ = toolbar->addAction(tr("Compare A/B"));
    toggle_->setObjectName("compareToggle");
    toggle_->setCheckable(true);
    toggle_->setChecked(workbench_.isComparing());
    toggle_->setToolTip(
        tr("Run the policy as loaded (A) beside the editor (B) on the very same requests"));
    connect(toggle_, &QAction::triggered, this, [this](bool on) {
        if (on) {
            if (!workbench_.compareWithLoaded()) toggle_->setChecked(false);
        } else {
            workbench_.leaveCompare();
        }
    });
}

void CompareViews::chooseFile() {
    const QString path =
        ui_.chooseOpenFile(tr("Compare against policy B"), findDataFile("resources/policies"),
                           tr("Policy files (*.json)"));
    if (!path.isEmpty()) workbench_.compareAgainst(path);
}

void CompareViews::showMode(bool comparing) {
    banner_->setVisible(comparing);
    flipsSized_ = false;
    if (toggle_) {
        const QSignalBlocker block(toggle_);
        toggle_->setChecked(comparing);
    }
    if (leave_) leave_->setEnabled(comparing);
    actorsView_->setModel(comparing ? static_cast<QAbstractItemModel*>(&workbench_.comparedActors())
                                    : &workbench_.actors());
    actorsView_->resizeColumnsToContents();
    const int flips = tabs_->indexOf(flipsPage_);
    if (comparing && flips < 0) {
        tabs_->insertTab(tabs_->indexOf(actorsView_) + 1, flipsPage_, tr("Flips A \u2192 B"));
    } else if (!comparing && flips >= 0) {
        tabs_->removeTab(flips);
        flipsPage_->hide();
    }
}

void CompareViews::showLabels(const RunShape& shape) {
    if (!shape.comparing()) return;
    bannerText_->setText(
        tr("Compare mode on the very same requests. A: %1 (solid lines, fixed). B: %2 in the "
           "editor (dashed lines, tuned live).")
            .arg(QString::fromStdString(shape.laneLabels[0]),
                 QString::fromStdString(shape.laneLabels[1])));
}

}  // namespace ratelab::gui
