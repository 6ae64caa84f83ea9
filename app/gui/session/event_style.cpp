#include "gui/session/event_style.h"

#include <QObject>
#include <QStringList>

#include <algorithm>
#include <array>

#include "sim/log/replay_source.h"

namespace ratelab::gui {

QColor eventColor(const sim::ScenarioEvent& event) {
    switch (event.kind) {
        case sim::ScenarioEvent::Kind::StoreOutage:
            switch (event.failure) {
                case sim::StoreFailure::Transport:
                    return QColor(220, 50, 47, 45);
                case sim::StoreFailure::Timeout:
                    return QColor(230, 120, 20, 50);
                case sim::StoreFailure::Refusal:
                    return QColor(140, 60, 190, 45);
            }
            break;
        case sim::ScenarioEvent::Kind::StoreLatency:
            return QColor(220, 180, 0, 55);
        case sim::ScenarioEvent::Kind::PolicyChange:
            return QColor(38, 110, 210, 110);
    }
    return QColor(128, 128, 128, 50);
}

QString eventLabel(const sim::ScenarioEvent& event) {
    switch (event.kind) {
        case sim::ScenarioEvent::Kind::StoreOutage:
            switch (event.failure) {
                case sim::StoreFailure::Transport:
                    return QObject::tr("store outage (transport)");
                case sim::StoreFailure::Timeout:
                    return QObject::tr("store outage (timeout)");
                case sim::StoreFailure::Refusal:
                    return QObject::tr("store refuses (OOM)");
            }
            break;
        case sim::ScenarioEvent::Kind::StoreLatency:
            return QObject::tr("store latency %1 ms").arg(event.latency / kNanosPerMilli);
        case sim::ScenarioEvent::Kind::PolicyChange: {
            const sim::PolicyChange& c = event.change;
            QStringList parts;
            if (c.capacity) parts << QStringLiteral("capacity=%1").arg(*c.capacity);
            if (c.refillPerSecond) parts << QStringLiteral("refill=%1/s").arg(*c.refillPerSecond);
            if (c.windowMs) parts << QStringLiteral("window=%1 ms").arg(*c.windowMs);
            if (c.cost) parts << QStringLiteral("cost=%1").arg(*c.cost);
            if (c.mode) parts << (*c.mode == PolicyMode::Shadow ? "shadow" : "enforce");
            return QObject::tr("policy change: %1").arg(parts.join(", "));
        }
    }
    return {};
}

double eventDrawnEnd(const sim::ScenarioEvent& event, double durationSeconds) {
    const double from = static_cast<double>(event.from) / 1e9;
    if (event.kind == sim::ScenarioEvent::Kind::PolicyChange) {
        return from + std::max(durationSeconds * 0.004, 1e-3);
    }
    return static_cast<double>(event.to) / 1e9;
}

QColor classColor(const QString& className, int classIndex) {
    // A replayed log is legitimate traffic, and keeps the colours a scenario's legit class has.
    if (className == "legit" ||
        className == QLatin1String(sim::kReplayClass.data(),
                                   static_cast<qsizetype>(sim::kReplayClass.size())))
        return QColor(46, 139, 87);
    if (className == "attacker") return QColor(200, 40, 40);
    static const std::array<QColor, 6> kPalette = {QColor(31, 119, 180), QColor(148, 103, 189),
                                                   QColor(255, 127, 14), QColor(23, 190, 207),
                                                   QColor(140, 86, 75),  QColor(227, 119, 194)};
    return kPalette[static_cast<std::size_t>(classIndex) % kPalette.size()];
}

}  // namespace ratelab::gui
