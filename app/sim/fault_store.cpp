#include "sim/fault_store.h"

#include <string>

namespace ratelab::sim {

namespace {

std::string millis(Nanos t) {
    return std::to_string(t / kNanosPerMilli) + " ms";
}

}  // namespace

FaultStore::FaultStore(std::shared_ptr<Store> inner, const std::vector<ScenarioEvent>& events,
                       Nanos defaultTimeout)
    : inner_(std::move(inner)), defaultTimeout_(defaultTimeout) {
    for (const ScenarioEvent& e : events) {
        if (e.kind == ScenarioEvent::Kind::StoreOutage) {
            windows_.push_back(Window{e.from, e.to, false, e.failure, 0});
        } else if (e.kind == ScenarioEvent::Kind::StoreLatency) {
            windows_.push_back(Window{e.from, e.to, true, StoreFailure::Transport, e.latency});
        }
    }
}

ConsumeResult FaultStore::consume(const ConsumeRequest& request) {
    ConsumeResult result;
    bool injected = false;
    for (const Window& w : windows_) {
        if (request.now < w.from || request.now >= w.to) continue;
        const Nanos timeout = request.timeout > 0 ? request.timeout : defaultTimeout_;
        if (w.latency) {
            // A slow store answers in time or the call times out; in virtual time nothing else
            // about a late answer is visible to the decision.
            if (w.added <= timeout) continue;
            result.status = StoreStatus::Transport;
            result.error = "timeout: no reply within " + millis(timeout) + " (store latency " +
                           millis(w.added) + ")";
        } else {
            switch (w.failure) {
                case StoreFailure::Transport:
                    result.status = StoreStatus::Transport;
                    result.error = "connection refused (simulated outage)";
                    break;
                case StoreFailure::Timeout:
                    result.status = StoreStatus::Transport;
                    result.error =
                        "timeout: no reply within " + millis(timeout) + " (store stalled)";
                    break;
                case StoreFailure::Refusal:
                    result.status = StoreStatus::Refused;
                    result.error = "OOM command not allowed when used memory > 'maxmemory'";
                    break;
            }
        }
        injected = true;
        break;
    }
    if (!injected) result = inner_->consume(request);
    if (result.status != StoreStatus::Ok) errors_.fetch_add(1, std::memory_order_relaxed);
    return result;
}

}  // namespace ratelab::sim
