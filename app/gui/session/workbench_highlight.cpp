// The Workbench's highlighted client: a replayed log's client drawn over the charts' totals from
// the counts the worker keeps per client and interval as it replays.

#include "gui/session/workbench.h"

namespace ratelab::gui {

void Workbench::highlightClient(std::int64_t instance) {
    const int row = clients_.replaying() ? clients_.rowOf(instance) : -1;
    if (row < 0) {
        if (series_.highlightedClient() < 0) return;
        series_.clearHighlight();
        clients_.setHighlighted(-1);
        session_.highlightClient(-1);
        return;
    }
    const std::string& key = clients_.rows()[static_cast<std::size_t>(row)].key;
    series_.setHighlight(instance,
                         key.empty() ? tr("(no policy matched)") : QString::fromStdString(key));
    clients_.setHighlighted(instance);
    session_.highlightClient(instance);
}

}  // namespace ratelab::gui
