#include "gui/plot/charts_panel.h"

#include <QGridLayout>

#include <algorithm>

#include "gui/plot/decimate.h"
#include "gui/plot/time_plot.h"
#include "gui/session/event_style.h"
#include "gui/window/locale_text.h"

namespace ratelab::gui {

namespace {

QColor roleColor(const SeriesSpec& spec) {
    switch (spec.role) {
        case SeriesRole::AllowedPerSecond:
            return classColor(spec.className, spec.classIndex);
        case SeriesRole::ThrottledPerSecond:
            return classColor(spec.className, spec.classIndex).lighter(135);
        case SeriesRole::Buckets:
            return QColor(31, 119, 180);
        case SeriesRole::BudgetSlots:
            return QColor(255, 127, 14);
        case SeriesRole::StoreErrorsPerSecond:
            return QColor(200, 40, 40);
        case SeriesRole::FailedOpenPerSecond:
            return QColor(230, 150, 0);
        case SeriesRole::FailedClosedPerSecond:
            return QColor(120, 60, 170);
        case SeriesRole::DecidedLocallyPerSecond:
            return QColor(0, 140, 140);
        case SeriesRole::StoreFullPerSecond:
            return QColor(90, 90, 90);
        case SeriesRole::EngineNanosPerDecision:
            return QColor(60, 60, 60);
    }
    return Qt::black;
}

// One policy: throttled dashed beside allowed. Compare mode: the dash means B, and allowed and
// throttled tell apart by their shade alone.
Qt::PenStyle roleStyle(const SeriesSpec& spec, bool comparing) {
    if (comparing) return spec.lane == 1 ? Qt::DashLine : Qt::SolidLine;
    return spec.role == SeriesRole::ThrottledPerSecond ? Qt::DashLine : Qt::SolidLine;
}

QString trafficTitle() {
    return ChartsPanel::tr("Requests per second by class");
}

QString storeErrorsTitle() {
    return ChartsPanel::tr("Store errors: fail-open, 503, decided locally");
}

}  // namespace

ChartsPanel::ChartsPanel(const RunSeries& series, QWidget* parent)
    : QWidget(parent), series_(series) {
    plots_[static_cast<std::size_t>(ChartKind::Traffic)] =
        new TimePlot(trafficTitle(), tr("requests / s"), this);
    plots_[static_cast<std::size_t>(ChartKind::Keyspace)] =
        new TimePlot(tr("Keyspace"), tr("keys"), this);
    plots_[static_cast<std::size_t>(ChartKind::StoreErrors)] =
        new TimePlot(storeErrorsTitle(), tr("per second"), this);
    plots_[static_cast<std::size_t>(ChartKind::Latency)] =
        new TimePlot(tr("Engine time per decision"), tr("ns / decision"), this);
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setSpacing(4);
    grid->addWidget(plot(ChartKind::Traffic), 0, 0);
    grid->addWidget(plot(ChartKind::Keyspace), 0, 1);
    grid->addWidget(plot(ChartKind::StoreErrors), 1, 0);
    grid->addWidget(plot(ChartKind::Latency), 1, 1);
    plot(ChartKind::Traffic)->setObjectName("trafficPlot");
    plot(ChartKind::Keyspace)->setObjectName("keyspacePlot");
    plot(ChartKind::StoreErrors)->setObjectName("storeErrorsPlot");
    plot(ChartKind::Latency)->setObjectName("latencyPlot");
    connect(&series_, &RunSeries::highlightChanged, this, &ChartsPanel::showHighlight);
}

void ChartsPanel::showHighlight() {
    const std::vector<HighlightLine>& lines = series_.highlightLines();
    TimePlot* traffic = plot(ChartKind::Traffic);
    // Over the class colours (green, red, blues): orange for allowed, purple for throttled,
    // wider, and dashed as the totals are (throttled; in compare mode B).
    while (highlightLines_.size() < lines.size()) {
        const HighlightLine& line = lines[highlightLines_.size()];
        const bool throttled = line.role == SeriesRole::ThrottledPerSecond;
        const bool dashed = series_.comparing() ? line.lane == 1 : throttled;
        highlightLines_.push_back(
            traffic->addLine(line.name, throttled ? QColor(148, 0, 211) : QColor(255, 127, 0),
                             dashed ? Qt::DashLine : Qt::SolidLine, 3.0));
    }
    for (std::size_t i = 0; i < highlightLines_.size(); ++i) {
        const bool shown = i < lines.size();
        if (shown) traffic->setLineName(highlightLines_[i], lines[i].name);
        traffic->setPoints(highlightLines_[i], {});  // another client's, or none
        traffic->setLineShown(highlightLines_[i], shown);
    }
    refresh(cursorSeconds_);
}

void ChartsPanel::rebuild(const RunShape& shape) {
    const double duration = static_cast<double>(shape.duration) / 1e9;
    eventBands_.clear();
    for (const sim::ScenarioEvent& e : shape.events) {
        eventBands_.push_back(
            {static_cast<double>(e.from) / 1e9, eventDrawnEnd(e, duration), eventColor(e)});
    }
    shownFullSpans_ = 0;
    lastFullSpanEnd_ = 0;
    for (TimePlot* p : plots_) {
        p->clear();
        p->setXRange(0, duration);
        p->setYMax(0);
        p->setBands(eventBands_);
    }
    // Compare mode has four lines per class: a row of legend entries would elide every name,
    // so the legend becomes a column. The banner above the charts names A's and B's files.
    TimePlot* traffic = plot(ChartKind::Traffic);
    traffic->setTitle(shape.comparing() ? tr("Requests per second by class: A solid, B dashed")
                                        : trafficTitle());
    traffic->setLegendAlignment(shape.comparing() ? Qt::AlignRight : Qt::AlignTop);
    plot(ChartKind::StoreErrors)
        ->setTitle(shape.comparing() ? storeErrorsTitle() + tr(" (A)") : storeErrorsTitle());
    lines_.clear();
    highlightLines_.clear();
    for (const SeriesSpec& spec : series_.specs()) {
        lines_.push_back(
            plot(spec.chart)
                ->addLine(spec.name, roleColor(spec), roleStyle(spec, series_.comparing())));
    }
}

void ChartsPanel::refresh(double nowSeconds) {
    cursorSeconds_ = nowSeconds;
    const auto xs = series_.xs();
    const double end = series_.durationSeconds();
    // Bounded buffers: once the oldest samples are gone, the axis starts at the oldest kept.
    const double start =
        series_.size() >= RunSeries::kMaxSamples * 7 / 8 && !xs.empty() ? xs.front() : 0.0;
    std::array<double, 4> peaks{};
    const auto& specs = series_.specs();
    for (std::size_t i = 0; i < specs.size() && i < lines_.size(); ++i) {
        TimePlot* p = plot(specs[i].chart);
        QList<QPointF> points = decimateMinMax(xs, series_.ys(i), start, end, p->plotColumns());
        double& peak = peaks[static_cast<std::size_t>(specs[i].chart)];
        for (const QPointF& pt : points)
            peak = std::max(peak, pt.y());
        p->setPoints(lines_[i], points);
    }
    const std::vector<HighlightLine>& highlight = series_.highlightLines();
    for (std::size_t i = 0; i < highlight.size() && i < highlightLines_.size(); ++i) {
        if (highlight[i].ys.size() != xs.size()) continue;
        TimePlot* p = plot(ChartKind::Traffic);
        QList<QPointF> points = decimateMinMax(xs, highlight[i].ys, start, end, p->plotColumns());
        double& peak = peaks[static_cast<std::size_t>(ChartKind::Traffic)];
        for (const QPointF& pt : points)
            peak = std::max(peak, pt.y());
        p->setPoints(highlightLines_[i], points);
    }
    // The cap comes into view once the keyspace reaches a quarter of it; until then the
    // legend names it and the keyspace's growth keeps the chart's height.
    const double cap = series_.storeCap();
    double& keys = peaks[static_cast<std::size_t>(ChartKind::Keyspace)];
    if (cap > 0 && keys * 4 >= cap) keys = std::max(keys, cap);
    plot(ChartKind::Keyspace)
        ->setThreshold(cap, tr("store cap %1").arg(localeCount(static_cast<std::int64_t>(cap))),
                       QColor(200, 0, 0));
    // Where the store refused as full, a grey band behind every chart (only when it changed:
    // bands are scene items, not worth rebuilding each frame).
    const std::vector<TimeSpan>& full = series_.storeFullSpans();
    const double fullEnd = full.empty() ? 0 : full.back().to;
    if (full.size() != shownFullSpans_ || fullEnd != lastFullSpanEnd_) {
        shownFullSpans_ = full.size();
        lastFullSpanEnd_ = fullEnd;
        std::vector<PlotBand> bands = eventBands_;
        for (const TimeSpan& span : full)
            bands.push_back({span.from, span.to, QColor(90, 90, 90, 60)});
        for (TimePlot* p : plots_)
            p->setBands(bands);
    }
    for (std::size_t k = 0; k < plots_.size(); ++k) {
        plots_[k]->setXRange(start, end);
        plots_[k]->setYMax(peaks[k]);
        plots_[k]->setCursorX(nowSeconds);
    }
}

}  // namespace ratelab::gui
