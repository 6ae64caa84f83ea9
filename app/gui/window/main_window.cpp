#include "gui/window/main_window.h"

#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QHeaderView>
#include <QKeyEvent>
#include <QMenuBar>
#include <QProgressBar>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>

#include <functional>

#include "gui/compare/compare_views.h"
#include "gui/plot/chart_export.h"
#include "gui/plot/charts_panel.h"
#include "gui/policy/policy_editor.h"
#include "gui/policy/target_export.h"
#include "gui/scenario/scenario_editor.h"
#include "gui/scenario/scenario_panel.h"
#include "gui/scenario/timeline_widget.h"
#include "gui/session/actor_table_model.h"
#include "gui/session/client_table_model.h"
#include "gui/session/event_log_model.h"
#include "gui/session/workbench.h"
#include "gui/tradeoff/tradeoff_panel.h"
#include "gui/window/help_menu.h"
#include "gui/window/resource_locator.h"
#include "gui/window/run_controls.h"
#include "gui/window/user_interaction.h"
#include "gui/window/window_layout.h"

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

// Escape on the watched widget calls `clear`; every other event goes on as before.
class EscapeFilter final : public QObject {
public:
    EscapeFilter(QObject* parent, std::function<void()> clear)
        : QObject(parent), clear_(std::move(clear)) {}

protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (event->type() == QEvent::KeyPress &&
            static_cast<QKeyEvent*>(event)->key() == Qt::Key_Escape) {
            clear_();
            return true;
        }
        return QObject::eventFilter(watched, event);
    }

private:
    std::function<void()> clear_;
};

}  // namespace

