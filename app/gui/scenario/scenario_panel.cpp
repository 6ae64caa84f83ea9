#include "gui/scenario/scenario_panel.h"

#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QToolButton>
#include <QVBoxLayout>

#include "gui/window/resource_locator.h"
#include "gui/scenario/timeline_widget.h"
#include "gui/session/workbench.h"

namespace ratelab::gui {

namespace {

// One spelling per file, so the list finds the scenario in use however its path was written.
QString canonical(const QString& path) {
    if (isEmbedded(path)) return path;
    const QString c = QFileInfo(path).canonicalFilePath();
    return c.isEmpty() ? path : c;
}

}  // namespace

ScenarioPanel::ScenarioPanel(Workbench& workbench, QWidget* parent)
    : QWidget(parent), workbench_(workbench) {
    picker_ = new QComboBox(this);
    picker_->setObjectName("scenarioPicker");
    picker_->setMinimumContentsLength(22);
    picker_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    for (const QString& file : scenarioFiles())
        picker_->addItem(QFileInfo(file).completeBaseName(), canonical(file));
    open_ = new QPushButton(tr("Open..."), this);
    title_ = new QLabel(this);
    title_->setObjectName("scenarioTitle");
    QFont big = title_->font();
    big.setBold(true);
    big.setPointSizeF(big.pointSizeF() * 1.15);
    title_->setFont(big);
    notes_ = new QLabel(this);
    notes_->setObjectName("scenarioNotes");
    notes_->setWordWrap(true);
    notes_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    timeline_ = new TimelineWidget(this);
    timeline_->setObjectName("timeline");

    auto* head = new QHBoxLayout;
    head->addWidget(new QLabel(tr("Scenario"), this));
    head->addWidget(picker_);
    head->addWidget(open_);
    head->addSpacing(12);
    head->addWidget(title_, 1);
    head_ = head;
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 2, 4, 2);
    layout->setSpacing(2);
    layout->addLayout(head);
    layout->addWidget(notes_);
    layout->addWidget(timeline_);

    connect(picker_, &QComboBox::activated, this, &ScenarioPanel::pick);
    connect(open_, &QPushButton::clicked, this, &ScenarioPanel::openScenarioRequested);
    connect(&workbench_, &Workbench::scenarioChanged, this, &ScenarioPanel::showScenario);
    connect(&workbench_, &Workbench::scenarioModifiedChanged, this, &ScenarioPanel::showTitle);
    showScenario();
}

void ScenarioPanel::addEditAction(QAction* action) {
    auto* button = new QToolButton(this);
    button->setObjectName("editScenarioButton");
    button->setDefaultAction(action);
    head_->insertWidget(head_->indexOf(open_) + 1, button);
}

void ScenarioPanel::pick(int index) {
    const QString path = picker_->itemData(index).toString();
    if (!path.isEmpty() && path != canonical(workbench_.scenarioPath())) {
        if (!workbench_.openScenario(path)) showTitle();  // back to the one in use
    }
}

void ScenarioPanel::showScenario() {
    if (!workbench_.hasScenario()) {
        title_->setText(tr("No scenario"));
        notes_->clear();
        timeline_->setScenario(0, {});
        return;
    }
    const sim::Scenario& s = workbench_.scenario();
    notes_->setText(workbench_.scenarioNotes());
    notes_->setVisible(!workbench_.scenarioNotes().isEmpty());
    timeline_->setScenario(s.duration, s.events);
    showTitle();
}

void ScenarioPanel::showTitle() {
    if (!workbench_.hasScenario()) return;
    const sim::Scenario& s = workbench_.scenario();
    const QString title = QString::fromStdString(s.title.empty() ? s.name : s.title);
    title_->setText(workbench_.isScenarioModified() ? tr("%1 (edited)").arg(title) : title);

    QSignalBlocker block(picker_);
    const QString path = canonical(workbench_.scenarioPath());
    int index = picker_->findData(path);
    if (index < 0) {
        picker_->addItem(QString::fromStdString(
                             s.name.empty() ? QFileInfo(path).fileName().toStdString() : s.name),
                         path);
        index = picker_->count() - 1;
    }
    picker_->setCurrentIndex(index);
}

}  // namespace ratelab::gui
