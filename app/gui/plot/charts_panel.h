#pragma once

// The four live charts: requests per second by class (allowed and throttled), keyspace with
// the store's cap, store errors (fail-open passes, 503s, local decisions, a full store), and
// decision latency; events and the stretches where the store was full as bands. Each frame it
// decimates every series to its plot's width and replaces each line once.

#include <QWidget>

#include <array>
#include <vector>

#include "gui/plot/time_plot.h"
#include "gui/session/run_series.h"

namespace ratelab::gui {

class TimePlot;

class ChartsPanel : public QWidget {
    Q_OBJECT

public:
    explicit ChartsPanel(const RunSeries& series, QWidget* parent = nullptr);

    /// Lays out lines and event bands for a new run.
    void rebuild(const RunShape& shape);
    /// Redraws every line from the series and moves the "now" cursor. Called once per frame.
    void refresh(double nowSeconds);

    TimePlot* plot(ChartKind kind) const { return plots_[static_cast<std::size_t>(kind)]; }
    /// The plot line a series is drawn with (for tests).
    int lineOf(std::size_t series) const { return lines_.at(series); }
    /// The traffic plot's line drawing RunSeries::highlightLines()[i] (for tests); -1 none yet.
    int highlightLineOf(std::size_t i) const {
        return i < highlightLines_.size() ? highlightLines_[i] : -1;
    }

private:
    /// Shows the highlighted client's lines over the traffic plot's totals, or hides them.
    void showHighlight();

    const RunSeries& series_;
    std::array<TimePlot*, 4> plots_{};
    std::vector<int> lines_;  // per series: its line in its plot
    // Per highlight line (RunSeries::highlightLines), its line in the traffic plot: made when a
    // client is first highlighted in a run, hidden while none is.
    std::vector<int> highlightLines_;
    std::vector<PlotBand> eventBands_;
    double cursorSeconds_ = -1;       // where refresh() last put the "now" cursor
    std::size_t shownFullSpans_ = 0;  // store-full bands drawn so far
    double lastFullSpanEnd_ = 0;
};

}  // namespace ratelab::gui
