#include "gui/tradeoff/tradeoff_map.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "gui/window/locale_text.h"
#include "sim/decide/tradeoff.h"
#include "gui/tradeoff/tradeoff_run.h"

namespace ratelab::gui {

namespace {

// Pale for the least, dark for the most (the "magma" ramp reversed): the order reads the same
// in grey, and the frontier's white dots and the green outlines stand out on every step.
QColor rampColour(double t) {
    static const QColor stops[] = {QColor(252, 253, 191), QColor(253, 159, 108),
                                   QColor(221, 81, 58),   QColor(140, 41, 129),
                                   QColor(59, 15, 112),   QColor(0, 0, 4)};
    constexpr int kLast = static_cast<int>(std::size(stops)) - 1;
    t = std::clamp(t, 0.0, 1.0) * kLast;
    const int i = std::min(kLast - 1, static_cast<int>(std::floor(t)));
    const double f = t - i;
    auto mix = [f](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
    return QColor(mix(stops[i].red(), stops[i + 1].red()),
                  mix(stops[i].green(), stops[i + 1].green()),
                  mix(stops[i].blue(), stops[i + 1].blue()));
}

QPolygonF star(QPointF centre, double outer) {
    QPolygonF points;
    for (int k = 0; k < 10; ++k) {
        const double r = k % 2 == 0 ? outer : outer * 0.45;
        const double angle = -M_PI / 2 + k * M_PI / 5;
        points << centre + QPointF(r * std::cos(angle), r * std::sin(angle));
    }
    return points;
}

const QColor kPassOutline(0, 176, 80);

}  // namespace

TradeoffMapView::TradeoffMapView(const TradeoffRun& run, QWidget* parent)
    : QWidget(parent), run_(run), metric_(TradeoffRun::kLegitThrottled) {
    setObjectName("tradeoffMap");
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    auto repaint = [this] { update(); };
    connect(&run_, &TradeoffRun::started, this, repaint);
    connect(&run_, &TradeoffRun::cellFinished, this, repaint);
    connect(&run_, &TradeoffRun::finished, this, repaint);
    connect(&run_, &TradeoffRun::cancelled, this, repaint);
}

void TradeoffMapView::setMetric(const QString& metric) {
    if (metric == metric_) return;
    metric_ = metric;
    update();
}

QSize TradeoffMapView::sizeHint() const {
    return {520, 440};
}

QSize TradeoffMapView::minimumSizeHint() const {
    return {260, 220};
}

std::size_t TradeoffMapView::columns() const {
    return run_.axisValues().empty() ? 0 : run_.axisValues()[0].size();
}

std::size_t TradeoffMapView::rows() const {
    return run_.axisValues().size() > 1 ? run_.axisValues()[1].size() : 1;
}

QRect TradeoffMapView::plotArea() const {
    const int line = fontMetrics().height();
    const int left = fontMetrics().horizontalAdvance("0000.00") + 10;
    const int right = fontMetrics().horizontalAdvance("0.0000e+00") + 30;
    return QRect(left, line + 8, width() - left - right, height() - 4 * line - 22);
}

QRect TradeoffMapView::cellRect(std::size_t index) const {
    const std::size_t cols = columns();
    const std::size_t rowCount = rows();
    if (cols == 0 || index >= cols * rowCount) return {};
    const QRect area = plotArea();
    // Grid order: the last axis varies fastest, so the first axis is the column.
    const std::size_t column = index / rowCount;
    const std::size_t row = index % rowCount;
    const double w = static_cast<double>(area.width()) / static_cast<double>(cols);
    const double h = static_cast<double>(area.height()) / static_cast<double>(rowCount);
    const int x0 = area.left() + static_cast<int>(std::lround(w * column));
    const int x1 = area.left() + static_cast<int>(std::lround(w * (column + 1)));
    // The second axis grows upwards.
    const std::size_t fromTop = rowCount - 1 - row;
    const int y0 = area.top() + static_cast<int>(std::lround(h * fromTop));
    const int y1 = area.top() + static_cast<int>(std::lround(h * (fromTop + 1)));
    return QRect(QPoint(x0, y0), QPoint(x1 - 1, y1 - 1));
}

std::optional<std::size_t> TradeoffMapView::cellAt(QPoint point) const {
    for (std::size_t i = 0; i < run_.cellCount(); ++i) {
        if (cellRect(i).contains(point)) return i;
    }
    return std::nullopt;
}

QPoint TradeoffMapView::cellCentre(std::size_t index) const {
    return cellRect(index).center();
}

QString TradeoffMapView::toolTipFor(std::size_t index) const {
    return run_.cellSummary(index, metric_);
}

bool TradeoffMapView::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        if (const std::optional<std::size_t> i = cellAt(help->pos())) {
            QToolTip::showText(help->globalPos(), toolTipFor(*i), this, cellRect(*i));
        } else {
            QToolTip::hideText();
            event->ignore();
        }
        return true;
    }
    return QWidget::event(event);
}

