#include "gui/scenario/scenario_editor.h"

#include <QAction>
#include <QComboBox>
#include <QDoubleValidator>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTabWidget>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <charconv>

#include "gui/scenario/scenario_fields.h"
#include "gui/session/workbench.h"

namespace ratelab::gui {

namespace {

constexpr const char* kTableProperty = "editorTable";
constexpr const char* kRowProperty = "editorRow";
constexpr const char* kRefusedProperty = "refused";

// Where each table's rows live in the scenario, and where the file writes them.
template <class Row>
struct Rows;

template <>
struct Rows<sim::Scenario> {
    static constexpr ScenarioEditor::Table kTable = ScenarioEditor::Table::Run;
    static constexpr std::string_view kPointer = "";
    static const auto& columns() { return runColumns(); }
    static int count(const sim::Scenario&) { return 1; }
    static sim::Scenario& at(sim::Scenario& s, int) { return s; }
    static const sim::Scenario& at(const sim::Scenario& s, int) { return s; }
};

template <class Row, ScenarioEditor::Table table, std::vector<Row> sim::Scenario::*list>
struct ListRows {
    static constexpr ScenarioEditor::Table kTable = table;
    static int count(const sim::Scenario& s) { return static_cast<int>((s.*list).size()); }
    static Row& at(sim::Scenario& s, int i) { return (s.*list)[static_cast<std::size_t>(i)]; }
    static const Row& at(const sim::Scenario& s, int i) {
        return (s.*list)[static_cast<std::size_t>(i)];
    }
};

template <>
struct Rows<sim::Actor>
    : ListRows<sim::Actor, ScenarioEditor::Table::Actors, &sim::Scenario::actors> {
    static constexpr std::string_view kPointer = "/actors";
    static const auto& columns() { return actorColumns(); }
};

template <>
struct Rows<sim::ScenarioEvent>
    : ListRows<sim::ScenarioEvent, ScenarioEditor::Table::Events, &sim::Scenario::events> {
    static constexpr std::string_view kPointer = "/events";
    static const auto& columns() { return eventColumns(); }
};

template <>
struct Rows<sim::Expectation> : ListRows<sim::Expectation, ScenarioEditor::Table::Expectations,
                                         &sim::Scenario::expectations> {
    static constexpr std::string_view kPointer = "/expect";
    static const auto& columns() { return expectationColumns(); }
};

// The row and column of a table a diagnostic's JSON pointer is about; {-1, -1} when it is not
// about one of the table's cells.
template <class Row>
std::pair<int, int> cellOf(std::string_view pointer) {
    std::string_view rest = pointer;
    int row = 0;
    if (!Rows<Row>::kPointer.empty()) {
        const std::string_view head = Rows<Row>::kPointer;
        if (rest.substr(0, head.size()) != head || rest.size() <= head.size() + 1 ||
            rest[head.size()] != '/')
            return {-1, -1};
        rest.remove_prefix(head.size() + 1);
        const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), row);
        if (ec != std::errc()) return {-1, -1};
        rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
    }
    if (rest.empty() || rest.front() != '/') return {-1, -1};
    rest.remove_prefix(1);
    const int column = columnAt(Rows<Row>::columns(), rest);
    return column < 0 ? std::pair{-1, -1} : std::pair{row, column};
}

QString textOf(const QWidget* cell) {
    if (const auto* box = qobject_cast<const QComboBox*>(cell)) return box->currentText();
    return static_cast<const QLineEdit*>(cell)->text();
}

void showCell(QWidget* cell, const QString& text, bool enabled) {
    const QSignalBlocker block(cell);
    if (auto* box = qobject_cast<QComboBox*>(cell)) {
        box->setCurrentIndex(box->findText(text));
    } else {
        static_cast<QLineEdit*>(cell)->setText(text);
    }
    cell->setEnabled(enabled);
}

bool isRefused(const QWidget* cell) {
    return cell->property(kRefusedProperty).toBool();
}

void refuse(QWidget* cell, const QString& why) {
    cell->setToolTip(isRefused(cell) ? cell->toolTip() + '\n' + why : why);
    cell->setProperty(kRefusedProperty, true);
    cell->setStyleSheet(
        QStringLiteral("%1 { background: #ffd9d9; }").arg(cell->metaObject()->className()));
}

