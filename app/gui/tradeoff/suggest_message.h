#pragma once

// What "Suggest" tells the user once it has filled the editor: the pick of `ratelab-cli tune`
// (sim::recommendCell) and why, in words: how many cells pass, the tie-breaks that chose this
// one, each expectation with its figure at this cell, and what the cell costs each side.

#include <QString>

#include "sim/scenario/scenario.h"
#include "sim/decide/tradeoff.h"

namespace ratelab::gui {

/// The explanation for `map`'s recommended cell, or, when no cell passes, why none could be
/// picked (sim::recommendationText, then the expectations of the cell nearest to passing).
QString suggestionMessage(const sim::Scenario& scenario, const sim::TradeoffMap& map);

}  // namespace ratelab::gui
