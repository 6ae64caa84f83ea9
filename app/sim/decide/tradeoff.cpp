#include "sim/decide/tradeoff.h"

#include <algorithm>
#include <cstdio>

#include "json/json_reader.h"
#include "ratelab/number_text.h"
#include "sim/report/report_json.h"

namespace ratelab::sim {

namespace {

std::string percent(double fraction) {
    return numberText(std::round(fraction * 1e6) / 1e4) + "%";
}

std::string axisName(const SweepAxis& axis) {
    return axis.policy.empty() ? axis.field : axis.policy + "." + axis.field;
}

}  // namespace

TradeoffPoint tradeoffPoint(const std::vector<std::string>& classNames, const RunTotals& totals,
                            Nanos duration) {
    std::int64_t offered = 0;
    std::int64_t throttled = 0;
    std::int64_t attackerAllowed = 0;
    for (std::size_t i = 0; i < classNames.size() && i < totals.classes.size(); ++i) {
        if (isLegitimateClass(classNames[i])) {
            offered += totals.classes[i].offered;
            throttled += totals.classes[i].throttled;
        } else {
            attackerAllowed += totals.classes[i].allowed;
        }
    }
    TradeoffPoint p;
    p.legitThrottled =
        offered > 0 ? static_cast<double>(throttled) / static_cast<double>(offered) : 0.0;
    p.attackerAdmitted =
        duration > 0 ? static_cast<double>(attackerAllowed) / (static_cast<double>(duration) / 1e9)
                     : 0.0;
    return p;
}

std::vector<std::size_t> paretoFrontier(const std::vector<SweepCell>& cells,
                                        const std::vector<TradeoffPoint>& points) {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < cells.size(); ++i) {
        if (cells[i].invalid.empty()) order.push_back(i);
    }
    // By legitimate throttling, then attacker traffic: a cell is on the frontier when it admits
    // strictly less attacker traffic than every cell before it.
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (points[a].legitThrottled != points[b].legitThrottled)
            return points[a].legitThrottled < points[b].legitThrottled;
        return points[a].attackerAdmitted < points[b].attackerAdmitted;
    });
    std::vector<std::size_t> frontier;
    for (std::size_t i : order) {
        if (frontier.empty()) {
            frontier.push_back(i);
            continue;
        }
        const TradeoffPoint& last = points[frontier.back()];
        if (points[i].attackerAdmitted < last.attackerAdmitted) {
            frontier.push_back(i);
        } else if (points[i] == last) {
            frontier.push_back(i);  // the same figures: equally on the frontier
        }
    }
    return frontier;
}

std::optional<std::size_t> recommendCell(const std::vector<SweepCell>& cells,
                                         const std::vector<TradeoffPoint>& points) {
    std::optional<std::size_t> best;
    auto better = [&](std::size_t a, std::size_t b) {
        if (points[a].legitThrottled != points[b].legitThrottled)
            return points[a].legitThrottled < points[b].legitThrottled;
        if (points[a].attackerAdmitted != points[b].attackerAdmitted)
            return points[a].attackerAdmitted < points[b].attackerAdmitted;
        return cells[a].values < cells[b].values;
    };
    for (std::size_t i = 0; i < cells.size(); ++i) {
        if (cells[i].pass && (!best || better(i, *best))) best = i;
    }
    return best;
}

TradeoffMap readTradeoff(const Scenario& scenario, std::vector<SweepAxis> axes,
                         SweepResult result) {
    TradeoffMap map;
    map.axes = std::move(axes);
    map.result = std::move(result);
    for (const SweepCell& cell : map.result.cells) {
        map.points.push_back(tradeoffPoint(map.result.classNames, cell.totals, scenario.duration));
        map.passing += cell.pass ? 1 : 0;
    }
    map.frontier = paretoFrontier(map.result.cells, map.points);
    map.recommended = recommendCell(map.result.cells, map.points);
    return map;
}

std::string cellValuesText(const std::vector<SweepAxis>& axes, const std::vector<double>& values) {
    std::string out;
    for (std::size_t a = 0; a < axes.size() && a < values.size(); ++a) {
        if (!out.empty()) out += " ";
        out += axisName(axes[a]) + "=" + numberText(values[a]);
    }
    return out;
}