void accept(QWidget* cell, const QString& tip) {
    cell->setProperty(kRefusedProperty, false);
    cell->setToolTip(tip);
    cell->setStyleSheet({});
}

QString problemText(const Diagnostic& d) {
    QString text = QString::fromStdString(d.message);
    if (!d.pointer.empty())
        text += QStringLiteral(" (at %1)").arg(QString::fromStdString(d.pointer));
    return text;
}

template <class Row>
bool applies(const FieldColumn<Row>& column, const Row& row) {
    return !column.applies || column.applies(row);
}

}  // namespace

ScenarioEditor::ScenarioEditor(Workbench& workbench, QWidget* parent)
    : QWidget(parent), workbench_(workbench) {
    build();
    connect(&workbench_, &Workbench::scenarioChanged, this, &ScenarioEditor::showScenario);
    showScenario();
}

void ScenarioEditor::build() {
    note_ = new QLabel(this);
    note_->setObjectName("scenarioEditorNote");
    note_->setWordWrap(true);
    content_ = new QWidget(this);
    runLine_ = new QWidget(content_);
    auto* runLayout = new QHBoxLayout(runLine_);
    runLayout->setContentsMargins(0, 0, 0, 0);
    message_ = new QLabel(content_);
    message_->setObjectName("scenarioEditorMessage");
    message_->setWordWrap(true);
    message_->setStyleSheet(QStringLiteral("color: #b71c1c;"));
    message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    message_->hide();

    auto* tabs = new QTabWidget(content_);
    tabs->setObjectName("scenarioEditorTabs");
    // One page per list: its rows, then the buttons that add and remove them.
    auto page = [&](Table table, const QString& title, const QString& name,
                    const QStringList& headers, const QStringList& tips) {
        auto* w = new QWidget(tabs);
        auto* view = new QTableWidget(0, static_cast<int>(headers.size()), w);
        view->setObjectName(name + "Rows");
        view->setHorizontalHeaderLabels(headers);
        for (int c = 0; c < headers.size(); ++c)
            view->horizontalHeaderItem(c)->setToolTip(tips[c]);
        view->setSelectionBehavior(QAbstractItemView::SelectRows);
        view->setSelectionMode(QAbstractItemView::SingleSelection);
        view->setEditTriggers(QAbstractItemView::NoEditTriggers);
        view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 10);
        view->horizontalHeader()->setDefaultSectionSize(96);
        grid(table).view = view;
        auto* buttons = new QHBoxLayout;
        auto* layout = new QVBoxLayout(w);
        layout->setContentsMargins(2, 2, 2, 2);
        layout->addWidget(view, 1);
        layout->addLayout(buttons);
        tabs->addTab(w, title);
        return buttons;
    };
    auto headersOf = [](const auto& columns, bool tips) {
        QStringList out;
        for (const auto& c : columns)
            out << (tips ? c.tip : c.header);
        return out;
    };
    auto button = [this](QHBoxLayout* row, const QString& text, const QString& name, Table table,
                         std::function<bool(sim::Scenario&, int)> change) {
        auto* b = new QPushButton(text, this);
        b->setObjectName(name);
        row->addWidget(b);
        connect(b, &QPushButton::clicked, this,
                [this, table, change = std::move(change)] { changeRows(table, change); });
    };
    // Duplicate and Remove act on the selected row, or the last one.
    auto pick = [](int selected, std::size_t size) {
        return selected >= 0 && static_cast<std::size_t>(selected) < size
                   ? static_cast<std::size_t>(selected)
                   : size - 1;
    };
    QHBoxLayout* actors = page(Table::Actors, tr("Actors"), "actor",
                               headersOf(actorColumns(), false), headersOf(actorColumns(), true));
    button(actors, tr("Add actor"), "addActor", Table::Actors, [](sim::Scenario& s, int) {
        s.actors.push_back(newActor(s));
        return true;
    });
    button(actors, tr("Duplicate"), "duplicateActor", Table::Actors,
           [pick](sim::Scenario& s, int selected) {
               if (s.actors.empty()) return false;
               const std::size_t i = pick(selected, s.actors.size());
               s.actors.insert(s.actors.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                               duplicateActor(s, i));
               return true;
           });
    button(actors, tr("Remove"), "removeActor", Table::Actors,
           [pick](sim::Scenario& s, int selected) {
               if (s.actors.empty()) return false;
               s.actors.erase(s.actors.begin() +
                              static_cast<std::ptrdiff_t>(pick(selected, s.actors.size())));
               return true;
           });
    actors->addStretch(1);
    // Every crowd's count times a factor (sim::scaleCrowds, the rule of `fit --scale`).
    auto* factor = new QLineEdit(this);
    factor->setObjectName("crowdFactor");
    factor->setPlaceholderText(QLocale().toString(10));
    factor->setMaximumWidth(72);
    factor->setValidator(new QDoubleValidator(0.001, 1000, 3, factor));
    factor->setToolTip(
        tr("Each crowd (an actor of more than one instance) gets this many times "
           "its instances, at least one; single actors stay single."));
    auto* scale = new QPushButton(tr("Scale crowds"), this);
    scale->setObjectName("scaleCrowds");
    actors->addWidget(new QLabel(tr("Crowds x"), this));
    actors->addWidget(factor);
    actors->addWidget(scale);
    auto scaleBy = [this, factor] {
        bool ok = false;
        double f = QLocale().toDouble(factor->text(), &ok);
        if (!ok) f = factor->text().toDouble(&ok);
        if (!ok || !(f > 0)) {
            showProblems({tr("the crowds' factor must be a number above 0, such as 10 or 0.5")});
            return;
        }
        committing_ = true;
        const std::vector<Diagnostic> refused = workbench_.scaleCrowds(f);
        committing_ = false;
        QStringList problems;
        for (const Diagnostic& d : refused)
            problems << problemText(d);
        showProblems(problems);
    };
    connect(scale, &QPushButton::clicked, this, scaleBy);
    connect(factor, &QLineEdit::returnPressed, this, scaleBy);
    QHBoxLayout* events = page(Table::Events, tr("Events"), "event",
                               headersOf(eventColumns(), false), headersOf(eventColumns(), true));
    button(events, tr("Add event"), "addEvent", Table::Events, [](sim::Scenario& s, int) {
        s.events.push_back(newEvent(s));
        return true;
    });
    button(events, tr("Remove"), "removeEvent", Table::Events,
           [pick](sim::Scenario& s, int selected) {
               if (s.events.empty()) return false;
               s.events.erase(s.events.begin() +
                              static_cast<std::ptrdiff_t>(pick(selected, s.events.size())));
               return true;
           });
    events->addStretch(1);
    QHBoxLayout* expect =
        page(Table::Expectations, tr("Expectations"), "expectation",
             headersOf(expectationColumns(), false), headersOf(expectationColumns(), true));
    button(expect, tr("Add expectation"), "addExpectation", Table::Expectations,
           [](sim::Scenario& s, int) {
               s.expectations.push_back(newExpectation(s));
               return true;
           });
    button(expect, tr("Remove"), "removeExpectation", Table::Expectations,
           [pick](sim::Scenario& s, int selected) {
               if (s.expectations.empty()) return false;
               s.expectations.erase(s.expectations.begin() + static_cast<std::ptrdiff_t>(pick(
                                                                 selected, s.expectations.size())));
               return true;
           });
    expect->addStretch(1);

    // Undo and Redo of the scenario's edits (the Edit menu's are the policy's).
    auto* steps = new QHBoxLayout;
    auto stepButton = [this, steps](QAction* action, const char* name) {
        action->setParent(this);
        auto* b = new QToolButton(this);
        b->setObjectName(name);
        b->setDefaultAction(action);
        steps->addWidget(b);
    };
    stepButton(workbench_.scenarioSteps().createUndoAction(this, tr("Undo")), "scenarioUndo");
    stepButton(workbench_.scenarioSteps().createRedoAction(this, tr("Redo")), "scenarioRedo");
    steps->addStretch(1);
    auto* contentLayout = new QVBoxLayout(content_);
    contentLayout->setContentsMargins(0, 0, 0, 0);
    contentLayout->addLayout(steps);
    contentLayout->addWidget(runLine_);
    contentLayout->addWidget(tabs, 1);
    contentLayout->addWidget(message_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(note_);
    layout->addWidget(content_, 1);
}

