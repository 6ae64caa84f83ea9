#include "gui/scenario/timeline_widget.h"

#include <QPainter>
#include <QPainterPath>

#include <cmath>

#include "gui/session/event_style.h"
#include "gui/window/locale_text.h"

namespace ratelab::gui {

namespace {

constexpr int kSide = 12;  // horizontal margin, px
constexpr int kBandTop = 18;
constexpr int kBandHeight = 22;

// A tick step in seconds giving about `target` ticks over `span` seconds.
double tickStep(double span, int target) {
    const double raw = span / std::max(target, 1);
    const double magnitude = std::pow(10.0, std::floor(std::log10(std::max(raw, 1e-9))));
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
        if (raw <= m * magnitude) return m * magnitude;
    }
    return 10 * magnitude;
}

}  // namespace

TimelineWidget::TimelineWidget(QWidget* parent) : QWidget(parent) {
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setToolTip(tr("Scenario timeline: events as bands, the virtual time reached as a cursor"));
}

void TimelineWidget::setScenario(Nanos duration, std::vector<sim::ScenarioEvent> events) {
    duration_ = duration;
    events_ = std::move(events);
    now_ = 0;
    update();
}

void TimelineWidget::setNow(Nanos now) {
    const double before = xOf(now_);
    now_ = now;
    if (std::abs(xOf(now_) - before) >= 1.0) update();
}

QSize TimelineWidget::sizeHint() const {
    return QSize(600, minimumSizeHint().height());
}

QSize TimelineWidget::minimumSizeHint() const {
    return QSize(200, kBandTop + kBandHeight + fontMetrics().height() + 8);
}

double TimelineWidget::xOf(Nanos t) const {
    if (duration_ <= 0) return kSide;
    const double span = width() - 2.0 * kSide;
    return kSide + span * static_cast<double>(t) / static_cast<double>(duration_);
}

void TimelineWidget::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing, true);
    const QRectF track(kSide, kBandTop, width() - 2.0 * kSide, kBandHeight);
    p.fillRect(track, QColor(236, 239, 243));
    if (duration_ <= 0) return;

    // Elapsed part.
    p.fillRect(QRectF(track.left(), track.top(), xOf(now_) - track.left(), track.height()),
               QColor(200, 214, 232));

    // Event bands, labelled when there is room.
    const double seconds = static_cast<double>(duration_) / 1e9;
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    p.setFont(small);
    for (const sim::ScenarioEvent& e : events_) {
        const double x0 = xOf(e.from);
        const double end = eventDrawnEnd(e, seconds);
        const double x1 = std::max(x0 + 2.0, xOf(static_cast<Nanos>(end * 1e9)));
        QColor c = eventColor(e);
        c.setAlpha(std::min(255, c.alpha() * 3));
        const QRectF band(x0, track.top(), x1 - x0, track.height());
        p.fillRect(band, c);
        const QString label = eventLabel(e);
        const QRectF textBox(x0 + 3, 0, std::max(x1 - x0, 220.0), kBandTop - 2);
        p.setPen(QColor(60, 60, 60));
        p.drawText(textBox, Qt::AlignLeft | Qt::AlignBottom, label);
    }

    // Ticks.
    p.setPen(QColor(110, 110, 110));
    const double step = tickStep(seconds, std::max(2, static_cast<int>(track.width() / 70)));
    const int baseline = static_cast<int>(track.bottom());
    for (double t = 0; t <= seconds + 1e-9; t += step) {
        const double x = xOf(static_cast<Nanos>(t * 1e9));
        p.drawLine(QPointF(x, baseline), QPointF(x, baseline + 4));
        p.drawText(QRectF(x - 40, baseline + 4, 80, fontMetrics().height()), Qt::AlignHCenter,
                   localeNumber(t) + "s");
    }

    // Cursor.
    const double x = xOf(now_);
    p.setPen(QPen(QColor(20, 20, 20), 2));
    p.drawLine(QPointF(x, track.top() - 3), QPointF(x, track.bottom() + 3));
    QPainterPath head;
    head.moveTo(x - 5, track.top() - 8);
    head.lineTo(x + 5, track.top() - 8);
    head.lineTo(x, track.top() - 2);
    head.closeSubpath();
    p.fillPath(head, QColor(20, 20, 20));
}

}  // namespace ratelab::gui
