#include "main_window.h"

#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QHeaderView>
#include <QMenuBar>
#include <QProgressBar>
#include <QScrollArea>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>

#include "actor_table_model.h"
#include "charts_panel.h"
#include "compare_views.h"
#include "event_log_model.h"
#include "policy_editor.h"
#include "resource_locator.h"
#include "run_controls.h"
#include "scenario_editor.h"
#include "scenario_panel.h"
#include "timeline_widget.h"
#include "tradeoff_panel.h"
#include "user_interaction.h"
#include "workbench.h"

namespace ratelab::gui {

namespace {
constexpr const char* kAccessLogFilter =
    "Access logs (*.log *.gz *.txt *.csv *.json *.jsonl *access*);;All files (*)";
}  // namespace

namespace {

QTableView* tableOn(QAbstractItemModel* model, const QString& name, QWidget* parent) {
    auto* view = new QTableView(parent);
    view->setObjectName(name);
    view->setModel(model);
    view->setAlternatingRowColors(true);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->verticalHeader()->setVisible(false);
    view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
    view->horizontalHeader()->setStretchLastSection(true);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    return view;
}

}  // namespace

MainWindow::MainWindow(Workbench& workbench, UserInteraction& ui, QWidget* parent)
    : QMainWindow(parent), workbench_(workbench), ui_(ui) {
    setObjectName("mainWindow");

    controls_ = new RunControls(workbench_, this);
    auto* bar = addToolBar(tr("Run"));
    bar->setObjectName("runBar");
    bar->setMovable(false);
    bar->addWidget(controls_);

    editor_ = new PolicyEditor(workbench_.document(), this);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(editor_);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(editor_->sizeHint().width() + 24);
    auto* dock = new QDockWidget(tr("Policy"), this);
    dock->setObjectName("policyDock");
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    dock->setWidget(scroll);
    addDockWidget(Qt::LeftDockWidgetArea, dock);

    scenario_ = new ScenarioPanel(workbench_, this);
    scenarioEditor_ = new ScenarioEditor(workbench_, this);
    auto* editorDock = new QDockWidget(tr("Edit scenario"), this);
    editorDock->setObjectName("scenarioEditorDock");
    editorDock->setWidget(scenarioEditor_);
    addDockWidget(Qt::BottomDockWidgetArea, editorDock);
    editorDock->hide();
    scenario_->addEditAction(editorDock->toggleViewAction());
    charts_ = new ChartsPanel(workbench_.series(), this);
    auto* tabs = new QTabWidget(this);
    tabs->setObjectName("resultTabs");
    QTableView* actorsView = tableOn(&workbench_.actors(), "actorTable", tabs);
    QTableView* logView = tableOn(&workbench_.log(), "logTable", tabs);
    tabs->addTab(actorsView, tr("Actors"));
    tabs->addTab(logView, tr("Limit hits and store failures"));
    compare_ = new CompareViews(workbench_, ui_, tabs, actorsView);

    // The trade-off map shares the charts' room: it wants the same width.
    tradeoff_ = new TradeoffPanel(workbench_, ui_, this);
    views_ = new QTabWidget(this);
    views_->setObjectName("viewTabs");
    views_->addTab(charts_, tr("Charts"));
    views_->addTab(tradeoff_, tr("Trade-off map"));
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(views_);
    split->addWidget(tabs);
    split->setStretchFactor(0, 5);
    split->setStretchFactor(1, 1);
    split->setChildrenCollapsible(false);
    auto* centre = new QWidget(this);
    auto* column = new QVBoxLayout(centre);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(2);
    column->addWidget(scenario_);
    column->addWidget(compare_->banner());
    column->addWidget(split, 1);
    setCentralWidget(centre);
    buildMenus();
    compare_->addActions(menuBar(), bar);

    SimulationSession& session = workbench_.session();
    connect(&session, &SimulationSession::runLoaded, this, [this](const RunShape& shape) {
        charts_->rebuild(shape);
        scenario_->timeline()->setScenario(shape.duration, shape.events);
    });
    connect(&session, &SimulationSession::frame, this, [this, logView](const SimBatch& batch) {
        charts_->refresh(static_cast<double>(batch.now) / 1e9);
        scenario_->timeline()->setNow(batch.now);
        if (!batch.log.empty()) logView->scrollToBottom();
    });
    connect(&workbench_.actors(), &QAbstractItemModel::modelReset, actorsView,
            [actorsView] { actorsView->resizeColumnsToContents(); });
    connect(&workbench_, &Workbench::statusMessage, this,
            [this](const QString& text) { statusBar()->showMessage(text, 10000); });
    connect(&workbench_.document(), &PolicyDocument::modifiedChanged, this,
            &MainWindow::updateTitle);
    connect(&workbench_.document(), &PolicyDocument::reloaded, this, &MainWindow::updateTitle);
    connect(&workbench_, &Workbench::scenarioChanged, this, &MainWindow::updateTitle);
    connect(&workbench_, &Workbench::scenarioModifiedChanged, this, &MainWindow::updateTitle);
    connect(scenario_, &ScenarioPanel::openScenarioRequested, this, [this] {
        const QString path = ui_.chooseOpenFile(tr("Open scenario"), findDataFile("scenarios"),
                                                tr("Scenarios (*.json)"));
        if (!path.isEmpty()) workbench_.openScenario(path);
    });
    // Parsing a log: a bar in the status bar until the log is open (or the fit written).
    auto* parsing = new QProgressBar(this);
    parsing->setObjectName("logProgress");
    parsing->setRange(0, 1000);
    parsing->setMaximumWidth(200);
    parsing->setVisible(false);
    statusBar()->addPermanentWidget(parsing);
    connect(&workbench_, &Workbench::accessLogProgress, parsing, [parsing](double fraction) {
        parsing->setValue(static_cast<int>(fraction * 1000));
        parsing->setVisible(fraction < 1.0);
    });
    connect(&workbench_, &Workbench::accessLogOpened, parsing, [parsing] { parsing->hide(); });
    connect(&workbench_, &Workbench::fitFinished, parsing, [parsing] { parsing->hide(); });
    updateTitle();
    statusBar()->showMessage(tr("Press Run to play the scenario against the policy."));
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open policy..."), QKeySequence::Open, this, [this] {
        const QString path = ui_.chooseOpenFile(
            tr("Open policy"), findDataFile("resources/policies"), tr("Policy files (*.json)"));
        if (!path.isEmpty()) workbench_.openPolicy(path);
    });
    file->addAction(tr("&Save policy"), QKeySequence::Save, this,
                    [this] { workbench_.savePolicy(); });
    file->addAction(tr("Save policy &as..."), QKeySequence::SaveAs, this, [this] {
        const QString path = ui_.chooseSaveFile(tr("Save policy as"), workbench_.document().path(),
                                                tr("Policy files (*.json)"));
        if (!path.isEmpty()) workbench_.savePolicy(path);
    });
    file->addSeparator();
    file->addAction(tr("Open s&cenario..."), this, [this] {
        const QString path = ui_.chooseOpenFile(tr("Open scenario"), findDataFile("scenarios"),
                                                tr("Scenarios (*.json)"));
        if (!path.isEmpty()) workbench_.openScenario(path);
    });
    file->addAction(tr("Save sce&nario as..."), this, [this] { workbench_.saveScenario(); });
    file->addAction(tr("Open access &log..."), this, [this] {
        const QString path =
            ui_.chooseOpenFile(tr("Replay an access log"), {}, tr(kAccessLogFilter));
        if (!path.isEmpty()) workbench_.openAccessLog(path);
    });
    file->addAction(tr("&Fit a scenario to a log..."), this, [this] {
        const QString log =
            ui_.chooseOpenFile(tr("Fit a scenario to an access log"), {}, tr(kAccessLogFilter));
        if (log.isEmpty()) return;
        const QString out = ui_.chooseSaveFile(
            tr("Save the fitted scenario"),
            QFileInfo(log).dir().filePath("fit-" + QFileInfo(log).completeBaseName() + ".json"),
            tr("Scenarios (*.json)"));
        if (!out.isEmpty()) workbench_.fitScenarioTo(log, out);
    });
    file->addSeparator();
    file->addAction(tr("&Export validated policy..."), this, [this] {
        const QString path = ui_.chooseSaveFile(
            tr("Export validated policy"), "validated-policy.json", tr("Policy files (*.json)"));
        if (!path.isEmpty()) workbench_.exportValidated(path);
    });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    run->addAction(tr("&Run"), QKeySequence(Qt::Key_F5), &workbench_, &Workbench::run);
    run->addAction(tr("&Pause"), QKeySequence(Qt::Key_F6), &workbench_, &Workbench::pause);
    run->addAction(tr("&Step"), QKeySequence(Qt::Key_F10), &workbench_, &Workbench::step);
    run->addAction(tr("R&eset"), QKeySequence(Qt::CTRL | Qt::Key_R), &workbench_,
                   &Workbench::reset);
    run->addSeparator();
    run->addAction(tr("&Trade-off map"), QKeySequence(Qt::CTRL | Qt::Key_M), this,
                   &MainWindow::showTradeoff);
    run->addAction(tr("S&uggest limits"), this, [this] {
        showTradeoff();
        tradeoff_->suggest();
    });
}

void MainWindow::showTradeoff() {
    views_->setCurrentWidget(tradeoff_);
}

void MainWindow::updateTitle() {
    const PolicyDocument& doc = workbench_.document();
    QString scenario = workbench_.hasScenario() ? QString::fromStdString(workbench_.scenario().name)
                                                : tr("no scenario");
    if (workbench_.isScenarioModified()) scenario = tr("%1 (edited)").arg(scenario);
    setWindowTitle(tr("%1[*] - %2 - ratelab workbench").arg(doc.displayName(), scenario));
    setWindowModified(doc.isModified());
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (workbench_.confirmDiscardChanges()) {
        event->accept();
    } else {
        event->ignore();
    }
}

}  // namespace ratelab::gui