QWidget* ScenarioEditor::cell(Table table, int row, std::string_view path) const {
    const Grid& g = grid(table);
    if (row < 0 || static_cast<std::size_t>(row) >= g.cells.size()) return nullptr;
    int column = -1;
    switch (table) {
        case Table::Run:
            column = columnAt(runColumns(), path);
            break;
        case Table::Actors:
            column = columnAt(actorColumns(), path);
            break;
        case Table::Events:
            column = columnAt(eventColumns(), path);
            break;
        case Table::Expectations:
            column = columnAt(expectationColumns(), path);
            break;
    }
    return column < 0 ? nullptr : g.cells[static_cast<std::size_t>(row)][column];
}

QTableWidget* ScenarioEditor::rows(Table table) const {
    return grid(table).view;
}

QString ScenarioEditor::message() const {
    return message_->text();
}

QString ScenarioEditor::disabledReason() const {
    return note_->isHidden() ? QString() : note_->text();
}

bool ScenarioEditor::eventFilter(QObject* watched, QEvent* event) {
    // Entering a cell selects its row: Duplicate and Remove act on it.
    const QVariant table = watched->property(kTableProperty);
    if (event->type() == QEvent::FocusIn && table.isValid()) {
        if (QTableWidget* view = grid(static_cast<Table>(table.toInt())).view)
            view->selectRow(watched->property(kRowProperty).toInt());
    }
    return QWidget::eventFilter(watched, event);
}

