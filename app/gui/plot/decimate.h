#pragma once

// Decimation for live charts: a series of any length becomes at most two points per pixel
// column, the column's minimum and maximum in the order they occur, so a one-sample attack
// spike survives at any zoom (the M4 idea without the first/last points, which a line through
// min and max already bounds).

#include <QList>
#include <QPointF>

#include <span>

namespace ratelab::gui {

/// The points of (xs[i], ys[i]) with x inside [x0, x1], reduced to at most 2 * `columns`
/// points. `xs` ascending. Points whose y is NaN or infinite are dropped (QXYSeries::replace
/// does not filter them). Returns every point unchanged when there are few enough.
/// REQUIRES: xs.size() == ys.size(), columns >= 1.
QList<QPointF> decimateMinMax(std::span<const double> xs, std::span<const double> ys, double x0,
                              double x1, int columns);

}  // namespace ratelab::gui
