#pragma once

// The workbench's only door to the plotting module. Every Qt Charts type stays behind this
// header (in time_plot.cpp), so a move to another plotting module touches this folder only.

#include <QColor>
#include <QList>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <memory>
#include <vector>

namespace ratelab::gui {

/// A shaded stretch of the x axis (a store outage, added latency) drawn behind the lines.
struct PlotBand {
    double from = 0;
    double to = 0;
    QColor color;
};

/// A line chart over time: lines replaced whole each frame, an optional horizontal threshold
/// (a cap), shaded bands and a vertical cursor. GUI thread only.
class TimePlot : public QWidget {
    Q_OBJECT

public:
    TimePlot(const QString& title, const QString& yTitle, QWidget* parent = nullptr);
    ~TimePlot() override;

    /// Draws lines through OpenGL where the platform supports it (never under the offscreen
    /// or minimal platforms, where Qt Charts' OpenGL path crashes). Applies to lines added later.
    static void setOpenGLRequested(bool requested);
    static bool openGLActive();

    void setTitle(const QString& title);
    QString title() const;
    /// Where the legend sits: Qt::AlignTop (the default, one row) or Qt::AlignRight (one
    /// column, for more lines than a row has room to name).
    void setLegendAlignment(Qt::Alignment alignment);

    /// Adds a line `width` pixels wide; returns its index for setPoints().
    int addLine(const QString& name, const QColor& color, Qt::PenStyle style = Qt::SolidLine,
                double width = 2.0);
    /// Shows or hides a line, its legend entry with it.
    void setLineShown(int line, bool shown);
    bool lineShown(int line) const;
    void setLineName(int line, const QString& name);
    /// Removes every line, the threshold and the bands.
    void clear();
    /// Replaces a line's points (one replace() call). Non-finite points are dropped.
    void setPoints(int line, const QList<QPointF>& points);
    /// A dashed horizontal line at `value`, named in the legend; hidden when value <= 0.
    void setThreshold(double value, const QString& name, const QColor& color);
    void setBands(std::vector<PlotBand> bands);
    /// The vertical "now" line; hidden when x < 0.
    void setCursorX(double x);
    void setXRange(double min, double max);
    /// Sets the y range from 0 to a rounded-up `max` (at least `floor`).
    void setYMax(double max, double floor = 1.0);
    double yMax() const;
    /// The plot area's width in device-independent pixels: how many columns to decimate to.
    int plotColumns() const;
    /// Number of points a line holds now, its legend name and its dash (for tests).
    qsizetype pointCount(int line) const;
    QList<QPointF> points(int line) const;
    /// The names the legend shows (for tests).
    QStringList legendNames() const;
    QString lineName(int line) const;
    Qt::PenStyle lineStyle(int line) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ratelab::gui