MainWindow::MainWindow(Workbench& workbench, UserInteraction& ui, QSettings* settings,
                       QWidget* parent)
    : QMainWindow(parent), workbench_(workbench), ui_(ui), settings_(settings) {
    setObjectName("mainWindow");
    recent_ = new RecentFiles(settings_, this);

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
    chartExport_ = new ChartExport(*charts_, workbench_.series(), ui_, this);
    auto* tabs = new QTabWidget(this);
    tabs->setObjectName("resultTabs");
    QTableView* actorsView = tableOn(&workbench_.actors(), "actorTable", tabs);
    QTableView* logView = tableOn(&workbench_.log(), "logTable", tabs);
    tabs->addTab(actorsView, tr("Actors"));
    // A replayed log's actor is its clients: the one "log" actor row gives way to them.
    QTableView* clientsView = tableOn(&workbench_.clients(), "clientTable", tabs);
    clientsView->horizontalHeader()->setSortIndicator(ClientTableModel::Requests,
                                                      Qt::DescendingOrder);
    clientsView->setSortingEnabled(true);
    tabs->addTab(clientsView, tr("Clients"));
    // A click on a client draws it over the charts; on it again, or Escape, clears it.
    clientsView->setToolTip(
        tr("Click a client to draw its requests over the charts; click it "
           "again or press Escape to clear."));
    connect(clientsView, &QTableView::clicked, this, [this](const QModelIndex& index) {
        const std::vector<ClientRow>& rows = workbench_.clients().rows();
        if (!index.isValid() || static_cast<std::size_t>(index.row()) >= rows.size()) return;
        const std::int64_t instance = rows[static_cast<std::size_t>(index.row())].instance;
        workbench_.highlightClient(instance == workbench_.highlightedClient() ? -1 : instance);
    });
    auto clearHighlight = [this, clientsView] {
        workbench_.highlightClient(-1);
        clientsView->clearSelection();
    };
    clientsView->installEventFilter(new EscapeFilter(clientsView, clearHighlight));
    charts_->installEventFilter(new EscapeFilter(charts_, clearHighlight));
    tabs->setTabVisible(tabs->indexOf(clientsView), false);
    // Compare mode keeps the Actors tab: it holds A against B per actor.
    auto showClients = [this, tabs, actorsView, clientsView] {
        const bool clients = workbench_.clients().replaying();
        const bool actors = !clients || workbench_.isComparing();
        // Shown first and made current before the other hides, so the user stays on the table.
        tabs->setTabVisible(tabs->indexOf(clientsView), true);
        tabs->setTabVisible(tabs->indexOf(actorsView), true);
        if (!actors && tabs->currentWidget() == actorsView) tabs->setCurrentWidget(clientsView);
        if (!clients && tabs->currentWidget() == clientsView) tabs->setCurrentWidget(actorsView);
        tabs->setTabVisible(tabs->indexOf(clientsView), clients);
        tabs->setTabVisible(tabs->indexOf(actorsView), actors);
    };
    connect(&workbench_.clients(), &ClientTableModel::replayingChanged, tabs, showClients);
    connect(&workbench_, &Workbench::compareChanged, tabs, showClients);
    tabs->addTab(logView, tr("Limit hits and store failures"));
    compare_ = new CompareViews(workbench_, ui_, tabs, actorsView);

    // The trade-off map shares the charts' room: it wants the same width.
    tradeoff_ = new TradeoffPanel(workbench_, ui_, this);
    views_ = new QTabWidget(this);
    views_->setObjectName("viewTabs");
    views_->addTab(charts_, tr("Charts"));
    views_->addTab(tradeoff_, tr("Trade-off map"));
    split_ = new QSplitter(Qt::Vertical, this);
    split_->setObjectName("viewSplit");
    split_->addWidget(views_);
    split_->addWidget(tabs);
    split_->setStretchFactor(0, 5);
    split_->setStretchFactor(1, 1);
    split_->setChildrenCollapsible(false);
    auto* centre = new QWidget(this);
    auto* column = new QVBoxLayout(centre);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(2);
    column->addWidget(scenario_);
    column->addWidget(compare_->banner());
    column->addWidget(split_, 1);
    setCentralWidget(centre);
    buildMenus();
    compare_->addActions(menuBar(), bar);
    addHelpMenu(*menuBar(), ui_);

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
    connect(chartExport_, &ChartExport::statusMessage, this,
            [this](const QString& text) { statusBar()->showMessage(text, 10000); });
    connect(&workbench_.document(), &PolicyDocument::modifiedChanged, this,
            &MainWindow::updateTitle);
    connect(&workbench_.document(), &PolicyDocument::reloaded, this, &MainWindow::updateTitle);
    connect(&workbench_, &Workbench::scenarioChanged, this, &MainWindow::updateTitle);
    connect(&workbench_, &Workbench::scenarioModifiedChanged, this, &MainWindow::updateTitle);
    connect(scenario_, &ScenarioPanel::openScenarioRequested, this, [this] {
        const QString path = ui_.chooseOpenFile(tr("Open scenario"), findDataFile("scenarios"),
                                                tr("Scenarios (*.json)"));
        if (!path.isEmpty()) openFile(RecentFiles::Kind::Scenario, path);
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
    if (settings_) restoredLayout_ = restoreWindowLayout(*settings_, *this, *split_);
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* openPolicy = file->addAction(tr("&Open policy..."), QKeySequence::Open, this, [this] {
        const QString path = ui_.chooseOpenFile(
            tr("Open policy"), findDataFile("resources/policies"), tr("Policy files (*.json)"));
        if (!path.isEmpty()) openFile(RecentFiles::Kind::Policy, path);
    });
    openPolicy->setObjectName("openPolicyAction");
    QAction* importLimits = file->addAction(tr("&Import limits..."), this, [this] {
        const QString path = ui_.chooseOpenFile(
            tr("Import limits"), QDir::homePath(),
            tr("Configurations (*.conf *.cfg *.yaml *.yml *.toml *.json);;All files (*)"));
        if (!path.isEmpty()) workbench_.importLimits(path);
    });
    importLimits->setObjectName("importLimitsAction");
    // A policy saved under a name is one to come back to, like one opened.
    file->addAction(tr("&Save policy"), QKeySequence::Save, this, [this] {
        if (workbench_.savePolicy())
            recent_->add(RecentFiles::Kind::Policy, workbench_.document().path());
    });
    file->addAction(tr("Save policy &as..."), QKeySequence::SaveAs, this, [this] {
        const QString path = ui_.chooseSaveFile(tr("Save policy as"), workbench_.document().path(),
                                                tr("Policy files (*.json)"));
        if (!path.isEmpty() && workbench_.savePolicy(path))
            recent_->add(RecentFiles::Kind::Policy, path);
    });
    file->addSeparator();
    QAction* openScenario = file->addAction(tr("Open s&cenario..."), this, [this] {
        const QString path = ui_.chooseOpenFile(tr("Open scenario"), findDataFile("scenarios"),
                                                tr("Scenarios (*.json)"));
        if (!path.isEmpty()) openFile(RecentFiles::Kind::Scenario, path);
    });
    openScenario->setObjectName("openScenarioAction");
    file->addAction(tr("Save sce&nario as..."), this, [this] { workbench_.saveScenario(); });
    QAction* openLog = file->addAction(tr("Open access &log..."), this, [this] {
        const QString path =
            ui_.chooseOpenFile(tr("Replay an access log"), {}, tr(kAccessLogFilter));
        std::optional<sim::LogFormatOptions> format;
        if (!path.isEmpty() && askLogFormat(path, format))
            openFile(RecentFiles::Kind::AccessLog, path, logFormat_);
    });
    openLog->setObjectName("openAccessLogAction");
    recentMenu_ = new RecentFilesMenu(
        *recent_, ui_,
        [this](RecentFiles::Kind kind, const QString& path) {
            // An access log opens again as it was read last.
            openFile(kind, path, recent_->logFormat(path));
        },
        this);
    file->addMenu(recentMenu_);
    file->addAction(tr("&Fit a scenario to a log..."), this, [this] {
        const QString log =
            ui_.chooseOpenFile(tr("Fit a scenario to an access log"), {}, tr(kAccessLogFilter));
        std::optional<sim::LogFormatOptions> format;
        if (log.isEmpty() || !askLogFormat(log, format)) return;
        const QString out = ui_.chooseSaveFile(
            tr("Save the fitted scenario"),
            QFileInfo(log).dir().filePath("fit-" + QFileInfo(log).completeBaseName() + ".json"),
            tr("Scenarios (*.json)"));
        if (!out.isEmpty()) workbench_.fitScenarioTo(log, out, format);
    });
    file->addSeparator();
    file->addAction(tr("&Export validated policy..."), this, [this] {
        const QString path = ui_.chooseSaveFile(
            tr("Export validated policy"), "validated-policy.json", tr("Policy files (*.json)"));
        if (!path.isEmpty()) workbench_.exportValidated(path);
    });
    QMenu* exportTo = file->addMenu(tr("Export &to"));
    exportTo->setObjectName("exportToMenu");
    for (formats::ExportTarget target : formats::kExportTargets) {
        const std::string_view name = formats::exportTargetName(target);
        QAction* action = exportTo->addAction(tr("%1...").arg(exportTargetTitle(target)), this,
                                              [this, target] { workbench_.exportTo(target); });
        action->setObjectName(
            QStringLiteral("exportTo-%1").arg(QString::fromLatin1(name.data(), name.size())));
    }
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    // Edit: the document's undo stack, each step named ("Undo capacity change").
    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QUndoStack& steps = workbench_.document().undoStack();
    QAction* undo = steps.createUndoAction(this, tr("&Undo"));
    undo->setObjectName("undoAction");
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = steps.createRedoAction(this, tr("&Redo"));
    redo->setObjectName("redoAction");
    redo->setShortcuts(
        {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)});
    edit->addAction(undo);
    edit->addAction(redo);

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

bool MainWindow::askLogFormat(const QString& path, std::optional<sim::LogFormatOptions>& format) {
    if (!ui_.chooseLogFormat(path, logFormat_)) return false;
    QString error;
    if (readLogFormatChoice(logFormat_, format, error)) return true;
    ui_.showError(tr("Cannot read the access log"),
                  tr("%1: %2").arg(QDir::toNativeSeparators(path), error));
    return false;
}

void MainWindow::openFile(RecentFiles::Kind kind, const QString& path,
                          const LogFormatChoice& format) {
    switch (kind) {
        case RecentFiles::Kind::Policy:
            if (workbench_.openPolicy(path)) recent_->add(kind, path);
            return;
        case RecentFiles::Kind::Scenario:
            if (workbench_.openScenario(path)) recent_->add(kind, path);
            return;
        case RecentFiles::Kind::AccessLog: {
            std::optional<sim::LogFormatOptions> options;
            QString error;
            if (!readLogFormatChoice(format, options, error)) {
                ui_.showError(tr("Cannot read the access log"),
                              tr("%1: %2").arg(QDir::toNativeSeparators(path), error));
                return;
            }
            // Parsed on a pool thread: listed once it has opened.
            auto* once = new QObject(this);
            connect(&workbench_, &Workbench::accessLogOpened, once,
                    [this, once, path, format](const QString& opened, bool ok) {
                        if (opened != path) return;
                        if (ok) recent_->add(RecentFiles::Kind::AccessLog, path, format);
                        once->deleteLater();
                    });
            workbench_.openAccessLog(path, options);
            return;
        }
    }
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (workbench_.confirmDiscardChanges()) {
        if (settings_) saveWindowLayout(*settings_, *this, *split_);
        event->accept();
    } else {
        event->ignore();
    }
}

}  // namespace ratelab::gui