std::string recommendationText(const Scenario& scenario, const TradeoffMap& map) {
    const std::size_t cells = map.result.cells.size();
    if (!map.recommended) {
        std::string text = "No cell of the " + std::to_string(cells) +
                           " meets every expectation of " + scenario.name + ".";
        if (!map.frontier.empty()) {
            const std::size_t i = map.frontier.front();
            text += " The least legitimate throttling on the frontier is " +
                    percent(map.points[i].legitThrottled) + " at " +
                    cellValuesText(map.axes, map.result.cells[i].values) +
                    "; widen the ranges or relax the expectations.";
        }
        return text;
    }
    const std::size_t i = *map.recommended;
    const TradeoffPoint& p = map.points[i];
    std::string text =
        cellValuesText(map.axes, map.result.cells[i].values) + ": of the " + std::to_string(cells) +
        " cells, " + std::to_string(map.passing) + " meet every expectation of " + scenario.name +
        "; this one throttles the fewest legitimate requests (" + percent(p.legitThrottled) + ")";
    std::size_t sameThrottling = 0;
    std::size_t sameBoth = 0;
    for (std::size_t c = 0; c < cells; ++c) {
        if (c == i || !map.result.cells[c].pass) continue;
        if (map.points[c].legitThrottled != p.legitThrottled) continue;
        ++sameThrottling;
        if (map.points[c].attackerAdmitted == p.attackerAdmitted) ++sameBoth;
    }
    const std::string admitted = numberText(report_json::rounded(p.attackerAdmitted));
    if (sameThrottling == 0) {
        text += " and admits " + admitted + " attacker requests/s";
    } else {
        text += ", like " + std::to_string(sameThrottling) +
                " others; of those it admits the least attacker traffic (" + admitted +
                " requests/s)";
        if (sameBoth > 0) {
            text += ", and of the " + std::to_string(sameBoth + 1) +
                    " that admit as little it has the smallest numbers";
        }
    }
    text += ".";
    const bool onFrontier =
        std::find(map.frontier.begin(), map.frontier.end(), i) != map.frontier.end();
    if (!onFrontier) {
        text += " Cells on the frontier that do better on one side fail an expectation.";
    }
    return text;
}

std::string tradeoffJson(const Scenario& scenario, const PolicySet& policies,
                         const TradeoffMap& map) {
    using report_json::Json;
    Json j;
    j["scenario"] = scenario.name;
    std::string names;
    for (const Policy& p : policies.policies)
        names += (names.empty() ? "" : "+") + p.name;
    j["policy"] = names;
    j["policy_sha256"] = policySha256(policies);
    Json axes = Json::array();
    for (const SweepAxis& axis : map.axes) {
        axes.push_back(Json{
            {"field", axisName(axis)}, {"from", axis.from}, {"to", axis.to}, {"step", axis.step}});
    }
    j["axes"] = std::move(axes);
    Json cells = Json::array();
    for (std::size_t i = 0; i < map.result.cells.size(); ++i) {
        const SweepCell& cell = map.result.cells[i];
        Json x;
        x["values"] = cell.values;
        x["legit_throttled_fraction"] = report_json::rounded(map.points[i].legitThrottled);
        x["attacker_allowed_per_s"] = report_json::rounded(map.points[i].attackerAdmitted);
        x["pass"] = cell.pass;
        x["failed_expectations"] = cell.failedExpectations;
        if (!cell.invalid.empty()) x["invalid"] = cell.invalid;
        cells.push_back(std::move(x));
    }
    j["cells"] = std::move(cells);
    j["frontier"] = map.frontier;
    if (map.recommended) {
        const std::size_t i = *map.recommended;
        j["recommended"] = Json{{"cell", i},
                                {"values", map.result.cells[i].values},
                                {"text", cellValuesText(map.axes, map.result.cells[i].values)},
                                {"why", recommendationText(scenario, map)}};
    } else {
        j["recommended"] = nullptr;
        j["why"] = recommendationText(scenario, map);
    }
    return j.dump(2) + "\n";
}

}  // namespace ratelab::sim