void ScenarioEditor::showScenario() {
    const bool editable = workbench_.canEditScenario();
    if (!workbench_.hasScenario()) {
        note_->setText(tr("Open a scenario to edit its actors and events."));
    } else if (!editable) {
        note_->setText(
            tr("A replayed access log has nothing to edit: its requests, their times and their "
               "clients come from the log. File > Fit a scenario to a log... turns the log into "
               "a scenario whose actors and events can be edited here."));
    }
    note_->setVisible(!editable);
    content_->setEnabled(editable);
    fill<sim::Scenario>(committing_);
    fill<sim::Actor>(committing_);
    fill<sim::ScenarioEvent>(committing_);
    fill<sim::Expectation>(committing_);
    if (!committing_) showProblems({});
}

void ScenarioEditor::showProblems(const QStringList& problems) {
    message_->setText(problems.isEmpty() ? QString()
                                         : tr("Not applied: %1").arg(problems.join("; ")));
    message_->setVisible(!problems.isEmpty());
}

template <class Row>
void ScenarioEditor::makeRow(int row) {
    Grid& g = grid(Rows<Row>::kTable);
    const auto& columns = Rows<Row>::columns();
    std::vector<QWidget*> cells;
    for (std::size_t c = 0; c < columns.size(); ++c) {
        QWidget* parent = g.view ? static_cast<QWidget*>(g.view) : runLine_;
        QWidget* cell = nullptr;
        if (!columns[c].choices.isEmpty()) {
            auto* box = new QComboBox(parent);
            box->addItems(columns[c].choices);
            connect(box, &QComboBox::currentIndexChanged, this,
                    [this, row, box] { commit<Row>(row, box); });
            cell = box;
        } else {
            auto* edit = new QLineEdit(parent);
            connect(edit, &QLineEdit::editingFinished, this,
                    [this, row, edit] { commit<Row>(row, edit); });
            cell = edit;
        }
        cell->setProperty(kTableProperty, static_cast<int>(Rows<Row>::kTable));
        cell->setProperty(kRowProperty, row);
        cell->installEventFilter(this);
        cell->setToolTip(columns[c].tip);
        if (g.view) {
            g.view->setCellWidget(row, static_cast<int>(c), cell);
        } else {
            auto* layout = static_cast<QHBoxLayout*>(runLine_->layout());
            layout->addWidget(new QLabel(columns[c].header, runLine_));
            layout->addWidget(cell, c == 1 ? 3 : 1);  // the title wants the room
        }
        cells.push_back(cell);
    }
    g.cells.push_back(std::move(cells));
}

