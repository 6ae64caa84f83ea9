#pragma once

// The scenario timeline: the run's span with its timed events as bands (outages, latency,
// policy changes), the virtual time reached as a cursor, and the elapsed part shaded.

#include <QWidget>

#include <vector>

#include "sim/scenario/scenario.h"

namespace ratelab::gui {

class TimelineWidget : public QWidget {
    Q_OBJECT

public:
    explicit TimelineWidget(QWidget* parent = nullptr);

    void setScenario(Nanos duration, std::vector<sim::ScenarioEvent> events);
    /// Moves the cursor; repaints only when it moved by at least a pixel.
    void setNow(Nanos now);
    Nanos now() const { return now_; }
    /// The events drawn, as last set.
    const std::vector<sim::ScenarioEvent>& events() const { return events_; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    double xOf(Nanos t) const;

    Nanos duration_ = 0;
    Nanos now_ = 0;
    std::vector<sim::ScenarioEvent> events_;
};

}  // namespace ratelab::gui
