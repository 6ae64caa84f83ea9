#pragma once

// The trade-off map's panel: which fields to vary and over which ranges (FROM:TO:STEP, read by
// the sweep's own parser), the metric the colours show, Map / Cancel / Suggest, a progress bar,
// the map itself and what it says. Clicking a cell or pressing Suggest writes numbers into the
// policy document, which the editor shows and the running engine takes.

#include <QWidget>

#include <vector>

#include "sim/decide/sweep.h"
#include "gui/tradeoff/tradeoff_run.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace ratelab::gui {

class TradeoffMapView;
class UserInteraction;
class Workbench;

/// GUI thread only.
class TradeoffPanel : public QWidget {
    Q_OBJECT

public:
    TradeoffPanel(Workbench& workbench, UserInteraction& ui, QWidget* parent = nullptr);

    /// Shows `axes` (one or two, as --tradeoff gives them) in the form.
    /// REQUIRES: each axis's field is one of sim::kSweepFields.
    void setAxes(const std::vector<sim::SweepAxis>& axes);
    /// Maps the form's fields and ranges over the open scenario and the edited policies.
    /// Returns false, and shows why through UserInteraction, when it cannot start.
    bool startMap();
    void cancelMap();
    /// Fills the editor with the pick of `ratelab-cli tune` over the form's ranges and says
    /// why; runs the map first when the one on show is not of the current inputs.
    void suggest();
    /// Proposes ranges around the edited policy's current numbers (sim::axisAround).
    void proposeRanges();

    TradeoffRun& run() { return run_; }
    TradeoffMapView* mapView() const { return map_; }
    /// What the map and Suggest last said.
    QString message() const;
    QProgressBar* progressBar() const { return progress_; }

private:
    struct AxisRow {
        QComboBox* field = nullptr;
        QLineEdit* range = nullptr;
    };
    /// The form read as axes; empty with `error` set when a range does not parse.
    std::vector<sim::SweepAxis> formAxes(std::string& error) const;
    void proposeRange(int row);
    bool mapMatchesInputs() const;
    void applySuggestion();
    void fail(const QString& text);
    void showMetrics();
    void updateButtons();

    Workbench& workbench_;
    UserInteraction& ui_;
    TradeoffRun run_;
    bool stale_ = true;  // the scenario or the policy file changed since the map was made
    bool pendingSuggest_ = false;

    QComboBox* policy_ = nullptr;
    AxisRow rows_[2];
    QComboBox* metric_ = nullptr;
    QPushButton* mapButton_ = nullptr;
    QPushButton* cancelButton_ = nullptr;
    QPushButton* suggestButton_ = nullptr;
    QProgressBar* progress_ = nullptr;
    TradeoffMapView* map_ = nullptr;
    QLabel* message_ = nullptr;
};

}  // namespace ratelab::gui
