#include "gui/plot/decimate.h"

#include <algorithm>
#include <cmath>

namespace ratelab::gui {

QList<QPointF> decimateMinMax(std::span<const double> xs, std::span<const double> ys, double x0,
                              double x1, int columns) {
    QList<QPointF> out;
    const auto first = std::lower_bound(xs.begin(), xs.end(), x0);
    const auto last = std::upper_bound(first, xs.end(), x1);
    const std::size_t begin = static_cast<std::size_t>(first - xs.begin());
    const std::size_t end = static_cast<std::size_t>(last - xs.begin());
    if (begin >= end) return out;

    const std::size_t maxPoints = 2 * static_cast<std::size_t>(std::max(columns, 1));
    if (end - begin <= maxPoints) {
        out.reserve(static_cast<qsizetype>(end - begin));
        for (std::size_t i = begin; i < end; ++i) {
            if (std::isfinite(ys[i]) && std::isfinite(xs[i])) out.append(QPointF(xs[i], ys[i]));
        }
        return out;
    }

    out.reserve(static_cast<qsizetype>(maxPoints));
    const double width = x1 > x0 ? x1 - x0 : 1.0;
    const double perColumn = width / columns;
    std::size_t i = begin;
    while (i < end) {
        // One pixel column: every point up to the column's right edge.
        const int column = std::min(columns - 1, static_cast<int>((xs[i] - x0) / perColumn));
        const double edge = x0 + perColumn * (column + 1);
        std::size_t lo = end;
        std::size_t hi = end;
        // The first point always belongs to its column, even when rounding puts it on the edge.
        bool firstPoint = true;
        for (; i < end && (firstPoint || xs[i] < edge || column == columns - 1); ++i) {
            firstPoint = false;
            if (!std::isfinite(ys[i])) continue;
            if (lo == end || ys[i] < ys[lo]) lo = i;
            if (hi == end || ys[i] > ys[hi]) hi = i;
        }
        if (lo == end) continue;
        if (lo == hi) {
            out.append(QPointF(xs[lo], ys[lo]));
        } else {
            const std::size_t a = std::min(lo, hi);
            const std::size_t b = std::max(lo, hi);
            out.append(QPointF(xs[a], ys[a]));
            out.append(QPointF(xs[b], ys[b]));
        }
    }
    return out;
}

}  // namespace ratelab::gui
