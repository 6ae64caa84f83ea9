#pragma once

// Reading a sweep as a decision: each cell's two figures a limit trades against each other
// (legitimate requests throttled, attacker requests admitted), the Pareto frontier of the grid,
// and the one cell to recommend, with the reasons in words. `ratelab-cli tune` prints them and
// the workbench's trade-off map draws them.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ratelab/policy.h"
#include "sim/report/counters.h"
#include "sim/report/report.h"
#include "sim/scenario/scenario.h"
#include "sim/decide/sweep.h"

namespace ratelab::sim {

/// What a cell costs each side.
struct TradeoffPoint {
    /// Throttled over offered, over every legitimate class together (isLegitimateClass).
    double legitThrottled = 0;
    /// The attacker class's allowed requests per second of virtual time (0 without one).
    double attackerAdmitted = 0;
    friend bool operator==(const TradeoffPoint&, const TradeoffPoint&) = default;
};

TradeoffPoint tradeoffPoint(const std::vector<std::string>& classNames, const RunTotals& totals,
                            Nanos duration);

/// Indices of the valid cells on the Pareto frontier: no other valid cell is as good on both
/// figures and better on one. Ordered by legitimate throttling, least first (then by index).
std::vector<std::size_t> paretoFrontier(const std::vector<SweepCell>& cells,
                                        const std::vector<TradeoffPoint>& points);

/// The cell to pick: among those meeting every expectation, the least legitimate throttling,
/// ties broken by the least attacker traffic admitted and then by the smallest numbers (the
/// values compared axis by axis, the first axis first). Nullopt when no cell passes.
std::optional<std::size_t> recommendCell(const std::vector<SweepCell>& cells,
                                         const std::vector<TradeoffPoint>& points);

/// A sweep read as a decision.
struct TradeoffMap {
    std::vector<SweepAxis> axes;
    SweepResult result;
    std::vector<TradeoffPoint> points;  ///< per cell
    std::vector<std::size_t> frontier;
    std::optional<std::size_t> recommended;
    std::size_t passing = 0;
};

TradeoffMap readTradeoff(const Scenario& scenario, std::vector<SweepAxis> axes, SweepResult result);

/// "capacity=12 refill=2.5" for a cell (axis names as the user wrote them, numbers with a dot).
std::string cellValuesText(const std::vector<SweepAxis>& axes, const std::vector<double>& values);

/// Why the recommended cell was picked, in a few sentences (empty when none passes: then why
/// no cell could be picked).
std::string recommendationText(const Scenario& scenario, const TradeoffMap& map);

/// The map as JSON: the axes, every cell (values, both figures, pass, failed expectations,
/// invalid), the frontier and the recommended cell. Deterministic; ends in a newline.
std::string tradeoffJson(const Scenario& scenario, const PolicySet& policies,
                         const TradeoffMap& map);

}  // namespace ratelab::sim
