#include "gui/session/sim_batch.h"

#include <algorithm>
#include <iterator>

namespace ratelab::gui {

void ClientTrace::absorb(ClientTrace&& next) {
    if (next.instance != instance || next.lanes.size() != lanes.size()) {
        *this = std::move(next);
        return;
    }
    for (std::size_t l = 0; l < lanes.size(); ++l) {
        std::vector<sim::ClientInterval>& mine = lanes[l];
        if (next.from[l] <= from[l]) {
            mine = std::move(next.lanes[l]);
            from[l] = next.from[l];
            continue;
        }
        mine.resize(std::min(mine.size(), next.from[l] - from[l]));
        mine.insert(mine.end(), next.lanes[l].begin(), next.lanes[l].end());
    }
}

void SimBatch::absorb(SimBatch&& next, std::size_t logCapacity) {
    if (next.fresh || next.generation != generation) {
        *this = std::move(next);
        return;
    }
    samples.insert(samples.end(), std::make_move_iterator(next.samples.begin()),
                   std::make_move_iterator(next.samples.end()));
    samplesB.insert(samplesB.end(), std::make_move_iterator(next.samplesB.begin()),
                    std::make_move_iterator(next.samplesB.end()));
    log.insert(log.end(), std::make_move_iterator(next.log.begin()),
               std::make_move_iterator(next.log.end()));
    if (log.size() > logCapacity) {
        log.erase(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(log.size() - logCapacity));
    }
    state = next.state;
    if (!next.actors.empty()) actors = std::move(next.actors);
    if (next.comparison) comparison = std::move(next.comparison);
    if (next.clients) clients = std::move(next.clients);
    if (next.trace) {
        if (trace) {
            trace->absorb(std::move(*next.trace));
        } else {
            trace = std::move(next.trace);
        }
    }
    now = next.now;
    requests = next.requests;
    wallSeconds = next.wallSeconds;
    if (!next.message.empty()) message = std::move(next.message);
}

}  // namespace ratelab::gui
