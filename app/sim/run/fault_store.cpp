#include "sim/run/fault_store.h"

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

const FaultStore::Window* FaultStore::activeFault(Nanos now, Nanos timeout) const {
    for (const Window& w : windows_) {
        if (now < w.from || now >= w.to) continue;
        // A slow store that still answers in time changes nothing a decision can see.
        if (w.latency && w.added <= timeout) continue;
        return &w;
    }
    return nullptr;
}

ConsumeResult FaultStore::injected(const Window& w, Nanos timeout) const {
    ConsumeResult result;
    if (w.latency) {
        result.status = StoreStatus::Transport;
        result.error = "timeout: no reply within " + millis(timeout) + " (store latency " +
                       millis(w.added) + ")";
        return result;
    }
    switch (w.failure) {
        case StoreFailure::Transport:
            result.status = StoreStatus::Transport;
            result.error = "connection refused (simulated outage)";
            break;
        case StoreFailure::Timeout:
            result.status = StoreStatus::Transport;
            result.error = "timeout: no reply within " + millis(timeout) + " (store stalled)";
            break;
        case StoreFailure::Refusal:
            result.status = StoreStatus::Refused;
            result.error = "OOM command not allowed when used memory > 'maxmemory'";
            break;
    }
    return result;
}

template <class Request, class Result, class Pass, class Fail>
void FaultStore::splitBatch(std::span<const Request> requests, std::span<Result> results, Pass pass,
                            Fail fail) const {
    std::size_t i = 0;
    while (i < requests.size()) {
        if (const Window* fault = activeFault(requests[i])) {
            results[i] = fail(*fault, requests[i]);
            ++i;
            continue;
        }
        std::size_t end = i + 1;
        while (end < requests.size() && !activeFault(requests[end]))
            ++end;
        pass(requests.subspan(i, end - i), results.subspan(i, end - i));
        i = end;
    }
}

ConsumeResult FaultStore::consume(const ConsumeRequest& request) {
    if (const Window* fault = activeFault(request)) return injected(*fault, timeoutOf(request));
    return inner_->consume(request);
}

void FaultStore::consumeBatch(std::span<const ConsumeRequest> requests,
                              std::span<ConsumeResult> results) {
    splitBatch(
        requests, results,
        [this](std::span<const ConsumeRequest> run, std::span<ConsumeResult> out) {
            inner_->consumeBatch(run, out);
        },
        [this](const Window& w, const ConsumeRequest& r) { return injected(w, timeoutOf(r)); });
}

SettleResult FaultStore::settle(const SettleRequest& request) {
    if (const Window* fault = activeFault(request)) {
        ConsumeResult failed = injected(*fault, timeoutOf(request));
        return SettleResult{failed.status, false, std::move(failed.error)};
    }
    return inner_->settle(request);
}

void FaultStore::settleBatch(std::span<const SettleRequest> requests,
                             std::span<SettleResult> results) {
    splitBatch(
        requests, results,
        [this](std::span<const SettleRequest> run, std::span<SettleResult> out) {
            inner_->settleBatch(run, out);
        },
        [this](const Window& w, const SettleRequest& r) {
            ConsumeResult failed = injected(w, timeoutOf(r));
            return SettleResult{failed.status, false, std::move(failed.error)};
        });
}

}  // namespace ratelab::sim
