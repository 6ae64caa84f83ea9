#include "gui/tradeoff/tradeoff_panel.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalBlocker>
#include <QThread>
#include <QVBoxLayout>

#include "gui/window/diagnostics_text.h"
#include "gui/window/locale_text.h"
#include "ratelab/number_text.h"
#include "gui/tradeoff/suggest_message.h"
#include "gui/tradeoff/tradeoff_map.h"
#include "gui/window/user_interaction.h"
#include "gui/session/workbench.h"

namespace ratelab::gui {

namespace {

QString rangeText(const sim::SweepAxis& axis) {
    return QString::fromStdString(numberText(axis.from) + ":" + numberText(axis.to) + ":" +
                                  numberText(axis.step));
}

bool sameAxes(const std::vector<sim::SweepAxis>& a, const std::vector<sim::SweepAxis>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].policy != b[i].policy || a[i].field != b[i].field || a[i].from != b[i].from ||
            a[i].to != b[i].to || a[i].step != b[i].step)
            return false;
    }
    return true;
}

}  // namespace

TradeoffPanel::TradeoffPanel(Workbench& workbench, UserInteraction& ui, QWidget* parent)
    : QWidget(parent)
    , workbench_(workbench)
    , ui_(ui)
    , run_(std::max(1, QThread::idealThreadCount())) {
    setObjectName("tradeoffPanel");
    // The controls and what the map says in a column on the left, the map on the right.
    auto* whole = new QHBoxLayout(this);
    whole->setContentsMargins(4, 4, 4, 4);
    auto* controls = new QWidget(this);
    controls->setMaximumWidth(420);
    auto* column = new QVBoxLayout(controls);
    column->setContentsMargins(0, 0, 0, 0);
    whole->addWidget(controls, 0);
    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    policy_ = new QComboBox(this);
    policy_->setObjectName("tradeoffPolicy");
    form->addRow(tr("Policy"), policy_);
    const char* rowNames[] = {"Across", "Up"};
    for (int r = 0; r < 2; ++r) {
        AxisRow& row = rows_[r];
        row.field = new QComboBox(this);
        row.field->setObjectName(QStringLiteral("tradeoffField%1").arg(r));
        row.field->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        row.field->setMinimumContentsLength(12);
        for (const sim::SweepField& f : sim::kSweepFields)
            row.field->addItem(QString::fromStdString(std::string(f.label)),
                               QString::fromStdString(std::string(f.name)));
        row.range = new QLineEdit(this);
        row.range->setObjectName(QStringLiteral("tradeoffRange%1").arg(r));
        row.range->setPlaceholderText("FROM:TO:STEP");
        row.range->setToolTip(tr("FROM:TO:STEP, as ratelab-cli sweep --vary takes it"));
        auto* line = new QHBoxLayout;
        line->addWidget(row.field, 1);
        line->addWidget(row.range, 1);
        form->addRow(tr(rowNames[r]), line);
        connect(row.field, &QComboBox::currentIndexChanged, this, [this, r] { proposeRange(r); });
    }
    rows_[0].field->setCurrentIndex(0);  // capacity
    rows_[1].field->setCurrentIndex(1);  // refill
    metric_ = new QComboBox(this);
    metric_->setObjectName("tradeoffMetric");
    metric_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    metric_->setMinimumContentsLength(16);
    form->addRow(tr("Colour by"), metric_);
    column->addLayout(form);

    auto* buttons = new QHBoxLayout;
    mapButton_ = new QPushButton(tr("Map"), this);
    mapButton_->setObjectName("tradeoffStart");
    mapButton_->setToolTip(tr("Run the scenario once per cell of the grid, on worker threads"));
    cancelButton_ = new QPushButton(tr("Cancel"), this);
    cancelButton_->setObjectName("tradeoffCancel");
    suggestButton_ = new QPushButton(tr("Suggest"), this);
    suggestButton_->setObjectName("tradeoffSuggest");
    suggestButton_->setToolTip(
        tr("Fill the editor with the cell ratelab-cli tune picks: among those meeting every "
           "expectation, the least legitimate throttling, then the least attacker traffic"));
    progress_ = new QProgressBar(this);
    progress_->setObjectName("tradeoffProgress");
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setFormat(tr("%v of %m cells"));
    buttons->addWidget(mapButton_);
    buttons->addWidget(cancelButton_);
    buttons->addWidget(suggestButton_);
    column->addLayout(buttons);
    column->addWidget(progress_);

    map_ = new TradeoffMapView(run_, this);
    whole->addWidget(map_, 1);
    message_ = new QLabel(this);
    message_->setObjectName("tradeoffMessage");
    message_->setWordWrap(true);
    message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    message_->setText(tr("Click a cell to load its numbers into the editor."));
    column->addWidget(message_);
    column->addStretch(1);

    connect(mapButton_, &QPushButton::clicked, this, [this] { startMap(); });
    connect(cancelButton_, &QPushButton::clicked, this, &TradeoffPanel::cancelMap);
    connect(suggestButton_, &QPushButton::clicked, this, &TradeoffPanel::suggest);
    connect(metric_, &QComboBox::currentTextChanged, map_, [this](const QString& m) {
        if (!m.isEmpty()) map_->setMetric(m);
    });
    connect(map_, &TradeoffMapView::cellClicked, this, [this](std::size_t index) {
        std::string error;
        if (!run_.loadCellInto(index, workbench_.document(), tr("trade-off cell"), error)) {
            fail(QString::fromStdString(error));
            return;
        }
        message_->setText(tr("Loaded %1 into the editor.")
                              .arg(QString::fromStdString(
                                  sim::cellValuesText(run_.axes(), run_.cell(index)->values))));
    });
    connect(&run_, &TradeoffRun::started, this, [this] {
        progress_->setRange(0, static_cast<int>(run_.cellCount()));
        progress_->setValue(0);
        showMetrics();
        message_->setText(tr("Mapping %1 cells of %2 ...")
                              .arg(localeCount(static_cast<std::int64_t>(run_.cellCount())))
                              .arg(QString::fromStdString(run_.scenario().name)));
        updateButtons();
    });
    connect(&run_, &TradeoffRun::cellFinished, this,
            [this] { progress_->setValue(static_cast<int>(run_.cellsDone())); });
    connect(&run_, &TradeoffRun::finished, this, [this] {
        updateButtons();
        const sim::TradeoffMap& d = *run_.decision();
        message_->setText(tr("%1 of %2 cells meet every expectation; %3 on the Pareto frontier. "
                             "Click a cell to load its numbers, or press Suggest.")
                              .arg(localeCount(static_cast<std::int64_t>(d.passing)))
                              .arg(localeCount(static_cast<std::int64_t>(d.result.cells.size())))
                              .arg(localeCount(static_cast<std::int64_t>(d.frontier.size()))));
        if (pendingSuggest_) applySuggestion();
    });
    connect(&run_, &TradeoffRun::cancelled, this, [this] {
        pendingSuggest_ = false;
        updateButtons();
        message_->setText(tr("Cancelled after %1 of %2 cells.")
                              .arg(localeCount(static_cast<std::int64_t>(run_.cellsDone())))
                              .arg(localeCount(static_cast<std::int64_t>(run_.cellCount()))));
    });
    auto refreshPolicies = [this] {
        stale_ = true;
        const QString keep = policy_->currentData().toString();
        policy_->clear();
        policy_->addItem(tr("every policy"), QString());
        for (const Policy& p : workbench_.document().policies().policies)
            policy_->addItem(QString::fromStdString(p.name), QString::fromStdString(p.name));
        policy_->setCurrentIndex(std::max(0, policy_->findData(keep)));
        proposeRanges();
    };
    connect(&workbench_.document(), &PolicyDocument::reloaded, this, refreshPolicies);
    connect(&workbench_, &Workbench::scenarioChanged, this, [this] { stale_ = true; });
    refreshPolicies();
    showMetrics();
    updateButtons();
}

