#include "gui/plot/time_plot.h"

#include <QGraphicsRectItem>
#include <QGuiApplication>
#include <QLocale>
#include <QMouseEvent>
#include <QVBoxLayout>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>

namespace ratelab::gui {

namespace {

bool openGLRequested = false;

// QChartView::mousePressEvent in 6.4.2 dereferences itemAt() without a null check
// (QTBUG-118669, fixed after 6.4): a click on an empty margin crashes. Only clicks that land on
// an item reach it; the workbench needs no chart interaction beyond that.
class SafeChartView final : public QChartView {
public:
    using QChartView::QChartView;

protected:
    void mousePressEvent(QMouseEvent* event) override {
        if (itemAt(event->position().toPoint()) != nullptr) {
            QChartView::mousePressEvent(event);
        } else {
            event->ignore();
        }
    }
};

// A range's rounded-up top: 1, 2, 2.5 or 5 times a power of ten.
double niceCeiling(double value) {
    if (!(value > 0) || !std::isfinite(value)) return 1.0;
    const double magnitude = std::pow(10.0, std::floor(std::log10(value)));
    for (double step : {1.0, 2.0, 2.5, 5.0, 10.0}) {
        if (value <= step * magnitude * (1 + 1e-12)) return step * magnitude;
    }
    return 10 * magnitude;
}

// The tick step for an axis from 0 to `top` (a niceCeiling): 4 to 6 intervals of 1, 2, 2.5 or
// 5 times a power of ten, so labels read 0, 50, 100, ... rather than 0, 62.5, 125, ...
double niceStep(double top) {
    if (!(top > 0) || !std::isfinite(top)) return 1.0;
    const double magnitude = std::pow(10.0, std::floor(std::log10(top)) - 1);
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0, 20.0, 25.0, 50.0}) {
        const double intervals = top / (m * magnitude);
        if (intervals <= 6 + 1e-9) return m * magnitude;
    }
    return top / 5;
}

// Qt Charts lays dynamic ticks out on every change, synchronously: a new range under the old
// interval (0..20000 in steps of 0.2) would build a hundred thousand tick items. The interval
// is widened first, so no intermediate state has more than a few ticks.
void setAxis(QValueAxis* axis, double min, double max, double step) {
    axis->setTickInterval(std::max({axis->max() - axis->min(), max - min, step}));
    axis->setRange(min, max);
    axis->setTickInterval(step);
}

void hideFromLegend(QChart* chart, QAbstractSeries* series) {
    for (QLegendMarker* marker : chart->legend()->markers(series))
        marker->setVisible(false);
}

}  // namespace

struct TimePlot::Impl {
    QChart* chart = nullptr;
    SafeChartView* view = nullptr;
    QValueAxis* x = nullptr;
    QValueAxis* y = nullptr;
    std::vector<QLineSeries*> lines;
    QLineSeries* threshold = nullptr;
    QLineSeries* cursor = nullptr;
    std::vector<PlotBand> bands;
    std::vector<QGraphicsRectItem*> bandItems;
    double cursorX = -1;
    double thresholdValue = 0;

    QLineSeries* newSeries(const QString& name, const QPen& pen, bool inLegend) {
        auto* s = new QLineSeries(chart);
        s->setName(name);
        s->setPen(pen);
        chart->addSeries(s);
        s->attachAxis(x);
        s->attachAxis(y);
        if (!inLegend) hideFromLegend(chart, s);
        return s;
    }

    void placeBands() {
        const QRectF area = chart->plotArea();
        for (std::size_t i = 0; i < bands.size(); ++i) {
            const double from = std::max(bands[i].from, x->min());
            const double to = std::min(bands[i].to, x->max());
            QGraphicsRectItem* item = bandItems[i];
            if (to <= from) {
                item->hide();
                continue;
            }
            const double left = chart->mapToPosition(QPointF(from, y->min())).x();
            const double right = chart->mapToPosition(QPointF(to, y->min())).x();
            item->setRect(QRectF(left, area.top(), right - left, area.height()));
            item->show();
        }
    }