template <class Row>
void ScenarioEditor::fill(bool keepRefused) {
    filling_ = true;
    Grid& g = grid(Rows<Row>::kTable);
    const auto& columns = Rows<Row>::columns();
    const bool editable = workbench_.canEditScenario();
    const int n = editable ? Rows<Row>::count(workbench_.scenario()) : 0;
    if (g.view && static_cast<int>(g.cells.size()) != n) {
        g.view->setRowCount(0);  // deletes the cells
        g.cells.clear();
        g.view->setRowCount(n);
        for (int r = 0; r < n; ++r)
            makeRow<Row>(r);
        for (std::size_t c = 0; c < columns.size(); ++c) {
            if (!columns[c].choices.isEmpty()) g.view->resizeColumnToContents(static_cast<int>(c));
        }
    } else if (!g.view && g.cells.empty()) {
        makeRow<Row>(0);
    }
    for (std::size_t r = 0; r < g.cells.size(); ++r) {
        // A refused row stays as the user left it, the edit waiting to be completed or undone.
        const auto& cells = g.cells[r];
        if (keepRefused && std::any_of(cells.begin(), cells.end(), isRefused)) continue;
        for (std::size_t c = 0; c < columns.size(); ++c) {
            QWidget* cell = cells[c];
            accept(cell, columns[c].tip);
            if (!editable) {
                showCell(cell, {}, true);
                continue;
            }
            const Row& row = Rows<Row>::at(workbench_.scenario(), static_cast<int>(r));
            showCell(cell, cellText(columns[c], row), applies(columns[c], row));
        }
    }
    filling_ = false;
}

template <class Row>
void ScenarioEditor::commit(int row, QWidget* trigger) {
    if (filling_ || !workbench_.canEditScenario()) return;
    Grid& g = grid(Rows<Row>::kTable);
    if (row >= Rows<Row>::count(workbench_.scenario()) ||
        static_cast<std::size_t>(row) >= g.cells.size())
        return;
    const auto& columns = Rows<Row>::columns();
    std::vector<QWidget*>& cells = g.cells[static_cast<std::size_t>(row)];
    sim::Scenario candidate = workbench_.scenario();
    const Row before = Rows<Row>::at(candidate, row);
    Row& edited = Rows<Row>::at(candidate, row);
    // Every cell the user changed in the row goes in, so that a change needing another (a
    // pool's network for a new peer kind, a field for a new policy change) can be completed.
    // A disabled cell is no one's input: the field does not apply to the row as edited.
    std::vector<bool> changed(columns.size(), false);
    QStringList problems;
    for (std::size_t c = 0; c < columns.size(); ++c) {
        accept(cells[c], columns[c].tip);
        const QString typed = textOf(cells[c]);
        if (!cells[c]->isEnabled() || typed == cellText(columns[c], before)) continue;
        changed[c] = true;
        QString error;
        if (!columns[c].set(edited, typed, error)) {
            refuse(cells[c], error);
            problems << error;
        }
    }
    if (problems.isEmpty()) {
        committing_ = true;
        const std::vector<Diagnostic> refused = workbench_.editScenario(candidate);
        committing_ = false;
        if (refused.empty()) {
            fill<Row>(true);  // the row as applied ("40.0" reads back as "40")
            showProblems({});
            return;
        }
        for (const Diagnostic& d : refused) {
            const auto [r, c] = cellOf<Row>(d.pointer);
            refuse(r == row ? cells[static_cast<std::size_t>(c)] : trigger,
                   QString::fromStdString(d.message));
            problems << problemText(d);
        }
    }
    // Not applied: the cells the user left show the row as the edit would have made it.
    filling_ = true;
    for (std::size_t c = 0; c < columns.size(); ++c) {
        if (changed[c]) {
            cells[c]->setEnabled(applies(columns[c], edited));
        } else {
            showCell(cells[c], cellText(columns[c], edited), applies(columns[c], edited));
        }
    }
    filling_ = false;
    showProblems(problems);
}

void ScenarioEditor::changeRows(Table table,
                                const std::function<bool(sim::Scenario&, int)>& change) {
    if (!workbench_.canEditScenario()) return;
    sim::Scenario candidate = workbench_.scenario();
    const Grid& g = grid(table);
    const QList<QTableWidgetSelectionRange> ranges =
        g.view ? g.view->selectedRanges() : QList<QTableWidgetSelectionRange>{};
    if (!change(candidate, ranges.isEmpty() ? -1 : ranges.front().topRow())) return;
    committing_ = true;
    const std::vector<Diagnostic> refused = workbench_.editScenario(std::move(candidate));
    committing_ = false;
    QStringList problems;
    for (const Diagnostic& d : refused)
        problems << problemText(d);
    showProblems(problems);
}

}  // namespace ratelab::gui
