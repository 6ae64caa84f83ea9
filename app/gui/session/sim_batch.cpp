#include "gui/session/sim_batch.h"

#include <iterator>

namespace ratelab::gui {

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
    now = next.now;
    requests = next.requests;
    wallSeconds = next.wallSeconds;
    if (!next.message.empty()) message = std::move(next.message);
}

}  // namespace ratelab::gui