void TradeoffPanel::proposeRanges() {
    proposeRange(0);
    proposeRange(1);
}

void TradeoffPanel::proposeRange(int row) {
    const PolicySet& set = workbench_.document().policies();
    if (set.policies.empty()) return;
    // Around the chosen policy's number; for "every policy", the first policy's.
    const int chosen = std::max(0, policy_->currentIndex() - 1);
    const Policy& p = set.policies[static_cast<std::size_t>(
        std::min<int>(chosen, static_cast<int>(set.policies.size()) - 1))];
    AxisRow& r = rows_[row];
    r.range->setText(
        rangeText(sim::axisAround(p, r.field->currentData().toString().toStdString())));
}

void TradeoffPanel::setAxes(const std::vector<sim::SweepAxis>& axes) {
    for (std::size_t r = 0; r < 2 && r < axes.size(); ++r) {
        QSignalBlocker block(rows_[r].field);
        rows_[r].field->setCurrentIndex(
            rows_[r].field->findData(QString::fromStdString(axes[r].field)));
        rows_[r].range->setText(rangeText(axes[r]));
    }
    if (axes.size() == 1 &&
        rows_[1].field->currentData().toString().toStdString() == axes[0].field) {
        // One axis given: the other row varies capacity, or refill when that is the one given.
        const std::string other = axes[0].field == "capacity" ? "refill" : "capacity";
        rows_[1].field->setCurrentIndex(rows_[1].field->findData(QString::fromStdString(other)));
    }
    if (!axes.empty()) {
        policy_->setCurrentIndex(
            std::max(0, policy_->findData(QString::fromStdString(axes[0].policy))));
    }
}

