#pragma once

// How scenario events and classes look, shared by the timeline and the charts so the two agree.

#include <QColor>
#include <QString>

#include "sim/scenario/scenario.h"

namespace ratelab::gui {

/// The band colour of a timed event (translucent, for shading).
QColor eventColor(const sim::ScenarioEvent& event);
/// A short label: "outage (transport)", "latency 200 ms", "policy change: capacity=50".
QString eventLabel(const sim::ScenarioEvent& event);
/// How long a policy change is drawn (it is an instant): a sliver of the scenario's span.
double eventDrawnEnd(const sim::ScenarioEvent& event, double durationSeconds);

/// A class's colour: legit green (a replayed log's class too), attacker red, others from a
/// fixed palette by index.
QColor classColor(const QString& className, int classIndex);

}  // namespace ratelab::gui
