#pragma once

// The four live charts: requests per second by class (allowed and throttled), keyspace with
// the store's cap, store errors and fail-open passes, and decision latency. Each frame it
// decimates every series to its plot's width and replaces each line once.

#include <QWidget>

#include <array>
#include <vector>

#include "run_series.h"

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

private:
    const RunSeries& series_;
    std::array<TimePlot*, 4> plots_{};
    std::vector<int> lines_;  // per series: its line in its plot
};

}  // namespace ratelab::gui