std::vector<sim::SweepAxis> TradeoffPanel::formAxes(std::string& error) const {
    std::vector<sim::SweepAxis> axes;
    const std::string policy = policy_->currentData().toString().toStdString();
    for (const AxisRow& row : rows_) {
        std::string text = row.field->currentData().toString().toStdString() + "=" +
                           row.range->text().trimmed().toStdString();
        if (!policy.empty()) text = policy + "." + text;
        std::optional<sim::SweepAxis> axis = sim::parseSweepAxis(text, error, "trade-off range");
        if (!axis) return {};
        axes.push_back(std::move(*axis));
    }
    if (axes[0].field == axes[1].field) {
        error = "both axes vary " + axes[0].field + "; choose two different fields";
        return {};
    }
    return axes;
}

bool TradeoffPanel::startMap() {
    if (!workbench_.hasScenario()) {
        fail(tr("Open a scenario first: the map runs it once per cell."));
        return false;
    }
    const PolicyDocument& document = workbench_.document();
    std::vector<Diagnostic> problems;
    for (const Diagnostic& d : document.diagnostics()) {
        if (d.severity == Diagnostic::Severity::Error) problems.push_back(d);
    }
    if (problems.empty())
        problems = sim::checkScenarioAgainstPolicy(workbench_.scenario(), document.policies());
    if (hasErrors(problems)) {
        fail(tr("The scenario cannot run with these policies:\n\n%1")
                 .arg(diagnosticsText(problems)));
        return false;
    }
    std::string error;
    std::vector<sim::SweepAxis> axes = formAxes(error);
    if (axes.empty() ||
        !run_.start(workbench_.scenario(), document.policies(), std::move(axes), error)) {
        fail(QString::fromStdString(error));
        return false;
    }
    stale_ = false;
    return true;
}

void TradeoffPanel::cancelMap() {
    run_.cancel();
}

bool TradeoffPanel::mapMatchesInputs() const {
    if (stale_ || run_.state() != TradeoffRun::State::Finished) return false;
    std::string error;
    const std::vector<sim::SweepAxis> axes = formAxes(error);
    if (!sameAxes(axes, run_.axes())) return false;
    // The edited policies may differ from the map's in the swept fields only (a cell was
    // loaded): then every cell is the same run.
    const std::vector<double>& first = run_.decision()->result.cells.front().values;
    const std::optional<PolicySet> now =
        sim::applySweepValues(workbench_.document().policies(), axes, first, error);
    const std::optional<PolicySet> then =
        sim::applySweepValues(run_.policies(), axes, first, error);
    return now && then && *now == *then;
}

void TradeoffPanel::suggest() {
    pendingSuggest_ = true;
    if (mapMatchesInputs()) {
        applySuggestion();
        return;
    }
    if (!startMap()) pendingSuggest_ = false;
}

void TradeoffPanel::applySuggestion() {
    pendingSuggest_ = false;
    const sim::TradeoffMap& map = *run_.decision();
    if (map.recommended) {
        std::string error;
        if (!run_.loadCellInto(*map.recommended, workbench_.document(), tr("suggested limits"),
                               error)) {
            fail(QString::fromStdString(error));
            return;
        }
    }
    message_->setText(suggestionMessage(run_.scenario(), map));
}

QString TradeoffPanel::message() const {
    return message_->text();
}

void TradeoffPanel::fail(const QString& text) {
    message_->setText(text);
    ui_.showError(tr("Cannot map the trade-off"), text);
}

void TradeoffPanel::showMetrics() {
    const QString keep = metric_->currentText();
    QSignalBlocker block(metric_);
    metric_->clear();
    metric_->addItems(run_.metrics());
    const int i = metric_->findText(keep);
    metric_->setCurrentIndex(i >= 0 ? i : 0);
    map_->setMetric(metric_->currentText());
}

void TradeoffPanel::updateButtons() {
    const bool running = run_.state() == TradeoffRun::State::Running;
    cancelButton_->setEnabled(running);
}

}  // namespace ratelab::gui
