#pragma once

// The trade-off map drawn: one square per cell of a TradeoffRun, the first axis across and the
// second up, coloured by a chosen metric (pale for the least, dark for the most); cells where
// every expectation holds outlined, the Pareto frontier dotted, the recommended cell starred.
// Hovering shows a cell's figures; clicking one emits cellClicked().

#include <QWidget>

#include <optional>

namespace ratelab::gui {

class TradeoffRun;

/// GUI thread only. Draws what the run holds; holds nothing but the metric shown.
class TradeoffMapView : public QWidget {
    Q_OBJECT

public:
    explicit TradeoffMapView(const TradeoffRun& run, QWidget* parent = nullptr);

    /// The metric the colours show (one of TradeoffRun::metrics()).
    void setMetric(const QString& metric);
    const QString& metric() const { return metric_; }

    /// The cell under `point` (widget coordinates), if any.
    std::optional<std::size_t> cellAt(QPoint point) const;
    /// The centre of the cell's square (for tests and for tooltips).
    QPoint cellCentre(std::size_t index) const;
    /// The tooltip the cell shows.
    QString toolTipFor(std::size_t index) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    void cellClicked(std::size_t index);

protected:
    bool event(QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;

private:
    QRect plotArea() const;
    QRect cellRect(std::size_t index) const;
    std::size_t columns() const;
    std::size_t rows() const;

    const TradeoffRun& run_;
    QString metric_;
};

}  // namespace ratelab::gui
