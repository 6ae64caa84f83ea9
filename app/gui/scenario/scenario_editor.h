#pragma once

// The scenario editor: the scenario in use as editable rows (its own fields, its actors,
// events and expectations; the cells in scenario_fields.h), each cell committed when the user
// finishes it (Return, leaving the cell, a choice picked), never while typing. The edit goes to
// the Workbench, which holds it to the scenario loader's rules and restarts the run from it;
// one the loader refuses is marked on its cell with the loader's message and not applied. A
// replayed access log has nothing to edit: the editor says why and stays disabled.

#include <QStringList>
#include <QWidget>

#include <array>
#include <functional>
#include <string_view>
#include <vector>

#include "sim/scenario/scenario.h"

class QLabel;
class QTableWidget;

namespace ratelab::gui {

class Workbench;

/// GUI thread only. Holds no scenario of its own: the Workbench's is the one shown, and a
/// refused edit lives only in the cells that show it.
class ScenarioEditor : public QWidget {
    Q_OBJECT

public:
    enum class Table { Run, Actors, Events, Expectations };

    explicit ScenarioEditor(Workbench& workbench, QWidget* parent = nullptr);

    /// The cell of row `row` editing the field the scenario file writes at `path` (relative to
    /// the row's object, e.g. "arrival/rate_per_s"; "duration_s" for the run's fields, row 0):
    /// a QLineEdit or a QComboBox, null when there is none. A refused cell has the property
    /// "refused" set and the loader's message as its tool tip.
    QWidget* cell(Table table, int row, std::string_view path) const;
    /// The view of a table's rows; null for Table::Run, whose one row is a line of fields.
    QTableWidget* rows(Table table) const;
    /// Why the last edit was not applied (each problem and where the file would have it);
    /// empty after an applied edit.
    QString message() const;
    /// The sentence saying why there is nothing to edit; empty when the scenario is editable.
    QString disabledReason() const;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct Grid {
        QTableWidget* view = nullptr;              // null for the run's fields
        std::vector<std::vector<QWidget*>> cells;  // [row][column]
    };

    void build();
    void showScenario();
    void showProblems(const QStringList& problems);
    /// Applies a change of a table's rows (add, duplicate, remove) made on a copy of the
    /// scenario; `change` gets the selected row (-1: none) and returns false for no change.
    void changeRows(Table table, const std::function<bool(sim::Scenario&, int)>& change);
    Grid& grid(Table table) { return grids_[static_cast<std::size_t>(table)]; }
    const Grid& grid(Table table) const { return grids_[static_cast<std::size_t>(table)]; }

    /// Shows the Workbench's scenario in a table: rows made anew when their number changed,
    /// cells refilled otherwise (refused cells kept as typed when `keepRefused`).
    template <class Row>
    void fill(bool keepRefused);
    template <class Row>
    void makeRow(int row);
    /// The user finished a cell of `row`: every changed cell of the row applied together.
    template <class Row>
    void commit(int row, QWidget* trigger);

    Workbench& workbench_;
    std::array<Grid, 4> grids_;
    QWidget* runLine_ = nullptr;
    QWidget* content_ = nullptr;
    QLabel* note_ = nullptr;
    QLabel* message_ = nullptr;
    bool committing_ = false;  // the scenario changes because of this editor's own edit
    bool filling_ = false;     // cells are being filled: their signals are not the user's
};

}  // namespace ratelab::gui