    void placeOverlays() {
        const double top = y->max();
        if (cursorX >= 0) {
            cursor->replace(QList<QPointF>{{cursorX, 0}, {cursorX, top}});
        } else {
            cursor->clear();
        }
        if (thresholdValue > 0) {
            threshold->replace(
                QList<QPointF>{{x->min(), thresholdValue}, {x->max(), thresholdValue}});
        } else {
            threshold->clear();
        }
        placeBands();
    }
};

TimePlot::TimePlot(const QString& title, const QString& yTitle, QWidget* parent)
    : QWidget(parent), impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.chart = new QChart();
    m.chart->setTitle(title);
    QFont titleFont = m.chart->titleFont();
    titleFont.setBold(true);
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.1);
    m.chart->setTitleFont(titleFont);
    m.chart->setAnimationOptions(QChart::NoAnimation);
    m.chart->setMargins(QMargins(4, 2, 4, 2));
    m.chart->setBackgroundRoundness(0);
    m.chart->legend()->setAlignment(Qt::AlignTop);
    m.chart->legend()->setShowToolTips(true);
    // Axis labels in the user's locale, like every number the workbench shows.
    m.chart->setLocale(QLocale());
    m.chart->setLocalizeNumbers(true);

    m.x = new QValueAxis(m.chart);
    m.x->setTitleText(tr("virtual time (s)"));
    m.x->setLabelFormat("%.0f");
    m.x->setRange(0, 60);
    m.y = new QValueAxis(m.chart);
    m.y->setTitleText(yTitle);
    m.y->setLabelFormat("%.0f");
    m.y->setRange(0, 1);
    for (QValueAxis* axis : {m.x, m.y}) {
        axis->setTickType(QValueAxis::TicksDynamic);
        axis->setTickAnchor(0);
    }
    m.x->setTickInterval(10);
    m.y->setTickInterval(0.2);  // the range 0..1
    m.chart->addAxis(m.x, Qt::AlignBottom);
    m.chart->addAxis(m.y, Qt::AlignLeft);

    m.cursor = m.newSeries(tr("now"), QPen(QColor(40, 40, 40, 160), 1, Qt::SolidLine), false);
    m.threshold = m.newSeries(tr("store cap"), QPen(QColor(200, 0, 0), 1.5, Qt::DashLine), true);
    m.threshold->setVisible(false);

    m.view = new SafeChartView(m.chart, this);
    m.view->setRenderHint(QPainter::Antialiasing, true);
    m.view->setMinimumSize(240, 160);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m.view);

    connect(m.chart, &QChart::plotAreaChanged, this, [this] { impl_->placeBands(); });
}

TimePlot::~TimePlot() = default;

void TimePlot::setOpenGLRequested(bool requested) {
    openGLRequested = requested;
}

bool TimePlot::openGLActive() {
    if (!openGLRequested) return false;
    const QString platform = QGuiApplication::platformName();
    return platform == "xcb" || platform == "wayland";
}

void TimePlot::setTitle(const QString& title) {
    impl_->chart->setTitle(title);
}

QString TimePlot::title() const {
    return impl_->chart->title();
}

void TimePlot::setLegendAlignment(Qt::Alignment alignment) {
    impl_->chart->legend()->setAlignment(alignment);
}

int TimePlot::addLine(const QString& name, const QColor& color, Qt::PenStyle style, double width) {
    Impl& m = *impl_;
    QPen pen(color, width, style);
    QLineSeries* s = m.newSeries(name, pen, true);
    if (openGLActive()) s->setUseOpenGL(true);
    m.lines.push_back(s);
    return static_cast<int>(m.lines.size()) - 1;
}

void TimePlot::clear() {
    Impl& m = *impl_;
    for (QLineSeries* s : m.lines) {
        m.chart->removeSeries(s);
        delete s;
    }
    m.lines.clear();
    setBands({});
    m.thresholdValue = 0;
    m.threshold->setVisible(false);
    m.cursorX = -1;
    m.placeOverlays();
}

