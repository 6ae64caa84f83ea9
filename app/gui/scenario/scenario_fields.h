#pragma once

// The scenario editor's cells: how each field of a scenario, an actor, an event or an
// expectation reads as text (numbers in the user's locale, times in seconds), and how a cell's
// text goes back into the field. A cell checks only that its text is of the field's type (a
// number, an address, a spelling of scenario_names.h); whether the value is allowed is the
// scenario loader's to say (sim::reloadScenario), so the editor refuses what a file would.

#include <QString>
#include <QStringList>

#include <string_view>
#include <vector>

#include "sim/scenario/scenario.h"

namespace ratelab::gui {

/// One column of an editor table over rows of type `Row`.
template <class Row>
struct FieldColumn {
    QString header;
    QString tip;
    /// Where the scenario file writes the field, relative to the row's object
    /// ("arrival/rate_per_s"): a diagnostic at one of these, or inside one, is about this cell.
    std::vector<std::string_view> paths;
    /// The spellings the cell chooses from; empty for free text.
    QStringList choices;
    /// Whether the field means anything for the row as it is (a burst's size does not for a
    /// constant arrival); null: always. A cell that does not apply shows no text.
    bool (*applies)(const Row&) = nullptr;
    QString (*text)(const Row&) = nullptr;
    /// Writes `text` into the field; false, with `error` saying why, when the text is not of the
    /// field's type (the field is then unchanged).
    bool (*set)(Row& row, const QString& text, QString& error) = nullptr;
};

/// What a cell shows for `row`: the field's text, or nothing when it does not apply.
template <class Row>
QString cellText(const FieldColumn<Row>& column, const Row& row) {
    return column.applies && !column.applies(row) ? QString() : column.text(row);
}

/// The scenario-wide fields (one row: the scenario itself).
const std::vector<FieldColumn<sim::Scenario>>& runColumns();
const std::vector<FieldColumn<sim::Actor>>& actorColumns();
const std::vector<FieldColumn<sim::ScenarioEvent>>& eventColumns();
const std::vector<FieldColumn<sim::Expectation>>& expectationColumns();

/// The column a diagnostic at `path` (relative to the row's object) is about: the one with the
/// longest path that is `path` or encloses it. -1 when none does.
template <class Row>
int columnAt(const std::vector<FieldColumn<Row>>& columns, std::string_view path) {
    int best = -1;
    std::size_t bestLength = 0;
    for (std::size_t c = 0; c < columns.size(); ++c) {
        for (std::string_view p : columns[c].paths) {
            const bool encloses =
                path == p ||
                (path.size() > p.size() && path.substr(0, p.size()) == p && path[p.size()] == '/');
            if (encloses && p.size() > bestLength) {
                best = static_cast<int>(c);
                bestLength = p.size();
            }
        }
    }
    return best;
}

/// What a new row holds: an actor named unlike every other, an outage in the run's second
/// half, an expectation on the scenario's first metric.
sim::Actor newActor(const sim::Scenario& scenario);
sim::ScenarioEvent newEvent(const sim::Scenario& scenario);
sim::Expectation newExpectation(const sim::Scenario& scenario);
/// A copy of actor `index`, renamed so that no two actors share a name.
sim::Actor duplicateActor(const sim::Scenario& scenario, std::size_t index);

}  // namespace ratelab::gui
