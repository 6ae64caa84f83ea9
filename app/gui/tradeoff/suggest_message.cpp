#include "gui/tradeoff/suggest_message.h"

#include <QObject>
#include <QStringList>

#include "gui/window/locale_text.h"
#include "sim/report/report.h"

namespace ratelab::gui {

QString suggestionMessage(const sim::Scenario& scenario, const sim::TradeoffMap& map) {
    QStringList lines{QString::fromStdString(sim::recommendationText(scenario, map))};
    if (!map.recommended) return lines.join('\n');
    const std::size_t i = *map.recommended;
    const sim::SweepCell& cell = map.result.cells[i];
    const sim::TradeoffPoint& p = map.points[i];
    lines << QObject::tr(
                 "At %1: %2 % of legitimate requests throttled, %3 attacker requests "
                 "admitted per second.")
                 .arg(QString::fromStdString(sim::cellValuesText(map.axes, cell.values)),
                      localeNumber(p.legitThrottled * 100, 4), localeNumber(p.attackerAdmitted, 5));
    const std::vector<sim::ExpectationResult> results =
        sim::evaluateExpectations(scenario, map.result.classNames, cell.totals);
    if (results.empty()) {
        lines << QObject::tr("The scenario states no expectations, so every cell passes.");
    } else {
        lines << QObject::tr("Expectations at this cell:");
        for (const sim::ExpectationResult& e : results)
            lines << QStringLiteral("  ") + QString::fromStdString(sim::expectationText(e));
    }
    return lines.join('\n');
}

}  // namespace ratelab::gui