void TradeoffMapView::mouseReleaseEvent(QMouseEvent* event) {
    if (event->button() == Qt::LeftButton) {
        if (const std::optional<std::size_t> i = cellAt(event->position().toPoint())) {
            if (run_.cell(*i)) emit cellClicked(*i);
        }
    }
    QWidget::mouseReleaseEvent(event);
}

void TradeoffMapView::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.fillRect(rect(), palette().window());
    const QFontMetrics fm = fontMetrics();
    const std::size_t cells = run_.cellCount();
    if (cells == 0) {
        painter.setPen(palette().color(QPalette::PlaceholderText));
        painter.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap,
                         tr("Choose the fields and their ranges, then press Map."));
        return;
    }
    std::optional<double> least;
    std::optional<double> most;
    for (std::size_t i = 0; i < cells; ++i) {
        if (const std::optional<double> v = run_.metricValue(i, metric_)) {
            least = std::min(least.value_or(*v), *v);
            most = std::max(most.value_or(*v), *v);
        }
    }
    const sim::TradeoffMap* decision = run_.decision();
    painter.setRenderHint(QPainter::Antialiasing, false);
    for (std::size_t i = 0; i < cells; ++i) {
        const QRect r = cellRect(i);
        const sim::SweepCell* c = run_.cell(i);
        if (!c) {
            painter.fillRect(r, palette().color(QPalette::Midlight));
            continue;
        }
        if (!c->invalid.empty()) {
            painter.fillRect(r, QBrush(palette().color(QPalette::Mid), Qt::BDiagPattern));
            continue;
        }
        const double v = run_.metricValue(i, metric_).value_or(0);
        const double span = *most - *least;
        painter.fillRect(r, rampColour(span > 0 ? (v - *least) / span : 0.0));
        if (c->pass) {
            painter.setPen(QPen(kPassOutline, 3));
            painter.setBrush(Qt::NoBrush);
            painter.drawRect(r.adjusted(2, 2, -2, -2));
        }
    }
    painter.setRenderHint(QPainter::Antialiasing, true);
    if (decision) {
        const int dot = std::max(3, std::min(cellRect(0).width(), cellRect(0).height()) / 8);
        painter.setPen(QPen(Qt::black, 1.5));
        painter.setBrush(Qt::white);
        for (std::size_t i : decision->frontier)
            painter.drawEllipse(QPointF(cellRect(i).center()), dot, dot);
        if (decision->recommended) {
            painter.setPen(QPen(Qt::black, 1.5));
            painter.setBrush(QColor(255, 215, 0));
            painter.drawPolygon(star(cellRect(*decision->recommended).center(), dot * 2.6));
        }
    }
    painter.setRenderHint(QPainter::Antialiasing, false);

    // Axes: the values under the columns and beside the rows, as many as fit.
    const QRect area = plotArea();
    const std::vector<std::vector<double>>& values = run_.axisValues();
    painter.setPen(palette().color(QPalette::WindowText));
    auto label = [](double v) { return localeNumber(v); };
    const std::size_t cols = columns();
    const std::size_t rowCount = rows();
    const int cellW = area.width() / static_cast<int>(std::max<std::size_t>(1, cols));
    int widest = 0;
    for (double v : values[0])
        widest = std::max(widest, fm.horizontalAdvance(label(v)));
    const std::size_t everyX =
        static_cast<std::size_t>(std::max(1, (widest + 8) / std::max(1, cellW) + 1));
    for (std::size_t c = 0; c < cols; c += everyX) {
        const QRect r = cellRect(c * rowCount);
        painter.drawText(QRect(r.left() - 20, area.bottom() + 4, r.width() + 40, fm.height()),
                         Qt::AlignHCenter | Qt::AlignTop, label(values[0][c]));
    }
    auto axisTitle = [](const sim::SweepAxis& axis) {
        return QString::fromStdString(axis.policy.empty() ? axis.field
                                                          : axis.policy + "." + axis.field);
    };
    painter.drawText(QRect(area.left(), area.bottom() + 4 + fm.height(), area.width(), fm.height()),
                     Qt::AlignHCenter | Qt::AlignTop, axisTitle(run_.axes()[0]) + QString(" →"));
    if (values.size() > 1) {
        const int cellH = area.height() / static_cast<int>(rowCount);
        const std::size_t everyY =
            static_cast<std::size_t>(std::max(1, fm.height() / std::max(1, cellH) + 1));
        for (std::size_t r = 0; r < rowCount; r += everyY) {
            const QRect cr = cellRect(r);
            painter.drawText(QRect(0, cr.top(), area.left() - 6, cr.height()),
                             Qt::AlignRight | Qt::AlignVCenter, label(values[1][r]));
        }
        painter.drawText(QRect(0, 2, area.left() + 200, fm.height()), Qt::AlignLeft | Qt::AlignTop,
                         axisTitle(run_.axes()[1]) + QString(" ↑"));
    }

    // The colour bar: the metric's least at the bottom, its most at the top.
    const QRect bar(area.right() + 12, area.top(), 14, area.height());
    for (int y = 0; y < bar.height(); ++y) {
        painter.setPen(rampColour(1.0 - static_cast<double>(y) / std::max(1, bar.height() - 1)));
        painter.drawLine(bar.left(), bar.top() + y, bar.right(), bar.top() + y);
    }
    painter.setPen(palette().color(QPalette::WindowText));
    if (least) {
        painter.drawText(QPoint(bar.right() + 4, bar.top() + fm.ascent()), label(*most));
        painter.drawText(QPoint(bar.right() + 4, bar.bottom()), label(*least));
    }
    painter.drawText(QRect(area.right() - 300, 2, 300 + bar.width() + 12, fm.height()),
                     Qt::AlignRight | Qt::AlignTop, metric_);

    // The key.
    int x = area.left();
    const int y = height() - fm.height() - 4;
    painter.setPen(QPen(kPassOutline, 3));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(x, y + 2, fm.height() - 4, fm.height() - 4);
    x += fm.height() + 2;
    painter.setPen(palette().color(QPalette::WindowText));
    const QString pass = tr("meets every expectation");
    painter.drawText(QPoint(x, y + fm.ascent()), pass);
    x += fm.horizontalAdvance(pass) + 16;
    painter.setRenderHint(QPainter::Antialiasing, true);
    painter.setPen(QPen(Qt::black, 1.5));
    painter.setBrush(Qt::white);
    painter.drawEllipse(QPointF(x + fm.height() / 2.0, y + fm.height() / 2.0), 4, 4);
    x += fm.height() + 2;
    painter.setPen(palette().color(QPalette::WindowText));
    const QString frontier = tr("Pareto frontier");
    painter.drawText(QPoint(x, y + fm.ascent()), frontier);
    x += fm.horizontalAdvance(frontier) + 16;
    painter.setPen(QPen(Qt::black, 1.5));
    painter.setBrush(QColor(255, 215, 0));
    painter.drawPolygon(
        star(QPointF(x + fm.height() / 2.0, y + fm.height() / 2.0), fm.height() / 2.0));
    x += fm.height() + 2;
    painter.setPen(palette().color(QPalette::WindowText));
    painter.drawText(QPoint(x, y + fm.ascent()), tr("recommended (Suggest)"));
}

}  // namespace ratelab::gui