void TimePlot::setPoints(int line, const QList<QPointF>& points) {
    QLineSeries* s = impl_->lines.at(static_cast<std::size_t>(line));
    bool finite = true;
    for (const QPointF& p : points) {
        if (!std::isfinite(p.x()) || !std::isfinite(p.y())) {
            finite = false;
            break;
        }
    }
    if (finite) {
        s->replace(points);
        return;
    }
    QList<QPointF> clean;
    clean.reserve(points.size());
    for (const QPointF& p : points) {
        if (std::isfinite(p.x()) && std::isfinite(p.y())) clean.append(p);
    }
    s->replace(clean);
}

void TimePlot::setThreshold(double value, const QString& name, const QColor& color) {
    Impl& m = *impl_;
    m.thresholdValue = value;
    m.threshold->setName(name);
    m.threshold->setPen(QPen(color, 1.5, Qt::DashLine));
    m.threshold->setVisible(value > 0);
    m.placeOverlays();
}

void TimePlot::setBands(std::vector<PlotBand> bands) {
    Impl& m = *impl_;
    for (QGraphicsRectItem* item : m.bandItems)
        delete item;
    m.bandItems.clear();
    m.bands = std::move(bands);
    for (const PlotBand& b : m.bands) {
        auto* item = new QGraphicsRectItem(m.chart);
        item->setBrush(b.color);
        item->setPen(Qt::NoPen);
        item->setZValue(-1);  // behind the lines, above the background
        m.bandItems.push_back(item);
    }
    m.placeBands();
}

void TimePlot::setCursorX(double x) {
    impl_->cursorX = x;
    impl_->placeOverlays();
}

void TimePlot::setXRange(double min, double max) {
    Impl& m = *impl_;
    if (!(max > min)) max = min + 1;  // equal bounds hide the axis (QTBUG-102392)
    if (m.x->min() == min && m.x->max() == max) return;
    setAxis(m.x, min, max, niceStep(max - min));
    m.placeOverlays();
}

void TimePlot::setYMax(double max, double floor) {
    Impl& m = *impl_;
    const double top = niceCeiling(std::max(max, floor) * 1.05);
    if (m.y->max() == top) return;
    const double step = niceStep(top);
    m.y->setLabelFormat(step < 1 ? "%.1f" : "%.0f");
    setAxis(m.y, 0, top, step);
    m.placeOverlays();
}

double TimePlot::yMax() const {
    return impl_->y->max();
}

int TimePlot::plotColumns() const {
    const int width = static_cast<int>(impl_->chart->plotArea().width());
    return width > 10 ? width : std::max(10, this->width());
}

void TimePlot::setLineShown(int line, bool shown) {
    QLineSeries* s = impl_->lines.at(static_cast<std::size_t>(line));
    s->setVisible(shown);
    for (QLegendMarker* marker : impl_->chart->legend()->markers(s))
        marker->setVisible(shown);
}

bool TimePlot::lineShown(int line) const {
    return impl_->lines.at(static_cast<std::size_t>(line))->isVisible();
}

void TimePlot::setLineName(int line, const QString& name) {
    impl_->lines.at(static_cast<std::size_t>(line))->setName(name);
}

QList<QPointF> TimePlot::points(int line) const {
    return impl_->lines.at(static_cast<std::size_t>(line))->points();
}

QStringList TimePlot::legendNames() const {
    QStringList names;
    for (QLegendMarker* marker : impl_->chart->legend()->markers()) {
        if (marker->isVisible()) names << marker->label();
    }
    return names;
}

qsizetype TimePlot::pointCount(int line) const {
    return impl_->lines.at(static_cast<std::size_t>(line))->count();
}

QString TimePlot::lineName(int line) const {
    return impl_->lines.at(static_cast<std::size_t>(line))->name();
}

Qt::PenStyle TimePlot::lineStyle(int line) const {
    return impl_->lines.at(static_cast<std::size_t>(line))->pen().style();
}

}  // namespace ratelab::gui
